"""Figures over runs: dollars from usage, ``magi stats``, and whether winners stay merged."""
