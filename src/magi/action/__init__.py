"""The Action's runner code, by job: ``agents_job`` (no credential), ``read_job``,
``gate_job`` and ``publish_job``; between them the artifact and its bundle, the runner's
environment (``env``), the commands (``cli``) and what they are handed (``context``)."""
