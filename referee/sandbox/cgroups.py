"""A control group per bot, where the referee may make one: the kernel then enforces
the bot's memory limit (every page it is charged for: anonymous memory, shmem, memfd,
tmpfs, page cache), its process limit (exactly: a fork past it fails), a fair CPU
weight, and the teardown of its whole tree at once (``cgroup.kill``, or the v1
freezer), whatever its processes do to their session, parent or environment.

Both hierarchies are supported, and a mix of them (a "hybrid" host mounts the v1
controllers and a v2 tree beside them):

- cgroup v2: the referee's own cgroup must delegate the controllers to its children
  (``cgroup.subtree_control``), as root or in a subtree systemd delegated
  (``systemd-run --user --scope -p Delegate=yes referee ...``). Even without any
  controller a v2 tree gives ``cgroup.kill`` and the tree's CPU time (``cpu.stat``).
- cgroup v1: each controller mounted on its own hierarchy (memory, pids, cpu,
  cpuacct, freezer) where the referee may make directories (root).

Each bot's cgroup is made under the referee's own cgroup in each hierarchy, named
``referee-<pid>-<random>-<label>``, so concurrent referees never share one; it is
removed at the end of the match. :func:`host` finds out, once per process, what this
host offers; where nothing is writable every limit stays with the referee's sampling
watchdog, and the match header says which limits are which (:func:`enforcement`).

Never raises from a reading or from teardown: a cgroup whose files vanish reads as
empty.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import signal
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import NamedTuple

from .base import MIB, Limits, SandboxError

PREFIX = "referee-"
# What a hierarchy can do for a bot's cgroup. "cpuacct": the cgroup's CPU time;
# "peak": the kernel's own high-water mark of its memory (v1 always, v2 from Linux
# 5.19: memory.peak), only ever with "memory" in the same hierarchy.
ROLES = ("memory", "peak", "pids", "cpu", "cpuacct", "kill", "freezer")
_V1_ROLES = {"memory": "memory", "pids": "pids", "cpu": "cpu", "cpuacct": "cpuacct"}
_V1_ROLES["freezer"] = "freezer"


class Hierarchy(NamedTuple):
    """One mounted hierarchy where this referee may make cgroups."""

    base: str  # the referee's own cgroup in it (a directory)
    v2: bool
    roles: tuple[str, ...]  # what cgroups made here do (ROLES)


class CgroupHost(NamedTuple):
    """What this host offers the referee, found once at start-up."""

    hierarchies: tuple[Hierarchy, ...]
    missing: str = ""  # why a role is not available (for the header), "" when none

    def where(self, role: str) -> Hierarchy | None:
        """The hierarchy that does ``role`` (v2 first), None if none does."""
        for h in self.hierarchies:
            if role in h.roles:
                return h
        return None

    @property
    def kernel(self) -> dict[str, str]:
        """Role -> "cgroup v1"/"cgroup v2" for each role some hierarchy does."""
        found: dict[str, str] = {}
        for role in ROLES:
            h = self.where(role)
            if h is not None:
                found[role] = "cgroup v2" if h.v2 else "cgroup v1"
        return found


NO_CGROUPS = CgroupHost((), "no cgroup hierarchy is writable by this user")


def _own_cgroups(text: str) -> list[tuple[str, set[str], str]]:
    """(hierarchy id, controllers, path) from /proc/self/cgroup's ``text``."""
    found = []
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) == 3:
            found.append((parts[0], set(filter(None, parts[1].split(","))), parts[2]))
    return found


def _mounts(text: str) -> list[tuple[str, str, str, set[str]]]:
    """(fstype, mount point, root, super options) of every cgroup mount in
    /proc/self/mountinfo's ``text``."""
    found = []
    for line in text.splitlines():
        left, sep, right = line.partition(" - ")
        if not sep:
            continue
        fields, tail = left.split(), right.split()
        if len(fields) < 5 or len(tail) < 3 or tail[0] not in ("cgroup", "cgroup2"):
            continue
        point = fields[4].replace("\\040", " ")
        found.append((tail[0], point, fields[3], set(tail[2].split(","))))
    return found


def _joined(point: str, root: str, path: str) -> str | None:
    """The directory of cgroup ``path`` under a mount of ``root`` at ``point``."""
    if root != "/" and not (path == root or path.startswith(root + "/")):
        return None  # our cgroup is outside what this mount shows
    rel = path[len(root) :] if root != "/" else path
    return os.path.normpath(point + "/" + rel.lstrip("/"))


def _writable(base: str) -> bool:
    """Whether a child cgroup can be made (and removed) in ``base``."""
    probe = os.path.join(base, f"{PREFIX}probe-{os.getpid()}-{os.urandom(3).hex()}")
    try:
        os.mkdir(probe)
    except OSError:
        return False
    with contextlib.suppress(OSError):
        os.rmdir(probe)
    return True


def _v2_controllers(base: str, may_enable: bool) -> set[str]:
    """The controllers children of ``base`` get, enabling the available ones if
    they are not yet and ``may_enable`` (never in a root cgroup, where that would
    change the whole host's tree): a delegated subtree whose own cgroup still holds
    the referee (the "no internal processes" rule) moves the referee into a leaf
    first."""
    try:
        enabled = set(Path(base, "cgroup.subtree_control").read_text().split())
        available = set(Path(base, "cgroup.controllers").read_text().split())
    except OSError:
        return set()
    wanted = {"memory", "pids", "cpu"} & available - enabled
    if not wanted or not may_enable:
        return enabled
    line = " ".join(f"+{c}" for c in sorted(wanted))
    try:
        Path(base, "cgroup.subtree_control").write_text(line)
    except OSError:
        if not _leave_for_leaf(base):
            return enabled
        try:
            Path(base, "cgroup.subtree_control").write_text(line)
        except OSError:
            return enabled
    return enabled | wanted


def _leave_for_leaf(base: str) -> bool:
    """Move this process into a leaf child of ``base`` when it is the only one in
    ``base`` (a systemd scope made for the referee); False otherwise."""
    try:
        procs = Path(base, "cgroup.procs").read_text().split()
    except OSError:
        return False
    if procs != [str(os.getpid())]:
        return False  # other processes share it: not ours to move
    leaf = os.path.join(base, f"{PREFIX}{os.getpid()}-self")
    try:
        os.makedirs(leaf, exist_ok=True)
        Path(leaf, "cgroup.procs").write_text("0")
    except OSError:
        return False
    return True


def _sweep_stale(base: str) -> None:
    """Remove the cgroups of referees that are gone (killed before their teardown),
    killing what is left in them first: only a bot's processes are ever put in one,
    and an escapee of a dead referee's match has nobody left to stop it."""
    try:
        names = os.listdir(base)
    except OSError:
        return
    for name in names:
        if not name.startswith(PREFIX):
            continue
        owner = name[len(PREFIX) :].split("-", 1)[0]
        if not owner.isdigit() or owner == str(os.getpid()) or os.path.exists(f"/proc/{owner}"):
            continue
        path = os.path.join(base, name)
        deadline = time.monotonic() + 0.5
        while True:
            try:
                os.rmdir(path)
                break
            except OSError as exc:
                if exc.errno != errno.EBUSY or time.monotonic() > deadline:
                    break
            _kill_all(int(p) for p in _read(f"{path}/cgroup.procs").split() if p.isdigit())
            time.sleep(0.005)


def sweep_stale(cg: CgroupHost) -> None:
    """Remove the cgroups of dead referees in every hierarchy of ``cg`` (the
    referee does it at start-up). Never raises."""
    for h in cg.hierarchies:
        with contextlib.suppress(Exception):
            _sweep_stale(h.base)


@functools.cache
def host() -> CgroupHost:
    """What this host offers the referee (cached per process). Never raises."""
    try:
        return detect(
            Path("/proc/self/cgroup").read_text(), Path("/proc/self/mountinfo").read_text()
        )
    except Exception as exc:  # a strange /proc must not stop the referee: sample
        return CgroupHost((), f"cgroups could not be read ({type(exc).__name__}: {exc})")


def detect(cgroup_text: str, mountinfo_text: str) -> CgroupHost:
    """What the hierarchies mounted as ``mountinfo_text`` says offer a referee whose
    /proc/self/cgroup reads ``cgroup_text``: those where it can make a cgroup, with
    what each does. Removes dead referees' cgroups on the way."""
    own = _own_cgroups(cgroup_text)
    hierarchies: list[Hierarchy] = []
    for fstype, point, root, opts in _mounts(mountinfo_text):
        if fstype == "cgroup2":
            path = next((p for hid, ctl, p in own if hid == "0" and not ctl), None)
        else:
            wanted = {c for c in opts if c in _V1_ROLES}
            if not wanted:
                continue
            path = next((p for _, ctl, p in own if wanted <= ctl), None)
        if path is None:
            continue
        base = _joined(point, root, path)
        if base is None or not os.path.isdir(base) or not _writable(base):
            continue
        _sweep_stale(base)
        if fstype == "cgroup2":
            roles = ["cpuacct"]  # cpu.stat is there without any controller
            if _has_file(base, "cgroup.kill"):
                roles.append("kill")
            ctl = _v2_controllers(base, may_enable=path != "/")
            roles += [c for c in ("memory", "pids", "cpu") if c in ctl]
            if "memory" in ctl and _has_file(base, "memory.peak"):
                roles.append("peak")
            hierarchies.append(Hierarchy(base, True, tuple(roles)))
        else:
            roles = [_V1_ROLES[c] for c in sorted(opts) if c in _V1_ROLES]
            if "memory" in roles:
                roles.append("peak")  # memory.max_usage_in_bytes
            hierarchies.append(Hierarchy(base, False, tuple(roles)))
    # v2 first: where both offer a role, the unified hierarchy does it. A hierarchy
    # that adds nothing is left out (each one costs a directory per bot); the v1
    # freezer is needed only where no cgroup.kill is.
    hierarchies.sort(key=lambda h: not h.v2)
    used: list[Hierarchy] = []
    done: set[str] = set()
    for h in hierarchies:
        adds = tuple(
            r
            for r in h.roles
            if r not in done
            and not (r == "freezer" and "kill" in done)
            # The peak of the hierarchy that holds the memory limit, or none.
            and not (r == "peak" and ("memory" in done or "memory" not in h.roles))
        )
        if adds:
            used.append(h._replace(roles=adds))
            done.update(adds)
    hierarchies = used
    result = CgroupHost(tuple(hierarchies))
    lacking = [r for r in ("memory", "pids", "cpu") if result.where(r) is None]
    if not hierarchies:
        return NO_CGROUPS
    if lacking:
        result = result._replace(missing=f"no writable cgroup with {', '.join(lacking)}")
    return result


def _has_file(base: str, name: str) -> bool:
    """Whether cgroups made in ``base`` have the interface file ``name``: ``base``
    itself has it, or (the root cgroup has neither cgroup.kill nor memory.peak of
    its own) a child made to look does."""
    if os.path.exists(os.path.join(base, name)):
        return True
    probe = os.path.join(base, f"{PREFIX}probe-{os.getpid()}-{os.urandom(3).hex()}")
    try:
        os.mkdir(probe)
    except OSError:
        return False
    try:
        return os.path.exists(os.path.join(probe, name))
    finally:
        with contextlib.suppress(OSError):
            os.rmdir(probe)


def disk_enforcement(isolation: Sequence[str]) -> str:
    """How the disk limits are enforced in a layer that isolates ``isolation``: by
    the kernel where its writable places are tmpfs of the limits ("disk": ENOSPC
    past the size; "inodes": past the entry count too), else sampled by the
    watchdog's walk of the scratch directory (by directory fds)."""
    if "disk" not in isolation:
        walked = "sampled (walk of the scratch directory)"
        # Without a file system view of its own, the host's /tmp is writable too.
        return walked if "fs" in isolation else walked + ", the host's /tmp not bounded"
    if "inodes" in isolation:
        return "kernel (tmpfs size and inodes)"
    return "kernel (tmpfs size), entries sampled (tmpfs count)"


def enforcement(
    cg: CgroupHost, isolation: Sequence[str] = (), shared_nproc: bool = False
) -> dict[str, str]:
    """For the match header: how each limit is enforced on this host, for a layer
    that isolates ``isolation``. "kernel (cgroup vN)" where a bot's cgroup does
    it, else "sampled" (the referee's watchdog reads /proc every 100 ms and stops
    the bot after the fact); the disk as :func:`disk_enforcement` says.
    ``shared_nproc``: the bots run as the referee's own user, not root, so the
    kernel's RLIMIT_NPROC caps their processes too, but one count for the whole
    user: both seats (and the user's other processes) together, not each bot."""
    kernel = cg.kernel
    kill = kernel.get("kill") or kernel.get("freezer")
    processes = "sampled"
    if "pids" in kernel:
        processes = f"kernel ({kernel['pids']} pids)"
    elif shared_nproc:
        processes = "sampled; kernel cap RLIMIT_NPROC per user, shared by both seats"
    return {
        "memory": f"kernel ({kernel['memory']} memory)" if "memory" in kernel else "sampled",
        "processes": processes,
        "cpu_share": (
            f"kernel ({kernel['cpu']} cpu weight) and sampled" if "cpu" in kernel else "sampled"
        ),
        "cpu_time": f"kernel ({kernel['cpuacct']} accounting)"
        if "cpuacct" in kernel
        else "sampled",
        "teardown": f"kernel ({kill} kill)" if kill else "process tree walk",
        "peak_memory": (
            f"kernel ({kernel['peak']} peak)"
            if "peak" in kernel
            else f"sampled ({kernel['memory']} memory use at each reading)"
            if "memory" in kernel
            else "sampled"
        ),
        "disk": disk_enforcement(isolation),
    }


# The scheduler's weight of each nice value, -20 .. 19 (the kernel's table: each step
# is about 1.25 times the next).
_NICE_WEIGHTS = (
    88761, 71755, 56483, 46273, 36291, 29154, 23254, 18705, 14949, 11916,
    9548, 7620, 6100, 4904, 3906, 3121, 2501, 1991, 1586, 1277,
    1024, 820, 655, 526, 423, 335, 272, 215, 172, 137,
    110, 87, 70, 56, 45, 36, 29, 23, 18, 15,
)  # fmt: skip


def cpu_weight_of_nice(nice: int) -> int:
    """The CPU weight (v1 ``cpu.shares`` units) of a bot's cgroup for a referee
    at ``nice``: nice 0's 1024 unless the referee is niced (never above 1024)."""
    return _NICE_WEIGHTS[min(max(nice, 0), 19) + 20]


class Reading(NamedTuple):
    """A bot's cgroup at one instant; -1 where the host gives no such figure."""

    memory_bytes: int = -1
    peak_bytes: int = -1
    oom_kills: int = 0
    tasks: int = -1
    fork_refusals: int = 0  # forks the pids limit refused
    cpu_s: float = -1.0


def _read(path: str) -> str:
    try:
        with open(path, "rb") as f:
            return f.read().decode("ascii", "replace")
    except OSError:
        return ""


def _keyed(text: str, key: str) -> int:
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == key and parts[1].isdigit():
            return int(parts[1])
    return 0


def _number(text: str) -> int:
    text = text.strip()
    return int(text) if text.isdigit() else -1


class BotCgroup:
    """One bot's cgroup in every hierarchy the host offers."""

    def __init__(self, cg: CgroupHost, label: str) -> None:
        self.host = cg
        self.name = f"{PREFIX}{os.getpid()}-{os.urandom(4).hex()}-{label}"
        self.dirs: dict[str, str] = {}  # hierarchy base -> this bot's directory
        self.limit_bytes = 0
        self.max_tasks = 0
        self.peak_seen = -1  # the highest memory use read, where the kernel keeps no peak

    def _dir(self, role: str) -> str | None:
        h = self.host.where(role)
        return self.dirs.get(h.base) if h is not None else None

    @classmethod
    def create(cls, cg: CgroupHost, label: str, limits: Limits) -> BotCgroup:
        """Make the cgroup and set its limits; SandboxError (nothing left) on failure."""
        self = cls(cg, label)
        try:
            for h in cg.hierarchies:
                path = os.path.join(h.base, self.name)
                os.mkdir(path)
                self.dirs[h.base] = path
            self._set_limits(limits)
        except OSError as exc:
            self.remove()
            raise SandboxError(f"cannot set up the bot's cgroup: {exc}") from exc
        return self

    def _set_limits(self, limits: Limits) -> None:
        self.limit_bytes = limits.memory_mib * MIB
        self.max_tasks = limits.processes
        mem = self.host.where("memory")
        if mem is not None:
            d = self.dirs[mem.base]
            if mem.v2:
                Path(d, "memory.max").write_text(str(self.limit_bytes))
                for name, value in (("memory.swap.max", "0"), ("memory.oom.group", "1")):
                    with contextlib.suppress(OSError):  # no swap accounting / old kernel
                        Path(d, name).write_text(value)
            else:
                Path(d, "memory.limit_in_bytes").write_text(str(self.limit_bytes))
                with contextlib.suppress(OSError):  # swap accounting off: no swap to stop
                    Path(d, "memory.memsw.limit_in_bytes").write_text(str(self.limit_bytes))
        pids = self.host.where("pids")
        if pids is not None:
            Path(self.dirs[pids.base], "pids.max").write_text(str(self.max_tasks))
        cpu = self.host.where("cpu")
        if cpu is not None:
            # The same weight for every bot: the scheduler shares CPU between the
            # bots' cgroups, however many threads each runs. It is the weight of the
            # referee's own nice value (a niced server's bots stay niced: inside a
            # cgroup a process's nice value counts only against its cgroup-mates).
            weight = cpu_weight_of_nice(os.getpriority(os.PRIO_PROCESS, 0))
            if cpu.v2:  # cpu.weight 100 is nice 0's 1024
                name, value = "cpu.weight", str(max(1, min(10000, round(weight * 100 / 1024))))
            else:
                name, value = "cpu.shares", str(weight)
            Path(self.dirs[cpu.base], name).write_text(value)

    def join_files(self) -> list[str]:
        """The ``cgroup.procs`` files the launch writes its own pid to before the
        bot runs (one per hierarchy)."""
        return [os.path.join(d, "cgroup.procs") for d in self.dirs.values()]

    def read(self) -> Reading:
        mem_bytes = peak = -1
        ooms = 0
        mem = self.host.where("memory")
        if mem is not None:
            d = self.dirs[mem.base]
            if mem.v2:
                mem_bytes = _number(_read(f"{d}/memory.current"))
                peak = _number(_read(f"{d}/memory.peak"))
                if peak < 0:  # before Linux 5.19: the highest use the readings saw
                    self.peak_seen = max(self.peak_seen, mem_bytes)
                    peak = self.peak_seen
                ooms = _keyed(_read(f"{d}/memory.events"), "oom_kill")
            else:
                mem_bytes = _number(_read(f"{d}/memory.usage_in_bytes"))
                peak = _number(_read(f"{d}/memory.max_usage_in_bytes"))
                ooms = _keyed(_read(f"{d}/memory.oom_control"), "oom_kill")
        tasks = refusals = -1
        pids_dir = self._dir("pids")
        if pids_dir is not None:
            tasks = _number(_read(f"{pids_dir}/pids.current"))
            refusals = _keyed(_read(f"{pids_dir}/pids.events"), "max")
        cpu_s = -1.0
        acct = self.host.where("cpuacct")
        if acct is not None:
            d = self.dirs[acct.base]
            if acct.v2:
                usec = _keyed(_read(f"{d}/cpu.stat"), "usage_usec")
                cpu_s = usec / 1e6
            else:
                ns = _number(_read(f"{d}/cpuacct.usage"))
                cpu_s = ns / 1e9 if ns >= 0 else -1.0
        return Reading(mem_bytes, peak, ooms, tasks, max(refusals, 0), cpu_s)

    def members(self) -> list[int]:
        """The pids in the cgroup now (as this referee's pid namespace numbers them)."""
        for d in self.dirs.values():
            return [int(p) for p in _read(f"{d}/cgroup.procs").split() if p.isdigit()]
        return []

    def kill(self, timeout: float = 2.0) -> bool:
        """SIGKILL every process in the cgroup and wait until it is empty (bounded);
        True when it is. Never raises."""
        try:
            kill_dir = self._dir("kill")
            if kill_dir is not None:
                with contextlib.suppress(OSError):
                    Path(kill_dir, "cgroup.kill").write_text("1")
            else:
                self._freeze_and_kill()
            return self._wait_empty(timeout)
        except Exception:
            return False

    def _freeze_and_kill(self) -> None:
        """v1: freeze the tree (nothing can fork meanwhile), SIGKILL every member,
        thaw (a frozen process cannot die). Without a freezer: kill members until
        none is left (the pids limit bounds what can be forked meanwhile)."""
        freezer = self._dir("freezer")
        if freezer is not None:
            state = Path(freezer, "freezer.state")
            with contextlib.suppress(OSError):
                state.write_text("FROZEN")
                deadline = time.monotonic() + 0.5
                while _read(str(state)).strip() != "FROZEN" and time.monotonic() < deadline:
                    time.sleep(0.001)
        _kill_all(self.members())
        if freezer is not None:
            with contextlib.suppress(OSError):
                Path(freezer, "freezer.state").write_text("THAWED")

    def _wait_empty(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        pause = 0.0002
        while True:
            left = self.members()
            if not left:
                return True
            if time.monotonic() > deadline:
                return False
            _kill_all(left)  # forked before the kill reached them
            time.sleep(pause)
            pause = min(2 * pause, 0.005)

    def remove(self) -> None:
        """Kill what is left and remove the cgroup from every hierarchy. Never raises."""
        if not self.dirs:
            return
        if self.members():
            self.kill()
        deadline = time.monotonic() + 2.0
        for base, d in list(self.dirs.items()):
            while True:
                try:
                    os.rmdir(d)
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        break
                    time.sleep(0.001)
            self.dirs.pop(base, None)


def _kill_all(pids: Iterable[int]) -> None:
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
