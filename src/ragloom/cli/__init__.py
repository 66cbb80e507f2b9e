"""Command line: `ragloom ingest | ask | search | collections | eval | config | crew | serve`.

Also `ragloom api-key`.

No traceback reaches a user: a ragloom error prints its one-line message (exit 2), anything
unexpected one line that points to `--debug`, which shows the traceback. `-v` shows ragloom's
notes (degradations, fallbacks), `-vv` every library's debug output too.
"""

from __future__ import annotations

# each command module registers its commands on import, in the order `ragloom --help` lists them
from ragloom.cli import ingest, query, evaluate, serve, config, collections, crew  # noqa: F401
from ragloom.cli.app import app

__all__ = ["app", "main"]


def main() -> None:
    """Entry point of the `ragloom` command."""
    app()
