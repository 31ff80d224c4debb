"""What the organiser decides about a running competition, kept in the database
beside the rest (``referee admin`` writes it, the server reads it): competitors and
bots taken off the ladder, and the announcement shown on every page.

These are tables of their own, so a database made before them gains them at the
next start without touching the others. Nothing here is deleted: a disabled bot
keeps its versions, matches and rating history, and enabling it again puts it
back as it was.
"""

from __future__ import annotations

import sqlite3
import time
from typing import Any

SCHEMA = """
CREATE TABLE IF NOT EXISTS disabled (
    kind TEXT NOT NULL,          -- 'competitor' or 'bot'
    id INTEGER NOT NULL,
    at TEXT NOT NULL,
    PRIMARY KEY (kind, id)
);
CREATE TABLE IF NOT EXISTS announcements (
    id INTEGER PRIMARY KEY,
    text TEXT NOT NULL,          -- '' withdraws the one before
    at TEXT NOT NULL
);
"""

KINDS = ("competitor", "bot")
ANNOUNCEMENT_CHARS = 500


def create(conn: sqlite3.Connection) -> None:
    conn.executescript(SCHEMA)


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def set_disabled(conn: sqlite3.Connection, kind: str, ident: int, disabled: bool) -> bool:
    """Disable or enable a competitor or a bot; False if it already was."""
    assert kind in KINDS
    if disabled:
        cur = conn.execute(
            "INSERT OR IGNORE INTO disabled (kind, id, at) VALUES (?, ?, ?)", (kind, ident, _now())
        )
    else:
        cur = conn.execute("DELETE FROM disabled WHERE kind = ? AND id = ?", (kind, ident))
    return cur.rowcount > 0


def is_disabled(conn: sqlite3.Connection, kind: str, ident: int) -> bool:
    row = conn.execute("SELECT 1 FROM disabled WHERE kind = ? AND id = ?", (kind, ident)).fetchone()
    return row is not None


def disabled_ids(conn: sqlite3.Connection, kind: str) -> set[int]:
    return {int(r[0]) for r in conn.execute("SELECT id FROM disabled WHERE kind = ?", (kind,))}


def disabled_versions(conn: sqlite3.Connection) -> set[int]:
    """Every version of a disabled bot or of a disabled competitor's bot: the
    versions matchmaking must never pick."""
    rows = conn.execute(
        "SELECT v.id FROM versions v JOIN bots b ON b.id = v.bot WHERE "
        "b.id IN (SELECT id FROM disabled WHERE kind = 'bot') OR "
        "b.competitor IN (SELECT id FROM disabled WHERE kind = 'competitor')"
    )
    return {int(r[0]) for r in rows}


def announce(conn: sqlite3.Connection, text: str) -> None:
    conn.execute("INSERT INTO announcements (text, at) VALUES (?, ?)", (text, _now()))


def announcement(conn: sqlite3.Connection) -> tuple[str, str] | None:
    """The announcement on show (text, when), or None."""
    row = conn.execute("SELECT text, at FROM announcements ORDER BY id DESC LIMIT 1").fetchone()
    if row is None or not row[0]:
        return None
    return str(row[0]), str(row[1])


# How often the server looks for the organiser's changes (made from another process).
WATCH_SECONDS = 1.0


async def watch(site: Any) -> None:
    """Keep the pages up to date with ``referee admin``'s changes.

    SQLite counts the commits of other connections (``PRAGMA data_version``), so a
    look costs one read: when it moved, the announcement is read again and the
    ladder refreshed (a disabled bot is marked on the leaderboard), which also
    makes every page kept for readers stale. Matchmaking and sign-in do not wait
    for this: they read the database every time."""
    import trio

    conn = site.store.conn
    seen = None
    while True:
        (version,) = conn.execute("PRAGMA data_version").fetchone()
        if version != seen:
            seen = version
            shown = announcement(conn)
            site.env.globals["announcement"] = shown[0] if shown else ""
            await site.ladder.refresh()
        await trio.sleep(WATCH_SECONDS)
