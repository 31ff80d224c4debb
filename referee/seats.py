"""The bot processes of a match's seats: driver-side bookkeeping (``Seat``) and the
end of a match for every bot (``finish_bots``: the end message, grace period,
teardown, the verdict's measurements)."""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Sequence
from pathlib import Path

import msgspec
import trio

from . import sandbox as sbx
from .bot_command import BotSpec
from .faults import Verdict
from .games import GameResult
from .proc import BotProcess, Multiplexer
from .protocol import End, encode_line

EXIT_GRACE_S = 0.5  # after "end", how long bots get to exit by themselves


class Seat:
    """Driver-side bookkeeping for one seat: its bot process and what was measured
    of it."""

    def __init__(self, index: int, spec: BotSpec, seed: int) -> None:
        self.index = index
        self.spec = spec
        self.seed = seed
        self.bot: BotProcess | None = None
        self.verdict = Verdict()
        self.owed: deque[int] = deque()  # steps whose reply has not arrived yet, oldest first
        self.scratch: Path | None = None
        self.scratch_dir: sbx.Scratch | None = None  # the scratch directory and its lock
        # Every pid seen in the bot's tree (the watchdog's samples): what it may have
        # made System V IPC objects with, where it had the referee's uid.
        self.seen_pids: set[int] = set()
        self.last_processes = 0  # in the bot's tree at the watchdog's last reading
        self.next_disk_walk = 0.0  # when the watchdog may walk its scratch again
        self.uid = -1  # the bot's uid (its own leased one when the referee is root)
        self.uid_leased = False
        self.marker = ""  # in the bot's environment: attributes escaped processes
        self.name: str | None = None
        self.version: str | None = None
        self.ready_bytes = 0  # bytes on its stdout up to its ready message
        self.stderr_log: str | None = None  # the file its stderr is copied to
        self.peak_rss = 0
        self.cpu_s = 0.0
        # Its cgroup where the host gives one (sandbox/cgroups.py), and the last
        # reading of it, taken at teardown before the cgroup is removed.
        self.cgroup: sbx.BotCgroup | None = None
        self.cg_reading: sbx.CgroupReading | None = None
        self.max_move = 0.0  # the slowest reply, copied from the judge at the end


def kill_cgroup(s: Seat) -> None:
    """Once the bot's process tree is dead: what is left in its cgroup escaped it (a
    double fork, setsid), and the cgroup says whose it is, whatever it did to its
    environment; it is named in the verdict, then the whole cgroup is killed at
    once. Never raises."""
    if s.cgroup is None:
        return
    s.verdict.escaped_processes += sbx.describe_strays(
        sbx.live_strays(s.cgroup.members()), s.marker
    )
    s.cgroup.kill()


async def finish_bots(
    seats: Sequence[Seat],
    out: Sequence[bool],
    mux: Multiplexer | None,
    result: GameResult | None,
    isolation: Sequence[str] = ("fs", "syscalls"),
) -> None:
    """The end of a match for every bot: the end message, a grace period to exit, then
    its whole process tree killed and reaped, escaped processes swept, and the
    verdict's measurements filled in. Never raises."""
    live = [s for s in seats if s.bot is not None]
    for s in live:
        bot = s.bot
        assert bot is not None
        if not bot.exited:
            # Each process's own high-water mark, while they are there to read.
            s.peak_rss = max(s.peak_rss, sbx.peak_vm_hwm_kib(bot.pid))
        if not bot.exited and not out[s.index]:
            bot.send(
                encode_line(
                    End(
                        reason=result.reason if result else "aborted",
                        rounds=result.steps if result else 0,
                        result=msgspec.to_builtins(result) if result else None,
                    )
                )
            )
        bot.close_stdin()
    deadline = time.monotonic() + EXIT_GRACE_S
    with trio.CancelScope(shield=True):
        while mux is not None:
            for s in live:
                assert s.bot is not None
                s.bot.poll_exit()
            if all(s.bot.exited for s in live if s.bot is not None):
                break
            left = deadline - time.monotonic()
            if left <= 0:
                break
            await mux.wait(min(left, 0.05))
    for s in live:
        bot = s.bot
        assert bot is not None
        if not bot.exited:
            s.verdict.killed_by_referee = True
            if not out[s.index]:  # it was sent "end" and should have gone by itself
                s.verdict.extra["after_end"] = (
                    f"did not exit within {EXIT_GRACE_S * 1000:.0f} ms after end; killed"
                )
        bot.kill()
    # Reap: after SIGKILL this is quick, but bound it for uninterruptible sleeps.
    reap_deadline = time.monotonic() + 5.0
    for s in live:
        bot = s.bot
        assert bot is not None
        while not bot.poll_exit() and time.monotonic() < reap_deadline:
            bot.kill()
            time.sleep(0.002)
        while not bot.stderr_eof and bot.stderr_fd >= 0 and bot.read_stderr():
            pass
    for s in live:
        if s.cgroup is not None:
            s.cg_reading = s.cgroup.read()
            kill_cgroup(s)
    known = {s.bot.pid for s in live if s.bot is not None}
    # As root each bot runs as a uid of its own, which names its escapees too.
    by_uid = {s.uid: s.marker for s in live if s.uid_leased}
    escaped = sbx.sweep_escaped(known, marker_of_uid=by_uid)
    for description in escaped:
        owners = [s for s in live if f"[{s.marker}]" in description]
        for s in owners:
            s.verdict.escaped_processes.append(description)
        if not owners:
            # Neither a cgroup, a uid nor a marker ties it to one bot (the bots share
            # the referee's uid and it dropped the marker): recorded, charged to no
            # one, since a bot could otherwise frame its opponent.
            for s in live:
                s.verdict.extra.setdefault("escaped_unattributed", []).append(description)
    for s in live:
        bot = s.bot
        assert bot is not None
        code, sig = bot.exit_description()
        if s.verdict.exit_code is None and s.verdict.signal is None:
            s.verdict.exit_code, s.verdict.signal = code, sig
        s.verdict.wall_s = round(time.monotonic() - bot.started, 3)
        ru = bot.rusage
        if ru is not None:
            # (Not its ru_maxrss: that counts the referee's own pages the launch was
            # forked with, before it exec'd.)
            cpu = float(getattr(ru, "ru_utime", 0.0)) + float(getattr(ru, "ru_stime", 0.0))
            s.cpu_s = max(s.cpu_s, cpu)
        reading = s.cg_reading
        if reading is not None and reading.cpu_s >= 0:
            s.cpu_s = max(s.cpu_s, reading.cpu_s)
        s.verdict.cpu_s = round(s.cpu_s, 3)
        if reading is not None and reading.peak_bytes >= 0:
            # The kernel's own figure: every page charged to the bot's cgroup.
            s.peak_rss = reading.peak_bytes // 1024
        s.verdict.peak_rss_kib = s.peak_rss
        s.verdict.bytes_in = bot.bytes_in
        s.verdict.bytes_out = bot.bytes_out
        s.verdict.max_move_ms = round(s.max_move * 1000, 3)
        s.verdict.stderr_head = bot.stderr.head_text()[-2000:]
        s.verdict.stderr_tail = bot.stderr.tail_text()[-2000:]
        s.verdict.stderr_bytes = bot.stderr.total
        bot.close_all()
    if mux is not None:
        mux.close()
    for s in seats:
        if s.cgroup is not None:
            try:
                s.cgroup.remove()
            except Exception:  # noqa: S110 - a teardown must not fail
                pass
            s.cgroup = None
        _remove_leftovers(s, isolation)


# A bound on Seat.seen_pids (a fork bomb's pids, say): beyond it the oldest are kept.
SEEN_PIDS_MAX = 4096


def _remove_leftovers(s: Seat, isolation: Sequence[str]) -> None:
    """What the seat's bot left on the host once its tree is gone: its scratch
    directory, its System V IPC objects and, for a uid of its own, whatever that uid
    owns in /tmp, /var/tmp and /dev/shm without a private file system ("fs"), and
    its keyrings where no seccomp filter ("syscalls") refused it the keyring calls.
    Then its uid is free for another bot. Never raises."""
    try:
        if s.scratch_dir is not None:
            s.scratch_dir.remove()
        elif s.scratch is not None:
            sbx.remove_tree(s.scratch)
        # Where the bot had an IPC namespace these are not visible here: nothing found.
        own_uid = s.uid if s.uid_leased else None
        ipc = sbx.remove_ipc(own_uid, s.seen_pids)
        if ipc:  # on the record: what the referee removed after the bot
            s.verdict.extra["ipc_removed"] = ipc[:20]
        if own_uid is not None and "fs" not in isolation:
            sbx.remove_owned(own_uid)
        if own_uid is not None and "syscalls" not in isolation:
            sbx.clear_keyrings(own_uid)
    except Exception:  # noqa: S110 - a teardown must not fail
        pass
    if s.uid_leased:  # its whole tree is gone: the uid may serve another bot
        sbx.release_uid(s.uid)
        s.uid_leased = False
