"""The data floor: the pydantic shapes every layer speaks, and nothing else.

``config`` (magi.toml as validated), ``council`` (the council's config), ``run`` (a run's
record), ``review``, ``landing`` and ``fix_round``. A module here imports only pydantic, the
standard library, another module here and ``magi.errors``: core, config and state stand on
it side by side and never import each other (the layer contract in ``pyproject.toml``).
"""
