"""Command line: parses the arguments and calls the command asked for.

Every command lives in its own module with ``configure(parser)`` and
``run(args) -> int`` (or named functions of ``referee.commands``); a module is
imported only when its command is used. Exit codes are in ``referee.errors``.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable, Collection, Sequence
from typing import Any

from .errors import EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, CliError

# Subcommand: module, one-line help, and the names of its configure and run functions.
COMMANDS: dict[str, tuple[str, str, str, str]] = {
    "match": ("referee.commands", "play one match between bots", "configure_match", "run_match"),
    "bots": ("referee.commands", "list the sample bots", "configure_bots", "run_bots"),
    "schemas": (
        "referee.commands",
        "write the protocol's JSON Schemas",
        "configure_schemas",
        "run_schemas",
    ),
    "tournament": (
        "referee.tournament.command",
        "run a league: round robin pool and finals",
        "configure",
        "run",
    ),
    "replay": (
        "referee.viewer",
        "show a replay in the terminal or export it to HTML",
        "configure",
        "run",
    ),
    "verify": (
        "referee.verify",
        "re-check a replay against the rules and its hash chain",
        "configure",
        "run",
    ),
    "rerun": (
        "referee.rerun",
        "play a replay's match again and compare round by round",
        "configure",
        "run",
    ),
    "serve": (
        "referee.server.command",
        "run a competition server: ladder, submissions, web site",
        "configure",
        "run",
    ),
    "admin": (
        "referee.server.admin",
        "the organiser's commands for a competition server's data",
        "configure",
        "run",
    ),
    "submit": ("referee.server.submit", "upload a bot to a competition server", "configure", "run"),
    "site": (
        "referee.server.site",
        "render a finished tournament as static web pages",
        "configure",
        "run",
    ),
    "sprt": (
        "referee.sprt",
        "is NEW stronger than OLD? a sequential test over paired matches",
        "configure",
        "run",
    ),
    "gauntlet": (
        "referee.gauntlet",
        "rate a bot against the fixed pool of sample bots",
        "configure",
        "run",
    ),
}


def _function(command: str, which: int) -> Callable[..., Any]:
    module, _help, *names = COMMANDS[command]
    function: Callable[..., Any] = getattr(importlib.import_module(module), names[which])
    return function


def _available() -> dict[str, str]:
    """Command: help, for the commands whose module is installed."""
    import importlib.util

    out = {}
    for name, (module, help_text, *_names) in COMMANDS.items():
        try:
            if importlib.util.find_spec(module) is not None:
                out[name] = help_text
        except ModuleNotFoundError:
            continue
    return out


def build_parser(configure: Collection[str] = COMMANDS.keys()) -> argparse.ArgumentParser:
    """The parser of every available command; the options of those in ``configure``
    (each command's module is imported to configure it)."""
    from . import __version__

    parser = argparse.ArgumentParser(
        prog="referee",
        description="A strict, fast, language-agnostic referee for bot competitions.",
        epilog="Exit codes: 0 ok, 1 internal error, 2 usage, 3 bot failed to start, "
        "4 replay does not verify.",
    )
    parser.add_argument("--version", action="version", version=f"referee {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, help_text in _available().items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        if name in configure:
            _function(name, 0)(p)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    # Configure only the subcommand being run (none for the top-level help, --version or
    # a name argparse rejects): importing every command's module costs start-up time.
    only = next((a for a in argv if not a.startswith("-")), None)
    parser = build_parser([only] if only in COMMANDS else [])
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return EXIT_USAGE
    try:
        return int(_function(args.command, 1)(args))
    except CliError as exc:
        print(f"referee {args.command}: {exc}", file=sys.stderr)
        return exc.code
    except KeyboardInterrupt:
        print(f"referee {args.command}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # Output piped into something that stopped reading (``| head``): not an error.
        try:
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 (silence the flush at exit)
        except OSError:
            pass
        return EXIT_OK
