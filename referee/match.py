"""The match driver: runs one game between bot processes under trio.

This is the thin shell around a pure ``Game``: it moves bytes, keeps time,
enforces the fault policy and writes the replay. The round loops are written for
speed (see docs/performance.md): each step writes every turn, then tries a plain
non-blocking read of each reply, waits briefly in the thread (a short spin, then
a short blocking epoll wait on one epoll set for all bots) and parks in trio's
event loop only when a reply is slow. The previous step's replay record is
written while the bots think. Two-seat games whose seats both act at every step
(Chaos League) have a loop of their own for the usual round (``_play_pair``);
every other round, and every other game, is judged by the same helpers.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import msgspec
import trio

from . import __version__, faults
from . import sandbox as sbx
from .bot_command import BotSpec, bot_dir_of, file_digest
from .errors import SandboxFailure, UsageError
from .faults import FaultKind, FaultRecord, Verdict
from .games import GAMES, Fault, Game, GameResult
from .judge import Judge, crowding_seat
from .placement import cpu_placement, pin_thread
from .proc import BotProcess, Multiplexer, SpawnError
from .protocol import (
    DEFAULT_MAX_LINE,
    MAX_NAME_LENGTH,
    PROTOCOL_VERSION,
    Hello,
    TimeLimits,
    encode_line,
    ready_decoder,
)
from .replay import FORMAT_NAME, FORMAT_VERSION, BotInfo, Event, Footer, Header, ReplayWriter, Step
from .replay import utc_now as _utc_now
from .seats import SEEN_PIDS_MAX, Seat, finish_bots, kill_cgroup
from .wakeup import IdlePollHold

MIB = 1024 * 1024

WATCHDOG_PERIOD = 0.1  # seconds between RSS/CPU polls of each bot's process tree
# A walk of a bot's scratch directory during play stops after this long, and the
# next waits DISK_WALK_SPACING times as long as it took (see Match._over_disk).
DISK_WALK_BUDGET_S = 0.05
DISK_WALK_SPACING = 10
SETTLE_S = 0.2  # how long a closed pipe waits for the process exit before being judged
PROGRESS_EVERY = 256  # steps between progress callbacks and scheduler checkpoints
# For a match kept to a single CPU (Match._spawn_all): replay records written at a
# time, and the time slice asked for the bots, in nanoseconds: the kernel's least.
RECORD_BATCH = 32
BOT_SLICE_NS = 100_000


class MatchConfig(msgspec.Struct, frozen=True, kw_only=True):
    game: str = "chaos"
    rounds: int | None = None  # None: the game's default
    tokens: int | None = None  # Chaos League only; None: the game's default
    params: dict[str, Any] = msgspec.field(default_factory=dict)  # other game parameters
    seed: int = 0
    # Each seat's bot seed; None: derived from ``seed`` and the seat. Paired matches
    # (``referee sprt``) share the game's seed but give the bots seeds of their own.
    bot_seeds: list[int] | None = None
    move_timeout: float = 1.0
    handshake_timeout: float = 10.0
    time_bank: float = 3.0
    max_faults: int = 3
    max_line: int = DEFAULT_MAX_LINE
    # Busy-poll up to this long for a reply before sleeping (0: never); see
    # Multiplexer.ready_soon. It changes speed only, never a result.
    spin_us: int = 100
    # Pin the referee and each bot to a CPU (see cpu_placement). Off by default: it
    # is faster only for a match that has the machine to itself.
    pin_cpus: bool = False
    # Keep idle CPUs polling while the match plays, where the kernel lets us (see
    # referee/wakeup.py). Speed only, the same for every seat.
    idle_poll: bool = True
    sandbox: str = "auto"
    # "auto": a cgroup per bot where this host allows one (sandbox/cgroups.py);
    # "off": every limit is sampled by the watchdog.
    cgroups: str = "auto"
    limits: sbx.Limits = msgspec.field(default_factory=sbx.Limits)
    replay: str | None = None
    log_dir: str | None = None  # where per-bot stderr logs go (None: next to the replay)


class PlayedMatch(msgspec.Struct):
    """What the driver hands back: the records of the match as written to its replay,
    and how long it took (``referee.outcome.outcome_of`` makes the report of it)."""

    header: Header
    result: GameResult
    verdicts: list[Verdict]
    faults: list[FaultRecord]
    replay: str | None
    wall_s: float
    replay_hash: str
    play_s: float = 0.0  # first turn sent to last step resolved: the rate's denominator
    idle_poll: bool = False  # whether idle CPUs were kept polling (referee/wakeup.py)
    # This process's CPU seconds in the match's three phases: the bots' spawn, the
    # handshake and the scoring module's import; the rounds (their replay records
    # included); scoring, the last records and the bots' teardown.
    setup_cpu_s: float = 0.0
    play_cpu_s: float = 0.0
    finish_cpu_s: float = 0.0
    # Each seat's CPU (its process tree) from its launch to its ready message.
    bot_startup_cpu_s: list[float] = msgspec.field(default_factory=list)
    stderr_logs: list[str | None] = msgspec.field(default_factory=list)  # by seat


def random_seed() -> int:
    """A fresh 63-bit seed from the OS (for a match or tournament given none)."""
    return int.from_bytes(os.urandom(8), "big") >> 1


def derive_seed(match_seed: int, *parts: object) -> int:
    """A 63-bit seed for a seat (or any sub-purpose) from the match seed."""
    text = ":".join(str(p) for p in ("referee", match_seed, *parts))
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") >> 1


def make_game(cfg: MatchConfig, seats: int = 2) -> Game:
    """The game a config asks for, for ``seats`` bots (UsageError if it cannot be)."""
    cls = GAMES.get(cfg.game)
    if cls is None:
        raise UsageError(f"unknown game {cfg.game!r}; known: {', '.join(sorted(GAMES))}")
    params: dict[str, Any] = dict(cfg.params)
    if cfg.rounds is not None:
        params["rounds"] = cfg.rounds
    if cfg.tokens is not None:
        params["tokens"] = cfg.tokens
    try:
        return cls.create(seats, params)
    except (TypeError, ValueError) as exc:
        raise UsageError(f"{cfg.game}: {exc}") from None


# bwrap reports a signal death as exit code 128 + n.
_SIGXCPU_CODES = (-24, 128 + 24)


class _Round:
    """What one step got from the seats it asked, by seat, while it is judged."""

    __slots__ = ("actions", "faults", "latency", "fatal", "faulted")

    def __init__(self, seats: int) -> None:
        self.actions: list[Any | None] = [None] * seats
        self.faults: list[Fault | None] = [None] * seats
        self.latency: list[int | None] = [None] * seats  # microseconds
        self.fatal: list[int] = []  # seats to disqualify after this step
        self.faulted = False


class Match:
    def __init__(
        self,
        bots: Sequence[BotSpec],
        cfg: MatchConfig,
        progress: Callable[[int, int, Any], None] | None = None,
    ) -> None:
        self.cfg = cfg
        self.game = make_game(cfg, len(bots))
        if cfg.bot_seeds is not None and len(cfg.bot_seeds) != len(bots):
            raise UsageError(f"{len(cfg.bot_seeds)} bot seeds for {len(bots)} bots")
        seeds = cfg.bot_seeds or [derive_seed(cfg.seed, seat) for seat in range(len(bots))]
        self.seats = [
            Seat(seat, spec, seed)
            for seat, (spec, seed) in enumerate(zip(bots, seeds, strict=True))
        ]
        self.progress = progress
        self.judge = Judge(len(bots), cfg.move_timeout, cfg.time_bank, cfg.max_faults)
        self.faults: list[FaultRecord] = self.judge.faults
        for s, seat_faults in zip(self.seats, self.judge.seat_faults, strict=True):
            s.verdict.faults = seat_faults
        try:
            self.writer = ReplayWriter(Path(cfg.replay) if cfg.replay else None, game=self.game)
        except OSError as exc:
            raise UsageError(
                f"cannot write the replay {cfg.replay}: {exc.strerror or exc}"
            ) from None
        self.mux: Multiplexer | None = None
        self.layer: sbx.Layer | None = None
        self.cgroups: sbx.CgroupHost = sbx.NO_CGROUPS
        self.events: list[Event] = []
        self.total_steps = self.game.length()
        self._next_watch = 0.0
        self._fair: sbx.FairShare | None = None  # the CPU-share watchdog
        self._cpus: set[int] = set()  # the CPUs the match runs on
        self._group_nice = sbx.group_nice_to_carry()  # for the bots' session groups
        self._play_s = 0.0
        self._pinned_from: set[int] = set()  # the CPUs to give back after --pin-cpus
        self._one_cpu = False  # see _spawn_all
        self._record_batch = 1
        self._idle_poll = IdlePollHold()

    # -- faults ----------------------------------------------------------------

    def _fault(self, seat: int, step: int, kind: FaultKind, detail: str) -> Fault:
        return self.judge.fault(seat, step, kind, detail)

    # -- start-up --------------------------------------------------------------

    def _spawn_all(self) -> None:
        cfg = self.cfg
        cpus = sorted(os.sched_getaffinity(0))
        placement = cpu_placement(cpus, len(self.seats)) if cfg.pin_cpus else None
        # Orphans a bot leaves behind (setsid grandchildren) are re-parented to us,
        # so the teardown sweep can find and kill them.
        sbx.enable_subreaper()
        _sweep_once(cfg.limits)
        try:
            self.layer = sbx.choose_layer(cfg.sandbox)
        except sbx.SandboxError as exc:
            raise UsageError(f"sandbox {cfg.sandbox!r} does not work here: {exc}") from None
        log_dir: Path | None = None
        if cfg.log_dir:
            log_dir = Path(cfg.log_dir)
        elif cfg.replay:
            log_dir = Path(cfg.replay).parent
        if log_dir is not None:
            log_dir.mkdir(parents=True, exist_ok=True)
        stem = Path(cfg.replay).name.split(".")[0] if cfg.replay else "match"
        if cfg.cgroups not in ("auto", "off"):
            raise UsageError(f"cgroups must be 'auto' or 'off', not {cfg.cgroups!r}")
        self.cgroups = sbx.cgroup_host() if cfg.cgroups == "auto" else sbx.NO_CGROUPS
        self._make_cgroups()
        for seat, s in enumerate(self.seats):
            try:
                s.scratch_dir = sbx.Scratch(seat)
            except OSError as exc:
                raise UsageError(
                    f"cannot make a scratch directory in {tempfile.gettempdir()}: "
                    f"{exc.strerror or exc}"
                ) from None
            s.scratch = s.scratch_dir.path
            marker = s.marker = f"rfb-{os.getpid()}-{seat}-{os.urandom(4).hex()}"
            try:
                launch = sbx.prepare_launch(
                    list(s.spec.command),
                    bot_dir=bot_dir_of(s.spec.command),
                    scratch=s.scratch,
                    limits=cfg.limits,
                    layer=self.layer,
                    marker=marker,
                    cgroup_procs=s.cgroup.join_files() if s.cgroup is not None else (),
                )
            except sbx.BotUnreachable as exc:
                raise UsageError(f"seat {seat} ({s.spec.label}): {exc}") from None
            s.uid, s.uid_leased = launch.uid, launch.leased
            log = log_dir / f"{stem}.seat{seat}.stderr.log" if log_dir is not None else None
            s.stderr_log = str(log) if log is not None else None
            if placement is not None:  # a child inherits the affinity it is forked with
                self._pinned_from = self._pinned_from or set(cpus)
                pin_thread({placement[1][seat]})
            s.bot = BotProcess(seat, launch, cfg.max_line, stderr_log=log)
            s.seen_pids.add(s.bot.pid)
        if placement is not None:
            pin_thread({placement[0]})
        # Spinning only pays while a bot can run on another CPU meanwhile.
        spin_s = cfg.spin_us * 1e-6 if len(cpus) > 1 else 0.0
        # On a single CPU (a league worker's share, taskset) the referee and both
        # bots take turns, which changes two things (docs/performance.md):
        # - With a second CPU, each round's replay record is written while the bots
        #   think, which costs no time. On one CPU nothing overlaps it and every
        #   bot's turn leaves the caches cold, so the pair loop writes the records
        #   in batches, which is faster. The records, and their order, are the same.
        # - The bots ask for short time slices once they are up (_set_bot_slices).
        self._fair = sbx.FairShare(len(self.seats), len(cpus))
        self._cpus = set(cpus)
        self._one_cpu = len(cpus) == 1
        self._record_batch = RECORD_BATCH if self._one_cpu else 1
        self.mux = Multiplexer([s.bot for s in self.seats if s.bot is not None], spin_s=spin_s)

    def _make_cgroups(self) -> None:
        """A cgroup for every seat, before any bot starts; where one cannot be made
        (the host changed since start-up), none: the match samples every limit, and
        its header says so."""
        if not self.cgroups.hierarchies:
            return
        try:
            for seat, s in enumerate(self.seats):
                s.cgroup = sbx.BotCgroup.create(self.cgroups, f"seat{seat}", self.cfg.limits)
        except sbx.SandboxError:
            for s in self.seats:
                if s.cgroup is not None:
                    s.cgroup.remove()
                    s.cgroup = None
            self.cgroups = sbx.NO_CGROUPS

    def spread(self, cpus: set[int]) -> None:
        """Widen a match started confined to fewer CPUs (a league worker's share, see
        referee/tournament/executor.py) to ``cpus``: the calling thread, which runs
        the round loop, and every bot's process tree. Speed only, never a result. A
        match placed with --pin-cpus keeps its placement."""
        if self.cfg.pin_cpus:
            return
        pin_thread(cpus)
        for s in self.seats:
            if s.bot is not None and not s.bot.exited:
                sbx.spread_tree(s.bot.pid, cpus)
        self._cpus = set(cpus)
        if self._fair is not None:
            self._fair.use_cpus(len(cpus))
        if self.mux is not None and len(cpus) > 1:
            # Spinning pays again now that a bot can run on another CPU meanwhile,
            # each record can be written while the bots think, and the bots' slices
            # go back to the default.
            self.mux.spin_max = self.cfg.spin_us * 1e-6
            self.mux.reset_spin()
            if self._one_cpu:
                self._one_cpu, self._record_batch = False, 1
                self._set_bot_slices(0)

    def _set_bot_slices(self, ns: int) -> None:
        """Ask for time slices of ``ns`` nanoseconds (0: the kernel's default) for
        every thread of both bots; the same for both seats, and speed only.

        On a single CPU each round wakes one bot, which answers and sleeps, then the
        other. Bots that ask for short slices (Linux 6.12+) make that exchange
        faster on one CPU, where with two CPUs they make no difference or cost a
        little (docs/performance.md). The least the kernel grants also leaves
        neither bot a shorter slice to ask for, which would put it first when both
        want the CPU. Bots that compute for long are switched no more often than
        before (at the scheduler's tick) and get the same share of it."""
        for s in self.seats:
            if s.bot is not None and not s.bot.exited:
                sbx.slice_tree(s.bot.pid, ns)

    def _header(self) -> Header:
        cfg = self.cfg
        assert self.layer is not None
        return Header(
            format=FORMAT_NAME,
            format_version=FORMAT_VERSION,
            format_minor=self.writer.format_minor,
            protocol=PROTOCOL_VERSION,
            referee_version=__version__,
            game=self.game.name,
            params=self.game.params(),
            seed=cfg.seed,
            started=_utc_now(),
            bots=[
                BotInfo(
                    seat=i,
                    command=list(s.spec.command),
                    name=s.name,
                    version=s.version,
                    label=s.spec.label,
                    sha256=file_digest(s.spec.command),
                    seed=s.seed,
                )
                for i, s in enumerate(self.seats)
            ],
            time=self._time_limits_dict(),
            max_faults=cfg.max_faults,
            containment={
                "layer": self.layer.name,
                "description": self.layer.description,
                "seccomp": list(self.layer.seccomp),
                "limits": msgspec.to_builtins(cfg.limits),
                "max_line": cfg.max_line,
                # Who the bots ran as; the layer's self-test checked they hold no
                # capability.
                "bot_uids": [s.uid for s in self.seats],
                "capabilities": [],
                # Which limits the kernel enforces (a cgroup per bot, the layer's
                # sized tmpfs) and which the referee samples, on this host
                # (sandbox/cgroups.py).
                "enforcement": sbx.enforcement(
                    self.cgroups, self.layer.isolation, shared_nproc=os.geteuid() != 0
                ),
            },
        )

    def _time_limits(self) -> TimeLimits:
        c = self.cfg
        return TimeLimits(
            handshake_ms=round(c.handshake_timeout * 1000),
            move_ms=round(c.move_timeout * 1000),
            bank_ms=round(c.time_bank * 1000),
        )

    def _time_limits_dict(self) -> dict[str, int]:
        t = self._time_limits()
        return {"handshake_ms": t.handshake_ms, "move_ms": t.move_ms, "bank_ms": t.bank_ms}

    async def _handshake(self) -> list[int]:
        """Hello and ready with every bot; returns the seats that failed."""
        assert self.mux is not None
        limits = self._time_limits()
        now = time.monotonic()
        for seat, s in enumerate(self.seats):
            assert s.bot is not None
            hello = Hello(
                protocol=PROTOCOL_VERSION,
                game=self.game.name,
                params=self.game.params(),
                seat=seat,
                seats=len(self.seats),
                seed=s.seed,
                time=limits,
            )
            self.mux.send(s.bot, encode_line(hello))
            s.owed.append(0)
        deadline = now + self.cfg.handshake_timeout
        waiting = list(range(len(self.seats)))
        failed: list[int] = []
        while waiting:
            now = time.monotonic()
            still = []
            for seat in waiting:
                s = self.seats[seat]
                bot = s.bot
                assert bot is not None
                if not bot.lines:
                    bot.read_stdout(now)
                if bot.lines:
                    line, _t = bot.lines.popleft()
                    s.owed.popleft()
                    if not is_reply_line(line):
                        self._fault(seat, 0, faults.HANDSHAKE, extra_line_detail(line, self.game))
                        failed.append(seat)
                        continue
                    try:
                        ready = ready_decoder.decode(line)
                    except (ValueError, RecursionError) as exc:
                        self._fault(seat, 0, faults.HANDSHAKE, f"bad ready message: {exc}")
                        failed.append(seat)
                        continue
                    if not ready.name or len(ready.name) > MAX_NAME_LENGTH:
                        self._fault(seat, 0, faults.HANDSHAKE, "name must be 1-64 characters")
                        failed.append(seat)
                        continue
                    s.name, s.version = ready.name, ready.version
                    s.ready_bytes = bot.bytes_out
                    continue
                gone = await self._gone_reason(seat, handshake=True)
                if gone is not None:
                    kind, detail = gone
                    self._fault(seat, 0, faults.HANDSHAKE, f"{kind}: {detail}")
                    failed.append(seat)
                elif now >= deadline:
                    self._fault(
                        seat,
                        0,
                        faults.HANDSHAKE,
                        f"no ready message within {self.cfg.handshake_timeout:g} s"
                        + silence_hint(bot),
                    )
                    failed.append(seat)
                else:
                    still.append(seat)
            waiting = still
            if waiting:
                await self.mux.wait(min(deadline - time.monotonic(), WATCHDOG_PERIOD))
                # A seat over a limit fails its handshake there and then, once: it is
                # put out with the others that failed, when the match starts.
                for seat in self._watchdog(0, force=False, skip=failed):
                    failed.append(seat)
                    if seat in waiting:
                        waiting.remove(seat)
        return failed

    # -- the loop --------------------------------------------------------------

    async def _gone_reason(
        self, seat: int, handshake: bool = False
    ) -> tuple[FaultKind, str] | None:
        """If the seat's bot can no longer answer, why (settling the exit first)."""
        s = self.seats[seat]
        bot = s.bot
        assert bot is not None and self.mux is not None
        if bot.line_too_long:
            return faults.LINE_TOO_LONG, f"a line exceeded {self.cfg.max_line} bytes"
        if not (bot.stdout_eof or bot.stdin_broken or bot.exited):
            return None
        # A crashing process closes its pipes a moment before it becomes reapable:
        # wait briefly for the exit so a crash is not misfiled as a closed pipe.
        if not bot.poll_exit():
            settle = time.monotonic() + SETTLE_S
            while not bot.poll_exit() and time.monotonic() < settle:
                if bot.pidfd is not None and bot.pidfd >= 0:
                    with trio.move_on_after(settle - time.monotonic()):
                        await trio.lowlevel.wait_readable(bot.pidfd)
                else:
                    await trio.sleep(0.01)
        if bot.exited:
            code, sig = bot.exit_description()
            s.verdict.exit_code, s.verdict.signal = code, sig
            how = f"killed by {sig}" if sig else f"exit code {code}"
            kernel = self._kernel_fault(s)
            if kernel is not None:  # the kernel stopped it at a limit: not a crash
                return kernel[0], f"{kernel[1]} ({how})"
            cpu = max(s.cpu_s, sbx.tree_usage(bot.pid).cpu_s)
            if bot.returncode in _SIGXCPU_CODES or (
                sig == "SIGKILL" and cpu >= self.cfg.limits.cpu_s
            ):
                # The kernel's CPU limit can fire just before our watchdog sees it.
                return faults.CPU_LIMIT, f"CPU limit {self.cfg.limits.cpu_s:g} s ({how})"
            if handshake:
                # Whether the launch got as far as starting the bot: its last step
                # says so on stderr before the bot runs (sandbox.LAUNCH_TOKEN).
                while not bot.stderr.launched and bot.read_stderr():
                    pass
                if not bot.stderr.launched:
                    raise SandboxFailure(
                        f"the sandbox could not start seat {seat}: "
                        f"{bot.stderr.head_text().strip()[:300]}"
                    )
            return faults.CRASH, f"the bot exited ({how})"
        if bot.stdout_eof:
            return faults.CLOSED_STDOUT, "the bot closed its stdout"
        return faults.CLOSED_STDIN, "the bot closed its stdin"

    def _watchdog(
        self, step: int, force: bool, sent: float | None = None, skip: Sequence[int] = ()
    ) -> list[int]:
        """Poll each live bot's process tree; returns seats over a limit. ``sent``:
        when the turns of ``step`` went out, if they are being waited for. ``skip``:
        seats already faulted that are not out yet (the handshake's, a step's)."""
        now = time.monotonic()
        if not force and now < self._next_watch:
            return []
        self._next_watch = now + WATCHDOG_PERIOD
        over: list[int] = []
        limits = self.cfg.limits
        out = self.judge.out
        for seat, s in enumerate(self.seats):
            # (poll_exit also lets go a bot that made the referee its tracer and
            # stopped: PTRACE_TRACEME where nothing refuses it.)
            if out[seat] or seat in skip or s.bot is None or s.bot.poll_exit():
                continue
            usage = sbx.tree_usage(s.bot.pid)
            s.last_processes = len(usage.pids)
            if len(s.seen_pids) < SEEN_PIDS_MAX:
                s.seen_pids.update(usage.pids)
            if self._group_nice:
                # Again for every session in the tree (a bot may start new ones, or
                # lower its group's nice value): see BotProcess.
                for pid in usage.pids:
                    sbx.carry_nice(pid, self._group_nice)
            s.cpu_s = max(s.cpu_s, usage.cpu_s)
            kernel = self._kernel_fault(s)
            if kernel is not None:
                self._fault(seat, step, *kernel)
                over.append(seat)
                continue
            # Where the bot's cgroup holds a limit, the kernel enforces it (its OOM
            # kills and refused forks are read above): nothing to sample.
            sampled_memory = s.cgroup is None or self.cgroups.where("memory") is None
            sampled_tasks = s.cgroup is None or self.cgroups.where("pids") is None
            if sampled_memory:
                s.peak_rss = max(s.peak_rss, usage.rss_kib)
            if sampled_memory and usage.rss_kib > limits.memory_mib * 1024:
                self._fault(
                    seat,
                    step,
                    faults.MEMORY_LIMIT,
                    f"process tree RSS {usage.rss_kib // 1024} MiB > {limits.memory_mib} MiB",
                )
                over.append(seat)
            elif sampled_tasks and len(usage.pids) > limits.processes:
                self._fault(
                    seat,
                    step,
                    faults.PROCESS_LIMIT,
                    f"{len(usage.pids)} processes > {limits.processes}",
                )
                over.append(seat)
            elif s.cpu_s > limits.cpu_s:
                self._fault(
                    seat,
                    step,
                    faults.CPU_LIMIT,
                    f"CPU time {s.cpu_s:.1f} s > {limits.cpu_s:g} s",
                )
                over.append(seat)
            elif step > 0 and now >= s.next_disk_walk and self._over_disk(seat, step, usage.pids):
                over.append(seat)
        if self._fair is not None and step > 0:
            # Each seat's CPU while an opponent still owes its move (docs/security.md);
            # from the first turn on (start-up is no one's pondering).
            live = [
                not out[i] and s.bot is not None and not s.bot.exited
                for i, s in enumerate(self.seats)
            ]
            clocks = self.judge.clocks
            owed_s = [
                clocks[i].owed_s + (now - sent if sent is not None and s.owed else 0.0)
                for i, s in enumerate(self.seats)
            ]
            # Other work on the match's CPUs: all they ran less the referee and the bots.
            busy = sbx.cpus_busy_s(self._cpus)
            others_s = 0.0
            if busy is not None:
                others_s = busy - time.process_time() - sum(s.cpu_s for s in self.seats)
            waits_s = [
                sbx.tree_wait_s(s.bot.pid) if live[i] and s.bot is not None else 0.0
                for i, s in enumerate(self.seats)
            ]
            cpu_s = [s.cpu_s for s in self.seats]
            for seat, detail in self._fair.observe(now, cpu_s, owed_s, others_s, waits_s):
                if live[seat] and seat not in over:
                    self._fault(seat, step, faults.CPU_SHARE, detail)
                    over.append(seat)
        return over

    def _over_disk(self, seat: int, step: int, pids: list[int], last: bool = False) -> bool:
        """Whether the seat's bot holds more than its disk limits (a fault then). A
        walk during play has a time budget, and the next one waits ten times as long
        as this one took (at least a watchdog period), so that walking a huge tree
        costs the match a tenth of its time at most; the ``last`` reading, at the end
        of the match, has no time budget."""
        s = self.seats[seat]
        limits = self.cfg.limits
        if s.scratch is None or self.layer is None:
            return False
        private_tmp = "tmpfs" in self.layer.isolation
        if "disk" in self.layer.isolation:
            # The layer's writable places are tmpfs of the limits: the kernel caps
            # their bytes (ENOSPC) and there is nothing to walk; their entries too
            # where it could cap the inodes ("inodes"), else they are read from the
            # file systems themselves (statvfs: bwrap cannot cap a tmpfs's inodes).
            if "inodes" in self.layer.isolation:
                return False
            disk = sbx.tmpfs_usage(s.scratch, pids, private_tmp)
            over = disk.entries > limits.disk_files
        else:
            began = time.monotonic()
            disk = sbx.disk_usage(
                s.scratch,
                pids,
                private_tmp,
                limits.disk_files,
                None if last else DISK_WALK_BUDGET_S,
            )
            took = time.monotonic() - began
            s.next_disk_walk = began + took + max(WATCHDOG_PERIOD, DISK_WALK_SPACING * took)
            over = disk.bytes > limits.disk_mib * MIB or disk.entries > limits.disk_files
        if not over:
            return False
        self._fault(
            seat,
            step,
            faults.DISK_LIMIT,
            f"wrote {disk.bytes // (1024 * 1024)} MiB in {disk.entries} entries "
            f"(limits {limits.disk_mib} MiB, {limits.disk_files} entries)"
            + (" by the end of the match" if last else ""),
        )
        return True

    def _last_disk_reading(self) -> None:
        """Disk use once more when play is over: a bot that wrote in its last moments
        is over its limit all the same."""
        step = self._last_step()
        over = []
        for seat, s in enumerate(self.seats):
            if self.judge.out[seat] or s.bot is None:
                continue
            pids = [] if s.bot.poll_exit() else sbx.tree_usage(s.bot.pid).pids
            if self._over_disk(seat, step, pids, last=True):
                over.append(seat)
        if over:
            self._disqualify(over, step)

    def _last_step(self) -> int:
        """The last step played: a fault found once play is over belongs to it (the
        state is one past it now)."""
        return max(0, self.game.step_number(self._state) - 1)

    def _late_limit_faults(self, step: int) -> list[int]:
        """After teardown: a limit a bot went over that no reading during play
        caught (between two readings, or as it ended) is its fault all the same,
        so that a peak over a limit never sits beside "ok". Returns the seats
        that got such a fault (the caller disqualifies them, as a reading during
        play would have)."""
        limits = self.cfg.limits
        faulted: list[int] = []
        for seat, s in enumerate(self.seats):
            if s.verdict.disqualified:
                continue  # already out, and stopped by whatever put it out
            kinds = {f.kind for f in s.verdict.faults}
            found: tuple[FaultKind, str] | None = None
            if s.cg_reading is not None:
                found = kernel_limit_fault(s.cg_reading, limits)
            if found is None and s.peak_rss > limits.memory_mib * 1024:
                found = (
                    faults.MEMORY_LIMIT,
                    f"peak memory {s.peak_rss // 1024} MiB > {limits.memory_mib} MiB",
                )
            if found is not None and found[0] not in kinds:
                self._fault(seat, step, *found)
            if found is not None:
                faulted.append(seat)
        return faulted

    def _kernel_fault(self, s: Seat) -> tuple[FaultKind, str] | None:
        """Read the seat's cgroup (if it has one): its CPU time and peak memory,
        and a limit the kernel enforced on it since the start, as a fault."""
        if s.cgroup is None:
            return None
        reading = s.cgroup.read()
        if reading.cpu_s >= 0:
            s.cpu_s = max(s.cpu_s, reading.cpu_s)
        if reading.peak_bytes >= 0:
            s.peak_rss = max(s.peak_rss, reading.peak_bytes // 1024)
        return kernel_limit_fault(reading, self.cfg.limits)

    def _disqualify(self, seats: list[int], step: int) -> None:
        seats = self.judge.disqualify(seats)
        if not seats:
            return
        for seat in seats:
            self.seats[seat].verdict.disqualified = True
            self._stop(seat)
        self.game.disqualify(self._state, seats)
        event = Event(n=step, kind="disqualified", seats=seats)
        self.writer.write(event)
        self.events.append(event)

    def _stop(self, seat: int) -> None:
        """Kill a seat's bot that is going out, and its escapees too, at once: they
        must not go on taking CPU or memory from the match while it plays on."""
        s = self.seats[seat]
        if s.bot is not None and not s.bot.exited and not s.verdict.killed_by_referee:
            s.bot.kill()
            s.verdict.killed_by_referee = True
        kill_cgroup(s)

    def _take_line(self, seat: int, step: int) -> tuple[bytes, float] | None:
        """The next line that counts for ``step``, if it has arrived: its reply, or a
        line that is no reply at all (``_accept`` judges it). Drops late replies to
        earlier steps. Lines are taken in the order the bot wrote them, whenever
        they arrived (protocol/README.md, "Extra lines")."""
        s = self.seats[seat]
        bot = s.bot
        assert bot is not None
        while bot.lines:
            line, t = bot.lines.popleft()
            if not s.owed or not is_reply_line(line):
                return line, t
            asked = s.owed.popleft()
            if asked == step:
                return line, t
            # The late answer to a step that already timed out: never used.
        return None

    # -- the loop: pieces shared by both round loops ---------------------------

    def _before_step(self, step: int) -> list[int]:
        """Seats to disqualify before ``step`` starts: those over a resource limit
        (the watchdog runs if its period is up). A line that came before its turn
        was sent is not judged here but as the next turn's, in order, so that when
        it arrived never changes the verdict."""
        return self._watchdog(step, force=False)

    def _accept(
        self,
        seat: int,
        step: int,
        got: tuple[bytes, float],
        sent: float,
        rnd: _Round,
        decode: Callable[[bytes], Any],
    ) -> None:
        """Judge what a seat sent for ``step``: an action, or a fault in ``rnd``."""
        line, t = got
        if not is_reply_line(line):
            rnd.faults[seat] = self._fault(
                seat, step, faults.UNSOLICITED_OUTPUT, extra_line_detail(line, self.game)
            )
            rnd.fatal.append(seat)
            rnd.faulted = True
            return
        # A reply written before its turn was sent (the bot wrote one line too many
        # earlier) is this turn's reply all the same, taken at once.
        t = max(t, sent)
        late = self.judge.reply(seat, step, sent, t)
        if late is not None:
            rnd.faults[seat] = late
            rnd.faulted = True
            return
        rnd.latency[seat] = int((t - sent) * 1e6)
        try:
            action = decode(line)
        except (ValueError, RecursionError) as exc:
            rnd.faults[seat] = self._fault(
                seat, step, faults.PROTOCOL_ERROR, f"{exc}: {line[:200]!r}"
            )
            rnd.faulted = True
            return
        refused = self.game.check(self._state, seat, action)
        if refused is not None:
            rnd.faults[seat] = self._fault(seat, step, refused.kind, refused.detail)
            rnd.faulted = True
            return
        rnd.actions[seat] = action

    async def _collect(
        self,
        step: int,
        waiting: list[int],
        sent: float,
        deadline: list[float],
        rnd: _Round,
        decode: Callable[[bytes], Any],
    ) -> None:
        """Wait for the replies of the ``waiting`` seats (each until its deadline),
        judging each as it comes; parks in trio's loop only when nothing is ready."""
        mux = self.mux
        assert mux is not None
        monotonic = time.monotonic
        while waiting:
            now = monotonic()
            still: list[int] = []
            for seat in waiting:
                if seat in rnd.fatal:
                    continue  # put out meanwhile as the crowder of a dead seat
                s = self.seats[seat]
                bot = s.bot
                assert bot is not None
                lines = bot.lines
                if not lines:
                    bot.read_stdout(now)
                owed = s.owed
                if len(lines) == 1 and len(owed) == 1:
                    # The usual case: one turn outstanding, one line arrived.
                    owed.pop()
                    got: tuple[bytes, float] | None = lines.popleft()
                else:
                    got = self._take_line(seat, step) if lines else None
                if got is not None:
                    self._accept(seat, step, got, sent, rnd, decode)
                    continue
                gone = None
                if bot.stdout_eof or bot.stdin_broken or bot.exited or bot.line_too_long:
                    gone = await self._gone_reason(seat)
                if gone is not None:
                    crowder = self._crowder(seat, gone[0])
                    if crowder is None:
                        rnd.faults[seat] = self._fault(seat, step, *gone)
                        rnd.fatal.append(seat)
                    else:
                        # The other seat goes out; this one is not charged (a game
                        # that plays on asks it again, and then its death is its own).
                        rnd.faults[seat] = self._crowded_out(seat, step, gone[1], crowder, rnd)
                        if crowder[0] in still:
                            still.remove(crowder[0])
                    rnd.faulted = True
                elif now >= deadline[seat]:
                    silent = bot.inbuf or bot.bytes_out == s.ready_bytes
                    hint = silence_hint(bot) if silent else ""
                    rnd.faults[seat] = self.judge.no_reply(seat, step, hint)
                    rnd.faulted = True
                else:
                    still.append(seat)
            waiting = still
            if waiting:
                wait = min(deadline[seat] for seat in waiting) - monotonic()
                await mux.wait(min(wait, WATCHDOG_PERIOD))
                for seat in self._watchdog(step, force=False, sent=sent, skip=rnd.fatal):
                    # Out at this step, whether its reply is still awaited or has come
                    # (a seat that answered at once and then hogs a CPU or memory while
                    # its opponent thinks is the usual case: left in, it went on taking
                    # from its opponent, each reading recorded the fault again, and it
                    # went out only later). Stopped now; disqualified with the step.
                    rnd.fatal.append(seat)
                    rnd.faulted = True
                    self._stop(seat)
                    if seat in waiting:
                        waiting.remove(seat)
                        # The step records why its reply is missing (the fault the
                        # reading just recorded), as ``referee verify`` asks.
                        last = self.judge.seat_faults[seat][-1]
                        rnd.faults[seat] = Fault(last.kind, last.detail)

    def _crowder(self, seat: int, kind: FaultKind) -> tuple[int, int, int] | None:
        """For a seat whose bot died (a crash): the other seat that may have made
        its last fork fail, with the processes it holds and each seat's share
        (judge.crowding_seat), where the seats share one process cap: the referee
        is not root (as root each bot is a uid of its own, and root is exempt from
        RLIMIT_NPROC) and the dead seat has no pids cgroup. None elsewhere."""
        if kind != faults.CRASH or os.geteuid() == 0:
            return None
        if self.seats[seat].cgroup is not None and self.cgroups.where("pids") is not None:
            return None
        others = {
            i: len(sbx.tree_usage(s.bot.pid).pids)
            for i, s in enumerate(self.seats)
            if i != seat and not self.judge.out[i] and s.bot is not None and not s.bot.exited
        }
        limit = self.cfg.limits.processes
        crowder = crowding_seat(self.seats[seat].last_processes, others, limit)
        if crowder is None:
            return None
        return crowder, others[crowder], limit // (len(others) + 1)

    def _crowded_out(
        self, seat: int, step: int, how: str, crowder: tuple[int, int, int], rnd: _Round
    ) -> Fault:
        """The bot of ``seat`` died while another seat held more than its share of
        the process cap they share: the other seat's ``process_limit`` fault (it is
        out at this step), and for ``seat`` a ``sandbox_error``, the fault that is
        not the bot's own and does not put it out (the referee could not keep the
        cap apart)."""
        other, held, share = crowder
        if other not in rnd.fatal:
            fault = self._fault(
                other,
                step,
                faults.PROCESS_LIMIT,
                f"{held} processes, more than its share ({share}) of the process cap "
                f"its user shares with seat {seat}, whose bot then died",
            )
            if rnd.actions[other] is None:  # its reply had not come: the step says why
                rnd.faults[other] = fault
            rnd.fatal.append(other)
        return self._fault(
            seat,
            step,
            faults.SANDBOX_ERROR,
            f"{how} while seat {other} held {held} processes of the process cap they "
            f"share (its share {share}): a refused fork is not this bot's fault",
        )

    def _after_faults(self, asked: Sequence[int], step: int, rnd: _Round) -> None:
        """A seat at its round-fault limit is out too; then everyone who must go goes."""
        rnd.fatal = self.judge.must_go(asked, step, rnd.fatal)
        if rnd.fatal:
            self._disqualify(rnd.fatal, step)

    def _send_notices(self, outcome: Any, encode: Callable[[Any], bytes]) -> None:
        mux = self.mux
        assert mux is not None
        for seat, notice in self.game.notices(self._state, outcome):
            s = self.seats[seat]
            if not self.judge.out[seat] and s.bot is not None:
                mux.send(s.bot, encode(notice) + b"\n")

    async def _checkpoint(self, step: int) -> None:
        """Every PROGRESS_EVERY steps: drain stderr and notice exits even when every
        reply came at once, report progress, and let other trio tasks run."""
        assert self.mux is not None
        self.mux.pump()
        self.mux.reset_spin()
        if self.progress is not None:
            self.progress(step, self.total_steps, self._state)
        await trio.lowlevel.checkpoint()

    async def _play(self) -> None:
        if len(self.seats) == 2 and self.game.pair_every_step:
            await self._play_pair()
        # Also where a two-seat game goes on after a seat is out, if its rules let it.
        await self._play_general()

    # -- the two-seat round loop -----------------------------------------------

    async def _play_pair(self) -> None:
        """The round loop for two seats that both act every step (Chaos League,
        RoShamBo), which runs tens of thousands of times a second.

        The usual round runs inline, with everything bound to locals: both turns
        written, then each reply taken if it is the one line owed, in time, and
        decodes to a legal action (waiting for it here, parked in trio's loop if it
        is slow). Anything else in a round -- a late, partial, malformed or illegal
        reply, more than one line, unsolicited output, a gone bot, a reply still
        missing when the watchdog is due -- sends that round through the same
        helpers as the general loop, which judge it the same way.
        """
        game = self.game
        state = self._state
        mux = self.mux
        assert mux is not None
        s0, s1 = self.seats
        c0, c1 = self.judge.clocks
        out = self.judge.out
        b0, b1 = s0.bot, s1.bot
        assert b0 is not None and b1 is not None
        lines0, lines1 = b0.lines, b1.lines
        owed0, owed1 = s0.owed, s1.owed
        read0, read1 = b0.read_stdout, b1.read_stdout
        send0, send1 = b0.send, b1.send
        want_write = mux.want_write
        fd_out0, fd_out1 = b0.stdout_fd, b1.stdout_fd
        ready_soon, handle = mux.ready_soon, mux.handle
        encode_turns = game.encode_turns
        encode = msgspec.json.Encoder().encode
        decode = msgspec.json.Decoder(game.action_type).decode
        check, resolve = game.check, game.resolve
        finished, step_number = game.finished, game.step_number
        has_notices = type(game).notices is not Game.notices
        monotonic = time.monotonic
        wait = mux.wait
        Raw = msgspec.Raw
        move_s = self.cfg.move_timeout
        writer = self.writer
        write_record = writer.write
        recording = writer.path is not None
        # A lean writer only hashes the turns sent: they need no msgspec.Raw wrapper.
        turns_as_bytes = writer.turns_as_bytes
        pending: Step | None = None
        backlog: list[Step] = []  # earlier steps' records not yet written (_record_batch)
        checkpoint_at = PROGRESS_EVERY
        while not finished(state):
            if out[0] or out[1]:
                break
            step = step_number(state)
            if lines0 or lines1 or monotonic() >= self._next_watch:
                fatal = self._before_step(step)
                if fatal:
                    # Every record before the disqualification's event, in step order.
                    _write_records(write_record, backlog, pending)
                    pending = None
                    self._disqualify(fatal, step)
                    continue
            obs0, obs1 = encode_turns(state)
            # Both turns first, then wait for either reply.
            sending = monotonic()
            if send0(obs0 + b"\n"):
                want_write(b0)
            if send1(obs1 + b"\n"):
                want_write(b1)
            sent = monotonic()
            # On one CPU a woken bot may run before the referee is back from the
            # write, and answer before ``sent``: it owed its move meanwhile (the
            # CPU-share watchdog weighs CPU against the time owed).
            c0.owed_s += sent - sending
            c1.owed_s += sent - sending
            # SeatClock.deadline, inlined: this loop runs tens of thousands of times a second.
            d0 = sent + move_s + c0.bank
            d1 = sent + move_s + c1.bank
            # Write the previous step's record while the bots think.
            if pending is not None:
                if self._record_batch == 1 and not backlog:
                    write_record(pending)
                else:
                    backlog.append(pending)
                    if len(backlog) >= self._record_batch:
                        _write_records(write_record, backlog, None)
                pending = None
            got0: tuple[bytes, float] | None = None
            got1: tuple[bytes, float] | None = None
            # Usual: no earlier turn is still owed, so the one line that arrives is the
            # answer (owed0/owed1 are only kept when a round leaves the usual path).
            clean = usual = not (owed0 or owed1)
            while usual:
                now = monotonic()
                if got0 is None:
                    if not lines0:
                        read0(now)
                    if lines0:
                        if len(lines0) != 1:
                            clean = False
                            break
                        got0 = lines0.popleft()
                    elif b0.stdout_done or now >= d0:
                        clean = False
                        break
                if got1 is None:
                    if not lines1:
                        read1(now)
                    if lines1:
                        if len(lines1) != 1:
                            clean = False
                            break
                        got1 = lines1.popleft()
                    elif b1.stdout_done or now >= d1:
                        clean = False
                        break
                if got0 is not None and got1 is not None:
                    break
                if (
                    now >= self._next_watch
                    or b0.stdin_broken
                    or b1.stdin_broken
                    or b0.exited
                    or b1.exited
                ):
                    clean = False
                    break
                due = d1 if got0 is not None else (d0 if got1 is not None else min(d0, d1))
                # Most replies come within microseconds: wait for them right here
                # (a short spin, then a short blocking epoll wait), without the
                # coroutine and handler dispatch of Multiplexer.wait; only a
                # silent bot costs a park in trio's loop.
                events = ready_soon(due - now)
                if not events:
                    await wait(min(due - monotonic(), WATCHDOG_PERIOD))
                else:
                    for fd, _mask in events:
                        if fd != fd_out0 and fd != fd_out1:
                            # stderr or an exit: dispatch it all (the reads are safe twice)
                            handle(events)
                            break
            a0 = a1 = None
            # A line that came before its turn was sent goes the general way too.
            if clean and sent <= got0[1] <= d0 and sent <= got1[1] <= d1:  # type: ignore[index]
                try:
                    a0 = decode(got0[0])  # type: ignore[index]
                    a1 = decode(got1[0])  # type: ignore[index]
                except (ValueError, RecursionError):
                    a0 = None
                if a0 is not None and (check(state, 0, a0) or check(state, 1, a1)):
                    a0 = None
            if a0 is not None:
                took0 = got0[1] - sent  # type: ignore[index]
                took1 = got1[1] - sent  # type: ignore[index]
                # Both in time: the judge notes each reply that changes anything
                # (a slowest move, a charge to the bank); nearly none does.
                c0.owed_s += took0
                c1.owed_s += took1
                if took0 > c0.quiet:
                    c0.took(took0)
                if took1 > c1.quiet:
                    c1.took(took1)
                outcome = resolve(state, (a0, a1))
                if recording:
                    pending = Step(
                        step,
                        [obs0, obs1] if turns_as_bytes else [Raw(obs0), Raw(obs1)],
                        [a0, a1],
                        [int(took0 * 1e6), int(took1 * 1e6)],
                        [None, None],
                        outcome,
                    )
            else:
                # The round is not the usual one: judge it as the general loop does.
                rnd = _Round(2)
                waiting = []
                for seat, got, owed in ((0, got0, owed0), (1, got1, owed1)):
                    if got is None:
                        owed.append(step)  # from here on _collect keeps the books
                        waiting.append(seat)
                    else:
                        self._accept(seat, step, got, sent, rnd, decode)
                if waiting:
                    await self._collect(step, waiting, sent, [d0, d1], rnd, decode)
                outcome = resolve(state, rnd.actions)
                if recording:
                    pending = Step(
                        step,
                        [Raw(obs0), Raw(obs1)],
                        rnd.actions,
                        rnd.latency,
                        rnd.faults,
                        outcome,
                    )
                if rnd.faulted:
                    # Every record before any disqualification's event, in step order.
                    _write_records(write_record, backlog, pending)
                    pending = None
                    self._after_faults((0, 1), step, rnd)
            if has_notices:
                self._send_notices(outcome, encode)
            if step >= checkpoint_at:
                checkpoint_at = step + PROGRESS_EVERY
                await self._checkpoint(step)
        _write_records(write_record, backlog, pending)

    # -- the general round loop ------------------------------------------------

    async def _play_general(self) -> None:
        """The round loop for any game: any seats may act at a step."""
        game = self.game
        state = self._state
        mux = self.mux
        assert mux is not None
        nseats = len(self.seats)
        seats = self.seats
        encode = msgspec.json.Encoder().encode
        decode = msgspec.json.Decoder(game.action_type).decode
        has_notices = type(game).notices is not Game.notices
        clocks = self.judge.clocks
        writer = self.writer
        recording = writer.path is not None
        checkpoint_at = game.step_number(state) + PROGRESS_EVERY
        while not game.finished(state):
            step = game.step_number(state)
            asked = game.to_act(state)
            fatal = self._before_step(step)
            if fatal:
                self._disqualify(fatal, step)
                continue
            obs: list[Any] = [None] * nseats
            sending = time.monotonic()
            for seat in asked:
                s = seats[seat]
                bot = s.bot
                assert bot is not None
                body = game.encode_turn(state, seat)
                obs[seat] = msgspec.Raw(body)
                mux.send(bot, body + b"\n")
                s.owed.append(step)
            sent = time.monotonic()
            for seat in asked:  # owed while the turns went out (as in the pair loop)
                clocks[seat].owed_s += sent - sending
            deadline = [clock.deadline(sent) for clock in clocks]
            rnd = _Round(nseats)
            await self._collect(step, list(asked), sent, deadline, rnd, decode)
            outcome = game.resolve(state, rnd.actions)
            if has_notices:
                self._send_notices(outcome, encode)
            if recording:
                writer.write(Step(step, obs, rnd.actions, rnd.latency, rnd.faults, outcome))
            if rnd.faulted:
                self._after_faults(asked, step, rnd)
            if step >= checkpoint_at:
                checkpoint_at = step + PROGRESS_EVERY
                await self._checkpoint(step)

    # -- teardown --------------------------------------------------------------

    async def run(self) -> PlayedMatch:
        started = time.monotonic()
        cpu_started = time.process_time()
        cpu_play = cpu_played = cpu_started
        bot_startup: list[float] = []
        self._state = self.game.new_state(self.cfg.seed)
        result: GameResult | None = None
        header: Header | None = None
        if self.cfg.idle_poll:
            # Before the spawn: start-up and the handshake wake the bots too.
            self._idle_poll.acquire()
        try:
            try:
                self._spawn_all()
            except SpawnError as exc:
                raise UsageError(str(exc)) from None
            # Load what scoring needs (numpy) in a thread while the bots start up and
            # answer hello, so start-up costs the longer of the two, not the sum, and
            # the play loop never pays for it.
            warm = threading.Thread(target=self.game.warm_up, name="warm-up", daemon=True)
            warm.start()
            failed = await self._handshake()
            warm.join()
            # Where a league's CPU goes (referee tournament --json): what each bot
            # spent to start (interpreter, imports, its sandbox) before it could play.
            bot_startup = [
                round(sbx.tree_cpu_s(s.bot.pid), 6) if s.bot is not None else 0.0
                for s in self.seats
            ]
            if self._one_cpu:  # the bots are up: their whole process trees are there
                self._set_bot_slices(BOT_SLICE_NS)
            header = self._header()
            self.writer.write(header)
            self.writer.flush()
            if failed:
                self._disqualify(failed, 0)
            play_started = time.monotonic()
            cpu_play = time.process_time()
            await self._play()
            self._play_s = time.monotonic() - play_started
            self._last_disk_reading()
            cpu_played = time.process_time()
            # The bots' CPU while their trees are whole: what the exit status brings
            # back can miss processes a sandbox layer reaps on its own.
            for s in self.seats:
                if s.bot is not None:
                    s.cpu_s = max(s.cpu_s, sbx.tree_cpu_s(s.bot.pid))
            result = self.game.result(self._state)
        finally:
            if self._pinned_from:  # give this thread back its CPUs
                pin_thread(self._pinned_from)
            with trio.CancelScope(shield=True):
                for s, clock in zip(self.seats, self.judge.clocks, strict=True):
                    s.max_move = clock.max_move
                isolation = self.layer.isolation if self.layer is not None else ()
                try:
                    await finish_bots(self.seats, self.judge.out, self.mux, result, isolation)
                except Exception as exc:  # a last guard: the match keeps its result
                    for s in self.seats:
                        s.verdict.extra["teardown_error"] = f"{type(exc).__name__}: {exc}"[:200]
            idle_poll = self._idle_poll.held
            self._idle_poll.release()
            if result is None:
                self.writer.close()
        assert header is not None
        late = self._late_limit_faults(self._last_step())
        if late and result is not None:
            # A fatal fault, found late: the bot is out as if a reading during play
            # had caught it, and the result (the game's placements, scores and
            # "disqualified" stats, which a league counts) says so.
            self._disqualify(late, self._last_step())
            result = self.game.result(self._state)
        for s in self.seats:
            statuses = [f.kind for f in s.verdict.faults]
            if s.verdict.escaped_processes:
                statuses.append(faults.ESCAPED_PROCESS)
            s.verdict.status = faults.worst_status(statuses)
            first = next((f for f in s.verdict.faults if f.kind == s.verdict.status), None)
            s.verdict.round = first.round if first else None
        wall = time.monotonic() - started
        footer = Footer(
            result=result,
            verdicts=[s.verdict for s in self.seats],
            faults=self.faults,
            ended=_utc_now(),
            wall_s=round(wall, 3),
            play_s=round(self._play_s, 6),
        )
        self.writer.write(footer)
        self.writer.close()
        cpu_ended = time.process_time()
        return PlayedMatch(
            header=header,
            result=result,
            verdicts=[s.verdict for s in self.seats],
            faults=self.faults,
            replay=self.cfg.replay,
            wall_s=wall,
            play_s=self._play_s,
            replay_hash=self.writer.last_hash,
            idle_poll=idle_poll,
            setup_cpu_s=round(cpu_play - cpu_started, 6),
            play_cpu_s=round(cpu_played - cpu_play, 6),
            finish_cpu_s=round(cpu_ended - cpu_played, 6),
            bot_startup_cpu_s=bot_startup,
            stderr_logs=[s.stderr_log for s in self.seats],
        )


_swept: set[range] = set()


def _sweep_once(limits: sbx.Limits) -> None:
    """Once per process and bot uid range: remove the scratch directories of
    referees that were killed before they could (sandbox.sweep_stale_scratch),
    with what still runs of their sandboxes as the configured range tells them."""
    bot_uids = sbx.bot_uid_range(limits)
    if bot_uids not in _swept:
        _swept.add(bot_uids)
        sbx.sweep_stale_scratch(limits=limits)


def kernel_limit_fault(
    reading: sbx.CgroupReading, limits: sbx.Limits
) -> tuple[FaultKind, str] | None:
    """The fault a bot's cgroup reading shows, if any: the kernel killed a process
    of it at its memory limit (an OOM kill), or refused it a fork at its process
    limit. Either means the bot went over its limit, however briefly."""
    peak = f"; peak {reading.peak_bytes // MIB} MiB" if reading.peak_bytes >= 0 else ""
    if reading.oom_kills:
        return (
            faults.MEMORY_LIMIT,
            f"memory over the limit of {limits.memory_mib} MiB: the kernel killed "
            f"{reading.oom_kills} of its processes{peak}",
        )
    if reading.fork_refusals:
        return (
            faults.PROCESS_LIMIT,
            f"processes over the limit of {limits.processes}: the kernel refused "
            f"{reading.fork_refusals} of its forks",
        )
    return None


def is_reply_line(line: bytes) -> bool:
    """Whether a line from a bot counts as a reply: its first non-blank character
    is ``{`` or ``[`` (a malformed one is a protocol error). Any other line (a debug
    print, a blank line) is no reply; it is judged by its content alone, never by
    when it arrived."""
    head = line[:1]
    if head == b"{":
        return True
    return line.lstrip()[:1] in (b"{", b"[")


def silence_hint(bot: BotProcess) -> str:
    """Why a bot that sent no line may have been silent: nothing at all on its
    stdout (unflushed output, the commonest first bug), or a line without its end."""
    if bot.inbuf:
        return f": {len(bot.inbuf)} bytes arrived without a newline (end each line with \\n)"
    return ": nothing was read from its stdout (is it flushed after each line?)"


EXTRA_LINE_SHOWN = 80  # characters of an extra line shown in its fault


def extra_line_detail(line: bytes, game: Game) -> str:
    """The fault detail of a line that is no reply: the line itself, cut, and what
    to do about it."""
    text = line.decode("utf-8", "replace")
    shown = text if len(text) <= EXTRA_LINE_SHOWN else text[: EXTRA_LINE_SHOWN - 3] + "..."
    hint = "debug output belongs on stderr"
    if type(game).notices is not Game.notices:
        hint += "; notices need no reply"
    return f"a line that is not a reply: {shown!r} ({hint})"


def _write_records(write: Callable[[Step], Any], backlog: list[Step], last: Step | None) -> None:
    """Write the batched records, then ``last`` (if any), in that order; empties the
    batch."""
    for record in backlog:
        write(record)
    backlog.clear()
    if last is not None:
        write(last)


async def run_match(
    bots: Sequence[BotSpec],
    cfg: MatchConfig,
    progress: Callable[[int, int, Any], None] | None = None,
) -> PlayedMatch:
    """Play one match; always returns a complete result unless the bots cannot start."""
    return await Match(bots, cfg, progress).run()
