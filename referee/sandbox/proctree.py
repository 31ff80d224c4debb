"""Process trees: what a bot's tree uses (RSS, CPU), and its teardown (kill the
whole tree, sweep the escapees re-parented to the referee).

Everything is read from /proc; nothing here raises on a process that is gone.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import time
from collections.abc import Iterable, Iterator, Mapping
from typing import NamedTuple

from .base import MARKER_ENV, libc

_PR_SET_CHILD_SUBREAPER = 36


class TreeUsage(NamedTuple):
    """Resource use of a process tree at one instant."""

    rss_kib: int  # sum of the resident set of every live process in the tree
    cpu_s: float  # user + system CPU, including children that were already reaped
    pids: list[int]  # the live tree (zombies included), root first; [] if the root is gone


_CLK_TCK = os.sysconf("SC_CLK_TCK")
_PAGE_KIB = os.sysconf("SC_PAGE_SIZE") // 1024


def _read(path: str, single: bool = False) -> bytes:
    """Content of a /proc file, or b"" if the process is gone.

    ``single``: one read() is enough (a stat line is one small record), which saves the
    second syscall that would only confirm the end of the file.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return b""
    try:
        chunk = os.read(fd, 65536)
        if single or not chunk:
            return chunk
        chunks = [chunk]
        while chunk:
            chunk = os.read(fd, 65536)
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError:
        return b""
    finally:
        os.close(fd)


def _tids(pid: int | str) -> list[str]:
    """Thread ids of ``pid``, the main thread's included; [] if it is gone."""
    try:
        return os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []


def _children(pid: int | str) -> list[int]:
    """Direct children of every thread of ``pid`` (threads can fork too)."""
    kids: list[int] = []
    for tid in _tids(pid):
        kids.extend(int(k) for k in _read(f"/proc/{pid}/task/{tid}/children").split())
    return kids


def descendants(pid: int) -> list[int]:
    """``pid`` and all its live descendants, breadth first (root first)."""
    tree = [pid]
    seen = {pid}
    i = 0
    while i < len(tree):
        for kid in _children(tree[i]):
            if kid not in seen:
                seen.add(kid)
                tree.append(kid)
        i += 1
    return tree


def tree_tids(pid: int) -> Iterator[int]:
    """Every thread of ``pid`` and its descendants."""
    for proc in descendants(pid):
        for tid in _tids(proc):
            yield int(tid)


def _stat_fields(pid: int | str) -> list[bytes] | None:
    """Fields of /proc/<pid>/stat after the command name (index 0 = state); ``pid``
    may also be "<pid>/task/<tid>" for one thread's."""
    raw = _read(f"/proc/{pid}/stat", single=True)
    if not raw:
        return None
    # The command name is in parentheses and may itself contain spaces and ")".
    return raw[raw.rfind(b")") + 2 :].split()


def tree_usage(pid: int) -> TreeUsage:
    """RSS and CPU of ``pid`` and all its descendants. Never raises."""
    rss_pages = 0
    ticks = 0
    pids = []
    for p in descendants(pid):
        fields = _stat_fields(p)
        if fields is None or len(fields) < 22:
            continue
        pids.append(p)
        # utime, stime, cutime, cstime are fields 14-17 of stat (11-14 here); rss is 24.
        # The process's stat sums the CPU of all its threads.
        ticks += int(fields[11]) + int(fields[12]) + int(fields[13]) + int(fields[14])
        if fields[0] in (b"Z", b"X"):  # its own stat shows no memory: see _live_thread
            thread = _live_thread(p)
            fields = thread[1] if thread is not None else fields
        rss_pages += int(fields[21])
    return TreeUsage(rss_pages * _PAGE_KIB, ticks / _CLK_TCK, pids)


def tree_cpu_s(pid: int) -> float:
    """CPU seconds ``pid`` and its descendants have used so far, to the
    nanosecond where the kernel keeps scheduler statistics (each live thread's
    run time), else in clock ticks; children already reaped count in ticks
    either way. Never raises."""
    ns = 0
    ticks = 0
    for p in descendants(pid):
        fields = _stat_fields(p)
        if fields is None or len(fields) < 15:
            continue
        # cutime and cstime (fields 16-17 of stat): children this one has reaped.
        ticks += int(fields[13]) + int(fields[14])
        run_ns = 0
        for tid in _tids(p):
            stat = _read(f"/proc/{p}/task/{tid}/schedstat", single=True).split()
            if not stat:
                run_ns = -1
                break
            run_ns += int(stat[0])
        if run_ns >= 0:
            ns += run_ns
        else:  # no scheduler statistics here: the process's own ticks
            ticks += int(fields[11]) + int(fields[12])
    return ns / 1e9 + ticks / _CLK_TCK


# PF_EXITING from the kernel's sched.h: the task is inside do_exit().
_PF_EXITING = 0x4


def tree_wait_s(pid: int) -> float:
    """Seconds the threads of ``pid`` and its descendants have spent ready to run
    but waiting for a CPU (each live thread's scheduler statistics), summed; 0.0
    where the kernel keeps none. Never raises."""
    ns = 0
    for p in descendants(pid):
        for tid in _tids(p):
            stat = _read(f"/proc/{p}/task/{tid}/schedstat", single=True).split()
            if len(stat) > 1:
                ns += int(stat[1])
    return ns / 1e9


def cpus_busy_s(cpus: Iterable[int]) -> float | None:
    """CPU seconds ``cpus`` have spent running anything at all (every process,
    interrupts, time the hypervisor took) since boot, from /proc/stat; None where
    it cannot be read."""
    wanted = {f"cpu{c}".encode() for c in cpus}
    ticks = 0
    for line in _read("/proc/stat").splitlines():
        fields = line.split()
        if not fields or fields[0] not in wanted:
            continue
        # user nice system idle iowait irq softirq steal (guest time is in user).
        values = [int(v) for v in fields[1:9]]
        if len(values) < 8:
            return None
        ticks += sum(values) - values[3] - values[4]
        wanted.discard(fields[0])
    if wanted:
        return None
    return ticks / _CLK_TCK


def _alive(fields: list[bytes]) -> bool:
    return fields[0] not in (b"Z", b"X")


def _staying(fields: list[bytes]) -> bool:
    """Alive and not on its way out."""
    return _alive(fields) and len(fields) > 6 and not int(fields[6]) & _PF_EXITING


def _other_threads(pid: int) -> Iterator[tuple[str, list[bytes]]]:
    """(tid, stat fields) of each thread of ``pid`` but the main one."""
    for tid in _tids(pid):
        if tid != str(pid):
            fields = _stat_fields(f"{pid}/task/{tid}")
            if fields is not None:
                yield tid, fields


def _live_thread(pid: int) -> tuple[str, list[bytes]] | None:
    """A live thread of a process whose main thread has ended (pthread_exit).

    Such a process shows a zombie's state, no memory and no command line while its
    other threads run on; they share its memory, so a live thread's /proc entry
    tells what the process's own no longer does. (An escapee could hide this way.)
    """
    return next(((t, f) for t, f in _other_threads(pid) if _alive(f) and len(f) > 21), None)


def _identity(pid: int) -> tuple[int, bytes] | None:
    """(pid, start time) for a live process (see _live_thread); None if gone or a
    zombie."""
    fields = _stat_fields(pid)
    if fields is None or len(fields) < 20:
        return None
    if not _alive(fields) and _live_thread(pid) is None:
        return None
    return (pid, fields[19])


def _exiting(pid: int) -> bool:
    """Whether every thread of ``pid`` is dead or already inside exit.

    A namespace's pid 1 (bwrap's) is re-parented to us when its monitor exits first,
    and stays in exit until the kernel has killed the rest of the namespace: it is
    leaving, not escaping.
    """
    fields = _stat_fields(pid)
    if fields is None or _staying(fields):
        return False
    return not any(_staying(f) for _, f in _other_threads(pid))


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except OSError:
        pass


def _group_members(pgid: int) -> list[int]:
    try:
        # One system call tells whether the group has any process left; only then is
        # /proc scanned (a few hundred files) to name them.
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return []
    except OSError:
        pass  # members we may not signal: look for them all the same
    members = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            fields = _stat_fields(int(entry))
            if fields is not None and len(fields) > 3 and fields[3] == str(pgid).encode():
                members.append(int(entry))
    return members


# Processes kill_tree has SIGKILLed: pid -> start time. A process dying a moment after
# its parent is re-parented to the subreaper (bwrap's pid 1 outlives its monitor this
# way on every exit); sweep_escaped must reap those without calling them escapees.
_doomed: dict[int, bytes] = {}
_DOOMED_MAX = 65536
# Teardown's waits for killed processes to exit, in seconds: the first, doubled up to
# the last (a fixed long wait would idle the CPU through most of a short teardown).
_FIRST_PAUSE = 0.0002
_LAST_PAUSE = 0.002


def kill_tree(pid: int, timeout: float = 2.0) -> int:
    """SIGKILL ``pid``, its process group and every descendant; return how many were hit.

    Call it *before* reaping ``pid``: once a process dies, its children are re-parented
    and no longer found under it. Stopping the whole tree first means nothing can fork
    or re-parent while we collect it. Never raises.
    """
    hit: dict[int, bytes] = {}
    try:
        with contextlib.suppress(OSError):
            os.killpg(pid, signal.SIGSTOP)
        # Stop everything we can see; repeat until a pass finds nobody new, because a
        # process may have forked between our listing and its stop.
        for _ in range(50):
            new = False
            for p in descendants(pid):
                ident = _identity(p)
                if ident is not None and p not in hit:
                    hit[p] = ident[1]
                    _signal(p, signal.SIGSTOP)
                    new = True
            if not new:
                break
        deadline = time.monotonic() + timeout
        pause = _FIRST_PAUSE
        while True:
            with contextlib.suppress(OSError):
                os.killpg(pid, signal.SIGKILL)
            live = []
            candidates = set(hit) | set(descendants(pid)) | set(_group_members(pid))
            for p in candidates:
                ident = _identity(p)
                if ident is None or (p in hit and hit[p] != ident[1]):
                    continue  # gone, a zombie, or the pid was reused by a stranger
                hit.setdefault(p, ident[1])
                _signal(p, signal.SIGKILL)
                live.append(p)
            if not live or time.monotonic() > deadline:
                break
            # SIGKILLed processes need a moment to exit, usually a short one: wait
            # briefly first, then longer.
            time.sleep(pause)
            pause = min(2 * pause, _LAST_PAUSE)
    except Exception:  # teardown must never fail the match
        pass
    if len(_doomed) + len(hit) > _DOOMED_MAX:
        _doomed.clear()  # only a memory bound; entries are normally removed on reaping
    _doomed.update(hit)
    return len(hit)


_PTRACE_DETACH = 17


def release_tracee(pid: int, status: int) -> None:
    """Detach from ``pid``, a process that made this one its tracer and whose stop
    ``status`` (from wait) this one just received, handing it the signal it stopped
    with (but a SIGTRAP, which only marks a traced exec). A tracee left stopped would
    never move again, and its stop is no exit. Never raises."""
    sig = os.WSTOPSIG(status) if os.WIFSTOPPED(status) else 0
    if sig in (signal.SIGTRAP, signal.SIGSTOP):
        sig = 0
    try:
        lib = libc()
        lib.ptrace.argtypes = [ctypes.c_long, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p]
        lib.ptrace(_PTRACE_DETACH, pid, None, ctypes.c_void_p(sig))
    except (OSError, AttributeError):
        pass


_subreaper: bool | None = None


def enable_subreaper() -> bool:
    """Make orphaned descendants re-parent to this process (once); True on success."""
    global _subreaper
    if _subreaper is None:
        try:
            _subreaper = libc().prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
        except (OSError, AttributeError):
            _subreaper = False
    return _subreaper


def after_spawn(pid: int) -> bool:
    """Best-effort ``oom_score_adj = 1000`` for the bot's tree (the launcher does it too)."""
    ok = True
    for p in descendants(pid):
        try:
            with open(f"/proc/{p}/oom_score_adj", "w") as f:
                f.write("1000")
        except OSError:
            ok = False
    return ok


def _describe(pid: int, owner: str | None = None) -> str:
    """ "pid cmdline", plus the bot marker: ``owner`` when the caller knows whose the
    process is (its cgroup or uid says so), else the one in its environment, if any."""
    where = f"/proc/{pid}"
    fields = _stat_fields(pid)
    if fields is not None and not _alive(fields):
        thread = _live_thread(pid)
        if thread is not None:
            where = f"/proc/{pid}/task/{thread[0]}"
    cmdline = _read(f"{where}/cmdline").replace(b"\0", b" ").strip()
    if not cmdline:
        raw = _read(f"/proc/{pid}/stat")
        cmdline = raw[raw.find(b"(") : raw.rfind(b")") + 1] or b"?"
    text = f"{pid} {cmdline.decode('utf-8', 'replace')[:200]}"
    if owner:
        return f"{text} [{owner}]"
    key = MARKER_ENV.encode() + b"="
    for var in _read(f"{where}/environ").split(b"\0"):
        if var.startswith(key):
            text += f" [{var[len(key) :].decode('utf-8', 'replace')[:80]}]"
            break
    return text


def live_strays(pids: Iterable[int]) -> list[int]:
    """Of ``pids`` (a bot's cgroup after its tree was killed), those still alive that
    :func:`kill_tree` did not hit and that are not on their way out: the bot's
    escaped processes, whatever they did to their session, parent or environment."""
    found = []
    for p in pids:
        ident = _identity(p)
        if ident is not None and _doomed.get(p) != ident[1] and not _exiting(p):
            found.append(p)
    return found


def describe_strays(pids: list[int], owner: str) -> list[str]:
    """ "pid cmdline [owner]" of the topmost of ``pids`` (their parent is not among
    them), a few at most, the last followed by how many more there are."""
    strays = set(pids)
    tops = []
    for p in pids:
        fields = _stat_fields(p)
        if fields is None or len(fields) < 2 or int(fields[1]) not in strays:
            tops.append(p)
    found = [_describe(p, owner) for p in tops[:_STRAYS_NAMED]]
    if found and len(pids) > len(found):
        found[-1] += f" (+{len(pids) - len(found)} more)"
    return found


_STRAYS_NAMED = 5  # escapees named one by one; the rest are counted


def peak_vm_hwm_kib(pid: int) -> int:
    """The largest resident-set high-water mark (VmHWM) of any live process in the
    tree of ``pid``: each counts from its own exec, so the referee's pages a launch
    was forked with are not the bot's. 0 when none can be read."""
    best = 0
    for p in descendants(pid):
        for line in _read(f"/proc/{p}/status").splitlines():
            if line.startswith(b"VmHWM:"):
                parts = line.split()
                if len(parts) > 1 and parts[1].isdigit():
                    best = max(best, int(parts[1]))
                break
    return best


def _uid(pid: int) -> int:
    try:
        return os.stat(f"/proc/{pid}").st_uid
    except OSError:
        return -1


def sweep_escaped(
    exclude_pids: set[int], timeout: float = 2.0, marker_of_uid: Mapping[int, str] | None = None
) -> list[str]:
    """Kill and reap this process's children that are not managed bots.

    With :func:`enable_subreaper` on, a bot's orphaned descendants (``setsid`` daemons,
    double forks) become our children; call this after each teardown. Each one is
    SIGKILLed with its tree and reaped by its own pid (never ``waitpid(-1)``, which
    could steal a managed bot's exit status). Returns "pid cmdline [marker]" for each
    escapee: a child that was still alive and that :func:`kill_tree` had not already
    killed. ``marker_of_uid``: the marker of each bot that runs as a uid of its own;
    an escapee of such a uid is marked as that bot's even if it dropped the marker
    from its environment. Zombies, processes already inside exit, and processes of a torn-down tree
    that died after their parent (bwrap's pid 1 always does) are reaped silently.
    """
    found: dict[int, str] = {}
    try:
        deadline = time.monotonic() + timeout
        pause = _FIRST_PAUSE
        while True:
            strays = [p for p in _children("self") if p not in exclude_pids]
            if not strays or time.monotonic() > deadline:
                break
            for p in strays:
                ident = _identity(p)
                escaped = (
                    ident is not None
                    and _doomed.get(p) != ident[1]
                    and p not in found
                    and not _exiting(p)
                )
                if escaped:
                    found[p] = _describe(p, (marker_of_uid or {}).get(_uid(p)))
                if ident is not None:
                    killed = kill_tree(p, timeout=0.5)
                    if escaped and killed > 1:
                        found[p] += f" (+{killed - 1} descendants)"
                try:
                    reaped, _ = os.waitpid(p, os.WNOHANG)
                except ChildProcessError:
                    reaped = p  # someone else reaped it
                if reaped == p:
                    _doomed.pop(p, None)
            time.sleep(pause)
            pause = min(2 * pause, _LAST_PAUSE)
    except Exception:  # teardown must never fail the match
        pass
    return list(found.values())
