"""``referee rerun``: play a replay's match again and compare it round by round.

The same bot commands, the same match seed and the same per-bot seeds (as recorded), the same
game parameters, time limits, fault limit and resource limits are used; the new
match is written to a temporary replay and compared with the recorded one: every
turn message, every action, every fault kind, every outcome, every event and the
final result. Latencies and fault details (timings) are not compared.

A deterministic bot re-runs identically; a difference names the first round,
seat and field where the two matches part. The sha256 of each bot's files is
compared too, so a changed executable is reported as such.

Exit codes: 0 identical, 4 different (or the recording is unreadable), 3 a bot
could not be started, 2 bad arguments.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec

from .errors import ReplayError
from .replay import Event, Footer, Header, iter_records
from .termtext import printable
from .verify import Step, decode_record


class Divergence(msgspec.Struct, frozen=True):
    round: int | None  # None: outside the rounds (header, events, footer, length)
    seat: int | None
    field: str
    recorded: str
    rerun: str
    words: str = ""  # what differed, said in a sentence

    def describe(self) -> str:
        where = "" if self.round is None else f"round {self.round}, "
        where += "" if self.seat is None else f"seat {self.seat}, "
        plain = f"{where}{self.field}: recorded {self.recorded}, rerun {self.rerun}"
        return f"{self.words} ({plain})" if self.words else plain


def _loads(data: bytes) -> Any:
    try:
        return msgspec.json.decode(data)
    except (ValueError, RecursionError):
        return data.decode("utf-8", "replace")


def _value(v: Any) -> str:
    if v is None:
        return "nothing"
    return v if isinstance(v, str) else _short(v)


def _differences(a: Any, b: Any) -> str:
    """Which fields of two JSON objects differ, with both values, in words."""
    if isinstance(a, dict) and isinstance(b, dict):
        keys = [k for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
        return "; ".join(
            f"{k} {_value(a.get(k))} in the record, {_value(b.get(k))} in the rerun"
            for k in keys[:3]
        )
    return f"{_value(a)} in the record, {_value(b)} in the rerun"


def _action_words(n: int, seat: int, x: bytes, y: bytes) -> str:
    a, b = _loads(x), _loads(y)
    if isinstance(a, dict) and isinstance(b, dict):
        if [k for k in set(a) | set(b) if a.get(k) != b.get(k)] == ["real_move"]:
            return (
                f"round {n}: seat {seat} played {a['real_move']} in the record, "
                f"{b['real_move']} in the rerun"
            )
        return f"round {n}: seat {seat}'s action differs: {_differences(a, b)}"

    def did(v: Any) -> str:
        return "had no valid action" if v is None else f"answered {_short(v)}"

    return f"round {n}: seat {seat} {did(a)} in the record, {did(b)} in the rerun"


def _nth_fault(faults: list[Any], i: int) -> str:
    if i >= len(faults):
        return "no more faults"
    r, seat, kind = faults[i]
    return f"{kind} of seat {seat} at round {r}"


def _kind_words(kind: Any) -> str:
    return "no fault" if kind is None else f"a {kind} fault"


def _record_words(record: Any) -> str:
    if isinstance(record, Step):
        return f"round {record.n} was played"
    if isinstance(record, Event):
        who = ", ".join(str(s) for s in record.seats)
        if record.kind == "disqualified":
            return (
                f"seat {who} was disqualified"
                if len(record.seats) == 1
                else (f"seats {who} were disqualified")
            )
        return f"event {record.kind} (seats {who})"
    if isinstance(record, Footer):
        return "the match ended"
    return "the replay ended"


def _short(data: Any) -> str:
    text = data.decode() if isinstance(data, bytes) else msgspec.json.encode(data).decode()
    return text if len(text) <= 160 else text[:157] + "..."


def _records(path: Path) -> Iterator[Header | Step | Event | Footer]:
    for _line, record in iter_records(path, decode_record):
        yield record


def compare_replays(recorded: Path, rerun: Path) -> tuple[Divergence | None, int]:
    """The first divergence between two replays of the same match (None if none),
    and the number of steps compared."""
    a_iter = _records(recorded)
    b_iter = _records(rerun)
    steps = 0
    while True:
        a = next(a_iter, None)
        b = next(b_iter, None)
        if a is None and b is None:
            return None, steps
        if a is None or b is None:
            if a is None and isinstance(b, Footer):
                # The recording was cut short (no footer); everything it has matched.
                return None, steps
            return (
                Divergence(
                    getattr(a or b, "n", None),
                    None,
                    "length",
                    "ends here" if a is None else type(a).__name__.lower(),
                    "ends here" if b is None else type(b).__name__.lower(),
                    f"the record: {_record_words(a)}; the rerun: {_record_words(b)}",
                ),
                steps,
            )
        if type(a) is not type(b):
            n = getattr(a, "n", None) if isinstance(a, Step) else getattr(b, "n", None)
            where = "" if n is None else f"round {n}: "
            return (
                Divergence(
                    n,
                    None,
                    "record",
                    type(a).__name__.lower(),
                    type(b).__name__.lower(),
                    f"{where}in the record {_record_words(a)}, in the rerun {_record_words(b)}",
                ),
                steps,
            )
        if isinstance(a, Header) and isinstance(b, Header):
            found = _compare_headers(a, b)
        elif isinstance(a, Step) and isinstance(b, Step):
            steps += 1
            found = _compare_steps(a, b)
        elif isinstance(a, Event) and isinstance(b, Event):
            found = None
            for fld in ("n", "kind", "seats"):
                if getattr(a, fld) != getattr(b, fld):
                    found = Divergence(
                        a.n,
                        None,
                        f"event.{fld}",
                        _short(getattr(a, fld)),
                        _short(getattr(b, fld)),
                        f"in the record {_record_words(a)} at round {a.n}, "
                        f"in the rerun {_record_words(b)} at round {b.n}",
                    )
                    break
        else:
            assert isinstance(a, Footer) and isinstance(b, Footer)
            ra = msgspec.json.encode(a.result)
            rb = msgspec.json.encode(b.result)
            found = None
            if ra != rb:
                da, db = _loads(ra), _loads(rb)
                top = ("winner", "reason", "steps")
                if isinstance(da, dict) and isinstance(db, dict):
                    head_a = {k: da.get(k) for k in top}
                    head_b = {k: db.get(k) for k in top}
                    what = _differences(head_a, head_b) if head_a != head_b else "the scores"
                else:
                    what = "the result"
                found = Divergence(
                    None, None, "result", _short(ra), _short(rb), f"the results differ: {what}"
                )
            if found is None:
                fa = [(f.round, f.seat, f.kind) for f in a.faults]
                fb = [(f.round, f.seat, f.kind) for f in b.faults]
                if fa != fb:
                    first = next(
                        (i for i, (x, y) in enumerate(zip(fa, fb, strict=False)) if x != y),
                        min(len(fa), len(fb)),
                    )

                    found = Divergence(
                        None,
                        None,
                        "faults",
                        _short(fa),
                        _short(fb),
                        f"fault {first + 1}: {_nth_fault(fa, first)} in the record, "
                        f"{_nth_fault(fb, first)} in the rerun",
                    )
        if found is not None:
            return found, steps


def _compare_headers(a: Header, b: Header) -> Divergence | None:
    checks: list[tuple[str, Any, Any]] = [
        ("game", a.game, b.game),
        ("params", a.params, b.params),
        ("seed", a.seed, b.seed),
        ("bot seeds", [x.seed for x in a.bots], [x.seed for x in b.bots]),
    ]
    for name, x, y in checks:
        if x != y:
            return Divergence(None, None, f"header {name}", _short(x), _short(y))
    return None


def _compare_steps(a: Step, b: Step) -> Divergence | None:
    n = a.n
    if a.n != b.n:
        return Divergence(n, None, "step number", str(a.n), str(b.n))
    for seat in range(max(len(a.obs), len(b.obs))):
        for fld in ("obs", "act"):
            x = bytes(getattr(a, fld)[seat])
            y = bytes(getattr(b, fld)[seat])
            if x != y:
                if fld == "act":
                    words = _action_words(n, seat, x, y)
                else:
                    words = f"round {n}: seat {seat} was sent another turn: " + _differences(
                        _loads(x), _loads(y)
                    )
                return Divergence(n, seat, fld, _short(x), _short(y), words)
        fa, fb = a.fault[seat], b.fault[seat]
        ka = None if fa is None else fa.kind
        kb = None if fb is None else fb.kind
        if ka != kb:
            return Divergence(
                n,
                seat,
                "fault",
                str(ka),
                str(kb),
                f"round {n}: seat {seat} had {_kind_words(ka)} in the record, "
                f"{_kind_words(kb)} in the rerun",
            )
    if bytes(a.out) != bytes(b.out):
        x, y = bytes(a.out), bytes(b.out)
        return Divergence(
            n,
            None,
            "out",
            _short(x),
            _short(y),
            f"round {n}: the outcome differs: {_differences(_loads(x), _loads(y))}",
        )
    return None


def read_header(path: Path) -> Header:
    for record in _records(path):
        if isinstance(record, Header):
            return record
        break
    raise ReplayError(f"{path}: not a replay (the first line is no header)")


def match_config_for(header: Header, replay: Path, sandbox: str | None) -> Any:
    """The MatchConfig that plays the recorded match again."""
    from . import sandbox as sbx
    from .match import MatchConfig
    from .protocol import DEFAULT_MAX_LINE

    t = header.time
    containment = header.containment
    limits = sbx.Limits()
    if isinstance(containment.get("limits"), dict):
        limits = msgspec.convert(containment["limits"], sbx.Limits)
    return MatchConfig(
        game=header.game,
        seed=header.seed,
        bot_seeds=[b.seed for b in header.bots],
        move_timeout=t.get("move_ms", 1000) / 1000,
        handshake_timeout=t.get("handshake_ms", 10000) / 1000,
        time_bank=t.get("bank_ms", 3000) / 1000,
        max_faults=header.max_faults,
        max_line=int(containment.get("max_line", DEFAULT_MAX_LINE)),
        sandbox=sandbox or "auto",
        limits=limits,
        replay=str(replay),
        log_dir=str(replay.parent),
        # The game rebuilds itself from the recorded parameters (Game.create).
        params=dict(header.params),
    )


def configure(parser: argparse.ArgumentParser) -> None:
    from .sandbox.registry import SANDBOX_CHOICES

    parser.add_argument("file", metavar="FILE", help="the recorded replay (.jsonl or .jsonl.gz)")
    parser.add_argument(
        "--keep", metavar="PATH", help="keep the new match's replay at PATH (default: discarded)"
    )
    parser.add_argument(
        "--sandbox",
        choices=SANDBOX_CHOICES,
        help="containment layer for the re-run (default auto; the recording's is shown)",
    )


def run(args: argparse.Namespace) -> int:
    import trio

    from .bot_command import BotSpec, file_digest
    from .errors import (
        EXIT_BAD_REPLAY,
        EXIT_BOT_FAILED,
        EXIT_INTERNAL,
        EXIT_OK,
        CliError,
        SandboxFailure,
        UsageError,
    )
    from .match import run_match

    path = Path(args.file)
    try:
        header = read_header(path)
    except ReplayError as exc:
        raise CliError(str(exc), EXIT_BAD_REPLAY) from None
    except OSError as exc:
        raise CliError(f"cannot read {path}: {exc.strerror or exc}", EXIT_BAD_REPLAY) from None
    if args.keep:  # before the match, not after it
        try:
            Path(args.keep).parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise CliError(f"cannot keep the replay at {args.keep}: {exc.strerror}") from None
    labels = [b.label or b.name or f"seat {b.seat}" for b in header.bots]
    params = ", ".join(
        f"{k}={v}" for k, v in header.params.items() if not isinstance(v, (list, dict))
    )
    print(f"re-running {header.game} ({params}), seed {header.seed}: " + " vs ".join(labels))
    changed = False
    for bot, label in zip(header.bots, labels, strict=True):
        now = file_digest(bot.command)
        if bot.sha256 is None:
            state = "no recorded sha256"
        elif now is None:
            state = "FILES MISSING (recorded sha256 " + bot.sha256[:16] + "...)"
            changed = True
        elif now == bot.sha256:
            state = f"files unchanged (sha256 {now[:16]}...)"
        else:
            state = f"FILES CHANGED: recorded sha256 {bot.sha256[:16]}..., now {now[:16]}..."
            changed = True
        print(f"  seat {bot.seat} {label}: {state}")
    workdir = Path(tempfile.mkdtemp(prefix="referee-rerun-"))
    try:
        new = workdir / "rerun.jsonl"
        cfg = match_config_for(header, new, args.sandbox)
        specs = [BotSpec(command=list(b.command), label=b.label) for b in header.bots]
        try:
            outcome = trio.run(run_match, specs, cfg)
        except UsageError as exc:
            raise CliError(f"cannot re-run: {exc}", EXIT_BOT_FAILED) from None
        except SandboxFailure as exc:
            raise CliError(f"cannot re-run: {exc}", EXIT_INTERNAL) from None
        was = header.containment.get("layer", "?")
        now_layer = outcome.header.containment.get("layer", "?")
        print(f"  containment: recorded {was}, re-run {now_layer}")
        for f in outcome.faults:
            if f.kind == "handshake":
                print(f"  seat {f.seat} failed to start this time: {printable(f.detail)}")
        try:
            divergence, steps = compare_replays(path, new)
        except ReplayError as exc:
            raise CliError(str(exc), EXIT_BAD_REPLAY) from None
        if args.keep:
            try:
                shutil.copyfile(new, args.keep)
            except OSError as exc:
                raise CliError(f"cannot keep the replay at {args.keep}: {exc.strerror}") from None
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    if divergence is None:
        note = " (but a bot's files changed)" if changed else ""
        print(f"IDENTICAL: {steps} rounds, events and result match the recording{note}")
        return EXIT_OK
    same = steps - 1 if divergence.round is not None else steps
    print(f"DIFFERENT: {divergence.describe()} (after {max(0, same)} identical rounds)")
    if changed:
        print("  (a bot's files changed since the recording: that may explain it)")
    return EXIT_BAD_REPLAY


__all__ = ["Divergence", "compare_replays", "match_config_for"]
