"""The server's state in SQLite (``server.sqlite`` in the data directory).

The database is the truth: competitors (token hashes only), bots, their versions
(files content-addressed by sha256 under ``versions/``), every match (queued,
running, done) with its result, and the history of ratings. Each change is
committed before the server acts on it or answers a request, in WAL mode, so a
``kill -9`` at any moment loses nothing accepted or finished: an upload is
stored before it is acknowledged, and a match that was running when the server
died is queued again at start-up and played from scratch.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import sqlite3
import time
from pathlib import Path
from typing import Any

import msgspec

from ..outcome import MatchOutcome, SeatOutcome
from . import moderation

DB_NAME = "server.sqlite"
SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS competitors (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    token_hash TEXT NOT NULL UNIQUE,
    created TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS bots (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    competitor INTEGER REFERENCES competitors(id),  -- NULL: a sample bot
    created TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS versions (
    id INTEGER PRIMARY KEY,
    bot INTEGER NOT NULL REFERENCES bots(id),
    number INTEGER NOT NULL,
    sha256 TEXT NOT NULL,
    command TEXT NOT NULL,       -- JSON argv, ready to run
    status TEXT NOT NULL,        -- validating, active, refused
    reason TEXT,
    created TEXT NOT NULL,
    UNIQUE (bot, number)
);
CREATE TABLE IF NOT EXISTS matches (
    id INTEGER PRIMARY KEY,
    kind TEXT NOT NULL,          -- ladder, validation, challenge, final
    status TEXT NOT NULL,        -- queued, running, done, failed
    version0 INTEGER NOT NULL REFERENCES versions(id),
    version1 INTEGER NOT NULL REFERENCES versions(id),
    seed INTEGER NOT NULL,
    rounds INTEGER NOT NULL,
    requested_by INTEGER REFERENCES competitors(id),
    created TEXT NOT NULL,
    finished TEXT,
    winner INTEGER,              -- seat, NULL for a draw
    score0 REAL, score1 REAL,
    faults0 INTEGER, faults1 INTEGER,
    dq0 INTEGER, dq1 INTEGER,
    status0 TEXT, status1 TEXT,
    steps INTEGER,
    wall_s REAL,
    replay TEXT,                 -- relative to the data directory
    verify TEXT                  -- the replay's verify summary, once checked
);
-- The full outcome JSON, apart: scans of the matches table stay small.
CREATE TABLE IF NOT EXISTS outcomes (
    match INTEGER PRIMARY KEY REFERENCES matches(id),
    outcome TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS matches_kind ON matches (kind, status, id);
CREATE INDEX IF NOT EXISTS matches_status ON matches (status, id);
CREATE INDEX IF NOT EXISTS matches_requested ON matches (requested_by, id);
CREATE INDEX IF NOT EXISTS matches_v0 ON matches (version0, id);
CREATE INDEX IF NOT EXISTS matches_v1 ON matches (version1, id);
CREATE TABLE IF NOT EXISTS ratings (
    id INTEGER PRIMARY KEY,
    version INTEGER NOT NULL REFERENCES versions(id),
    after_match INTEGER NOT NULL,
    games INTEGER NOT NULL,
    rating REAL NOT NULL, low REAL NOT NULL, high REAL NOT NULL,
    at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS ratings_version ON ratings (version, id);
CREATE TABLE IF NOT EXISTS uploads (
    competitor INTEGER NOT NULL, kind TEXT NOT NULL, at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS uploads_by ON uploads (competitor, kind, at);
-- Signed-in browsers: the sha256 of the random value of each session cookie. A
-- session is over when its row is gone (signed out) or past ``expires``.
CREATE TABLE IF NOT EXISTS sessions (
    id_hash TEXT PRIMARY KEY,
    competitor INTEGER NOT NULL REFERENCES competitors(id),
    created REAL NOT NULL,
    expires REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS sessions_expires ON sessions (expires);
-- Requests counted against a limit per client address (sign-up, failed sign-in).
CREATE TABLE IF NOT EXISTS address_hits (
    address TEXT NOT NULL, kind TEXT NOT NULL, at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS address_hits_by ON address_hits (address, kind, at);
"""


class Competitor(msgspec.Struct, frozen=True):
    id: int
    name: str


class Version(msgspec.Struct, frozen=True):
    id: int
    bot: int
    bot_name: str
    owner: str | None  # competitor's name; None for a sample bot
    owner_id: int | None
    number: int
    sha256: str
    command: list[str]
    status: str
    reason: str | None
    created: str


class MatchRow(msgspec.Struct, frozen=True):
    id: int
    kind: str
    status: str
    version0: int
    version1: int
    seed: int
    rounds: int
    requested_by: int | None
    created: str
    finished: str | None
    winner: int | None
    score0: float | None
    score1: float | None
    faults0: int | None
    faults1: int | None
    dq0: int | None
    dq1: int | None
    status0: str | None
    status1: str | None
    steps: int | None
    wall_s: float | None
    replay: str | None


MATCH_COLUMNS = ", ".join(f"m.{f}" for f in MatchRow.__struct_fields__)


# Competitors the organiser disabled are not found by token or session.
_ENABLED = " AND id NOT IN (SELECT id FROM disabled WHERE kind = 'competitor')"


class NameTaken(Exception):
    pass


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def hash_token(token: str) -> str:
    # Tokens are 256 random bits: a fast hash cannot be inverted or searched, so a
    # slow password hash would add nothing (it protects guessable secrets).
    return hashlib.sha256(token.encode()).hexdigest()


# The data directory's own mode: its owner reads and writes it; the bots' uids may
# pass through it to their version's files (``versions/``, which must be readable
# by them) but list nothing.
DATA_DIR_MODE = 0o711
# Directories a bot never reads, and the database: the owner's only.
PRIVATE_DIRS = ("logs", "replays", "public", "finals")


def owner_only(data_dir: Path) -> None:
    """Create the data directory (or tighten an existing one) so that other local
    users can read nothing in it: the database (token hashes, sessions) and its
    journal 0600, the logs and replays (the bots' stderr) 0700. SQLite creates its
    WAL and shared-memory files with the database file's mode."""
    data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(data_dir, DATA_DIR_MODE)
    (data_dir / "versions").mkdir(exist_ok=True, mode=0o711)
    os.chmod(data_dir / "versions", 0o711)
    for name in PRIVATE_DIRS:
        (data_dir / name).mkdir(exist_ok=True, mode=0o700)
        os.chmod(data_dir / name, 0o700)
    os.close(os.open(data_dir / DB_NAME, os.O_RDWR | os.O_CREAT, 0o600))
    for suffix in ("", "-wal", "-shm", "-journal"):
        path = data_dir / (DB_NAME + suffix)
        if path.exists():
            os.chmod(path, 0o600)


class Store:
    def __init__(self, data_dir: Path) -> None:
        self.dir = data_dir
        owner_only(data_dir)
        self.conn = sqlite3.connect(data_dir / DB_NAME, timeout=30.0, isolation_level=None)
        self.conn.execute("PRAGMA journal_mode=WAL")
        # NORMAL: durable against the server being killed (the WAL holds a commit by
        # the time COMMIT returns); only an OS crash could lose the last one.
        self.conn.execute("PRAGMA synchronous=NORMAL")
        self.conn.execute("PRAGMA foreign_keys=ON")
        self.conn.executescript(_SCHEMA)
        moderation.create(self.conn)
        if self.get("schema") is None:
            self.set("schema", str(SCHEMA_VERSION))

    def close(self) -> None:
        self.conn.close()

    def tx(self) -> Any:
        """A transaction: ``with store.tx(): ...`` commits at the end, or rolls back."""
        return _Tx(self.conn)

    # -- meta ------------------------------------------------------------------

    def get(self, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set(self, key: str, value: str) -> None:
        self.conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    # -- competitors -----------------------------------------------------------

    def add_competitor(self, name: str) -> str:
        """Register ``name``; returns its token (shown once, stored only hashed)."""
        # The prefix keeps a token from starting with "-" (a command line would take
        # it for an option).
        token = "rt_" + secrets.token_urlsafe(32)
        try:
            self.conn.execute(
                "INSERT INTO competitors (name, token_hash, created) VALUES (?, ?, ?)",
                (name, hash_token(token), now()),
            )
        except sqlite3.IntegrityError:
            raise NameTaken(f"competitor {name!r} already exists") from None
        return token

    def competitor_by_token(self, token: str) -> Competitor | None:
        digest = hash_token(token)
        row = self.conn.execute(
            "SELECT id, name, token_hash FROM competitors WHERE token_hash = ?" + _ENABLED,
            (digest,),
        ).fetchone()
        # The lookup found the row by its hash; the constant-time comparison keeps the
        # final check free of timing differences whatever the index does.
        if row is None or not hmac.compare_digest(str(row[2]), digest):
            return None
        return Competitor(id=int(row[0]), name=str(row[1]))

    def competitor(self, cid: int) -> Competitor | None:
        """The competitor ``cid``, unless the organiser disabled it (its sessions and
        token then open nothing)."""
        row = self.conn.execute(
            "SELECT id, name FROM competitors WHERE id = ?" + _ENABLED, (cid,)
        ).fetchone()
        return None if row is None else Competitor(id=int(row[0]), name=str(row[1]))

    def rotate_token(self, cid: int) -> str:
        """A new token for competitor ``cid`` (returned once); the old one stops working
        and every session signed in before ends (whoever had the token may have one)."""
        token = "rt_" + secrets.token_urlsafe(32)
        with self.tx():
            self.conn.execute(
                "UPDATE competitors SET token_hash = ? WHERE id = ?", (hash_token(token), cid)
            )
            self.conn.execute("DELETE FROM sessions WHERE competitor = ?", (cid,))
        return token

    def competitor_by_name(self, name: str) -> Competitor | None:
        row = self.conn.execute(
            "SELECT id, name FROM competitors WHERE name = ?", (name,)
        ).fetchone()
        return None if row is None else Competitor(id=int(row[0]), name=str(row[1]))

    def note_request(self, competitor: int, kind: str, limit: int, window_s: float) -> bool:
        """Count one upload (or challenge) against the competitor's hourly budget;
        False (and nothing counted) if the budget is spent."""
        t = time.time()
        with self.tx():
            (n,) = self.conn.execute(
                "SELECT COUNT(*) FROM uploads WHERE competitor = ? AND kind = ? AND at > ?",
                (competitor, kind, t - window_s),
            ).fetchone()
            if n >= limit:
                return False
            self.conn.execute(
                "INSERT INTO uploads (competitor, kind, at) VALUES (?, ?, ?)", (competitor, kind, t)
            )
        return True

    def request_wait(self, competitor: int, kind: str, limit: int, window_s: float) -> float:
        """Seconds until the competitor's budget of ``kind`` has room again (0: now)."""
        return self._wait(
            "SELECT at FROM uploads WHERE competitor = ? AND kind = ? AND at > ? "
            "ORDER BY at DESC LIMIT 1 OFFSET ?",
            competitor,
            kind,
            limit,
            window_s,
        )

    def _wait(self, query: str, who: Any, kind: str, limit: int, window_s: float) -> float:
        t = time.time()
        # The limit-th newest request in the window: once it leaves, there is room.
        row = self.conn.execute(query, (who, kind, t - window_s, max(limit - 1, 0))).fetchone()
        return 0.0 if row is None else max(0.0, float(row[0]) + window_s - t)

    # -- limits per address and sessions ---------------------------------------

    def address_wait(self, address: str, kind: str, limit: int, window_s: float) -> float:
        """Seconds until ``address`` may make another request of ``kind`` (0: now)."""
        return self._wait(
            "SELECT at FROM address_hits WHERE address = ? AND kind = ? AND at > ? "
            "ORDER BY at DESC LIMIT 1 OFFSET ?",
            address,
            kind,
            limit,
            window_s,
        )

    def note_address(self, address: str, kind: str, window_s: float) -> None:
        """Count one request of ``kind`` from ``address`` (and forget old ones)."""
        t = time.time()
        with self.tx():
            self.conn.execute(
                "DELETE FROM address_hits WHERE address = ? AND kind = ? AND at <= ?",
                (address, kind, t - window_s),
            )
            self.conn.execute(
                "INSERT INTO address_hits (address, kind, at) VALUES (?, ?, ?)",
                (address, kind, t),
            )

    def add_session(self, competitor: int, lifetime_s: float) -> str:
        """A new session of ``competitor``; returns the cookie's value (stored hashed)."""
        value = secrets.token_urlsafe(32)
        t = time.time()
        with self.tx():
            self.conn.execute("DELETE FROM sessions WHERE expires <= ?", (t,))
            self.conn.execute(
                "INSERT INTO sessions (id_hash, competitor, created, expires) VALUES (?, ?, ?, ?)",
                (hash_token(value), competitor, t, t + lifetime_s),
            )
        return value

    def session_competitor(self, value: str) -> Competitor | None:
        """The competitor of a live session, or None (unknown, signed out or expired)."""
        row = self.conn.execute(
            "SELECT c.id, c.name FROM sessions s JOIN competitors c ON c.id = s.competitor "
            "WHERE s.id_hash = ? AND s.expires > ? AND c.id NOT IN "
            "(SELECT id FROM disabled WHERE kind = 'competitor')",
            (hash_token(value), time.time()),
        ).fetchone()
        return None if row is None else Competitor(id=int(row[0]), name=str(row[1]))

    def drop_session(self, value: str) -> None:
        self.conn.execute("DELETE FROM sessions WHERE id_hash = ?", (hash_token(value),))

    # -- bots and versions ----------------------------------------------------

    def bot_id(self, name: str) -> tuple[int, int | None] | None:
        row = self.conn.execute(
            "SELECT id, competitor FROM bots WHERE name = ?", (name,)
        ).fetchone()
        return None if row is None else (int(row[0]), row[1])

    def add_version(
        self, bot_name: str, owner: int | None, sha256: str, command: list[str], status: str
    ) -> Version:
        """A new version of ``bot_name`` (created if new; NameTaken if another owner
        has it). Versions are numbered 1, 2... per bot."""
        with self.tx():
            found = self.bot_id(bot_name)
            if found is None:
                cur = self.conn.execute(
                    "INSERT INTO bots (name, competitor, created) VALUES (?, ?, ?)",
                    (bot_name, owner, now()),
                )
                bot = int(cur.lastrowid or 0)
            else:
                bot, bot_owner = found
                if bot_owner != owner:
                    raise NameTaken(f"the bot name {bot_name!r} belongs to someone else")
            (number,) = self.conn.execute(
                "SELECT COALESCE(MAX(number), 0) + 1 FROM versions WHERE bot = ?", (bot,)
            ).fetchone()
            cur = self.conn.execute(
                "INSERT INTO versions (bot, number, sha256, command, status, created) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (bot, number, sha256, json.dumps(command), status, now()),
            )
            vid = int(cur.lastrowid or 0)
        version = self.version(vid)
        assert version is not None
        return version

    def set_version_status(self, vid: int, status: str, reason: str | None = None) -> None:
        self.conn.execute(
            "UPDATE versions SET status = ?, reason = ? WHERE id = ?", (status, reason, vid)
        )

    _VERSION_SQL = (
        "SELECT v.id, v.bot, b.name, c.name, b.competitor, v.number, v.sha256, v.command, "
        "v.status, v.reason, v.created FROM versions v JOIN bots b ON b.id = v.bot "
        "LEFT JOIN competitors c ON c.id = b.competitor "
    )

    @staticmethod
    def _version(row: tuple[Any, ...]) -> Version:
        return Version(
            id=row[0],
            bot=row[1],
            bot_name=row[2],
            owner=row[3],
            owner_id=row[4],
            number=row[5],
            sha256=row[6],
            command=json.loads(row[7]),
            status=row[8],
            reason=row[9],
            created=row[10],
        )

    def version(self, vid: int) -> Version | None:
        row = self.conn.execute(self._VERSION_SQL + "WHERE v.id = ?", (vid,)).fetchone()
        return None if row is None else self._version(row)

    def versions_of(self, bot: int) -> list[Version]:
        rows = self.conn.execute(self._VERSION_SQL + "WHERE v.bot = ? ORDER BY v.number", (bot,))
        return [self._version(r) for r in rows]

    def versions_with_status(self, status: str) -> list[Version]:
        rows = self.conn.execute(self._VERSION_SQL + "WHERE v.status = ? ORDER BY v.id", (status,))
        return [self._version(r) for r in rows]

    def current_versions(self) -> list[Version]:
        """Each bot's latest active version: the ones the ladder rates and plays."""
        rows = self.conn.execute(
            self._VERSION_SQL + "WHERE v.id IN (SELECT MAX(id) FROM versions "
            "WHERE status = 'active' GROUP BY bot) ORDER BY v.id"
        )
        return [self._version(r) for r in rows]

    def bots_of(self, competitor: int) -> list[tuple[int, str]]:
        rows = self.conn.execute(
            "SELECT id, name FROM bots WHERE competitor = ? ORDER BY id", (competitor,)
        )
        return [(int(r[0]), str(r[1])) for r in rows]

    def bot_by_name(self, name: str) -> tuple[int, str, str | None] | None:
        row = self.conn.execute(
            "SELECT b.id, b.name, c.name FROM bots b LEFT JOIN competitors c "
            "ON c.id = b.competitor WHERE b.name = ?",
            (name,),
        ).fetchone()
        return None if row is None else (int(row[0]), str(row[1]), row[2])

    # -- matches ---------------------------------------------------------------

    def add_match(
        self,
        kind: str,
        version0: int,
        version1: int,
        seed: int,
        rounds: int,
        requested_by: int | None = None,
        status: str = "running",
    ) -> int:
        cur = self.conn.execute(
            "INSERT INTO matches (kind, status, version0, version1, seed, rounds, requested_by,"
            " created) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (kind, status, version0, version1, seed, rounds, requested_by, now()),
        )
        return int(cur.lastrowid or 0)

    def set_match_status(self, mid: int, status: str) -> None:
        self.conn.execute("UPDATE matches SET status = ? WHERE id = ?", (status, mid))

    def requeue_interrupted(self) -> int:
        """Matches that were running when the server stopped: queued to play again."""
        with self.tx():
            # A validation is started again from its version (still "validating").
            self.conn.execute(
                "UPDATE matches SET status = 'abandoned' WHERE status IN ('running', 'queued') "
                "AND kind = 'validation'"
            )
            cur = self.conn.execute("UPDATE matches SET status = 'queued' WHERE status = 'running'")
        return cur.rowcount

    def record_match(self, mid: int, outcome: MatchOutcome) -> None:
        """Commit a finished match; only then does anything count it."""
        s0, s1 = outcome.seats[0], outcome.seats[1]

        def score(seat: SeatOutcome) -> float:
            scores = seat.scores
            return float(scores.get("final", next(iter(scores.values()), 0.0)))

        with self.tx():
            self.conn.execute(
                "INSERT OR REPLACE INTO outcomes (match, outcome) VALUES (?, ?)",
                (mid, msgspec.json.encode(outcome).decode()),
            )
            self._record(mid, outcome, score(s0), score(s1))

    def _record(self, mid: int, outcome: MatchOutcome, score0: float, score1: float) -> None:
        s0, s1 = outcome.seats[0], outcome.seats[1]
        self.conn.execute(
            "UPDATE matches SET status = 'done', finished = ?, winner = ?, score0 = ?, "
            "score1 = ?, faults0 = ?, faults1 = ?, dq0 = ?, dq1 = ?, status0 = ?, status1 = ?, "
            "steps = ?, wall_s = ?, replay = ? WHERE id = ?",
            (
                now(),
                outcome.winner,
                score0,
                score1,
                len(s0.verdict.faults),
                len(s1.verdict.faults),
                int(s0.verdict.disqualified),
                int(s1.verdict.disqualified),
                s0.verdict.status,
                s1.verdict.status,
                outcome.steps,
                outcome.wall_s,
                outcome.replay,
                mid,
            ),
        )

    def match(self, mid: int) -> MatchRow | None:
        row = self.conn.execute(
            f"SELECT {MATCH_COLUMNS} FROM matches m WHERE m.id = ?", (mid,)
        ).fetchone()
        return None if row is None else MatchRow(*row)

    def match_outcome(self, mid: int) -> dict[str, Any] | None:
        row = self.conn.execute("SELECT outcome FROM outcomes WHERE match = ?", (mid,)).fetchone()
        return None if row is None or row[0] is None else dict(json.loads(row[0]))

    def matches(
        self,
        kind: str | None = None,
        status: str | None = None,
        version: int | None = None,
        versions: list[int] | None = None,
        requested_by: int | None = None,
        limit: int = 50,
        ascending: bool = False,
        public: bool = False,
    ) -> list[MatchRow]:
        """Matches, newest first; ``public``: without validation matches (their
        failures are their owner's business)."""
        where: list[str] = []
        args: list[Any] = []
        if public:
            where.append("m.kind != 'validation'")
        if kind is not None:
            where.append("m.kind = ?")
            args.append(kind)
        if status is not None:
            where.append("m.status = ?")
            args.append(status)
        if version is not None:
            where.append("(m.version0 = ? OR m.version1 = ?)")
            args += [version, version]
        if versions is not None:
            # Two indexed lookups (an OR of the two columns would scan the table).
            marks = ",".join("?" * len(versions)) or "NULL"
            where.append(
                f"m.id IN (SELECT id FROM (SELECT id FROM matches WHERE version0 IN ({marks}) "
                f"ORDER BY id DESC LIMIT ?) UNION SELECT id FROM (SELECT id FROM matches "
                f"WHERE version1 IN ({marks}) ORDER BY id DESC LIMIT ?))"
            )
            args += [*versions, limit, *versions, limit]
        if requested_by is not None:
            where.append("m.requested_by = ?")
            args.append(requested_by)
        sql = f"SELECT {MATCH_COLUMNS} FROM matches m"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += f" ORDER BY m.id {'ASC' if ascending else 'DESC'} LIMIT ?"
        args.append(limit)
        return [MatchRow(*r) for r in self.conn.execute(sql, args)]

    def ladder_results(
        self, versions: list[int] | None
    ) -> list[tuple[int, int, int | None, int, int]]:
        """(version0, version1, winner seat, faults0, faults1) of every finished ladder
        match (between two of ``versions``, unless None), oldest first."""
        sql = (
            "SELECT version0, version1, winner, faults0, faults1 FROM matches "
            "WHERE kind = 'ladder' AND status = 'done'"
        )
        args: list[Any] = []
        if versions is not None:
            if not versions:
                return []
            marks = ",".join("?" * len(versions))
            sql += f" AND version0 IN ({marks}) AND version1 IN ({marks})"
            args = versions + versions
        rows = self.conn.execute(sql + " ORDER BY id", args)
        return [(int(a), int(b), w, int(f0 or 0), int(f1 or 0)) for a, b, w, f0, f1 in rows]

    def verify_summary(self, mid: int) -> str | None:
        row = self.conn.execute("SELECT verify FROM matches WHERE id = ?", (mid,)).fetchone()
        return None if row is None else row[0]

    def set_verify_summary(self, mid: int, summary: str) -> None:
        self.conn.execute("UPDATE matches SET verify = ? WHERE id = ?", (summary, mid))

    def last_match_id(self) -> int:
        (n,) = self.conn.execute("SELECT COALESCE(MAX(id), 0) FROM matches").fetchone()
        return int(n)

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for kind, status, n in self.conn.execute(
            "SELECT kind, status, COUNT(*) FROM matches GROUP BY kind, status"
        ):
            out[f"{kind}.{status}"] = int(n)
        return out

    # -- ratings history -----------------------------------------------------

    def add_ratings(
        self, after_match: int, rows: list[tuple[int, int, float, float, float]]
    ) -> None:
        t = now()
        with self.tx():
            self.conn.executemany(
                "INSERT INTO ratings (version, after_match, games, rating, low, high, at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                [(v, after_match, g, r, lo, hi, t) for v, g, r, lo, hi in rows],
            )

    def rating_history(self, versions: list[int], limit: int = 500) -> list[tuple[Any, ...]]:
        marks = ",".join("?" * len(versions)) or "NULL"
        rows = self.conn.execute(
            "SELECT version, after_match, games, rating, low, high FROM ratings "
            f"WHERE version IN ({marks}) ORDER BY id DESC LIMIT ?",
            [*versions, limit],
        ).fetchall()
        return list(reversed(rows))


class _Tx:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def __enter__(self) -> None:
        self.conn.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: Any, *_: Any) -> None:
        self.conn.execute("ROLLBACK" if exc_type else "COMMIT")
