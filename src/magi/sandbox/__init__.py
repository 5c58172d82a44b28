"""Processes magi starts outside an agent's own runner: the jail and the user's commands.

``bwrap`` (the bubblewrap jail, over the pure policy in ``magi.core.seats.jail``),
``shell`` (verify, e2e and gate commands), ``notify`` (``[notify] command``, with an
environment that holds no token and no key).
"""
