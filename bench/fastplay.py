"""A prototype of a cheaper round loop for referee/match.py (measurement only).

Modelled on ``Match._play`` as of commit 655cb04; later changes to the driver's
fault policy are not carried over, so do not use it to judge behaviour.

``fast_play`` is a drop-in replacement for ``Match._play`` that keeps its
behaviour (faults, timeouts, bank, replay records, checkpoints) but takes the
common round -- every asked bot's reply is already in the pipe, whole, alone --
through fewer Python operations. bench/ablate.py runs it as the ``fast-play``
variant next to the real loop. It patches nothing by itself and is not used by
the referee; it exists to show what each change below is worth:

1. Bound methods and attributes used every round are hoisted into locals.
2. The reply is read with one ``os.read`` and, when it is exactly one line and
   nothing is buffered, appended without the bytearray buffer and the newline
   scan loop of ``BotProcess.read_stdout`` (which stays the general path).
3. ``_take_line`` is inlined for the common case (one line owed, one line read).
4. (Not done: recording the reply as received instead of re-encoding it would
   save ~0.4 us a round, but ``referee verify`` requires the canonical encoding.)
5. The per-round lists are allocated once per round in one place, and the
   general waiting loop runs only for seats the fast path did not settle.
"""

from __future__ import annotations

import os
import time
from typing import Any

import msgspec
import trio

from referee import faults
from referee.games import Game
from referee.match import PROGRESS_EVERY, WATCHDOG_PERIOD, Match
from referee.proc import READ_CHUNK
from referee.replay import Step


async def fast_play(self: Match) -> None:
    game = self.game
    state = self._state
    mux = self.mux
    assert mux is not None
    cfg = self.cfg
    seats = self.seats
    nseats = len(seats)
    bots = [s.bot for s in seats]
    encode = msgspec.json.Encoder().encode
    decode = msgspec.json.Decoder(game.action_type).decode
    observe, check, resolve = game.observe, game.check, game.resolve
    finished, step_number, to_act = game.finished, game.step_number, game.to_act
    write_record = self.writer.write
    monotonic = time.monotonic
    raw = msgspec.Raw
    move_s = cfg.move_timeout
    max_faults = cfg.max_faults
    pending: Step | None = None
    checkpoint_at = PROGRESS_EVERY
    has_notices = type(game).notices is not Game.notices
    while not finished(state):
        step = step_number(state)
        asked = to_act(state)
        fatal: list[int] = []
        mux.pump()
        for seat in range(nseats):
            bot = bots[seat]
            if bot is not None and bot.lines and not seats[seat].owed and not seats[seat].out:
                self._fault(seat, step, faults.UNSOLICITED_OUTPUT, "a line nobody asked for")
                fatal.append(seat)
        over = self._watchdog(step, force=False) if monotonic() >= self._next_watch else ()
        if fatal or over:
            self._disqualify(fatal + list(over), step)
            continue
        obs: list[Any] = [None] * nseats
        acts: list[Any] = [None] * nseats
        actions: list[Any] = [None] * nseats
        step_faults: list[Any] = [None] * nseats
        latency: list[Any] = [None] * nseats
        sent = monotonic()
        for seat in asked:
            s = seats[seat]
            bot = bots[seat]
            assert bot is not None
            body = encode(observe(state, seat))
            obs[seat] = raw(body)
            bot.send(body + b"\n")
            if bot.outbuf:
                mux.want_write(bot)
            s.owed.append(step)
        if pending is not None:
            write_record(pending)
            pending = None
        waiting: list[int] = []
        for seat in asked:
            s = seats[seat]
            bot = bots[seat]
            assert bot is not None
            line = None
            # The common case: nothing buffered, one step owed, the reply is in the
            # pipe as exactly one line.
            if not bot.lines and not bot.inbuf and not bot.stdout_eof and len(s.owed) == 1:
                try:
                    data = os.read(bot.stdout_fd, READ_CHUNK)
                except BlockingIOError:
                    data = None
                except OSError:
                    data = b""
                if data and data.find(b"\n") == len(data) - 1 and len(data) <= bot.max_line:
                    bot.bytes_out += len(data)
                    line = data[:-1]
                    s.owed.popleft()
                elif data is not None:
                    # Anything else goes through the general splitter unchanged.
                    _feed(bot, data, monotonic())
            if line is None:
                waiting.append(seat)
                continue
            t = monotonic()
            took = t - sent
            latency[seat] = int(took * 1e6)
            if took > s.max_move:
                s.max_move = took
            if took > move_s:
                s.bank = max(0.0, s.bank - (took - move_s))
            _accept(
                self, encode, seat, step, line, decode, check, state, actions, acts, step_faults
            )
        if waiting:
            deadline = [sent + move_s + seats[seat].bank for seat in range(nseats)]
            args = (encode, decode, state, actions, acts, step_faults, latency, fatal)
            await _wait_rest(self, step, waiting, sent, deadline, *args)
        outcome = resolve(state, actions)
        if has_notices:
            for seat, notice in game.notices(state, outcome):
                bot = bots[seat]
                if not seats[seat].out and bot is not None:
                    bot.send(encode(notice) + b"\n")
                    if bot.outbuf:
                        mux.want_write(bot)
        pending = Step(
            n=step, obs=obs, act=acts, us=latency, fault=step_faults, out=raw(encode(outcome))
        )
        for seat in asked:
            s = seats[seat]
            if s.round_faults >= max_faults and seat not in fatal and not s.out:
                self._fault(
                    seat,
                    step,
                    faults.TOO_MANY_FAULTS,
                    f"{s.round_faults} round faults (limit {max_faults})",
                )
                fatal.append(seat)
        if fatal:
            write_record(pending)
            pending = None
            self._disqualify(fatal, step)
        if step >= checkpoint_at:
            checkpoint_at = step + PROGRESS_EVERY
            if self.progress is not None:
                self.progress(step, self.total_steps, state)
            await trio.lowlevel.checkpoint()
    if pending is not None:
        write_record(pending)


def _feed(bot: Any, data: bytes, now: float) -> None:
    """What BotProcess.read_stdout does with bytes after its os.read (in a real
    change the splitter would be its own method, called from both paths)."""
    if not data:
        bot.stdout_eof = True
        return
    bot.bytes_out += len(data)
    buf = bot.inbuf
    buf += data
    start = 0
    while (nl := buf.find(b"\n", start)) >= 0:
        if nl - start > bot.max_line:
            bot.line_too_long = True
            return
        bot.lines.append((bytes(buf[start:nl]), now))
        start = nl + 1
    del buf[:start]
    bot._scan_from = len(buf)
    if len(buf) > bot.max_line:
        bot.line_too_long = True


def _accept(
    self: Match,
    encode: Any,
    seat: int,
    step: int,
    line: bytes,
    decode: Any,
    check: Any,
    state: Any,
    actions: list[Any],
    acts: list[Any],
    step_faults: list[Any],
) -> None:
    try:
        action = decode(line)
    except (ValueError, RecursionError) as exc:
        step_faults[seat] = self._fault(seat, step, faults.PROTOCOL_ERROR, f"{exc}: {line[:200]!r}")
        return
    why = check(state, seat, action)
    if why is not None:
        kind = faults.PROTOCOL_ERROR if "round" in why else faults.ILLEGAL_MOVE
        step_faults[seat] = self._fault(seat, step, kind, why)
        return
    actions[seat] = action
    acts[seat] = msgspec.Raw(encode(action))


async def _wait_rest(
    self: Match,
    step: int,
    waiting: list[int],
    sent: float,
    deadline: list[float],
    encode: Any,
    decode: Any,
    state: Any,
    actions: list[Any],
    acts: list[Any],
    step_faults: list[Any],
    latency: list[Any],
    fatal: list[int],
) -> None:
    """The general path, as in Match._play: buffered lines, late replies, waits."""
    seats = self.seats
    mux = self.mux
    assert mux is not None
    move_s = self.cfg.move_timeout
    while waiting:
        now = time.monotonic()
        still = []
        for seat in waiting:
            s = seats[seat]
            bot = s.bot
            assert bot is not None
            if not bot.lines:
                bot.read_stdout(now)
            got = self._take_line(seat, step) if bot.lines else None
            if got is None:
                gone = None
                if bot.stdout_eof or bot.stdin_broken or bot.exited or bot.line_too_long:
                    gone = await self._gone_reason(seat)
                if gone is not None:
                    step_faults[seat] = self._fault(seat, step, *gone)
                    fatal.append(seat)
                elif now >= deadline[seat]:
                    step_faults[seat] = self._fault(
                        seat,
                        step,
                        faults.TIMEOUT,
                        f"no reply within {move_s:g} s (+{s.bank:.3f} s bank)",
                    )
                    s.bank = 0.0
                else:
                    still.append(seat)
                continue
            if isinstance(got, str):
                step_faults[seat] = self._fault(seat, step, got, "a line nobody asked for")
                fatal.append(seat)
                continue
            line, t = got
            took = t - sent
            latency[seat] = int(took * 1e6)
            if took > s.max_move:
                s.max_move = took
            if took > move_s:
                s.bank = max(0.0, s.bank - (took - move_s))
            check = self.game.check
            _accept(
                self, encode, seat, step, line, decode, check, state, actions, acts, step_faults
            )
        waiting = still
        if waiting:
            wait = min(deadline[seat] for seat in waiting) - time.monotonic()
            await mux.wait(min(wait, WATCHDOG_PERIOD))
            for seat in self._watchdog(step, force=False):
                if seat in waiting:
                    waiting.remove(seat)
                    fatal.append(seat)
