"""The Action's runner code, by job: what ``action.yml`` runs on a runner.

``agents_job`` holds no credential: it runs the competition (or the council, or a fix
round) in a checkout without persisted credentials and writes an artifact (the scrubbed
record and the candidate branches as a git bundle: ``artifact``, ``bundle``). ``read_job``
fetches a fix round's input with a read-only token; ``gate_job`` admits, claims and gates
merges without the App; ``publish_job`` runs where no agent does: it checks the bundle,
pushes, opens the pull request and posts, every text through ``magi.core.threads.posting``.
``cli`` is the commands, ``env`` the runner's environment, ``context`` what the commands are
handed (the GitHub port factory).
"""
