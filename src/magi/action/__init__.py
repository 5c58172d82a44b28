"""The Action's runner code: ``magi action compete`` (agents job) and ``magi action publish``.

``compete`` holds no credential: it runs the competition in a checkout without persisted
credentials and writes an artifact (the scrubbed record and the candidate branches as a
git bundle). ``publish`` runs where no agent does: it checks the bundle, pushes, opens the
pull request and posts, every text through ``magi.core.threads.posting``.
"""
