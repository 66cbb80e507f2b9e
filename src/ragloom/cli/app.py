"""The `ragloom` Typer apps, their consoles, the error boundary and the logging set-up."""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from typer.core import TyperGroup

from ragloom import __version__
from ragloom.cli.options import DebugOpt, VerboseOpt
from ragloom.errors import RagloomError

DEBUG_KEY = "ragloom.debug"
out = Console()
err = Console(stderr=True)


class _ErrorBoundary(TyperGroup):
    """Turn every failure of a command into one line on stderr, unless --debug was given."""

    def invoke(self, ctx: Any) -> Any:
        """Run the command; ragloom errors exit 2, unexpected ones 1, interrupts 130."""
        try:
            return super().invoke(ctx)
        except (typer.Exit, typer.Abort, typer.TyperException):  # usage errors, exits: Typer's
            raise
        except KeyboardInterrupt:
            err.print("interrupted", highlight=False)
            raise typer.Exit(130) from None
        except RagloomError as exc:
            if ctx.meta.get(DEBUG_KEY):
                raise
            err.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False)
            raise typer.Exit(2) from None
        except Exception as exc:
            if ctx.meta.get(DEBUG_KEY):
                raise
            first = (str(exc).splitlines() or [""])[0][:300]
            err.print(f"[bold red]error:[/] unexpected {type(exc).__name__}: {escape(first)}",
                      highlight=False)
            err.print("run the command again with --debug to see the traceback, and please "
                      "report it", highlight=False)
            raise typer.Exit(1) from None


app = typer.Typer(cls=_ErrorBoundary, add_completion=False, no_args_is_help=True,
                  rich_markup_mode=None, pretty_exceptions_enable=False,
                  help="ragloom: LangGraph-native retrieval-augmented generation.")
config_app = typer.Typer(cls=_ErrorBoundary, no_args_is_help=True, rich_markup_mode=None,
                         help="Inspect the resolved settings.")
app.add_typer(config_app, name="config")
collections_app = typer.Typer(cls=_ErrorBoundary, invoke_without_command=True,
                              rich_markup_mode=None,
                              help="List, inspect and delete the collections of a data directory.")
app.add_typer(collections_app, name="collections")


class _StderrHandler(logging.StreamHandler):
    """Log to whatever sys.stderr is at the time (the CLI test runner swaps it)."""

    def emit(self, record: logging.LogRecord) -> None:
        """Write the record to the current stderr."""
        self.stream = sys.stderr
        super().emit(record)


class _Detail(logging.Filter):
    """At -v: ragloom's notes from INFO up, other libraries' only from WARNING up."""

    def filter(self, record: logging.LogRecord) -> bool:
        """True when the record is shown."""
        return record.name.split(".")[0] == "ragloom" or record.levelno >= logging.WARNING


def _configure_logging(verbose: int) -> None:
    """Errors only by default; -v adds ragloom's notes, -vv everything down to DEBUG."""
    root = logging.getLogger()
    handler = next((h for h in root.handlers if isinstance(h, _StderrHandler)), None)
    if handler is None:
        handler = _StderrHandler()
        handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
        root.addHandler(handler)
    level = {0: logging.ERROR, 1: logging.INFO}.get(verbose, logging.DEBUG)
    handler.setLevel(level)  # the handler's level, as some libraries set DEBUG on their loggers
    for existing in list(handler.filters):
        handler.removeFilter(existing)
    if verbose == 1:
        handler.addFilter(_Detail())
    logging.getLogger("ragloom").setLevel(logging.INFO if verbose == 1 else logging.NOTSET)
    if verbose >= 2:
        root.setLevel(logging.DEBUG)


def setup(ctx: typer.Context, verbose: int, debug: bool) -> None:
    """Apply -v / --debug given after a command (they may also come before it)."""
    if debug:
        ctx.meta[DEBUG_KEY] = True
    if verbose:
        _configure_logging(verbose)


def _version(value: bool) -> None:
    """Print the version and exit when --version is given."""
    if value:
        print(f"ragloom {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    ctx: typer.Context,
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                          metavar="", help="print the version and exit")] = False,
    verbose: VerboseOpt = 0,
    debug: DebugOpt = False,
) -> None:
    """ragloom: LangGraph-native retrieval-augmented generation."""
    ctx.meta[DEBUG_KEY] = debug
    _configure_logging(verbose)


def display_source(source_id: str) -> str:
    """A source id shown relative to the working directory when it lies below it."""
    try:
        return str(Path(source_id).relative_to(Path.cwd()))
    except ValueError:
        return source_id
