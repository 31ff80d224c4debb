"""The tournament's state in SQLite (``tournament.sqlite`` in the output directory).

The database is the truth: the resolved config, the bots, every scheduled match,
and each finished match's result, committed in one transaction before anything
counts it. A run killed at any moment therefore loses at most the matches in
flight, and ``--resume`` plays exactly those again. WAL mode keeps each commit
cheap and lets the dashboard (or a curious user's sqlite3) read while it runs.
"""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from typing import Any

import msgspec

from ..games import GAMES
from ..outcome import MatchOutcome, SeatOutcome, decode_outcome
from .config import Resolved
from .schedule import MatchPlan, Played, TablePlayed

DB_NAME = "tournament.sqlite"
SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS bots (
    idx INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, command TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS matches (
    id TEXT PRIMARY KEY,
    ord INTEGER NOT NULL,
    stage TEXT NOT NULL,
    round INTEGER NOT NULL,
    tie INTEGER NOT NULL,
    game INTEGER NOT NULL,
    seat0 INTEGER NOT NULL,
    seat1 INTEGER NOT NULL,
    seed INTEGER NOT NULL,
    rounds INTEGER NOT NULL,
    status TEXT NOT NULL DEFAULT 'pending',
    winner INTEGER,
    result TEXT,
    replay TEXT,
    wall_s REAL,
    finished_at TEXT,
    seats TEXT
);
CREATE INDEX IF NOT EXISTS matches_status ON matches (status, ord);
"""


class StateError(Exception):
    """The output directory holds no usable tournament database."""


class Store:
    def __init__(self, conn: sqlite3.Connection, path: Path) -> None:
        self.conn = conn
        self.path = path

    @classmethod
    def create(cls, directory: Path, resolved: Resolved) -> Store:
        path = directory / DB_NAME
        if path.exists():
            raise StateError(
                f"{path} already exists: use --resume {directory} to finish that tournament, "
                "or choose another --out"
            )
        try:
            directory.mkdir(parents=True, exist_ok=True)
            conn = _connect(path)
        except (OSError, sqlite3.Error) as exc:
            why = getattr(exc, "strerror", None) or exc
            raise StateError(f"cannot create the tournament in {directory}: {why}") from None
        store = cls(conn, path)
        with store.conn:
            store.conn.executescript(_SCHEMA)
            store._set("schema", str(SCHEMA_VERSION))
            store._set("config", msgspec.json.encode(resolved).decode())
            store._set("created", _now())
            store._set("status", "running")
            store.conn.executemany(
                "INSERT INTO bots (idx, name, command) VALUES (?, ?, ?)",
                [(i, b.name, json.dumps(b.argv)) for i, b in enumerate(resolved.bots)],
            )
        return store

    @classmethod
    def open(cls, directory: Path) -> Store:
        path = directory / DB_NAME
        if not path.is_file():
            raise StateError(f"no tournament to resume: {path} does not exist")
        try:
            conn = _connect(path)
            row = conn.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
        except sqlite3.DatabaseError as exc:
            raise StateError(f"{path} is not a tournament database: {exc}") from None
        if row is None or int(row[0]) != SCHEMA_VERSION:
            raise StateError(f"{path}: unsupported tournament database version")
        columns = {r[1] for r in conn.execute("PRAGMA table_info(matches)")}
        if "seats" not in columns:  # made before tables existed
            with conn:
                conn.execute("ALTER TABLE matches ADD COLUMN seats TEXT")
        return cls(conn, path)

    def close(self) -> None:
        self.conn.close()

    # -- meta ------------------------------------------------------------------

    def _set(self, key: str, value: str) -> None:
        self.conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    def get(self, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set(self, key: str, value: str) -> None:
        with self.conn:
            self._set(key, value)

    def resolved(self) -> Resolved:
        text = self.get("config")
        if text is None:
            raise StateError(f"{self.path}: the config is missing")
        return msgspec.json.decode(text, type=Resolved)

    # -- matches ---------------------------------------------------------------

    def schedule(self, plans: list[MatchPlan]) -> int:
        """Add matches not yet known (by id); returns how many were new."""
        if not plans:
            return 0
        with self.conn:
            (top,) = self.conn.execute("SELECT COALESCE(MAX(ord), 0) FROM matches").fetchone()
            before = self.conn.total_changes
            self.conn.executemany(
                "INSERT OR IGNORE INTO matches (id, ord, stage, round, tie, game, seat0, seat1,"
                " seed, rounds, seats) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        p.id,
                        top + k + 1,
                        p.stage,
                        p.round,
                        p.tie,
                        p.game,
                        p.seats[0],
                        p.seats[1],
                        p.seed,
                        p.rounds,
                        json.dumps(list(p.seats)) if len(p.seats) != 2 else None,
                    )
                    for k, p in enumerate(plans)
                ],
            )
            return self.conn.total_changes - before

    def pending(self) -> list[MatchPlan]:
        rows = self.conn.execute(
            "SELECT id, stage, round, tie, game, seat0, seat1, seed, rounds, seats FROM matches"
            " WHERE status = 'pending' ORDER BY ord"
        ).fetchall()
        return [_plan(r) for r in rows]

    def record(self, plan: MatchPlan, outcome: MatchOutcome) -> None:
        """Commit a finished match; only then does the coordinator count it."""
        winner_seat = outcome.winner
        winner = plan.seats[winner_seat] if isinstance(winner_seat, int) else None
        with self.conn:
            self.conn.execute(
                "UPDATE matches SET status = 'done', winner = ?, result = ?, replay = ?,"
                " wall_s = ?, finished_at = ? WHERE id = ?",
                (
                    winner,
                    msgspec.json.encode(outcome).decode(),
                    outcome.replay,
                    outcome.wall_s,
                    _now(),
                    plan.id,
                ),
            )

    def finished(self) -> list[tuple[MatchPlan, MatchOutcome]]:
        """Every finished match in schedule order, with its stored outcome."""
        rows = self.conn.execute(
            "SELECT id, stage, round, tie, game, seat0, seat1, seed, rounds, seats, result"
            " FROM matches WHERE status = 'done' ORDER BY ord"
        ).fetchall()
        return [(_plan(r[:10]), decode_outcome(r[10])) for r in rows]

    def counts(self) -> dict[str, int]:
        out = {"pending": 0, "done": 0}
        for status, n in self.conn.execute("SELECT status, COUNT(*) FROM matches GROUP BY status"):
            out[str(status)] = int(n)
        return out


def _connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, timeout=30.0, isolation_level="DEFERRED")
    conn.execute("PRAGMA journal_mode=WAL")
    # NORMAL is durable against the referee being killed (the WAL is written by the
    # time COMMIT returns); only an OS crash or power loss could lose the last commit.
    conn.execute("PRAGMA synchronous=NORMAL")
    return conn


def _plan(row: tuple[Any, ...]) -> MatchPlan:
    mid, stage, rnd, tie, game, s0, s1, seed, rounds, seats = row
    return MatchPlan(
        id=mid,
        stage=stage,
        round=rnd,
        tie=tie,
        game=game,
        seats=(s0, s1) if seats is None else tuple(json.loads(seats)),
        seed=seed,
        rounds=rounds,
    )


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def played_of(plan: MatchPlan, outcome: MatchOutcome) -> Played:
    """The schedule's view of a finished match: the two scores the game ranks by
    (its ``ranking_keys``; the first score where it names none)."""
    seats = outcome.seats
    game = GAMES.get(outcome.game)
    first_key, second_key = (game.ranking_keys if game is not None else None) or ("", "")

    def score(seat: SeatOutcome, key: str) -> float:
        scores = seat.scores
        if key in scores:
            return float(scores[key])
        return float(next(iter(scores.values()), 0.0))

    winner_seat = outcome.winner
    return Played(
        id=plan.id,
        seats=(plan.seats[0], plan.seats[1]),
        final=(score(seats[0], first_key), score(seats[1], first_key)),
        standard=(score(seats[0], second_key), score(seats[1], second_key)),
        winner=plan.seats[winner_seat] if isinstance(winner_seat, int) else None,
        faults=(_faults(seats[0]), _faults(seats[1])),
        disqualified=(_dq(seats[0]), _dq(seats[1])),
    )


def tiebreak_of(game: str, outcome: MatchOutcome | None = None) -> tuple[str, bool]:
    """(score key, lower is better) of a table game's tie-break: the game's own
    ``tiebreak``, else its first score, higher better."""
    cls = GAMES.get(game)
    if cls is not None and cls.tiebreak is not None:
        return cls.tiebreak
    if outcome is not None:
        scores = outcome.seats[0].scores
        return next(iter(scores), ""), False
    return "", False


def table_played_of(plan: MatchPlan, outcome: MatchOutcome, game: str) -> TablePlayed:
    """The standings' view of a finished table."""
    seats = outcome.seats
    key, _lower = tiebreak_of(game, outcome)
    return TablePlayed(
        id=plan.id,
        seats=plan.seats,
        placement=tuple(int(s.placement or len(seats)) for s in seats),
        tiebreak=tuple(float(s.scores.get(key, 0.0)) for s in seats),
        faults=tuple(_faults(s) for s in seats),
        disqualified=tuple(_dq(s) for s in seats),
    )


def _faults(seat: SeatOutcome) -> int:
    return len(seat.verdict.faults)


def _dq(seat: SeatOutcome) -> bool:
    return bool(seat.stats.get("disqualified"))
