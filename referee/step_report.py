"""Any game's replay, step by step, in words: the rows of ``referee replay --rounds``
and the HTML report of every game that has no interactive one of its own.

The replay is read through ``replay.iter_records`` and re-played through the
game's own rules (``walk``): the recorded actions, seed and disqualifications
give back every step's outcome and the game's state, so a report needs only
what any replay keeps. What a game shows beyond the generic step table (its own
tables and plots, its actions in words) lives in ``referee/game_reports/<game>.py``
as a ``REPORT`` object (a ``StepReport``); a game without one gets the generic
report. Nothing here names a game.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec

from .errors import ReplayError
from .games import GAMES, Game
from .games.base import Fault
from .replay import Event, Footer, Header, Step, decode_record, iter_records, read_lines
from .report_page import (
    Plot,
    document,
    e,
    fault_place,
    heading_html,
    labels_of,
    line_plot,
    seat_colour,
    summary_html,
)
from .termtext import printable


class WalkedStep(msgspec.Struct):
    """One step as the rules re-play it from the replay's actions."""

    n: int
    place: str  # where it falls in the game's own units ("round 3"), or ""
    asked: list[int]  # the seats that had to act
    actions: list[Any]  # per seat: the action taken (the game's Struct), None if none
    faults: list[Fault | None]
    us: list[int | None]
    outcome: Any  # the game's outcome Struct


class Walk:
    """A replay re-played: its records, and every step with its outcome."""

    def __init__(self, header: Header, game: Game[Any]) -> None:
        self.header = header
        self.game = game
        self.word = game.step_word
        self.labels = labels_of(header)
        self.steps: list[WalkedStep] = []
        self.events: list[Event] = []
        self.footer: Footer | None = None
        self.recorded = 0  # step records in the file
        self.stopped: str | None = None  # why re-playing stopped early, if it did
        self.state: Any = None  # the game's state after the last step re-played

    @property
    def places(self) -> dict[int, str]:
        return {s.n: s.place for s in self.steps if s.place}

    def where(self, n: int) -> str:
        return fault_place(n, self.word, self.places)


def walk(path: Path) -> Walk:
    """Read the replay at ``path`` and re-play it. ReplayError if it is no replay
    of a known game; a step the rules cannot re-play (an edited file) stops the
    walk there, with the reason in ``stopped``."""
    result: Walk | None = None
    decode_action: Any = None
    deferred: list[Event] = []
    last_step = 0
    for _line, record in iter_records(path, decode_record):
        if isinstance(record, Header):
            cls = GAMES.get(record.game)
            if cls is None:
                raise ReplayError(f"{path}: unknown game {record.game!r}")
            try:
                game = cls.from_params(record.params)
            except (TypeError, ValueError) as exc:
                raise ReplayError(f"{path}: bad game parameters: {exc}") from None
            result = Walk(record, game)
            result.state = game.new_state(record.seed)
            action_type = game.action_type

            def decode_action(value: Any, action_type: Any = action_type) -> Any:
                return msgspec.convert(value, action_type)

            continue
        if result is None:
            raise ReplayError(f"{path}: not a replay (the first line is no header)")
        if isinstance(record, Footer):
            result.footer = record
        elif isinstance(record, Event):
            result.events.append(record)
            if record.kind == "disqualified":
                deferred.append(record)
        else:
            result.recorded += 1
            if result.stopped is None:
                _replay_step(result, record, decode_action)
                last_step = record.n
        # The driver writes a step's record one step late, so a disqualification
        # decided before step n can come before step n-1's record.
        while result.stopped is None and deferred and deferred[0].n - 1 <= last_step:
            event = deferred.pop(0)
            result.game.disqualify(result.state, event.seats)
    if result is None:
        raise ReplayError(f"{path}: not a replay (empty, or cut off inside its first line)")
    return result


def _replay_step(result: Walk, record: Step, decode_action: Any) -> None:
    game, state = result.game, result.state
    if game.finished(state):
        result.stopped = f"{result.word} {record.n} comes after the game had finished"
        return
    if record.n != game.step_number(state):
        result.stopped = (
            f"{result.word} {record.n} is recorded where the rules are at "
            f"{result.word} {game.step_number(state)}"
        )
        return
    asked = list(game.to_act(state))
    actions: list[Any] = [None] * game.seats
    for seat in asked:
        value = record.act[seat] if seat < len(record.act) else None
        if value is None:
            continue
        try:
            action = decode_action(value)
        except (msgspec.ValidationError, TypeError) as exc:
            result.stopped = f"{result.word} {record.n}, seat {seat}: not an action: {exc}"
            return
        refused = game.check(state, seat, action)
        if refused is not None:
            result.stopped = f"{result.word} {record.n}, seat {seat}: {refused.detail}"
            return
        actions[seat] = action
    place = game.place(state)
    outcome = game.resolve(state, actions)
    seats = game.seats

    def per_seat(values: Sequence[Any]) -> list[Any]:
        return [values[s] if s < len(values) else None for s in range(seats)]

    result.steps.append(
        WalkedStep(
            n=record.n,
            place=place,
            asked=asked,
            actions=actions,
            faults=per_seat(record.fault),
            us=per_seat(record.us),
            outcome=outcome,
        )
    )


def fault_places(path: Path) -> dict[int, str]:
    """Where each step of the replay at ``path`` falls in its game's own units
    ("round 3"), for fault lines; empty for a game whose step number says it all
    (it has no ``place``: nothing is re-played) or a replay that cannot be read."""
    try:
        header = next(r for _line, r in iter_records(path, decode_record))
    except (ReplayError, StopIteration):
        return {}
    cls = GAMES.get(header.game) if isinstance(header, Header) else None
    if cls is None or cls.place is Game.place:
        return {}
    try:
        return walk(path).places
    except ReplayError:
        return {}


def verify_summary(path: Path) -> str:
    """``referee verify``'s one line for the replay at ``path``."""
    from .verify import verify_replay

    try:
        with open(path, "rb") as f:
            return verify_replay(read_lines(f, keep_cut=True, expand=False)).summary()
    except (OSError, ValueError) as exc:
        return f"cannot verify: {exc}"


# -- what a game shows -------------------------------------------------------------------


# The HTML step table stops here: a page stays quick to open whatever the game's length.
MAX_TABLE_STEPS = 5000


class StepRow(msgspec.Struct):
    """One step in words: who acted, what they did, what changed."""

    n: int
    place: str
    seats: list[int]
    action: str
    change: str
    fault: str
    ms: str


def _compact(value: Any) -> str:
    """A value as short JSON, without the optional step echo and empty fields."""
    data = msgspec.to_builtins(value)
    if isinstance(data, dict):
        data = {k: v for k, v in data.items() if k != "step" and v is not None}
    return msgspec.json.encode(data).decode()


class StepReport:
    """What a game's report shows. The defaults show actions and outcomes as short
    JSON; a game's module overrides them with its own words, tables and plots."""

    # Introduces the step table (HTML), in the game's terms.
    steps_hint: str = "Each step: who acted, what they did, and what followed."

    def action_words(self, walk: Walk, step: WalkedStep, seat: int, action: Any) -> str:
        """``action`` (not None) of ``seat`` in words."""
        return _compact(action)

    def change_words(self, walk: Walk, step: WalkedStep) -> str:
        """What the step changed, in words."""
        return _compact(step.outcome)

    def plots(self, walk: Walk) -> list[Plot]:
        """The game's plots, drawn in its HTML report (``plot_html``) and under
        ``referee replay``'s summary."""
        return []

    def sections(self, walk: Walk) -> str:
        """The game's own HTML sections (tables, and its plots), above the step table."""
        return self.plot_html(walk)

    def plot_html(self, walk: Walk) -> str:
        drawn = "".join(line_plot(p) for p in self.plots(walk))
        return f"<h2>Plots</h2>{drawn}" if drawn else ""

    # -- shared by every game --

    def row(self, walk: Walk, step: WalkedStep) -> StepRow:
        parts = []
        faults = []
        for seat in step.asked:
            who = walk.labels[seat] if seat < len(walk.labels) else f"seat {seat}"
            fault = step.faults[seat]
            action = step.actions[seat]
            if fault is not None:
                parts.append(f"{who}: no move ({fault.kind})")
                faults.append(f"seat {seat} {fault.kind}: {printable(fault.detail)}")
            elif action is not None:
                parts.append(f"{who}: {self.action_words(walk, step, seat, action)}")
        took = [step.us[s] for s in step.asked]
        ms = ", ".join("-" if us is None else f"{us / 1000:.2f}" for us in took)
        return StepRow(
            n=step.n,
            place=step.place,
            seats=list(step.asked),
            action="; ".join(parts),
            change=self.change_words(walk, step),
            fault="; ".join(faults),
            ms=ms,
        )

    def rows(self, walk: Walk, first: int = 1, last: int = -1) -> list[StepRow]:
        """The rows of the steps numbered ``first`` to ``last`` (-1: to the end)."""
        return [self.row(walk, s) for s in walk.steps if s.n >= first and (last < 0 or s.n <= last)]

    def step_table(self, walk: Walk) -> str:
        word = e(walk.word)
        has_place = any(s.place for s in walk.steps)
        steps = walk.steps[:MAX_TABLE_STEPS]
        more = len(walk.steps) - len(steps)
        head = (
            f'<tr><th class="n">{word}</th>'
            + ("<th>where</th>" if has_place else "")
            + "<th>who</th><th>action</th><th>what followed</th><th>ms</th><th>fault</th></tr>"
        )
        body = []
        for i, step in enumerate(steps):
            r = self.row(walk, step)
            classes = []
            if r.fault:
                classes.append("fault")
            if has_place and (i + 1 == len(steps) or steps[i + 1].place != step.place):
                classes.append("end")
            cls = f' class="{" ".join(classes)}"' if classes else ""
            who = ", ".join(
                f'<span style="color:{seat_colour(s)}">{e(walk.labels[s])}</span>' for s in r.seats
            )
            body.append(
                f'<tr data-n="{r.n}"{cls}><td class="n">{r.n}</td>'
                + (f'<td class="w">{e(r.place)}</td>' if has_place else "")
                + f'<td class="w">{who}</td><td>{e(r.action)}</td><td>{e(r.change)}</td>'
                f"<td>{e(r.ms)}</td><td>{e(r.fault)}</td></tr>"
            )
        return (
            f'<h2 id="steps">{word.capitalize()}s</h2><div class="hint">{e(self.steps_hint)}</div>'
            f'<div class="scroll"><table class="steps" id="steps-table"><thead>{head}</thead>'
            f"<tbody>{''.join(body)}</tbody></table></div>"
            + (
                f'<div class="hint">... and {more} more {word}s: '
                f"<code>referee replay FILE --rounds A-B</code> shows any of them.</div>"
                if more
                else ""
            )
        )

    def render(self, walk: Walk, verify: str | None = None) -> str:
        """The whole HTML page."""
        header = walk.header
        stopped = ""
        if walk.stopped is not None:
            stopped = (
                f'<div class="bad">The rules could not re-play this replay past '
                f"{len(walk.steps)} {e(walk.word)}s: {e(walk.stopped)}</div>"
            )
        body = (
            heading_html(header, walk.word, walk.recorded)
            + summary_html(
                header,
                walk.footer,
                walk.events,
                walk.word,
                walk.recorded,
                verify=verify,
                places=walk.places,
            )
            + stopped
            + self.sections(walk)
            + self.step_table(walk)
            + f"<footer>Generated by referee {e(header.referee_version)} from a replay "
            f"({walk.recorded} {e(walk.word)}s).</footer>"
        )
        return document(header, body)


def report_for(game: str) -> StepReport:
    """The report of ``game``: its module's ``REPORT`` in ``referee.game_reports``,
    or the generic one."""
    name = f"{__package__}.game_reports.{game}"
    if game.isidentifier() and importlib.util.find_spec(name) is not None:
        report: StepReport = importlib.import_module(name).REPORT
        return report
    return StepReport()


def render_walk(walk: Walk, verify: str | None = None) -> str:
    return report_for(walk.header.game).render(walk, verify)
