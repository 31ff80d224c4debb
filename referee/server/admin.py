"""``referee admin --data DIR ...``: the organiser's commands for a competition
server's data directory, usable while ``referee serve`` runs on it.

Each command is one short SQLite transaction on the server's database (WAL mode,
with a busy timeout: it waits for the server's write in progress, never corrupts
it). The server reads what matters at once: matchmaking reads the disabled bots
before every pairing, a disabled competitor's token and sessions open nothing
from the next request, and the pages show a change within a second (see
``moderation.watch``).

    list | competitors | bots       what is there
    disable/enable competitor NAME  a disabled competitor's token and sessions stop
                                    working and all its bots leave the ladder
    disable/enable bot NAME         the bot plays no match; its rating is kept
    rotate-token NAME               a new token, printed once; the old one stops
    rerun MATCH                     verify the replay, play the match again from
                                    its seeds and compare round by round
    rerun MATCH --requeue           queue a match that did not finish (failed)
    announce TEXT | --clear         a line shown at the top of every page
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
from pathlib import Path
from typing import Any

from ..errors import EXIT_BAD_REPLAY, EXIT_OK, CliError
from . import moderation


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--data",
        type=Path,
        default=Path("competition-data"),
        help="the server's data directory (default competition-data)",
    )
    sub = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    for name, what in (
        ("list", "competitors and bots"),
        ("competitors", "every competitor"),
        ("bots", "every bot, its current version and rating"),
    ):
        q = sub.add_parser(name, help=f"list {what}")
        q.add_argument("--json", action="store_true", help="as JSON")
    for name, what in (("disable", "take off the ladder"), ("enable", "put back")):
        q = sub.add_parser(name, help=f"{what} a competitor (all its bots) or one bot")
        q.add_argument("kind", choices=moderation.KINDS)
        q.add_argument("name")
    q = sub.add_parser("rotate-token", help="give a competitor a new token (printed once)")
    q.add_argument("name")
    q = sub.add_parser("rerun", help="re-check a match: verify its replay, play it again, compare")
    q.add_argument("match", type=int)
    q.add_argument(
        "--requeue",
        action="store_true",
        help="instead, queue a match that did not finish (failed) to be played again",
    )
    q = sub.add_parser("announce", help="show a line at the top of every page")
    q.add_argument("text", nargs="?")
    q.add_argument("--clear", action="store_true", help="withdraw the announcement")


def _open(data: Path) -> Any:
    from .db import DB_NAME, Store

    if not (data / DB_NAME).is_file():
        raise CliError(f"no competition in {data} (no {DB_NAME}): give the server's --data")
    try:
        return Store(data)
    except sqlite3.Error as exc:
        raise CliError(f"cannot open {data / DB_NAME}: {exc}") from None


def run(args: argparse.Namespace) -> int:
    store = _open(args.data)
    try:
        action = args.action.replace("-", "_")
        result: int = globals()[f"_{action}"](store, args)
        return result
    except sqlite3.Error as exc:
        raise CliError(f"database: {exc}") from None
    finally:
        store.close()


# -- listing ---------------------------------------------------------------------


def competitors(store: Any) -> list[dict[str, Any]]:
    off = moderation.disabled_ids(store.conn, "competitor")
    rows = store.conn.execute(
        "SELECT c.id, c.name, c.created, COUNT(b.id) FROM competitors c "
        "LEFT JOIN bots b ON b.competitor = c.id GROUP BY c.id ORDER BY c.id"
    )
    return [
        {"name": name, "created": created, "bots": int(n), "disabled": cid in off}
        for cid, name, created, n in rows
    ]


def bots(store: Any) -> list[dict[str, Any]]:
    off_bots = moderation.disabled_ids(store.conn, "bot")
    off_owners = moderation.disabled_ids(store.conn, "competitor")
    current = {v.bot: v for v in store.current_versions()}
    out = []
    rows = store.conn.execute(
        "SELECT b.id, b.name, b.competitor, c.name, COUNT(v.id) FROM bots b "
        "LEFT JOIN competitors c ON c.id = b.competitor "
        "LEFT JOIN versions v ON v.bot = b.id GROUP BY b.id ORDER BY b.id"
    )
    for bid, name, owner_id, owner, versions in rows.fetchall():
        v = current.get(bid)
        rating = None
        if v is not None:
            rating = store.conn.execute(
                "SELECT rating, low, high, games FROM ratings WHERE version = ? "
                "ORDER BY id DESC LIMIT 1",
                (v.id,),
            ).fetchone()
        out.append(
            {
                "name": name,
                "owner": owner,
                "versions": int(versions),
                "current": v.number if v is not None else None,
                "rating": None if rating is None else round(float(rating[0])),
                "interval": None if rating is None else [round(rating[1]), round(rating[2])],
                "games": 0 if rating is None else int(rating[3]),
                "disabled": bid in off_bots,
                "owner_disabled": owner_id in off_owners,
            }
        )
    return out


def _print_rows(rows: list[dict[str, Any]], columns: list[tuple[str, str]]) -> None:
    cells = [[title for title, _ in columns]]
    for row in rows:
        cells.append([_cell(row[key]) for _, key in columns])
    widths = [max(len(c[i]) for c in cells) for i in range(len(columns))]
    for line in cells:
        print("  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip())


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else ""
    if isinstance(value, list):
        return f"{value[0]}..{value[1]}"
    return str(value)


def _competitors(store: Any, args: argparse.Namespace) -> int:
    rows = competitors(store)
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        cols = [("competitor", "name"), ("bots", "bots"), ("since", "created")]
        _print_rows(rows, [*cols, ("disabled", "disabled")])
    return EXIT_OK


def _bots(store: Any, args: argparse.Namespace) -> int:
    rows = bots(store)
    for row in rows:
        row["owner"] = row["owner"] or "(sample)"
        if row["owner_disabled"]:
            row["disabled"] = "owner"
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        _print_rows(
            rows,
            [
                ("bot", "name"),
                ("owner", "owner"),
                ("versions", "versions"),
                ("current", "current"),
                ("rating", "rating"),
                ("95% interval", "interval"),
                ("games", "games"),
                ("disabled", "disabled"),
            ],
        )
    return EXIT_OK


def _list(store: Any, args: argparse.Namespace) -> int:
    if args.json:
        print(json.dumps({"competitors": competitors(store), "bots": bots(store)}, indent=2))
        return EXIT_OK
    _competitors(store, args)
    print()
    return _bots(store, args)


# -- changes ---------------------------------------------------------------------


def _target(store: Any, kind: str, name: str) -> int:
    table = "competitors" if kind == "competitor" else "bots"
    row = store.conn.execute(f"SELECT id FROM {table} WHERE name = ?", (name,)).fetchone()
    if row is None:
        raise CliError(f"no {kind} named {name!r} (see: referee admin --data DIR {table})")
    return int(row[0])


def _switch(store: Any, args: argparse.Namespace, disabled: bool) -> int:
    ident = _target(store, args.kind, args.name)
    changed = moderation.set_disabled(store.conn, args.kind, ident, disabled)
    state = "disabled" if disabled else "enabled"
    if not changed:
        print(f"{args.kind} {args.name!r} was already {state}")
    elif args.kind == "bot":
        what = "off the ladder (its rating is kept)" if disabled else "back on the ladder"
        print(f"bot {args.name!r} {state}: {what}")
    else:
        what = (
            "its token and sessions no longer work and its bots are off the ladder"
            if disabled
            else "its token works again and its bots are back on the ladder"
        )
        print(f"competitor {args.name!r} {state}: {what}")
    return EXIT_OK


def _disable(store: Any, args: argparse.Namespace) -> int:
    return _switch(store, args, True)


def _enable(store: Any, args: argparse.Namespace) -> int:
    return _switch(store, args, False)


def _rotate_token(store: Any, args: argparse.Namespace) -> int:
    ident = _target(store, "competitor", args.name)
    token = store.rotate_token(ident)
    print(token)
    print(
        f"(the new token of {args.name}; the old one no longer works; it is not stored "
        "and cannot be shown again)",
        file=sys.stderr,
    )
    return EXIT_OK


def _announce(store: Any, args: argparse.Namespace) -> int:
    if args.clear == (args.text is not None):
        raise CliError("give the announcement's text, or --clear (one of them)")
    text = "" if args.clear else " ".join(args.text.split())
    if not args.clear and not text:
        raise CliError("the announcement is empty (use --clear to withdraw one)")
    if len(text) > moderation.ANNOUNCEMENT_CHARS or not text.isprintable():
        raise CliError(f"an announcement is 1-{moderation.ANNOUNCEMENT_CHARS} printable characters")
    moderation.announce(store.conn, text)
    print("announcement withdrawn" if args.clear else f"announced: {text}")
    return EXIT_OK


def _rerun(store: Any, args: argparse.Namespace) -> int:
    row = store.match(args.match)
    if row is None:
        raise CliError(f"no match {args.match}")
    if args.requeue:
        return _requeue(store, row)
    if row.status != "done" or not row.replay:
        raise CliError(
            f"match {row.id} is {row.status}, with no replay to re-check"
            + (" (--requeue plays it again)" if row.status == "failed" else "")
        )
    replay = store.dir / row.replay
    if not replay.is_file():
        raise CliError(f"match {row.id}'s replay {replay} is missing")
    from ..step_report import verify_summary

    summary = verify_summary(replay)
    print(f"match {row.id} ({row.kind}): verify: {summary}")
    if not summary.startswith("OK"):
        return EXIT_BAD_REPLAY
    from .. import rerun

    return int(rerun.run(argparse.Namespace(file=str(replay), keep=None, sandbox=None)))


def _requeue(store: Any, row: Any) -> int:
    if row.kind not in ("ladder", "challenge"):
        raise CliError(
            f"match {row.id} is a {row.kind} match: only ladder and challenge matches are "
            "queued again (a validation is redone when its version is uploaded again)"
        )
    if row.status != "failed":
        raise CliError(
            f"match {row.id} is {row.status}: only a failed match is queued again "
            "(a finished one has counted already; playing it twice would count it twice)"
        )
    store.set_match_status(row.id, "queued")
    print(f"match {row.id} queued: the server plays it again with the same seed")
    return EXIT_OK
