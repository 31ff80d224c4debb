"""Where matches run. The coordinator only needs ``submit(job) -> outcome`` and a
view of the workers, so another backend (e.g. Dask over several machines) can
replace :class:`ProcessExecutor` without touching the rest.

:class:`ProcessExecutor` keeps N persistent ``referee.tournament.worker``
processes and feeds each one job at a time over a pipe. A worker that dies is
started again and its match re-run from scratch (a match has no partial state
worth keeping).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

import msgspec
import trio

from ..outcome import MatchOutcome
from .worker import SPREAD, Job, Reply, worker_command, worker_popen_args

MAX_ATTEMPTS = 3  # runs of one match before the tournament gives up on it
# How long a worker asked to abandon its match may take to stop its bots and exit
# before it is killed (it takes milliseconds unless the machine is swamped).
STOP_GRACE_S = 5.0


class MatchFailed(Exception):
    """A match could not be played (not a bot's fault: those are results)."""


class WorkerInfo(msgspec.Struct):
    index: int
    pid: int | None
    job: str | None  # the match it is playing
    since: float | None  # monotonic time the match started
    done: int  # matches it finished
    restarts: int


class Executor(Protocol):
    @property
    def size(self) -> int: ...

    def workers(self) -> list[WorkerInfo]: ...

    async def submit(self, job: Job) -> MatchOutcome:
        """Play the job and return its outcome."""
        ...

    async def spread(self) -> None:
        """Widen every match in progress that was confined to a share of the CPUs
        (a worker has run out of matches, so its CPUs are free)."""
        ...

    async def aclose(self) -> None: ...


def cpu_shares(cpus: Sequence[int], workers: int) -> list[list[int]] | None:
    """Split ``cpus`` into one disjoint, contiguous share per worker (sizes differ by
    at most one), or None where there is nothing to split: one worker, or more
    workers than CPUs (the kernel places an oversubscribed machine better).

    Measured on two vCPUs (docs/performance.md): two matches left to the kernel's
    placement, six processes that each wake every few microseconds, ran 1.15-1.3x
    slower than the same two matches with a CPU each."""
    ordered = sorted(cpus)
    if workers < 2 or workers > len(ordered):
        return None
    base, extra = divmod(len(ordered), workers)
    shares, start = [], 0
    for i in range(workers):
        size = base + (i < extra)
        shares.append(ordered[start : start + size])
        start += size
    return shares


class _Worker:
    def __init__(self, index: int) -> None:
        self.index = index
        self.proc: trio.Process | None = None
        self.buf = b""
        self.job: str | None = None
        self.since: float | None = None
        self.done = 0
        self.restarts = 0
        self.started = 0
        self.confined = False  # its match in progress keeps to its share of the CPUs
        self.send_lock = trio.Lock()  # a job line and a spread line never interleave


class ProcessExecutor:
    def __init__(
        self,
        size: int,
        log_dir: Path,
        share_cpus: bool = True,
        nice: int = 0,
        scratch: Path | None = None,
    ) -> None:
        self._size = max(1, size)
        self.log_dir = log_dir
        # Where each worker's matches keep their bots' scratch directories: a
        # directory per worker (its TMPDIR), swept when the worker dies or is
        # killed, so a match that could not clean up after itself leaves nothing
        # (see referee.scratch). None: the system's temporary directory.
        self.scratch = scratch
        # Matches run this many steps of CPU priority below the coordinator (see
        # worker_command): a server that plays them keeps answering its pages.
        self._command = worker_command(nice)
        # Each worker's share of the CPUs, for jobs that may be confined (see Job).
        self._shares = cpu_shares(list(os.sched_getaffinity(0)), self._size) if share_cpus else None
        self._workers = [_Worker(i) for i in range(self._size)]
        self._idle_send, self._idle_recv = trio.open_memory_channel[_Worker](self._size)
        for w in self._workers:
            self._idle_send.send_nowait(w)
        self._encode = msgspec.json.Encoder().encode
        self._decode = msgspec.json.Decoder(Reply).decode

    @property
    def size(self) -> int:
        return self._size

    def workers(self) -> list[WorkerInfo]:
        return [
            WorkerInfo(
                index=w.index,
                pid=w.proc.pid if w.proc is not None else None,
                job=w.job,
                since=w.since,
                done=w.done,
                restarts=w.restarts,
            )
            for w in self._workers
        ]

    async def _start(self, w: _Worker) -> trio.Process:
        self.log_dir.mkdir(parents=True, exist_ok=True)
        log = open(self.log_dir / f"worker-{w.index + 1}.log", "ab")
        try:
            # A new session: Ctrl-C in the terminal reaches only the coordinator,
            # which then stops the workers by closing their stdin (so in-flight
            # matches end cleanly instead of recording bots killed by SIGINT).
            args = worker_popen_args()
            scratch = self._scratch_of(w)
            if scratch is not None:
                scratch.mkdir(parents=True, exist_ok=True)
                os.chmod(scratch, 0o711)  # the bots' uids reach their own directory in it
                args["env"]["TMPDIR"] = str(scratch)
            proc = await trio.lowlevel.open_process(self._command, stderr=log, **args)
        finally:
            log.close()
        if w.started:
            w.restarts += 1
        w.started += 1
        w.proc = proc
        w.buf = b""
        return proc

    async def _exchange(self, w: _Worker, line: bytes) -> bytes | None:
        """Send one job line, return the reply line, or None if the worker died."""
        proc = w.proc
        if proc is None or proc.returncode is not None:
            proc = await self._start(w)
        assert proc.stdin is not None and proc.stdout is not None
        try:
            async with w.send_lock:
                await proc.stdin.send_all(line)
            while b"\n" not in w.buf:
                data = await proc.stdout.receive_some(1 << 16)
                if not data:
                    raise trio.BrokenResourceError("worker closed its stdout")
                w.buf += data
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            await self._reap(w)
            return None
        reply, w.buf = w.buf.split(b"\n", 1)
        return reply

    async def _stop(self, w: _Worker) -> None:
        """End the worker's match and the worker: its stdin is closed (it abandons
        the match, stopping the bots as a match stops them, and exits), then it is
        killed if it has not exited within STOP_GRACE_S."""
        proc = w.proc
        with trio.CancelScope(shield=True):
            if proc is not None and proc.stdin is not None:
                try:
                    await proc.stdin.aclose()
                except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                    pass
                with trio.move_on_after(STOP_GRACE_S):
                    await proc.wait()
            await self._reap(w)

    def _scratch_of(self, w: _Worker) -> Path | None:
        if self.scratch is None:
            return None
        return self.scratch.resolve() / f"worker-{w.index + 1}"

    async def _reap(self, w: _Worker) -> None:
        proc = w.proc
        w.proc = None
        if proc is None:
            return
        with trio.CancelScope(shield=True):
            if proc.returncode is None:
                proc.kill()
            await proc.wait()
            scratch = self._scratch_of(w)
            if scratch is not None and proc.returncode != 0:
                # It died or was killed, perhaps in the middle of a match: what its
                # match started and made may still be there.
                from .. import scratch as leftovers

                await trio.to_thread.run_sync(leftovers.sweep, scratch)

    async def submit(self, job: Job) -> MatchOutcome:
        w = await self._idle_recv.receive()
        try:
            if job.confine and self._shares is not None:
                job = msgspec.structs.replace(job, cpus=self._shares[w.index])
                w.confined = True
            line = self._encode(job) + b"\n"
            errors: list[str] = []
            for _attempt in range(MAX_ATTEMPTS):
                w.job, w.since = job.id, time.monotonic()
                raw = await self._exchange(w, line)
                if raw is None:
                    errors.append("the worker process died")
                    continue
                try:
                    reply = self._decode(raw)
                except (msgspec.ValidationError, msgspec.DecodeError) as exc:
                    errors.append(f"bad reply from the worker: {exc}")
                    await self._reap(w)
                    continue
                if reply.ok and reply.outcome is not None and reply.id == job.id:
                    w.done += 1
                    return reply.outcome
                errors.append(reply.error or "the worker gave no result")
            raise MatchFailed(
                f"match {job.id} failed {MAX_ATTEMPTS} times: {errors[-1]} "
                f"(see {self.log_dir / f'worker-{w.index + 1}.log'})"
            )
        except BaseException as exc:
            # Cancelled (Ctrl-C, a server's SIGTERM, another match failed) in the middle
            # of a match: the worker is busy with a match nobody will read, so it is
            # replaced. It is asked to abandon the match first, which stops the bots
            # and removes their scratch directories; killed at once, it could leave
            # both behind (a sandbox half set up has no parent left to end it).
            if w.job is not None and not isinstance(exc, MatchFailed):
                await self._stop(w)
            raise
        finally:
            w.job, w.since, w.confined = None, None, False
            self._idle_send.send_nowait(w)

    async def spread(self) -> None:
        for w in self._workers:
            proc = w.proc
            if not w.confined or proc is None or proc.stdin is None:
                continue
            w.confined = False
            try:
                async with w.send_lock:
                    await proc.stdin.send_all(SPREAD + b"\n")
            except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                pass  # a worker that died is restarted by its submit

    async def aclose(self) -> None:
        """Close every worker's stdin (they exit between or abandon matches), then
        give them a moment before killing what is left."""
        with trio.CancelScope(shield=True):
            for w in self._workers:
                if w.proc is not None and w.proc.stdin is not None:
                    try:
                        await w.proc.stdin.aclose()
                    except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                        pass
            with trio.move_on_after(5.0):
                for w in self._workers:
                    if w.proc is not None:
                        await w.proc.wait()
            for w in self._workers:
                await self._reap(w)
                scratch = self._scratch_of(w)
                if scratch is not None:
                    with contextlib.suppress(OSError):  # gone, or not empty: swept at start
                        scratch.rmdir()
