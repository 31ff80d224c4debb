"""A replay read for display: a Chaos League (or RoShamBo) replay streamed once into
numpy arrays (``load_view``). Used by the terminal viewer (``viewer``) and the HTML
report (``html_report``); imports neither. Other games are read step by step
(``step_report``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
from numpy.typing import NDArray

from .errors import ReplayError
from .games import GAMES
from .games.base import Fault
from .games.chaos import Action, Outcome, Turn
from .replay import Event, Footer, Header, iter_lines

SCORE_NAMES = ("final", "standard", "anti_exploitation", "deception_efficiency")
BUCKETS = ("HIGH", "MEDIUM", "LOW", "EMPTY")
SEAT_STYLES = ("bold cyan", "bold magenta", "bold green", "bold yellow", "bold blue", "bold red")
NONE = -1  # "no move" / "not asked" in the int8 arrays


class _Step(msgspec.Struct, tag="step", tag_field="type"):
    """A Chaos League step decoded straight into its game's types (fast, validated)."""

    n: int
    obs: list[Turn | None]
    act: list[Action | None]
    us: list[int | None]
    fault: list[Fault | None]
    out: Outcome
    h: str = ""


_decoder: msgspec.json.Decoder[Any] = msgspec.json.Decoder(Header | _Step | Event | Footer)


class OtherGame(ReplayError):
    """The replay is of a game without a per-round chart (shown by ``step_report``)."""


class ViewData:
    """A Chaos League (or RoShamBo) replay as arrays of shape (rounds, 2), by seat.

    Moves are indices into ``moves``; -1 where there is none (a fault, or round 1's
    empty history). ``tokens`` is what each seat has left after the round."""

    def __init__(self, header: Header, moves: Sequence[str]) -> None:
        self.header = header
        self.moves = tuple(moves)
        self.footer: Footer | None = None
        self.events: list[Event] = []
        self.cut = False  # no footer: the referee stopped mid-match
        self.n = np.zeros(0, dtype=np.int32)
        self.real = np.zeros((0, 2), dtype=np.int8)
        self.request = np.zeros((0, 2), dtype=np.bool_)
        self.shadow = np.zeros((0, 2), dtype=np.int8)  # the move asked to be shown
        self.shown = np.zeros((0, 2), dtype=np.int8)
        self.spent = np.zeros((0, 2), dtype=np.bool_)
        self.tokens = np.zeros((0, 2), dtype=np.int32)
        self.points = np.zeros((0, 2), dtype=np.int8)
        self.us = np.zeros((0, 2), dtype=np.int64)  # -1: no reply
        self.fault = np.zeros((0, 2), dtype=np.uint8)  # index into fault_kinds, 0 = none
        self.fault_kinds: list[str] = [""]
        self.obs_opp = np.zeros((0, 2), dtype=np.int8)  # opponent_last_visible as sent
        self.obs_self = np.zeros((0, 2), dtype=np.int8)  # self_last_real as sent
        self.obs_bucket = np.zeros((0, 2), dtype=np.int8)  # index into BUCKETS, -1 not asked

    @property
    def rounds(self) -> int:
        return len(self.n)

    @property
    def labels(self) -> list[str]:
        out = []
        for b in self.header.bots:
            out.append(b.label or b.name or " ".join(b.command)[-30:] or f"seat {b.seat}")
        return out

    def cumulative(self) -> NDArray[np.int64]:
        return np.cumsum(self.points.astype(np.int64), axis=0)

    def start_tokens(self) -> int:
        return int(self.header.params.get("tokens", 0))

    def tokens_before(self) -> NDArray[np.int64]:
        """Tokens each seat held at the start of each round."""
        before = np.empty((self.rounds, 2), dtype=np.int64)
        before[0] = self.start_tokens()
        before[1:] = self.tokens[:-1]
        return before

    def bucket_changes(self) -> NDArray[np.bool_]:
        """Rounds after which a seat's bucket (as its opponent sees it) changed."""
        if self.rounds == 0:
            return np.zeros((0, 2), dtype=np.bool_)
        idx = _bucket_index(self.tokens)
        before = _bucket_index(self.tokens_before())
        return idx != before


def _bucket_index(tokens: NDArray[Any]) -> NDArray[np.int8]:
    return np.select([tokens >= 40, tokens >= 20, tokens >= 1], [0, 1, 2], 3).astype(np.int8)


def _no_header(path: Path) -> ReplayError:
    """A file without one whole line: nothing in it can be read as a replay."""
    return ReplayError(f"{path}: not a replay (empty, or cut off inside its first line)")


def load_view(path: Path) -> ViewData:
    """Read a replay into arrays. Raises ReplayError for a file that is not a Chaos
    League replay; a replay without footer loads with ``cut`` set."""
    lines: Iterator[bytes] = iter_lines(path)
    header: Header | None = None
    # Columns as Python lists first: appending is cheaper than growing arrays.
    cols: dict[str, list[Any]] = {
        k: []
        for k in (
            "n",
            "real",
            "request",
            "shadow",
            "shown",
            "spent",
            "tokens",
            "points",
            "us",
            "fault",
            "obs_opp",
            "obs_self",
            "obs_bucket",
        )
    }
    data: ViewData | None = None
    index: dict[str | None, int] = {}
    kinds: list[str] = [""]
    bucket_of = {b: i for i, b in enumerate(BUCKETS)}
    for number, line in enumerate(lines, start=1):
        try:
            record = _decoder.decode(line)
        except (ValueError, RecursionError) as exc:
            if number == 1:
                raise ReplayError(f"{path}: not a replay (the first line is no header)") from None
            raise ReplayError(f"{path}: line {number} is not a replay record: {exc}") from None
        if isinstance(record, _Step):
            if data is None:
                raise ReplayError(f"{path}: a step before the header")
            # Flat lists (seat 0, seat 1, seat 0, ...): numpy converts those much faster
            # than nested ones. ``index`` maps None to -1.
            cols["n"].append(record.n)
            for a in record.act:
                if a is None:
                    cols["real"].append(-1)
                    cols["request"].append(False)
                    cols["shadow"].append(-1)
                else:
                    cols["real"].append(index[a.real_move])
                    cols["request"].append(a.shadow_request)
                    cols["shadow"].append(index[a.shadow_move])
            out = record.out
            cols["shown"].extend([index[m] for m in out.shown])
            cols["spent"].extend(out.spent)
            cols["tokens"].extend(out.tokens)
            cols["points"].extend(out.points)
            cols["us"].extend([-1 if u is None else u for u in record.us])
            for f in record.fault:
                if f is None:
                    cols["fault"].append(0)
                else:
                    if f.kind not in kinds:
                        kinds.append(f.kind)
                    cols["fault"].append(kinds.index(f.kind))
            for o in record.obs:
                if o is None:
                    cols["obs_opp"].append(-1)
                    cols["obs_self"].append(-1)
                    cols["obs_bucket"].append(-1)
                else:
                    cols["obs_opp"].append(index[o.opponent_last_visible])
                    cols["obs_self"].append(index[o.self_last_real])
                    cols["obs_bucket"].append(bucket_of[o.opponent_deception_bucket])
        elif isinstance(record, Header):
            header = record
            moves = header.params.get("moves")
            cls = GAMES.get(header.game)
            if (
                cls is None
                or cls.outcome_type is not Outcome
                or not isinstance(moves, list)
                or len(header.bots) != 2
            ):
                raise OtherGame(header.game)
            data = ViewData(header, moves)
            index = {m: i for i, m in enumerate(moves)}
            index[None] = -1
        elif isinstance(record, Event):
            if data is not None:
                data.events.append(record)
        elif data is not None:
            data.footer = record
    if data is None:
        raise _no_header(path)
    data.cut = data.footer is None
    data.fault_kinds = kinds

    def arr(key: str, dtype: Any) -> Any:
        values = cols[key]
        return np.array(values, dtype=dtype).reshape(-1, 2) if values else None

    if cols["n"]:
        data.n = np.array(cols["n"], dtype=np.int32)
        data.real = arr("real", np.int8)
        data.request = arr("request", np.bool_)
        data.shadow = arr("shadow", np.int8)
        data.shown = arr("shown", np.int8)
        data.spent = arr("spent", np.bool_)
        data.tokens = arr("tokens", np.int32)
        data.points = arr("points", np.int8)
        data.us = arr("us", np.int64)
        data.fault = arr("fault", np.uint8)
        data.obs_opp = arr("obs_opp", np.int8)
        data.obs_self = arr("obs_self", np.int8)
        data.obs_bucket = arr("obs_bucket", np.int8)
    return data
