"""The agents job: where agents run (a competition, a council, a landing fix round).

It holds no credential, and an import contract (``pyproject.toml``) keeps every module here
from reaching one: no GitHub adapter, no token-holding git, no other job, no HTTP client.
What it makes leaves as an artifact (``magi.action.artifact``, ``magi.action.bundle``).
"""
