"""``referee verify``: re-check a replay against the rules and its hash chain.

``verify_replay`` is pure: it takes the file's lines and re-plays the recorded
actions through the game's own rules (the same ``Game`` the driver used), so a
replay verifies only if every turn message, every outcome and the final result
are exactly what the rules give for the recorded moves, and the hash chain is
unbroken. The command reads the file (plain or gzip, possibly cut short by a
killed referee) and prints one line (and, for a file that fails both ways, the
first rules mismatch next to the first chain break).

The chain alone proves only that the file is internally consistent: anyone can
re-hash an edited file. Pass ``--expect-hash`` with the final hash published
when the match ended (``referee match --json`` prints it as ``replay_hash``) to
anchor it.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import msgspec

from .faults import ROUND_FAULTS, Fault, FaultKind, worst_status
from .games import GAMES, Game
from .judge import Judge, is_fatal
from .replay import (
    FORMAT_MINOR,
    FORMAT_NAME,
    FORMAT_VERSION,
    Event,
    Footer,
    GzipNote,
    Header,
    chain_line,
    read_lines,
    rebuild_game,
    sealed_lines,
    unseal,
)

NULL = b"null"


class Step(msgspec.Struct, tag="step", tag_field="type", omit_defaults=True):
    """A step record as read back. Same fields as ``replay.Step``, but a seat's
    obs/act and the outcome stay raw JSON bytes (``null`` as the bytes ``null``),
    so they can be compared byte for byte with the rules' own encoding."""

    n: int
    obs: list[msgspec.Raw]
    act: list[msgspec.Raw]
    us: list[int | None]
    fault: list[Fault | None]
    out: msgspec.Raw
    h: str = ""


_decoder: msgspec.json.Decoder[Any] = msgspec.json.Decoder(Header | Step | Event | Footer)


def decode_record(line: bytes) -> Header | Step | Event | Footer:
    """Decode one replay line (sealed or not) into a record."""
    record: Header | Step | Event | Footer = _decoder.decode(line)
    return record


def raw_or_none(raw: msgspec.Raw) -> bytes | None:
    """A seat's obs/act bytes, or None where the record has ``null``."""
    data = bytes(raw)
    return None if data == NULL else data


# Problems of these kinds are reported; the first in file order decides the message.
CHAIN = "chain"
RULES = "rules"
FORMAT = "format"


class Problem(msgspec.Struct, frozen=True):
    kind: str  # CHAIN, RULES or FORMAT
    line: int  # 1-based line number in the file
    round: int | None  # the step the line belongs to, if any
    message: str  # one line, for humans
    seat: int | None = None  # the seat whose data is wrong, when one is

    def where(self, word: str = "round") -> str:
        """Where the problem is: "line 3", or "turn 14, seat 1" in the game's ``word``."""
        at = f"line {self.line}" if self.round is None else f"{word} {self.round}"
        return at if self.seat is None else f"{at}, seat {self.seat}"


class VerifyReport(msgspec.Struct):
    """What ``verify_replay`` found. ``ok`` means: complete, chain intact, rules agree."""

    ok: bool = False
    complete: bool = False  # a footer was read and nothing followed it
    rounds: int = 0  # step records read
    valid_rounds: int = 0  # step records before the first problem of any kind
    chain_intact: bool = True
    result_matches: bool = False
    final_hash: str = ""  # the last line's h (compare with a published one)
    game: str = ""
    problems: list[Problem] = msgspec.field(default_factory=list)
    cut_line: bool = False  # the last line had no newline (the writer was killed)

    @property
    def first(self) -> Problem | None:
        return self.problems[0] if self.problems else None

    @property
    def step_word(self) -> str:
        cls = GAMES.get(self.game)
        return "round" if cls is None else cls.step_word

    def summary(self) -> str:
        """One line: OK, INCOMPLETE or FAIL with the first problem, counting steps in
        the game's own word ("rounds", "turns", ...)."""
        word = self.step_word
        if self.ok:
            return (
                f"OK: {self.rounds} {word}s, chain intact, result matches "
                f"(final hash {self.final_hash})"
            )
        first = self.first
        if first is None:
            how = "the last line is cut off" if self.cut_line else "no footer"
            return (
                f"INCOMPLETE: {self.valid_rounds} {word}s valid, {how} "
                "(the referee stopped mid-match)"
            )
        return f"FAIL: {first.where(word)}: {first.message}"


# Keep at most this many problems: the first one is what matters, the rest is context.
MAX_PROBLEMS = 20


def _first_difference(recorded: Any, expected: Any, path: str) -> str | None:
    """The first path at which two JSON-like values differ, with both values."""
    if isinstance(recorded, dict) and isinstance(expected, dict):
        for key in list(recorded) + [k for k in expected if k not in recorded]:
            if key not in expected:
                return f"{path}.{key} recorded {_short(recorded[key])}, rules give nothing"
            if key not in recorded:
                return f"{path}.{key} missing, rules give {_short(expected[key])}"
            found = _first_difference(recorded[key], expected[key], f"{path}.{key}")
            if found:
                return found
        return None
    if (
        isinstance(recorded, list)
        and isinstance(expected, list)
        and len(recorded) == len(expected)
        and any(isinstance(x, (dict, list)) for x in recorded + expected)
    ):
        for i, (a, b) in enumerate(zip(recorded, expected, strict=True)):
            found = _first_difference(a, b, f"{path}[{i}]")
            if found:
                return found
        return None
    if recorded != expected or type(recorded) is not type(expected):
        return f"{path} recorded {_short(recorded)}, rules give {_short(expected)}"
    return None


def _seat_of(recorded: Any, expected: Any, seats: int) -> int | None:
    """The first seat whose entry differs, when the first differing field of an
    outcome is a per-seat list (Chaos League: points, shown, spent, tokens)."""
    if not (isinstance(recorded, dict) and isinstance(expected, dict)):
        return None
    for key, value in recorded.items():
        other = expected.get(key)
        if value == other:
            continue
        if (
            isinstance(value, list)
            and isinstance(other, list)
            and len(value) == len(other) == seats
        ):
            return next(i for i in range(seats) if value[i] != other[i])
        return None
    return None


def _short(value: Any) -> str:
    text = msgspec.json.encode(value).decode()
    return text if len(text) <= 120 else text[:117] + "..."


def _named(struct_type: type[msgspec.Struct], raw: bytes) -> Any:
    """A JSON value for messages, with array-like structs (Chaos League's Outcome)
    turned into objects so a difference can be named by field."""
    value = msgspec.json.decode(raw)
    if isinstance(value, list) and getattr(struct_type, "__struct_config__", None) is not None:
        if struct_type.__struct_config__.array_like:
            return dict(zip(struct_type.__struct_fields__, value, strict=False))
    return value


class _Verifier:
    """State of one pass over the lines; see ``verify_replay``."""

    def __init__(self) -> None:
        self.report = VerifyReport()
        self.prev_h = b""
        self.header: Header | None = None
        self.game: Game[Any] | None = None
        self.state: Any = None
        self.encode = msgspec.json.Encoder().encode
        self.decode_action: Any = None
        self.last_step = 0
        self.deferred: list[Event] = []
        self.footer_seen = False
        self.step_faults: set[tuple[int, int, str]] = set()
        self.judge: Judge | None = None  # re-judges the recorded reply times
        self.disqualified: list[Event] = []
        self.stopped = False  # a problem that makes further checking meaningless

    def problem(
        self, kind: str, line: int, round_: int | None, message: str, seat: int | None = None
    ) -> None:
        r = self.report
        if kind == CHAIN:
            r.chain_intact = False
        if len(r.problems) < MAX_PROBLEMS:
            r.problems.append(Problem(kind, line, round_, message, seat))

    # -- the chain ---------------------------------------------------------------

    def chain(self, number: int, line: bytes, seals: bytes | None) -> tuple[bytes, bool]:
        """Check the seal; returns the body without h (the line itself if unsealed).
        ``seals``: what the hash seals when that is not the body (``sealed_lines``)."""
        sealed = unseal(line)
        if sealed is None:
            self.problem(CHAIN, number, None, f"line {number} has no hash field")
            return line.rstrip(b"\n"), False
        body, h = sealed
        _line, expected_h = chain_line(self.prev_h, body if seals is None else seals)
        if h != expected_h:
            if self.report.chain_intact:
                # A format 1.2 step seals the turns sent too, which the rules recompute.
                what = "the line or" if seals is None else "the line, the turns it seals, or"
                self.problem(
                    CHAIN,
                    number,
                    None,
                    f"hash chain broken at line {number}: {what} one before it was changed",
                )
        # Continue from the recorded hash so one edit is reported once, not on every line.
        self.prev_h = h
        self.report.final_hash = h.decode(errors="replace")
        return body, True

    # -- records -----------------------------------------------------------------

    def line(self, number: int, raw: bytes, seals: bytes | None = None) -> None:
        body, _sealed = self.chain(number, raw, seals)
        if self.stopped:
            return
        try:
            record = decode_record(body)
        except (ValueError, RecursionError) as exc:
            if number == 1:
                self.fatal(number, "not a replay: the first line is not a replay header")
            else:
                self.fatal(number, f"line {number} is not a replay record: {exc}")
            return
        problems = self.report.problems
        if isinstance(record, Step) and problems and problems[-1].line == number:
            # The chain break found before decoding: name its round too.
            problems[-1] = msgspec.structs.replace(problems[-1], round=record.n)
        if self.footer_seen:
            self.problem(FORMAT, number, None, f"line {number} follows the footer")
            return
        if number == 1 and not isinstance(record, Header):
            self.fatal(number, "not a replay: the first line is not a replay header")
            return
        if isinstance(record, Header):
            self.on_header(number, record)
        elif isinstance(record, Step):
            self.on_step(number, record)
        elif isinstance(record, Event):
            self.on_event(number, record)
        else:
            self.on_footer(number, record)

    def fatal(self, number: int, message: str) -> None:
        self.problem(FORMAT, number, None, message)
        self.stopped = True

    def on_header(self, number: int, header: Header) -> None:
        if number != 1:
            self.fatal(number, f"line {number} is a second header")
            return
        if header.format != FORMAT_NAME:
            self.fatal(number, f"not a replay: format {header.format!r}")
            return
        if header.format_version != FORMAT_VERSION or header.format_minor > FORMAT_MINOR:
            self.fatal(
                number,
                f"replay format version {header.format_version}.{header.format_minor}; "
                f"this referee reads versions {FORMAT_VERSION}.0 to "
                f"{FORMAT_VERSION}.{FORMAT_MINOR}",
            )
            return
        if GAMES.get(header.game) is None:
            self.fatal(number, f"unknown game {header.game!r}")
            return
        try:
            game = rebuild_game(header)
        except (TypeError, ValueError) as exc:
            self.fatal(number, f"bad game parameters: {exc}")
            return
        self.header = header
        self.game = game
        self.report.game = header.game
        self.state = game.new_state(header.seed)
        self.decode_action = msgspec.json.Decoder(game.action_type).decode
        self.judge = Judge(
            game.seats,
            header.time.get("move_ms", 0) / 1000,
            header.time.get("bank_ms", 0) / 1000,
            header.max_faults,
        )

    def apply_ready_events(self) -> None:
        # The driver writes a step's record one step late, so a disqualification
        # decided before step n can precede the record of step n-1 in the file; it
        # takes effect once step n-1 has been applied.
        while self.deferred and self.deferred[0].n - 1 <= self.last_step:
            self.apply_event(self.deferred.pop(0))

    def on_event(self, number: int, event: Event) -> None:
        if event.kind != "disqualified":
            return  # informational events do not change the game
        if self.game is None:
            return
        if not all(0 <= s < self.game.seats for s in event.seats):
            self.problem(RULES, number, event.n, f"event names seats {event.seats}")
            return
        self.deferred.append(event)
        self.disqualified.append(event)
        self.apply_ready_events()

    def apply_event(self, event: Event) -> None:
        assert self.game is not None
        self.game.disqualify(self.state, event.seats)

    def on_step(self, number: int, step: Step) -> None:
        game = self.game
        if game is None:
            return
        self.report.rounds += 1
        state = self.state
        n = step.n
        where = number

        def bad(message: str, seat: int | None = None) -> None:
            self.problem(RULES, where, n, message, seat)

        if game.finished(state):
            bad("a step after the game had finished")
            self.stopped = True
            return
        expected_n = game.step_number(state)
        if n != expected_n:
            bad(f"step number {n}, the rules are at step {expected_n}")
            self.stopped = True
            return
        seats = game.seats
        if not (len(step.obs) == len(step.act) == len(step.fault) == len(step.us) == seats):
            bad(f"obs/act/us/fault must list {seats} seats")
            self.stopped = True
            return
        asked = set(game.to_act(state))
        actions: list[Any | None] = [None] * seats
        for seat in range(seats):
            obs = raw_or_none(step.obs[seat])
            act = raw_or_none(step.act[seat])
            fault = step.fault[seat]
            if seat not in asked:
                if obs is not None or act is not None or fault is not None:
                    bad("was not asked to act but has obs/act/fault recorded", seat)
                continue
            expected_obs = self.encode(game.observe(state, seat))
            if obs is None:
                bad(f"obs missing, rules show {expected_obs.decode()}", seat)
            elif obs != expected_obs:
                diff = _first_difference(
                    msgspec.json.decode(obs), msgspec.json.decode(expected_obs), "obs"
                )
                bad(f"{diff or 'obs bytes differ from the rules encoding'}", seat)
            self.check_time(seat, step.us[seat], fault, bad)
            if fault is not None:
                self.step_faults.add((n, seat, fault.kind))
                if act is not None:
                    bad(f"both an action and a fault ({fault.kind}) recorded", seat)
                continue
            if act is None:
                bad("neither an action nor a fault recorded", seat)
                continue
            try:
                action = self.decode_action(act)
            except (ValueError, RecursionError) as exc:
                bad(f"act is not a valid action: {exc}", seat)
                continue
            refused = game.check(state, seat, action)
            if refused is not None:
                bad(f"act is illegal: {refused.detail}", seat)
                continue
            if self.encode(action) != act:
                bad("act is not the canonical encoding of the action", seat)
            actions[seat] = action
        outcome = self.encode(game.resolve(state, actions))
        if bytes(step.out) != outcome:
            out_type = game.outcome_type
            recorded_out = _named(out_type, bytes(step.out))
            rules_out = _named(out_type, outcome)
            diff = _first_difference(recorded_out, rules_out, "out")
            bad(
                diff or "out bytes differ from the rules encoding",
                _seat_of(recorded_out, rules_out, seats),
            )
        self.last_step = n
        self.apply_ready_events()
        if not self.report.problems:
            self.report.valid_rounds += 1

    def check_time(
        self, seat: int, us: int | None, fault: Fault | None, bad: Callable[..., None]
    ) -> None:
        """Replay the seat's clock: a reply the driver took must have come by its
        deadline (move limit plus what was left of the bank), and the bank pays for
        slow replies and is emptied by a timeout, as live."""
        if self.judge is None:
            return
        clock = self.judge.clocks[seat]
        if us is not None:
            took = us / 1e6
            # Latencies are recorded truncated to the microsecond: the slack covers
            # a limit given in fractions of a millisecond.
            if took > clock.move_s + clock.bank + 1e-3:
                bad(
                    f"a reply after {took:.3f} s was taken; the limit was "
                    f"{clock.move_s:g} s + {clock.bank:.3f} s bank",
                    seat,
                )
            clock.took(took)
        if fault is not None and fault.kind == FaultKind.TIMEOUT:
            clock.silent()

    def check_disqualifications(self, number: int, footer: Footer) -> None:
        """Re-judge the footer's faults in order: round faults count towards the
        limit, a fault at the limit is ``too_many_faults``, and a seat goes out when
        the rules say so and only then (the ``disqualified`` events)."""
        assert self.game is not None and self.header is not None
        seats = self.game.seats
        judge = Judge(seats, 0.0, 0.0, self.header.max_faults)
        dq_at: dict[int, list[int]] = {}
        for event in self.disqualified:
            dq_at.setdefault(event.n, []).extend(event.seats)
        pending: set[int] = set()  # a fatal fault whose seat has not gone out yet

        def problem(message: str) -> None:
            self.problem(RULES, number, None, f"footer: {message}")

        faults = footer.faults
        i = 0
        while i < len(faults):
            n = faults[i].round
            group = []
            while i < len(faults) and faults[i].round == n:
                group.append(faults[i])
                i += 1
            fatal: list[int] = []
            asked: list[int] = []
            recorded_too_many = set()
            for f in group:
                if not 0 <= f.seat < seats:
                    problem(f"a fault names seat {f.seat}")
                    return
                if f.kind == FaultKind.TOO_MANY_FAULTS:
                    recorded_too_many.add(f.seat)
                    continue
                judge.fault(f.seat, n, f.kind, f.detail)
                if f.kind in ROUND_FAULTS:
                    asked.append(f.seat)
                elif is_fatal(f.kind) and f.seat not in fatal:
                    fatal.append(f.seat)
            before = len(judge.faults)
            going = judge.must_go(asked, n, fatal)
            too_many = {f.seat for f in judge.faults[before:]}
            for seat in sorted(too_many - recorded_too_many):
                problem(
                    f"seat {seat} reached {judge.round_faults[seat]} round faults in round "
                    f"{n} (limit {judge.max_faults}) without a too_many_faults fault"
                )
            for seat in sorted(recorded_too_many - too_many):
                problem(
                    f"a too_many_faults fault of seat {seat} in round {n} with "
                    f"{judge.round_faults[seat]} round faults (limit {judge.max_faults})"
                )
            pending.update(s for s in going if not judge.out[s])
            self.check_gone(n, dq_at.pop(n, []), judge, pending, problem)
        for n, dq_seats in sorted(dq_at.items()):
            self.check_gone(n, dq_seats, judge, pending, problem)
        for seat in sorted(pending):
            problem(f"seat {seat} has a fault that disqualifies but was never disqualified")
        for seat, verdict in enumerate(footer.verdicts[:seats]):
            mine = [f for f in faults if f.seat == seat]
            if verdict.faults != mine:
                problem(f"the verdict of seat {seat} lists other faults than the fault list")
            if verdict.disqualified != judge.out[seat]:
                problem(f"the verdict of seat {seat} says disqualified={verdict.disqualified}")
            kinds = [f.kind for f in mine]
            if verdict.escaped_processes:
                kinds.append(FaultKind.ESCAPED_PROCESS)
            if verdict.status != worst_status(kinds):
                problem(
                    f"the verdict of seat {seat} has status {verdict.status}; its faults give "
                    f"{worst_status(kinds)}"
                )

    def check_gone(
        self,
        n: int,
        dq_seats: list[int],
        judge: Judge,
        pending: set[int],
        problem: Callable[[str], None],
    ) -> None:
        """The seats disqualified at step ``n`` must be those the rules put out."""
        for seat in dq_seats:
            if not 0 <= seat < len(judge.out):
                continue  # reported by on_event
            if seat not in pending:
                problem(f"seat {seat} was disqualified at round {n} without a fault that says so")
            pending.discard(seat)
        judge.disqualify(dq_seats)

    def on_footer(self, number: int, footer: Footer) -> None:
        game = self.game
        if game is None:
            return
        self.footer_seen = True
        # Disqualifications written after the last step (none normally remain).
        for event in self.deferred:
            self.apply_event(event)
        self.deferred.clear()
        expected = msgspec.to_builtins(game.result(self.state))
        recorded = msgspec.to_builtins(footer.result)
        diff = _first_difference(recorded, expected, "result")
        if diff:
            self.problem(RULES, number, None, f"footer: {diff}")
        else:
            self.report.result_matches = True
        self.check_disqualifications(number, footer)
        recorded_faults = {(f.round, f.seat, f.kind) for f in footer.faults}
        missing = sorted(self.step_faults - recorded_faults)
        if missing:
            n, seat, kind = missing[0]
            self.problem(
                RULES,
                number,
                None,
                f"footer: the {kind} fault of seat {seat} in round {n} "
                "is missing from the fault list",
            )

    def finish(self, cut: bool) -> VerifyReport:
        r = self.report
        r.cut_line = cut
        if self.header is None:
            # Without a header nothing else matters (a missing seal on line 1 of a
            # file that is not a replay at all is no news).
            why = "the file ends inside its first line" if cut else "the file is empty"
            r.problems = [p for p in r.problems if p.kind == FORMAT][:1] or [
                Problem(FORMAT, 1, None, f"not a replay: {why}")
            ]
        r.complete = self.footer_seen and not cut
        r.ok = r.complete and not r.problems and r.result_matches
        return r


def verify_replay(lines: Iterable[bytes]) -> VerifyReport:
    """Re-check a replay given as its lines (bytes, each ending in ``\\n``; a last
    line without one is taken as cut off by a killed writer), as stored: a lean
    replay's steps are expanded here (``sealed_lines``); a format 1.2 step read back
    in full no longer carries the line its hash seals. Pure: no I/O."""
    v = _Verifier()
    cut = False
    number = 0
    for raw, seals in sealed_lines(lines):
        if cut:  # only the last line may lack its newline
            v.problem(FORMAT, number, None, f"line {number} has no line end")
            cut = False
        number += 1
        if not raw.endswith(b"\n"):
            cut = True
            if v.footer_seen:
                v.problem(FORMAT, number, None, f"line {number} is cut off after the footer")
            continue
        v.line(number, raw, seals)
        if v.stopped and v.header is None:
            break
    return v.finish(cut)


# -- reading files ----------------------------------------------------------------


# -- the command -------------------------------------------------------------------


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="FILE", help="a replay (.jsonl or .jsonl.gz)")
    parser.add_argument(
        "--allow-incomplete",
        action="store_true",
        help="exit 0 for a replay cut short (no footer) whose rounds all verify",
    )
    parser.add_argument(
        "--expect-hash",
        metavar="HEX",
        help="the final hash published for the match (its replay_hash): "
        "proves the file is the one the referee wrote, not a re-hashed edit",
    )
    parser.add_argument(
        "--all", action="store_true", help="list every problem found (up to 20), not only the first"
    )


def run(args: argparse.Namespace) -> int:
    from .errors import EXIT_BAD_REPLAY, EXIT_OK, CliError

    path = Path(args.file)
    note = GzipNote()
    try:
        with open(path, "rb") as f:
            report = verify_replay(read_lines(f, keep_cut=True, note=note, expand=False))
    except OSError as exc:
        raise CliError(f"cannot read {path}: {exc.strerror or exc}", EXIT_BAD_REPLAY) from None
    if note.bad:
        report.problems.append(
            Problem(FORMAT, report.rounds + 1, None, "the gzip data is corrupt after this point")
        )
        report.ok = False
    print(report.summary())
    if args.all:
        for p in report.problems[1:]:
            line = "" if p.round is None else f" (line {p.line})"
            print(f"  also: {p.where(report.step_word)}{line}: {p.message}")
    elif report.first is not None:
        # A broken chain and a rules mismatch tell different stories (an edit, or a
        # re-hashed edit): show the first of the other kind too.
        kind = report.first.kind
        other = next((p for p in report.problems if p.kind != kind and p.kind != FORMAT), None)
        if other is not None and kind != FORMAT:
            print(f"  also: {other.where(report.step_word)}: {other.message}")
    expect = getattr(args, "expect_hash", None)
    if expect is not None and report.final_hash != expect.strip().lower():
        print(
            f"FAIL: final hash {report.final_hash or '(none)'} is not the published "
            f"{expect.strip().lower()}"
        )
        return EXIT_BAD_REPLAY
    if report.ok:
        return EXIT_OK
    if (
        args.allow_incomplete
        and not report.complete
        and not report.problems
        and report.rounds == report.valid_rounds
    ):
        return EXIT_OK
    return EXIT_BAD_REPLAY
