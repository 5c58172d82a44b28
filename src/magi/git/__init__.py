"""The git wing: every git process magi starts, and what guards a repository from its seats.

``repo`` (``Git``: the locked-down runner, one pinned call at a time), ``clones`` and
``checkout`` (the trees seats work in, made, leased and reset), ``refs_guard`` and
``worktree_guard`` (what a seat may not move or write through), ``salvage`` (what a killed
run left behind), ``scrub`` (authorship out of a candidate's commits).
"""
