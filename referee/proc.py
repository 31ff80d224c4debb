"""Bot processes: spawning, non-blocking pipes, line framing, stderr capture, teardown.

Nothing here knows a game. ``BotProcess`` owns one bot's pipes and buffers;
``Multiplexer`` watches every bot's stdout, stderr and exit (pidfd) through one
epoll object, so a match waits for "anything from any bot" with a single
park in trio's event loop, and usually not at all: the match loop first tries
plain non-blocking reads, which succeed when the bot has already answered.

Processes are spawned from trio's main thread with ``subprocess.Popen`` (never
``trio.lowlevel.open_process``, whose worker thread makes a parent-death signal
fire ~10 s after spawn); the sandbox module supplies the launcher prefix.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import time
from collections import deque
from pathlib import Path

import trio

from . import sandbox

READ_CHUNK = 1 << 16
# Lines of a bot read ahead of the match at most: with this many waiting, its stdout
# is no longer watched until the match has taken some, and a bot that writes
# faster than it is asked waits on its full pipe instead of filling our memory.
LINE_BACKLOG = 64
STDERR_KEEP = 32 * 1024  # bytes kept from the head and from the tail of stderr


# What a launcher may print before it starts the bot, at most; the launcher's own
# errors are one line.
LAUNCHER_TEXT_MAX = 4096


class StderrCapture:
    """Keeps the first and last ``keep`` bytes of a stream plus a total count, and
    optionally copies up to ``log_cap`` bytes to a log file.

    Until ``sandbox.LAUNCH_TOKEN`` has come by, the stream is the launcher's: it is
    held in ``launcher_text``. The token itself is dropped, and ``launched`` says
    that the bot was started (so everything after it is the bot's)."""

    def __init__(self, keep: int = STDERR_KEEP, log: Path | None = None, log_cap: int = 1 << 20):
        self.keep = keep
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0
        self.launched = False
        self.launcher_text = bytearray()
        self._holding = True
        self._log = open(log, "wb") if log is not None else None  # noqa: SIM115
        self._log_left = log_cap

    def feed(self, data: bytes) -> None:
        if not self.launched and self._holding:
            pre = self.launcher_text
            pre += data
            at = pre.find(sandbox.LAUNCH_TOKEN)
            if at >= 0:
                self.launched = True
                # The launcher's own words (if any) stay in the record, before the bot's.
                data = bytes(pre[:at] + pre[at + len(sandbox.LAUNCH_TOKEN) :])
                del pre[at:]
            elif len(pre) <= LAUNCHER_TEXT_MAX:
                return  # the token may still be on its way
            else:
                # More than a launcher ever writes, all of it before the bot could run:
                # keep it as the launcher's and stop holding the stream back.
                self._holding = False
                data = bytes(pre)
            if not data:
                return
        self.total += len(data)
        if self._log is not None and self._log_left > 0:
            chunk = data[: self._log_left]
            self._log.write(chunk)
            self._log_left -= len(chunk)
        room = self.keep - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data:
            self.tail += data
            if len(self.tail) > self.keep:
                del self.tail[: len(self.tail) - self.keep]

    def close(self) -> None:
        if self._log is not None:
            if not self.launched and self._holding:  # only the launcher ever wrote
                self._log.write(self.launcher_text[: self._log_left])
            if self._log_left <= 0:
                self._log.write(b"\n[stderr log truncated by the referee]\n")
            self._log.close()
            self._log = None

    def head_text(self) -> str:
        if not self.launched and self._holding:
            return self.launcher_text.decode("utf-8", "replace")
        return self.head.decode("utf-8", "replace")

    def tail_text(self) -> str:
        return self.tail.decode("utf-8", "replace")


class SpawnError(Exception):
    """The bot could not be started at all (missing, not executable, sandbox refused)."""


class BotProcess:
    """One running bot. All I/O methods are non-blocking and never raise for
    anything the bot does: they record what happened in attributes instead."""

    def __init__(
        self,
        seat: int,
        launch: sandbox.Launch,
        max_line: int,
        stderr_log: Path | None = None,
    ) -> None:
        self.seat = seat
        self.max_line = max_line
        self.stderr = StderrCapture(log=stderr_log)
        self.signal_as_exit_code = launch.signal_as_exit_code
        try:
            in_r, in_w = os.pipe2(os.O_CLOEXEC)
            out_r, out_w = os.pipe2(os.O_CLOEXEC)
            err_r, err_w = os.pipe2(os.O_CLOEXEC)
            try:
                self.popen = subprocess.Popen(
                    launch.argv,
                    stdin=in_r,
                    stdout=out_w,
                    stderr=err_w,
                    env=launch.env,
                    cwd=launch.cwd,
                    start_new_session=True,
                    close_fds=True,
                    pass_fds=launch.pass_fds,
                )
            except OSError as exc:
                for fd in (in_r, in_w, out_r, out_w, err_r, err_w):
                    os.close(fd)
                raise SpawnError(f"cannot start {launch.argv[0]}: {exc.strerror or exc}") from None
        finally:
            launch.close_fds()  # the bot's launcher has its own copies now
        for fd in (in_r, out_w, err_w):
            os.close(fd)
        self.started = time.monotonic()
        self.pid = self.popen.pid
        self.stdin_fd = in_w
        self.stdout_fd = out_r
        self.stderr_fd = err_r
        for fd in (in_w, out_r, err_r):
            os.set_blocking(fd, False)
        try:
            self.pidfd: int | None = os.pidfd_open(self.pid)
        except OSError:
            self.pidfd = None
        sandbox.after_spawn(self.pid)
        # The bot's session is a scheduling group of its own where the kernel groups
        # by session: it gets the referee's nice value (a worker's ladder.nice)
        # before the bot runs, where the kernel takes it at once (as root).
        group_nice = sandbox.group_nice_to_carry()
        if group_nice:
            sandbox.carry_nice(self.pid, group_nice)
        self.inbuf = bytearray()
        self._scan_from = 0
        self.lines: deque[tuple[bytes, float]] = deque()
        self.outbuf = bytearray()
        self.bytes_in = 0  # written to the bot
        self.bytes_out = 0  # read from the bot's stdout
        self.stdout_eof = False
        self.stdout_done = False  # end of file or a line too long: nothing more is read
        self.stdin_broken = False
        self.stderr_eof = False
        self.line_too_long = False
        self.exited = False
        self.returncode: int | None = None
        self.reaped = False
        self.rusage: object | None = None

    # -- writing ---------------------------------------------------------------

    def send(self, data: bytes) -> bool:
        """Write as much as the pipe takes now and queue the rest. True if some is left
        queued (the caller watches stdin for room: Multiplexer.want_write)."""
        if self.stdin_broken:
            return False
        if self.outbuf:
            self.outbuf += data
            self.flush()
            return bool(self.outbuf)
        try:
            n = os.write(self.stdin_fd, data)
        except BlockingIOError:
            n = 0
        except OSError:
            self.stdin_broken = True
            return False
        self.bytes_in += n
        if n < len(data):
            self.outbuf += data[n:]
            return True
        return False

    def flush(self) -> bool:
        while self.outbuf and not self.stdin_broken:
            try:
                n = os.write(self.stdin_fd, self.outbuf)
            except BlockingIOError:
                return True
            except (BrokenPipeError, OSError):
                self.stdin_broken = True
                return False
            self.bytes_in += n
            del self.outbuf[:n]
        return not self.stdin_broken

    # -- reading ---------------------------------------------------------------

    def read_stdout(self, now: float) -> bool:
        """One non-blocking read; splits complete lines into ``lines``. True if any bytes."""
        if self.stdout_done:
            return False
        try:
            data = os.read(self.stdout_fd, READ_CHUNK)
        except BlockingIOError:
            return False
        except OSError:
            data = b""
        # The usual case: nothing pending and exactly one whole line arrived.
        n = len(data)
        if data.find(b"\n") == n - 1 and n and n <= self.max_line and not self.inbuf:
            self.bytes_out += n
            self.lines.append((data[:-1], now))
            return True
        return self._absorb(data, now)

    def _absorb(self, data: bytes, now: float) -> bool:
        """The general line splitter: partial lines, several lines, end of file."""
        if not data:
            self.stdout_eof = self.stdout_done = True
            return False
        self.bytes_out += len(data)
        buf = self.inbuf
        buf += data
        start = 0
        scan = self._scan_from
        while True:
            nl = buf.find(b"\n", scan)
            if nl < 0:
                break
            if nl - start > self.max_line:
                self.line_too_long = self.stdout_done = True
                return True
            self.lines.append((bytes(buf[start:nl]), now))
            start = nl + 1
            scan = start
        if start:
            del buf[:start]
        self._scan_from = len(buf)
        if len(buf) > self.max_line:
            self.line_too_long = self.stdout_done = True
        return True

    def read_stderr(self) -> int:
        """Read what is there (never blocks); returns the number of bytes read."""
        if self.stderr_eof:
            return 0
        try:
            data = os.read(self.stderr_fd, READ_CHUNK)
        except BlockingIOError:
            return 0
        except OSError:
            data = b""
        if not data:
            self.stderr_eof = True
            return 0
        self.stderr.feed(data)
        return len(data)

    def poll_exit(self) -> bool:
        """Reap the process if it has exited (non-blocking). True once exited."""
        if self.exited:
            return True
        try:
            pid, status, rusage = os.wait4(self.pid, os.WNOHANG)
        except ChildProcessError:
            self.exited = True
            self.reaped = True
            return True
        if pid == 0:
            return False
        if not (os.WIFEXITED(status) or os.WIFSIGNALED(status)):
            # A stop, reported because the bot made us its tracer (PTRACE_TRACEME
            # where nothing refuses it): let it go on as if it had never asked.
            sandbox.release_tracee(self.pid, status)
            return False
        self.exited = True
        self.reaped = True
        self.rusage = rusage
        self.returncode = os.waitstatus_to_exitcode(status)
        self.popen.returncode = self.returncode  # keep Popen from reaping again
        return True

    # -- teardown --------------------------------------------------------------

    def kill(self) -> None:
        sandbox.kill_tree(self.pid)

    def close_stdin(self) -> None:
        if self.stdin_fd >= 0:
            try:
                os.close(self.stdin_fd)
            except OSError:
                pass
            self.stdin_fd = -1
            self.stdin_broken = True

    def close_all(self) -> None:
        self.close_stdin()
        for name in ("stdout_fd", "stderr_fd", "pidfd"):
            fd = getattr(self, name)
            if fd is not None and fd >= 0:
                try:
                    os.close(fd)
                except OSError:
                    pass
                setattr(self, name, -1)
        self.stderr.close()

    def exit_description(self) -> tuple[int | None, str | None]:
        """(exit code, signal name) of a reaped process."""
        rc = self.returncode
        if rc is None:
            return None, None
        if self.signal_as_exit_code and 128 < rc < 128 + signal.NSIG:
            rc = 128 - rc  # the launcher's way of saying "killed by signal rc - 128"
        if rc < 0:
            try:
                return None, signal.Signals(-rc).name
            except ValueError:
                return None, f"signal {-rc}"
        return rc, None


class Multiplexer:
    """One epoll set over every bot's stdout, stderr and pidfd."""

    def __init__(
        self, bots: list[BotProcess], fast_wait_s: float = 0.002, spin_s: float = 0.0
    ) -> None:
        self.fast_wait_s = fast_wait_s
        self.spin_max = spin_s
        self.spin_s = spin_s  # the current budget (see ready_soon)
        self.ep = select.epoll()
        self.handlers: dict[int, tuple[BotProcess, str]] = {}
        for bot in bots:
            self._register(bot.stdout_fd, bot, "out")
            self._register(bot.stderr_fd, bot, "err")
            if bot.pidfd is not None:
                self._register(bot.pidfd, bot, "exit")
        self._writers: set[int] = set()
        self._paused: list[BotProcess] = []  # stdout unwatched: LINE_BACKLOG lines wait

    def _register(self, fd: int, bot: BotProcess, what: str) -> None:
        self.ep.register(fd, select.EPOLLIN)
        self.handlers[fd] = (bot, what)

    def _unregister(self, fd: int) -> None:
        if fd in self.handlers:
            try:
                self.ep.unregister(fd)
            except (OSError, ValueError):
                pass
            del self.handlers[fd]

    def send(self, bot: BotProcess, data: bytes) -> None:
        """Write ``data`` to a bot now; whatever the pipe does not take yet is queued
        and written when epoll says there is room."""
        if bot.send(data):
            self.want_write(bot)

    def want_write(self, bot: BotProcess) -> None:
        """Watch a bot's stdin for room while its output buffer is not empty."""
        fd = bot.stdin_fd
        if fd < 0 or fd in self._writers:
            return
        try:
            self.ep.register(fd, select.EPOLLOUT)
        except OSError:
            return
        self.handlers[fd] = (bot, "in")
        self._writers.add(fd)

    def pump(self) -> bool:
        """Handle everything that is ready right now (never blocks). True if anything was."""
        try:
            events = self.ep.poll(0)
        except InterruptedError:
            return False
        if not events:
            return False
        self.handle(events)
        return True

    def handle(self, events: list[tuple[int, int]]) -> None:
        now = time.monotonic()
        for fd, _mask in events:
            entry = self.handlers.get(fd)
            if entry is None:
                continue
            bot, what = entry
            if what == "out":
                if len(bot.lines) >= LINE_BACKLOG:
                    self._unregister(fd)
                    self._paused.append(bot)
                    continue
                bot.read_stdout(now)
                if bot.stdout_done:
                    self._unregister(fd)
            elif what == "err":
                bot.read_stderr()
                if bot.stderr_eof:
                    self._unregister(fd)
            elif what == "exit":
                bot.poll_exit()
                self._unregister(fd)
            else:  # "in": room to write
                bot.flush()
                if not bot.outbuf or bot.stdin_broken:
                    self._writers.discard(fd)
                    self._unregister(fd)

    def ready_soon(self, timeout: float) -> list[tuple[int, int]]:
        """Events that arrive within ``min(timeout, fast_wait_s)``, waiting in the
        thread (never in trio's loop); empty if none did.

        First it busy-polls for up to ``spin_s``: a sleeping referee is woken
        tens of microseconds after a reply on a virtual machine, often longer
        than a quick bot takes to answer. A spin that comes up empty halves the
        budget (down to none), so a slow bot does not cost a spin per move;
        ``reset_spin`` restores it (the match driver does, every few hundred
        steps). Then a blocking epoll wait for the rest."""
        poll = self.ep.poll
        if self.spin_s > 0:
            now = time.monotonic()
            end = now + min(self.spin_s, timeout)
            while now < end:
                events = poll(0)
                if events:
                    return events
                now = time.monotonic()
            self.spin_s = self.spin_s / 2 if self.spin_s > self.spin_max / 8 else 0.0
        if timeout <= 0 or self.fast_wait_s <= 0:
            return []
        try:
            return poll(min(timeout, self.fast_wait_s))
        except InterruptedError:
            return []

    def reset_spin(self) -> None:
        self.spin_s = self.spin_max

    async def wait(self, timeout: float) -> None:
        """Return once some bot has something for us, or after ``timeout`` seconds.

        First ``ready_soon``: most replies arrive within microseconds to a few
        milliseconds, and parking in trio's loop costs far more than that
        (registration, scheduler passes, a cancel scope). Only a bot that is
        still silent after it costs a real park, which lets other tasks run and
        cancellation through. A match owns its process, so blocking the thread
        this briefly delays nothing else of importance.
        """
        if self._paused:
            self._resume()
        if timeout <= 0:
            self.pump()
            return
        events = self.ready_soon(timeout)
        if events:
            self.handle(events)
            return
        timeout -= self.fast_wait_s
        if timeout <= 0:
            return
        with trio.move_on_after(timeout):
            await trio.lowlevel.wait_readable(self.ep.fileno())
        self.pump()

    def _resume(self) -> None:
        """Watch again the stdout of each paused bot whose backlog has gone down."""
        still = []
        for bot in self._paused:
            if bot.stdout_done or bot.stdout_fd < 0:
                continue
            if len(bot.lines) < LINE_BACKLOG:
                self._register(bot.stdout_fd, bot, "out")
            else:
                still.append(bot)
        self._paused = still

    def close(self) -> None:
        self.ep.close()
