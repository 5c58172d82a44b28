"""The ``magi`` command line (placeholder until the CLI lands)."""

import typer

app = typer.Typer(no_args_is_help=False, add_completion=False)


def main() -> None:
    app()
