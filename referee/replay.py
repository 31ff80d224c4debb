"""Replay files: JSON Lines, written while the match runs, hash-chained.

A replay is a header line, one line per step, any number of event lines, and a
footer line. Every line ends with an ``"h"`` field: the first 32 hex digits of
sha256(previous line's h + this line without its h field). Editing any line,
even with every score fixed up to match, breaks the chain from that line on.

The format is documented for readers in other languages in
``protocol/replay-format.md``. A path ending in ``.gz`` is gzip-compressed; a
referee killed mid-match leaves a prefix that reads back (the last line may be
cut; readers drop it and say so).
"""

from __future__ import annotations

import hashlib
import time
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any, TypeVar

import msgspec

from .errors import ReplayError
from .faults import FaultRecord, Verdict
from .games.base import Fault, GameResult

FORMAT_NAME = "referee-replay"
FORMAT_VERSION = 1
HASH_HEX = 32  # digits of sha256 kept per line: 128 bits is ample for tamper evidence
_H_PREFIX = b',"h":"'
_H_SUFFIX_LEN = len(_H_PREFIX) + HASH_HEX + 2  # ,"h":"<hex>"}
# How a league, a ladder or a paired run stores its replays: gzip (the default, where
# thousands of replays pile up) or plain JSON Lines.
REPLAY_FORMATS = ("gz", "jsonl")
DEFAULT_LEAGUE_FORMAT = "gz"
# The deflate level of gzip replays: the cheapest level within 10% of the best size
# (bench/replay_size.py, docs/performance.md).
GZIP_LEVEL = 6


class BotInfo(msgspec.Struct, omit_defaults=True):
    seat: int
    command: list[str]
    name: str | None = None  # as the bot gave it in the handshake
    version: str | None = None
    label: str | None = None  # as the organiser named it
    sha256: str | None = None  # of the executable (or the script for interpreters)
    seed: int = 0


class Header(msgspec.Struct, tag="header", tag_field="type", omit_defaults=True):
    format: str
    format_version: int
    protocol: int
    referee_version: str
    game: str
    params: dict[str, Any]
    seed: int
    started: str
    bots: list[BotInfo]
    time: dict[str, int]
    max_faults: int
    containment: dict[str, Any] = msgspec.field(default_factory=dict)
    h: str = ""


class Step(msgspec.Struct, tag="step", tag_field="type", omit_defaults=True):
    """One resolved step. Lists are indexed by seat; a seat not asked has null obs."""

    n: int
    # Writers put pre-encoded msgspec.Raw values here (the turn exactly as sent, the
    # decoded action re-encoded); readers get plain JSON values (dicts, lists, None).
    obs: list[Any]  # per seat: the turn message sent, null if the seat was not asked
    act: list[Any]  # per seat: the action taken, null if not asked or faulted
    us: list[int | None]  # reply latency in microseconds
    fault: list[Fault | None]
    out: Any  # the game's outcome struct (Chaos League: array-like Outcome)
    h: str = ""


class Event(msgspec.Struct, tag="event", tag_field="type", omit_defaults=True):
    """Something between steps: a disqualification, a late reply dropped, ..."""

    n: int  # the step it happened at (or after)
    kind: str
    seats: list[int]
    detail: str = ""
    h: str = ""


class Footer(msgspec.Struct, tag="footer", tag_field="type", omit_defaults=True):
    result: GameResult
    verdicts: list[Verdict]
    faults: list[FaultRecord]
    ended: str
    wall_s: float
    play_s: float = 0.0  # first turn sent to last step resolved
    h: str = ""


Record = Header | Step | Event | Footer

_encoder = msgspec.json.Encoder()
_record_decoder = msgspec.json.Decoder(Record)


def _digest(prev: bytes, body: bytes) -> bytes:
    return hashlib.sha256(prev + body).hexdigest()[:HASH_HEX].encode()


def chain_line(prev: bytes, body: bytes) -> tuple[bytes, bytes]:
    """Seal an encoded record (a JSON object without ``h``): returns (line, new h)."""
    h = _digest(prev, body)
    return body[:-1] + _H_PREFIX + h + b'"}\n', h


def unseal(line: bytes) -> tuple[bytes, bytes] | None:
    """Split a sealed line into (body without h, h), or None if it has no valid seal."""
    line = line.rstrip(b"\n")
    if len(line) < _H_SUFFIX_LEN + 2 or not line.endswith(b'"}'):
        return None
    cut = len(line) - _H_SUFFIX_LEN
    if line[cut : cut + len(_H_PREFIX)] != _H_PREFIX:
        return None
    h = line[cut + len(_H_PREFIX) : -2]
    return line[:cut] + b"}", h


def replay_suffix(replay_format: str) -> str:
    """The file name ending of a replay in ``replay_format`` (one of REPLAY_FORMATS)."""
    if replay_format not in REPLAY_FORMATS:
        raise ValueError(f"replay format must be one of {', '.join(REPLAY_FORMATS)}")
    return ".jsonl.gz" if replay_format == "gz" else ".jsonl"


def utc_now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class ReplayWriter:
    """Streams sealed records to a file; flushes at most every ``flush_s`` seconds
    so a killed referee leaves a recent, readable prefix without a write per step."""

    def __init__(self, path: Path | None, flush_s: float = 0.25) -> None:
        self.path = path
        self._prev = b""
        self._flush_s = flush_s
        self._next_flush = 0.0
        self._raw: IO[bytes] | None = None
        self._gz: Any = None
        self._out: Any = None
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._raw = open(path, "wb", buffering=1 << 20)  # noqa: SIM115 (closed in close())
            if path.suffix == ".gz":
                # A sync flush every so often keeps the prefix decompressible.
                self._gz = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, 31)
        self.lines = 0

    def write(self, record: Record) -> bytes:
        # Called once per step: chain_line and write_sealed inlined (same bytes).
        body = _encoder.encode(record)
        h = hashlib.sha256(self._prev + body).hexdigest()[:HASH_HEX].encode()
        line = body[:-1] + _H_PREFIX + h + b'"}\n'
        self._prev = h
        self.lines += 1
        raw = self._raw
        if raw is not None:
            if self._gz is not None:
                raw.write(self._gz.compress(line))
            else:
                raw.write(line)
            # Look at the clock only every 64 lines: a flush every ~0.25 s is plenty.
            if not self.lines & 63:
                self._maybe_flush()
        return line

    def write_sealed(self, line: bytes) -> None:
        self.lines += 1
        if self._raw is None:
            return
        if self._gz is not None:
            self._raw.write(self._gz.compress(line))
        else:
            self._raw.write(line)
        self._maybe_flush()

    def _maybe_flush(self) -> None:
        now = time.monotonic()
        if now >= self._next_flush:
            self._next_flush = now + self._flush_s
            self.flush()

    @property
    def last_hash(self) -> str:
        return self._prev.decode()

    def flush(self) -> None:
        if self._raw is None:
            return
        if self._gz is not None:
            self._raw.write(self._gz.flush(zlib.Z_SYNC_FLUSH))
        self._raw.flush()

    def close(self) -> None:
        if self._raw is None:
            return
        if self._gz is not None:
            self._raw.write(self._gz.flush(zlib.Z_FINISH))
            self._gz = None
        self._raw.close()
        self._raw = None
        if not self.lines and self.path is not None:
            # Nothing was recorded (the match never got as far as its header): an
            # empty file would only fail `referee verify`, so none is left behind.
            self.path.unlink(missing_ok=True)


class GzipNote:
    """How a gzip replay's stream ended, when it ended early: ``cut`` (the file stops
    mid-stream: a killed referee, not an error) or ``bad`` (corrupt data)."""

    def __init__(self) -> None:
        self.cut = False
        self.bad = False


def read_lines(
    f: IO[bytes], keep_cut: bool = False, note: GzipNote | None = None
) -> Iterator[bytes]:
    """The one reader of replay lines: every complete line (with its newline) of a
    plain or gzip replay open in ``f``. A last line without its newline (the writer
    was killed mid-line) is yielded only with ``keep_cut``, so the verifier can say
    the file was truncated; a truncated or corrupt gzip stream ends the lines
    quietly, and ``note`` says which."""
    magic = f.read(2)
    f.seek(0)
    chunks = _gunzip(f, note) if magic == b"\x1f\x8b" else iter(lambda: f.read(1 << 20), b"")
    pending = b""
    for chunk in chunks:
        pending += chunk
        if b"\n" not in chunk:
            continue
        parts = pending.split(b"\n")
        pending = parts.pop()
        yield from (p + b"\n" for p in parts)
    if pending and keep_cut:
        yield pending


def _gunzip(f: IO[bytes], note: GzipNote | None) -> Iterator[bytes]:
    d = zlib.decompressobj(31)
    while not d.eof:
        data = f.read(1 << 20)
        if not data:
            if note is not None:
                note.cut = True
            return
        try:
            yield d.decompress(data)
        except zlib.error:
            if note is not None:
                note.bad = True
            return


def iter_lines(path: Path) -> Iterator[bytes]:
    """The complete lines of the replay at ``path`` (``read_lines``); ReplayError if
    it cannot be opened."""
    try:
        f = open(path, "rb")  # noqa: SIM115 (closed below)
    except OSError as exc:
        raise ReplayError(f"cannot open {path}: {exc.strerror}") from None
    with f:
        yield from read_lines(f)


def decode_record(line: bytes) -> Record:
    record: Record = _record_decoder.decode(line)
    return record


R = TypeVar("R")


class Replay(msgspec.Struct):
    """A whole replay in memory (use ``iter_records`` for very long ones)."""

    header: Header
    steps: list[Step]
    events: list[Event]
    footer: Footer | None


def iter_records(path: Path, decode: Callable[[bytes], R]) -> Iterator[tuple[bytes, R]]:
    """Yield (raw line, decoded record) pairs; ``decode`` is ``decode_record``, or
    ``verify.decode_record``, which keeps a step's data as raw JSON. Raises
    ReplayError on a line that is not a replay record, naming its line number."""
    for number, line in enumerate(iter_lines(path), start=1):
        try:
            record = decode(line)
        except (ValueError, RecursionError) as exc:
            raise ReplayError(f"{path}: line {number} is not a replay record: {exc}") from None
        yield line, record


def read_replay(path: Path) -> Replay:
    header: Header | None = None
    steps: list[Step] = []
    events: list[Event] = []
    footer: Footer | None = None
    for _line, record in iter_records(path, decode_record):
        if isinstance(record, Header):
            header = record
        elif isinstance(record, Step):
            steps.append(record)
        elif isinstance(record, Event):
            events.append(record)
        else:
            footer = record
    if header is None:
        raise ReplayError(f"{path}: no header line; not a replay")
    return Replay(header=header, steps=steps, events=events, footer=footer)
