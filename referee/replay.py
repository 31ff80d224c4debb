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
from collections.abc import Callable, Iterable, Iterator, Sequence
from operator import attrgetter
from pathlib import Path
from typing import IO, Any, TypeVar

import msgspec

from .errors import ReplayError
from .faults import FaultRecord, Verdict
from .games.base import Fault, Game, GameResult

FORMAT_NAME = "referee-replay"
FORMAT_VERSION = 1
# Minor versions of format 1: 0 records every turn message and every action field;
# 1 ("lean") leaves out what the rules give back (see ``LeanSteps``), and each step's
# hash seals the step in full; 2 (lean too) seals the lean line followed by the turn
# lines sent, so the writer encodes a step once.
FORMAT_MINOR = 2
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
_NULL = b"null"
# A step number no bot echoes: where it lands in an encoded action, the real one goes.
_MARK = 7_364_019_258_846_213_579


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
    format_minor: int = 0  # 1, 2: lean steps (derived fields left out)
    h: str = ""


class Step(msgspec.Struct, tag="step", tag_field="type", omit_defaults=True):
    """One resolved step. Lists are indexed by seat; a seat not asked has null obs."""

    n: int
    # Writers put pre-encoded msgspec.Raw values here (the turn exactly as sent, the
    # decoded action re-encoded; a lean writer also takes the turns as bytes:
    # ReplayWriter.turns_as_bytes); readers get plain JSON values (dicts, lists, None).
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


class LeanStep(msgspec.Struct, tag="step", tag_field="type", omit_defaults=True, kw_only=True):
    """A step as a lean replay (format 1.1, 1.2) stores it: no ``obs`` (the turns as sent are
    kept as ``sent`` only for a game whose turn messages the rules cannot derive),
    each action without the fields the rules give back (``LeanActions``). Read
    back, it is expanded into a ``Step``."""

    n: int
    sent: list[Any] | None = None  # the turns as sent, only where the rules cannot derive them
    act: list[Any]
    us: list[int | None]
    fault: list[Fault | None]
    out: Any
    h: str = ""


class _LeanStepOut(msgspec.Struct, tag="step", tag_field="type", omit_defaults=True):
    """A ``LeanStep`` without ``sent``, as the writer encodes it: the same bytes,
    built from positional fields (the usual case: every turn derivable)."""

    n: int
    act: list[Any] | msgspec.Raw  # Raw: a two-seat array encoded once (LeanSteps.pair)
    us: list[int | None]
    fault: list[Fault | None]
    out: Any


Record = Header | Step | Event | Footer

_encoder = msgspec.json.Encoder()
_encode_lean = msgspec.json.Encoder().encode
_sha256 = hashlib.sha256
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


_REQUIRED = object()  # a field without a default: always recorded


def _field_defaults(action_type: type[msgspec.Struct]) -> list[Any]:
    out = []
    for f in msgspec.structs.fields(action_type):
        if f.default is not msgspec.NODEFAULT:
            out.append(f.default)
        elif f.default_factory is not msgspec.NODEFAULT:
            out.append(f.default_factory())
        else:
            out.append(_REQUIRED)
    return out


class LeanActions:
    """A game's actions without the fields the rules give back: a field equal to its
    default, and the field echoing the step number (``Game.step_echo``) when it
    holds the step number (a bot that echoes nothing keeps ``"round":null``).
    ``restore`` turns the lean form back into the canonical encoding."""

    MEMO_SIZE = 4096  # distinct actions remembered (a game's moves are few)

    def __init__(self, action_type: type[msgspec.Struct], step_echo: str | None) -> None:
        self.action_type = action_type
        self.names = list(action_type.__struct_fields__)
        self.defaults = _field_defaults(action_type)
        self.echo = self.names.index(step_echo) if step_echo in self.names else -1
        self._memo: dict[Any, msgspec.Raw] = {}
        self._encode = msgspec.json.Encoder().encode
        # The memo key of an action whose echo field holds the step number: its other
        # fields, one element shorter than a whole action's (read in one C call).
        rest = [name for i, name in enumerate(self.names) if i != self.echo]
        self._echo_of = attrgetter(self.names[self.echo]) if self.echo >= 0 else None
        self._rest_of = attrgetter(*rest) if self.echo >= 0 and len(rest) >= 2 else None

    def lean(self, action: Any, n: int) -> msgspec.Raw:
        """The lean encoding of a decoded action of step ``n``."""
        echo_of = self._echo_of
        echoed = False
        key: Any
        if echo_of is not None:
            echo = echo_of(action)
            echoed = echo == n and type(echo) is int
        if echoed:
            rest_of = self._rest_of
            if rest_of is not None:
                key = rest_of(action)
            else:
                values = msgspec.structs.astuple(action)
                key = values[: self.echo] + values[self.echo + 1 :]
        else:
            key = msgspec.structs.astuple(action)
        try:
            found = self._memo.get(key)
        except TypeError:  # a list or dict in the action: not hashable, not memoised
            found = None
            key = None
        if found is None:
            found = msgspec.Raw(self._encode(self._fields(msgspec.structs.astuple(action), echoed)))
            if key is not None and len(self._memo) < self.MEMO_SIZE:
                self._memo[key] = found
        return found

    def _fields(self, values: tuple[Any, ...], echoed: bool) -> dict[str, Any]:
        out = {}
        for i, (name, value, default) in enumerate(
            zip(self.names, values, self.defaults, strict=True)
        ):
            if i == self.echo:
                if not echoed:
                    out[name] = value
            elif value is not default and (type(value) is not type(default) or value != default):
                out[name] = value
        return out

    def restore(self, fields: dict[str, Any], n: int) -> Any:
        """The action a lean encoding of step ``n`` stands for (ValueError if none)."""
        full: dict[str, Any] = {}
        for i, (name, default) in enumerate(zip(self.names, self.defaults, strict=True)):
            if i == self.echo:
                full[name] = n
            elif default is not _REQUIRED:
                full[name] = default
        full.update(fields)
        return msgspec.convert(full, self.action_type)


def turn_lines(obs: Sequence[Any]) -> bytes:
    """What a format 1.2 step's hash seals after its line: each seat's turn line as
    sent (the message and its newline), ``null`` and a newline for a seat not asked."""
    return b"\n".join([_NULL if o is None else o for o in obs]) + b"\n"


class LeanSteps:
    """Encodes a step once, as the lean line the file holds (format 1.2). Its hash
    seals that line followed by the turn lines sent (``turn_lines``), bytes the
    driver already holds, so the chain proves what each bot was sent although the
    file does not hold it: a reader recomputes the turns through the rules."""

    PAIR_MEMO_SIZE = 4096  # distinct pairs of actions remembered

    def __init__(self, game: Game[Any]) -> None:
        self.keep_obs = not game.observations_derivable
        self.actions = LeanActions(game.action_type, game.step_echo)
        self._encode = msgspec.json.Encoder().encode
        # Two seats whose actions both echo the step number (nearly every step of a
        # two-seat game): their lean ``act`` array, encoded once per distinct pair.
        self._action_type = game.action_type
        self._pairs: dict[tuple[Any, Any], msgspec.Raw] = {}
        # What ``ReplayWriter.write`` needs to encode such a step on its own flat path:
        # (the pair memo, the action type, the echo field's getter, the getter of the
        # other fields: the memo key's halves); None where no step can take it.
        self.two_seat: tuple[dict[tuple[Any, Any], msgspec.Raw], type, Any, Any] | None = None
        if game.seats == 2 and not self.keep_obs and self.actions._rest_of is not None:
            self.two_seat = (
                self._pairs,
                game.action_type,
                self.actions._echo_of,
                self.actions._rest_of,
            )

    def encode(self, step: Step) -> bytes:
        """The lean body, without ``h``."""
        n = step.n
        act = step.act
        if not self.keep_obs and len(act) == 2:
            a0, a1 = act
            if type(a0) is self._action_type and type(a1) is self._action_type:
                pair = self.pair(a0, a1, n)
                if pair is not None:
                    return self._encode(_LeanStepOut(n, pair, step.us, step.fault, step.out))
        lean_action = self.actions.lean
        acts = [a if a is None or type(a) is msgspec.Raw else lean_action(a, n) for a in act]
        if not self.keep_obs:
            return self._encode(_LeanStepOut(n, acts, step.us, step.fault, step.out))
        sent = [o if o is None or type(o) is msgspec.Raw else msgspec.Raw(o) for o in step.obs]
        return self._encode(
            LeanStep(n=n, sent=sent, act=acts, us=step.us, fault=step.fault, out=step.out)
        )

    def pair(self, a0: Any, a1: Any, n: int) -> msgspec.Raw | None:
        """The lean ``act`` array of two actions that both echo step ``n`` (nearly
        every step of a two-seat game), encoded once per distinct pair; None if
        either does not echo it."""
        echo_of = self.actions._echo_of
        rest_of = self.actions._rest_of
        if echo_of is None or rest_of is None:
            return None
        e0 = echo_of(a0)
        e1 = echo_of(a1)
        if not (e0 == n and e1 == n and type(e0) is int and type(e1) is int):
            return None
        key: tuple[Any, Any] | None = (rest_of(a0), rest_of(a1))
        try:
            found = self._pairs.get(key)  # type: ignore[arg-type]
        except TypeError:  # a list or dict in an action: not hashable, not memoised
            found = key = None
        if found is None:
            lean_action = self.actions.lean
            found = msgspec.Raw(b"[%b,%b]" % (lean_action(a0, n), lean_action(a1, n)))
            if key is not None and len(self._pairs) < self.PAIR_MEMO_SIZE:
                self._pairs[key] = found
        return found


class ReplayWriter:
    """Streams sealed records to a file; flushes at most every ``flush_s`` seconds
    so a killed referee leaves a recent, readable prefix without a write per step.
    Given the game, it writes lean steps (format 1.2: ``LeanSteps``)."""

    def __init__(
        self, path: Path | None, flush_s: float = 0.25, game: Game[Any] | None = None
    ) -> None:
        self._lean = LeanSteps(game) if game is not None else None
        self._two_seat = self._lean.two_seat if self._lean is not None else None
        # A step's turns may be given as bytes rather than msgspec.Raw: a lean writer
        # only hashes them (or wraps them where it stores them).
        self.turns_as_bytes = self._lean is not None
        # The minor format version the header must announce.
        self.format_minor = FORMAT_MINOR if game is not None else 0
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
        # Called once per step, so chain_line, write_sealed and, for the usual step of
        # a two-seat game (both actions echo the step number), LeanSteps.encode are
        # inlined here: the same bytes in far fewer bytecodes.
        two_seat = self._two_seat
        if two_seat is not None and type(record) is Step:
            pairs, action_type, echo_of, rest_of = two_seat
            n = record.n
            a0, a1 = record.act
            if (
                type(a0) is action_type
                and type(a1) is action_type
                and type(e0 := echo_of(a0)) is int
                and type(e1 := echo_of(a1)) is int
                and e0 == n
                and e1 == n
            ):
                try:
                    pair = pairs[rest_of(a0), rest_of(a1)]
                except (KeyError, TypeError):  # not remembered yet, or not hashable
                    pair = self._lean.pair(a0, a1, n)  # type: ignore[union-attr,assignment]
                body = _encode_lean(_LeanStepOut(n, pair, record.us, record.fault, record.out))
            else:
                body = self._lean.encode(record)  # type: ignore[union-attr]
            # The hash seals the lean line and, after it, the turn lines sent.
            obs = record.obs
            try:
                sealed = b"".join((self._prev, body, obs[0], b"\n", obs[1], b"\n"))
            except TypeError:  # a seat not asked
                sealed = self._prev + body + turn_lines(obs)
        elif self._lean is not None and type(record) is Step:
            body = self._lean.encode(record)
            sealed = self._prev + body + turn_lines(record.obs)
        else:
            body = _encoder.encode(record)
            sealed = self._prev + body
        h = _sha256(sealed).hexdigest()[:HASH_HEX].encode()
        line = b"".join((body[:-1], _H_PREFIX, h, b'"}\n'))
        self._prev = h
        lines = self.lines = self.lines + 1
        raw = self._raw
        if raw is not None:
            if self._gz is not None:
                raw.write(self._gz.compress(line))
            else:
                raw.write(line)
            # Look at the clock only every 64 lines: a flush every ~0.25 s is plenty.
            if not lines & 63:
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
    f: IO[bytes], keep_cut: bool = False, note: GzipNote | None = None, expand: bool = True
) -> Iterator[bytes]:
    """The one reader of replay lines: every complete line (with its newline) of a
    plain or gzip replay open in ``f``, a lean replay's steps given back in full
    (``expand_lines``; ``expand=False``: the lines as stored). A last line without
    its newline (the writer was killed mid-line) is yielded only with ``keep_cut``,
    so the verifier can say the file was truncated; a truncated or corrupt gzip
    stream ends the lines quietly, and ``note`` says which."""
    lines = _stored_lines(f, keep_cut, note)
    return expand_lines(lines) if expand else lines


def _stored_lines(f: IO[bytes], keep_cut: bool, note: GzipNote | None) -> Iterator[bytes]:
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


def rebuild_game(header: Header) -> Game[Any]:
    """The game a header describes; its parameters must come back unchanged.
    ValueError (or TypeError) with the reason when they do not."""
    from .games import GAMES

    cls = GAMES.get(header.game)
    if cls is None:
        raise ValueError(f"unknown game {header.game!r}")
    seats, params = len(header.bots), header.params
    try:
        game = cls.create(seats, dict(params))
    except NotImplementedError:  # a game without ``create``: its constructor's keywords
        game = cls.from_params(params)
    if game.params() != params:
        raise ValueError(f"{params} rebuild as {game.params()}")
    if game.seats != seats:
        raise ValueError(f"{seats} bots recorded, the game has {game.seats} seats")
    return game


class _ReadStep(msgspec.Struct, tag="step", tag_field="type", kw_only=True):
    """A lean step as read: each seat's action and the outcome as raw JSON."""

    n: int
    obs: list[msgspec.Raw] | None = None  # a step in full
    sent: list[msgspec.Raw] | None = None  # a lean step's turns the rules cannot derive
    act: list[msgspec.Raw]
    fault: list[Fault | None]


_read_step = msgspec.json.Decoder(_ReadStep).decode
_read_header = msgspec.json.Decoder(Header).decode
_read_event = msgspec.json.Decoder(Event).decode


class _Expander:
    """Replays a lean replay's steps through the game's rules to give back what the
    file leaves out. Pure; it never raises on a bad line: it passes the line on as
    it is (the consumer reports it) and stops expanding once the rules cannot
    follow the file."""

    def __init__(self, header: Header, game: Game[Any]) -> None:
        self.game = game
        self.state = game.new_state(header.seed)
        self.actions = LeanActions(game.action_type, game.step_echo)
        self.encode = msgspec.json.Encoder().encode
        self.decode_action = msgspec.json.Decoder(game.action_type).decode
        names = game.action_type.__struct_fields__
        self.echo = game.step_echo if game.step_echo in names else None
        # A lean action's bytes -> what ``_split`` makes of it.
        self._memo: dict[bytes, tuple[Any, bytes | None, bytes | None]] = {}
        self.last_step = 0
        self.deferred: list[Event] = []
        self.lost = False  # the rules could not follow the file: pass lines on
        # Format 1.2: a step's hash seals its line as stored and the turn lines sent.
        self.seals_turns = header.format_minor >= 2

    def event(self, line: bytes) -> None:
        try:
            event = _read_event(line)
        except (ValueError, RecursionError):
            return
        if event.kind != "disqualified":
            return
        if not all(0 <= s < self.game.seats for s in event.seats):
            return
        # As the verifier does: a disqualification takes effect once the step before
        # its ``n`` has been applied (records are written one step late).
        self.deferred.append(event)
        self._apply_ready()

    def _apply_ready(self) -> None:
        while self.deferred and self.deferred[0].n - 1 <= self.last_step:
            self.game.disqualify(self.state, self.deferred.pop(0).seats)

    def step(self, line: bytes, seal: bool) -> tuple[bytes, bytes | None]:
        """The step in full, and (with ``seal``, format 1.2) the bytes its hash seals
        after the previous hash: the line as stored, without its ``h``, followed by
        the turn lines the rules give (None: the line in full, as for 1.1)."""
        try:
            rec = _read_step(line)
        except (ValueError, RecursionError):
            return line, None
        game, state, n = self.game, self.state, rec.n
        seats = game.seats
        if len(rec.act) != seats or len(rec.fault) != seats:
            return line, None
        done = game.finished(state)
        asked = () if done else game.to_act(state)
        recorded = [bytes(a) for a in rec.act]
        obs: list[bytes] = []
        if rec.sent is not None:
            obs = [bytes(o) for o in rec.sent]
        elif rec.obs is None or (seal and self.seals_turns):
            obs = [game.encode_turn(state, s) if s in asked else _NULL for s in range(seats)]
        sealed = None
        if seal and self.seals_turns:
            stored = unseal(line)
            if stored is not None:
                sealed = stored[0] + b"\n".join(obs) + b"\n"
        if rec.obs is not None:
            # A step in full (a line already read back): the rules follow it as it is.
            self._advance(n, asked, done, rec.fault, [self._canonical(a) for a in recorded])
            return line, sealed
        head = b'{"type":"step","n":%d,' % n
        lean_head = head
        if rec.sent is not None:
            lean_head += b'"sent":[' + b",".join(obs) + b"],"
        lean_head += b'"act":[' + b",".join(recorded) + b"],"
        if not line.startswith(lean_head):
            return line, sealed  # not the writer's compact layout: nothing to splice into
        restored = [self._restored(a, n) for a in recorded]
        self._advance(n, asked, done, rec.fault, [action for action, _ in restored])
        full = b"".join(
            (
                head,
                b'"obs":[',
                b",".join(obs),
                b'],"act":[',
                b",".join([encoded for _, encoded in restored]),
                b"],",
                line[len(lean_head) :],
            )
        )
        return full, sealed

    def _restored(self, raw: bytes, n: int) -> tuple[Any, bytes]:
        """The action a lean record of step ``n`` stands for and its canonical
        encoding; (None, the record) for null or a record that is not an action
        (kept as it is: the verifier names it)."""
        if raw == _NULL:
            return None, raw
        known = self._memo.get(raw)
        if known is None:
            try:
                fields = msgspec.json.decode(raw)
                if not isinstance(fields, dict):
                    return None, raw
                # The step number goes in below: one entry serves every step.
                action = self.actions.restore(fields, 0)
            except (ValueError, RecursionError):
                return None, raw
            known = self._split(action, self.echo is not None and self.echo not in fields)
            if len(self._memo) < LeanActions.MEMO_SIZE:
                self._memo[raw] = known
        action, before, after = known
        if after is None:  # the echo field is as recorded: one encoding serves every step
            assert before is not None
            return action, before
        action = msgspec.structs.replace(action, **{self.echo: n})  # type: ignore[arg-type]
        if before is None:
            return action, self.encode(action)
        return action, b"%s%d%s" % (before, n, after)

    def _split(self, action: Any, echoed: bool) -> tuple[Any, bytes | None, bytes | None]:
        """(the action, its canonical encoding, None) when the step number is not in
        it; else (the action, the bytes before and after the step number), or (the
        action, None, b"") if the number cannot be told apart from the rest of the
        encoding (then each step's action is encoded afresh)."""
        if not echoed:
            return action, self.encode(action), None
        marked = self.encode(msgspec.structs.replace(action, **{self.echo: _MARK}))  # type: ignore[arg-type]
        parts = marked.split(b"%d" % _MARK)
        if len(parts) != 2:
            return action, None, b""
        return action, parts[0], parts[1]

    def _canonical(self, raw: bytes) -> Any:
        if raw == _NULL:
            return None
        try:
            return self.decode_action(raw)
        except (ValueError, RecursionError):
            return None

    def _advance(
        self,
        n: int,
        asked: Sequence[int],
        done: bool,
        faults: list[Fault | None],
        recorded: list[Any],
    ) -> None:
        """Apply the step as the verifier does: the legal actions of the seats asked
        that did not fault."""
        game, state = self.game, self.state
        actions: list[Any] = [None] * game.seats
        for seat, action in enumerate(recorded):
            if (
                action is not None
                and seat in asked
                and faults[seat] is None
                and game.check(state, seat, action) is None
            ):
                actions[seat] = action
        if not done:
            try:
                game.resolve(state, actions)
            except Exception:  # noqa: BLE001 (a tampered file the rules cannot apply)
                self.lost = True
        self.last_step = n
        self._apply_ready()


def expand_lines(lines: Iterable[bytes]) -> Iterator[bytes]:
    """The lines of a replay as a reader sees them: a lean replay's steps (format
    1.1, 1.2) given back in full, each turn message recomputed by the game's rules
    and each action in its canonical form. Lines of a replay in format 1.0 pass
    unchanged. Pure: no I/O."""
    for line, _sealed in _read_back(lines, False):
        yield line


def sealed_lines(lines: Iterable[bytes]) -> Iterator[tuple[bytes, bytes | None]]:
    """Each line as a reader sees it (``expand_lines``), with the bytes its hash seals
    after the previous hash when those are not the line itself without its ``h``
    (a format 1.2 step: the line as stored, then the turn lines the rules give);
    None for every other line. Pure: no I/O."""
    return _read_back(lines, True)


def _read_back(lines: Iterable[bytes], seal: bool) -> Iterator[tuple[bytes, bytes | None]]:
    it = iter(lines)
    first = next(it, None)
    if first is None:
        return
    yield first, None
    try:
        header = _read_header(first)
    except (ValueError, RecursionError):
        header = None
    if header is None or header.format_minor < 1 or header.format_version != FORMAT_VERSION:
        for line in it:
            yield line, None
        return
    try:
        expander = _Expander(header, rebuild_game(header))
    except (ValueError, TypeError):
        for line in it:  # the verifier says what is wrong with the header
            yield line, None
        return
    for line in it:
        if expander.lost or not line.endswith(b"\n"):
            yield line, None
        elif line.startswith(b'{"type":"step"'):
            yield expander.step(line, seal)
        else:
            if line.startswith(b'{"type":"event"'):
                expander.event(line)
            yield line, None


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
