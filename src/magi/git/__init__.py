"""The git wing: the locked-down git runner, and what guards a repository from its seats.

``repo`` (``Git``: the runner every node uses, one pinned call at a time), ``clones`` and
``checkout`` (the trees seats work in, made, leased and reset), ``refs_guard`` and
``worktree_guard`` (what a seat may not move or write through), ``salvage`` (what a killed
run left behind), ``scrub`` (authorship out of a candidate's commits), ``remote`` (git
against GitHub with the App token: the one module here that holds a credential, which the
Action's agents job may not reach).
"""
