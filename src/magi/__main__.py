"""``python -m magi`` runs the CLI."""

from magi.cli import main

main()
