"""Cost of each piece of the referee's per-round work, in isolation (a prototype).

    python bench/micro.py

Times the operations one Chaos League round performs in referee/match.py and
referee/proc.py, each on its own with timeit, taking the best of several repeats:
the minimum is the figure least moved by other load on a shared machine. The sum
is a lower bound of the round loop's CPU; compare it with ``bench/ablate.py``'s
measured CPU per round to see how much is loop overhead between the pieces.
Alternatives that would do the same job cheaper are timed next to them.
"""

from __future__ import annotations

import os
import select
import tempfile
import time
import timeit
from collections import deque
from collections.abc import Callable
from pathlib import Path

import msgspec

from referee.games.chaos import ChaosLeague
from referee.proc import BotProcess
from referee.replay import ReplayWriter, Step

REPLY = b'{"round":123,"real_move":"rock"}\n'


def best_us(fn: Callable[[], object], number: int = 1_000, repeat: int = 60) -> float:
    # Short repeats, many of them: on a loaded machine some repeat runs unpreempted.
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number * 1e6


class FakeBot:
    """The attributes BotProcess.read_stdout uses, on a real pipe."""

    def __init__(self) -> None:
        self.stdout_fd, self.w = os.pipe()
        os.set_blocking(self.stdout_fd, False)
        self.stdout_eof = False
        self.stdout_done = False
        self.line_too_long = False
        self.max_line = 65536
        self.bytes_out = 0
        self.inbuf = bytearray()
        self._scan_from = 0
        self.lines: deque[tuple[bytes, float]] = deque()


def fast_read(bot: FakeBot, now: float) -> bool:
    """The one-whole-line fast path suggested for BotProcess.read_stdout."""
    data = os.read(bot.stdout_fd, 65536)
    bot.bytes_out += len(data)
    if not bot.inbuf and data.find(b"\n") == len(data) - 1:
        bot.lines.append((data[:-1], now))
        return True
    return False


def main() -> None:
    game = ChaosLeague.create(2, {})
    state = game.new_state(1)
    encode = msgspec.json.Encoder().encode
    decode = msgspec.json.Decoder(game.action_type).decode
    action = decode(REPLY[:-1])
    rows: list[tuple[str, float, float]] = []  # (what, us, times per round)

    def add(what: str, us: float, per_round: float) -> None:
        rows.append((what, us, per_round))
        print(f"{what:<58} {us:7.2f} us x{per_round:g}", flush=True)

    # -- reading a reply: a write into a pipe, then the read under test --------
    bot = FakeBot()

    def read_general() -> None:
        os.write(bot.w, REPLY)
        BotProcess.read_stdout(bot, 0.0)  # type: ignore[arg-type]
        bot.lines.popleft()

    def read_fast() -> None:
        os.write(bot.w, REPLY)
        fast_read(bot, 0.0)
        bot.lines.popleft()

    def write_read() -> None:
        os.write(bot.w, REPLY)
        os.read(bot.stdout_fd, 65536)

    base = best_us(write_read)
    add("os.write + os.read of a reply (the pipe itself)", base, 2)
    add("BotProcess.read_stdout, beyond the os.read", best_us(read_general) - base, 2)
    add("  alternative: one-whole-line fast path, beyond os.read", best_us(read_fast) - base, 2)

    # -- the turn: observe, encode, wrap ---------------------------------------
    add("game.observe + encode (a turn)", best_us(lambda: encode(game.observe(state, 0))), 2)
    body = encode(game.observe(state, 0))
    add("msgspec.Raw(body) + body + b'\\n'", best_us(lambda: (msgspec.Raw(body), body + b"\n")), 2)

    # -- the reply: decode, check, re-encode for the replay --------------------
    line = REPLY[:-1]
    add("decode the reply into Action", best_us(lambda: decode(line)), 2)
    add("game.check", best_us(lambda: game.check(state, 0, action)), 2)
    add(
        "msgspec.Raw(encode(action)) for the replay",
        best_us(lambda: msgspec.Raw(encode(action))),
        2,
    )
    add(
        "  alternative: msgspec.Raw(line) (the bytes received)",
        best_us(lambda: msgspec.Raw(line)),
        2,
    )

    # -- resolving and recording ----------------------------------------------
    # One long-lived state, as in a match (its histories grow by 8 bytes a call).
    live = game.new_state(1)
    add("game.resolve", best_us(lambda: game.resolve(live, [action, action])), 1)
    outcome = game.resolve(live, [action, action])
    add("encode(outcome)", best_us(lambda: msgspec.Raw(encode(outcome))), 1)
    obs = [msgspec.Raw(body), msgspec.Raw(body)]
    acts = [msgspec.Raw(line), msgspec.Raw(line)]
    out = msgspec.Raw(encode(outcome))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "r.jsonl"
        path.symlink_to(os.devnull)
        writer = ReplayWriter(path)

        def record() -> None:
            writer.write(Step(n=1, obs=obs, act=acts, us=[5, 6], fault=[None, None], out=out))

        add("Step(...) + ReplayWriter.write (encode, sha256, write)", best_us(record), 1)
        writer.close()

    # -- loop overhead pieces -------------------------------------------------
    ep = select.epoll()
    add("mux.pump's epoll.poll(0), nothing ready", best_us(lambda: ep.poll(0)), 1)
    ep.close()
    add("time.monotonic()", best_us(time.monotonic, number=10_000), 5)

    def lists() -> None:
        # The per-round lists _play builds: obs, sent, deadline, actions, acts,
        # step_faults, latency, waiting, still, fatal.
        n = 2
        [None] * n, [0.0] * n, [0.0] * n, [None] * n, [None] * n
        [None] * n, [None] * n, list((0, 1)), [], []

    add("the ten per-round lists", best_us(lists), 1)
    add(
        "game.finished + step_number + to_act",
        best_us(lambda: (game.finished(state), game.step_number(state), game.to_act(state))),
        1,
    )

    total = sum(us * k for _w, us, k in rows if not _w.startswith("  "))
    print(f"\nsum per round (alternatives excluded): {total:.1f} us")
    saved = (
        (rows[1][1] - rows[2][1]) * 2  # fast read path
        + (rows[7][1] - rows[8][1]) * 2  # raw acts
    )
    print(f"the two alternatives would save about {saved:.1f} us per round")


if __name__ == "__main__":
    main()
