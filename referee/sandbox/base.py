"""What every containment layer shares: the records (Limits, Layer, Launch), the
interface a layer implements (:class:`LayerKind`), and the launch steps common to
several layers (resource limits by util-linux or by the shim, the announcement).
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import functools
import marshal
import math
import os
import resource
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any, NamedTuple, Protocol

import msgspec

from . import seccomp

MARKER_ENV = "REFEREE_BOT_MARKER"

# Exit status of the launcher shim when it could not set up containment (as a shell's
# "cannot execute"); its stderr line then starts with "referee-sandbox:".
SHIM_FAILURE_EXIT = 126

MIB = 1024 * 1024
DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"

# The last step of every launch is SH_ANNOUNCE (inside bwrap, as part of restoring
# stdio): it writes LAUNCH_TOKEN to the bot's stderr just before it execs the bot, so
# whatever a launch prints before it is the launcher's and whatever comes after is
# the bot's. A bot cannot take back a token written before it ran, so it cannot pass
# its own crash off as a launcher failure (which voids the match instead of losing
# it). proc.StderrCapture takes the token out of the stream. A program the layer
# leaves out of reach is the launcher's failure, found before the token; one that
# starts and then fails (a bad interpreter line) is the bot's.
LAUNCH_TOKEN = b"referee-launch: ok\n"
SH_ANNOUNCE = (
    '[ -x "$1" ] || { printf "referee-sandbox: cannot execute %s\\n" "$1" >&2; exit 126; }; '
    'printf "referee-launch: ok\\n" >&2 && exec "$@"'
)

# The launcher shim (a real file, run by path-independent source: see shim_argv).
_SHIM_FILE = Path(__file__).with_name("shim.py")


class SandboxError(RuntimeError):
    """A containment layer is unavailable or could not be set up (not the bot's fault)."""


class Limits(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Resource limits for one bot in one match.

    The defaults suit Python, node and JVM bots. Kernel limits are backstops; the
    referee's own watchdog (RSS and CPU of the whole tree) decides the verdict.
    """

    # Per-match CPU budget in seconds, for the watchdog; RLIMIT_CPU soft = ceil(cpu_s)
    # and hard = soft + 1 per process, so SIGXCPU comes first and SIGKILL one second
    # later even if the bot catches SIGXCPU.
    cpu_s: float = 600
    # RSS limit of the bot's whole process tree, enforced by the referee's watchdog.
    memory_mib: int = 1024
    # RLIMIT_AS backstop only: node and a default JVM reserve far more address space
    # than they use, so this cannot be the memory limit.
    address_space_mib: int = 16384
    # RLIMIT_FSIZE: largest file the bot may write.
    file_size_mib: int = 64
    # RLIMIT_NOFILE.
    open_files: int = 256
    # Size of bwrap's private /tmp and /dev/shm (each); their pages are not in the RSS.
    tmpfs_mib: int = 64
    # Process/thread cap: RLIMIT_NPROC only when the referee is not root (the kernel
    # exempts root), on top of the uid's current count. The driver can also compare
    # ``len(tree_usage(pid).pids)`` against it.
    processes: int = 256
    # The bot's writable space (scratch directory, and bwrap's /tmp and /dev/shm):
    # total size and number of entries, enforced by the referee's watchdog; where
    # the layer makes the scratch directory a tmpfs ("disk"), disk_mib is its size
    # (the kernel's ENOSPC) and disk_files its inode count ("inodes") or the
    # watchdog's bound on the entries of the bot's tmpfs (read by statvfs).
    disk_mib: int = 256
    disk_files: int = 16384
    # When the referee runs as root, each bot runs as its own uid (and gid) from
    # uid_first .. uid_first + uid_count - 1 (sandbox/identity.py).
    uid_first: int = 61000
    uid_count: int = 1000


class Layer(msgspec.Struct, frozen=True):
    """A containment layer that passed its start-up self-test on this machine."""

    name: str
    description: str  # tool versions, e.g. "bwrap 0.8.0; limits via util-linux 2.38.1"
    warning: str | None = None  # shown loudly to the user when the layer is weak
    # What the layer isolates beyond Layer 0: "net" (no network), "tcp" (TCP only),
    # "pid" (own pid namespace), "fs" (private filesystem view), "signals" (cannot
    # signal the referee), "proc" (cannot read other processes' /proc), "tmpfs" (sized
    # /tmp and /dev/shm), "syscalls" (a seccomp allow-list; ``seccomp`` names the calls
    # it refuses by name), "sockets" (no socket may be created: socketpair only),
    # "unix" (no host Unix socket in reach), "disk" (the writable places are tmpfs of
    # the disk limits: the kernel caps their size, the watchdog need not walk them),
    # "inodes" (the kernel caps the scratch tmpfs's entries too: without it, the
    # watchdog reads their count with statvfs), "uid"
    # (each bot runs as an unprivileged uid of its own: the referee is root).
    isolation: tuple[str, ...] = ()
    self_test_ms: float = 0.0
    skipped: tuple[str, ...] = ()  # stronger layers that failed under "auto", with reasons
    landlock_abi: int = 0  # 0 when Landlock is not applied by this layer
    tools: dict[str, str] = msgspec.field(default_factory=dict)  # resolved helper paths
    # The system calls the layer's seccomp filter refuses by name, with EPERM
    # (referee/sandbox/seccomp.py; it refuses every call it does not allow too);
    # empty when it installs none.
    seccomp: tuple[str, ...] = ()


class Launch(msgspec.Struct, frozen=True):
    """What to pass to ``subprocess.Popen`` (always with ``start_new_session=True``).

    ``pass_fds`` belong to the launch (the read end of a pipe holding the seccomp
    filter, which bwrap reads): pass them to Popen, then call :meth:`close_fds`
    whether or not the process started."""

    argv: list[str]
    env: dict[str, str]
    cwd: str
    layer: str
    pass_fds: tuple[int, ...] = ()
    # The uid the bot runs as: its own leased one when the referee is root (give it
    # back with sandbox.release_uid once the tree is gone), else the referee's.
    uid: int = -1
    leased: bool = False
    # The launcher reports the bot's death by signal N as exit code 128 + N (bwrap's
    # pid 1 does): BotProcess decodes it, so a fault reads the same in every layer.
    signal_as_exit_code: bool = False

    def close_fds(self) -> None:
        for fd in self.pass_fds:
            with contextlib.suppress(OSError):
                os.close(fd)


class LaunchPlan(NamedTuple):
    """Everything a layer needs to build its part of one bot's launch."""

    layer: Layer
    limits: Limits
    ro_paths: list[str]  # the bot's own files and its interpreter's install prefixes
    scratch: Path  # its writable directory (and cwd), resolved
    env: dict[str, str]  # its whole environment
    # (uid, gid) to drop to when the referee is root, and the paths that uid must be
    # able to reach (the read-only ones and the scratch directory).
    identity: tuple[int, int] | None = None
    reach: tuple[str, ...] = ()


class Prefix(NamedTuple):
    """A layer's launch prefix: argv to put before the bot's own, and the fds the
    launch hands down (closed by :meth:`Launch.close_fds`)."""

    argv: list[str]
    pass_fds: tuple[int, ...] = ()


class LayerKind(Protocol):
    """One containment layer. A module in ``referee/sandbox/layers/`` defines one
    as ``KIND``; the registry finds it there."""

    name: str
    # "auto" tries the layers in increasing rank: the strongest first.
    rank: int
    # Whether the layer gives the bot a /tmp of its own (else TMPDIR is its scratch).
    private_tmp: bool

    def probe(self) -> Layer:
        """Static checks, cheapest first; SandboxError when the layer cannot work here.
        (The registry then starts ``true`` under it as its self-test.)"""
        ...

    def launch_prefix(self, plan: LaunchPlan) -> Prefix:
        """The argv that runs what follows it contained, ending with the step that
        announces the bot (LAUNCH_TOKEN) and execs it."""
        ...


# ---------------------------------------------------------------------------
# Helpers the layers share


@functools.cache
def libc() -> ctypes.CDLL:
    lib = ctypes.CDLL(None, use_errno=True)
    lib.syscall.restype = ctypes.c_long
    return lib


def common_tools() -> dict[str, str]:
    """The helper programs every launch may use: util-linux's limiters when present,
    and sh (which announces the bot); SandboxError without sh."""
    tools: dict[str, str] = {}
    for tool in ("prlimit", "setpriv", "choom"):
        path = shutil.which(tool)
        if path:
            tools[tool] = path
    if "prlimit" not in tools or "setpriv" not in tools:
        tools.pop("prlimit", None)
        tools.pop("setpriv", None)
    sh = shutil.which("sh")
    if sh is None:
        raise SandboxError("no sh on PATH (a launch ends with sh, which announces the bot)")
    tools["sh"] = sh
    return tools


def limits_by(tools: dict[str, str]) -> str:
    """How limits are set, for a layer's description."""
    if "prlimit" in tools:
        return f"limits via util-linux {_util_linux_version(tools['prlimit'])}"
    return "limits via Python shim"


@functools.cache
def _util_linux_version(path: str) -> str:
    # "prlimit from util-linux 2.38.1" -> "2.38.1"
    return run_quiet([path, "--version"]).strip().rsplit(" ", 1)[-1] or "unknown"


def run_quiet(argv: list[str]) -> str:
    try:
        proc = subprocess.run(argv, capture_output=True, timeout=5, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return (proc.stdout or proc.stderr).decode("utf-8", "replace")


def require_userns() -> None:
    try:
        value = Path("/proc/sys/user/max_user_namespaces").read_text().strip()
    except OSError:
        return  # unknown: let the real self-test decide
    if value == "0":
        raise SandboxError("user namespaces are disabled (user.max_user_namespaces = 0)")


# The environment variable that picks the seccomp policy: "allow-list" (the default)
# or the "deny-list" fallback for a runtime that needs a call the allow-list lacks
# (docs/security.md). Read when a layer is probed and when a bot starts.
SECCOMP_POLICY_ENV = "REFEREE_SECCOMP"


def seccomp_policy() -> seccomp.Policy:
    """The seccomp policy asked for (``REFEREE_SECCOMP``); SandboxError for an unknown one."""
    value = os.environ.get(SECCOMP_POLICY_ENV, "") or "allow-list"
    for policy in seccomp.POLICIES:
        if value == policy:
            return policy
    choices = ", ".join(seccomp.POLICIES)
    raise SandboxError(f"{SECCOMP_POLICY_ENV}={value!r} is not one of: {choices}")


def with_seccomp(layer: Layer) -> Layer:
    """``layer`` with the seccomp filter (seccomp.py) where this machine can have it:
    a table for its architecture, and a kernel that takes filters returning an errno.
    The layer then says so in ``seccomp`` (the calls refused by name), ``isolation``
    and its description; elsewhere it is returned as it is."""
    refused = tuple(seccomp.refused_calls())
    try:
        actions = Path("/proc/sys/kernel/seccomp/actions_avail").read_text().split()
    except OSError:
        return layer  # no CONFIG_SECCOMP_FILTER (the file came with Linux 4.14)
    if not refused or "errno" not in actions:
        return layer
    policy = seccomp_policy()
    if policy == "allow-list":
        what = f"seccomp allows {len(seccomp.allowed_calls())} system calls"
    else:
        what = f"seccomp deny-list refuses {len(refused)} system calls"
    return msgspec.structs.replace(
        layer,
        description=f"{layer.description}; {what}",
        isolation=(*layer.isolation, "syscalls"),
        seccomp=refused,
    )


def bot_filter(*, sockets: str) -> bytes:
    """The seccomp filter for a bot started now, with the socket families of its layer
    (a key of seccomp.SOCKET_POLICIES): it may not renice itself below the nice value
    it inherits from the referee at this moment."""
    program = seccomp.filter_program(
        start_nice=os.getpriority(os.PRIO_PROCESS, 0), sockets=sockets, policy=seccomp_policy()
    )
    assert program is not None  # a layer has seccomp only where there is a table
    return program


def seccomp_pipe(*, sockets: str) -> int:
    """The read end of a pipe that holds the seccomp filter and is closed at the
    other end: ``bwrap --seccomp FD`` reads it to the end. Numbered 10 or above, so
    that the launch's own moves of fds 3 and 4 cannot land on it."""
    program = bot_filter(sockets=sockets)
    r, w = os.pipe2(os.O_CLOEXEC)
    try:
        os.write(w, program)  # well under a pipe's buffer: never blocks
        fd = fcntl.fcntl(r, fcntl.F_DUPFD_CLOEXEC, 10)
    finally:
        os.close(w)
        os.close(r)
    return fd


def limits_prefix(plan: LaunchPlan, shim_spec: dict[str, Any], *, by_shim: bool) -> list[str]:
    """The first steps of a launch: the resource limits (util-linux's prlimit, setpriv
    and choom, or the shim when ``by_shim`` or when those are missing), then the shim
    with ``shim_spec`` (namespaces, Landlock, seccomp) if there is anything for it."""
    spec: dict[str, Any] = {}
    prefix: list[str] = []
    if plan.identity is not None and not by_shim:
        raise AssertionError("a layer that drops to the seat's uid does it in the shim")
    if by_shim or "prlimit" not in plan.layer.tools:
        # The shim is the first process anyway: let it set the limits too.
        spec.update(_shim_limits(plan.limits))
    else:
        prefix += _util_linux_prefix(plan.limits, plan.layer.tools)
    spec.update(shim_spec)
    if plan.identity is not None:
        spec["identity"] = plan.identity
        spec["reach"] = list(plan.reach)
    if spec:
        prefix += shim_argv(spec)
    return prefix


def announce(layer: Layer) -> list[str]:
    """The last step of a launch outside bwrap: announce the bot, exec it."""
    return [layer.tools["sh"], "-c", SH_ANNOUNCE, "sh"]


def _util_linux_prefix(limits: Limits, tools: dict[str, str]) -> list[str]:
    rl = rlimits(limits)
    opts = {
        "RLIMIT_CPU": "--cpu",
        "RLIMIT_AS": "--as",
        "RLIMIT_NOFILE": "--nofile",
        "RLIMIT_FSIZE": "--fsize",
        "RLIMIT_CORE": "--core",
        "RLIMIT_NPROC": "--nproc",
    }
    argv = [tools["prlimit"]]
    argv += [f"{opts[name]}={soft}:{hard}" for name, (soft, hard) in rl.items()]
    argv += ["--", tools["setpriv"], "--no-new-privs", "--pdeathsig", "KILL", "--"]
    if "choom" in tools:
        argv += [tools["choom"], "-n", "1000", "--"]
    return argv


def rlimits(limits: Limits) -> dict[str, tuple[int, int]]:
    wanted = {
        "RLIMIT_CPU": (math.ceil(limits.cpu_s), math.ceil(limits.cpu_s) + 1),
        "RLIMIT_AS": (limits.address_space_mib * MIB,) * 2,
        "RLIMIT_NOFILE": (limits.open_files,) * 2,
        "RLIMIT_FSIZE": (limits.file_size_mib * MIB,) * 2,
        "RLIMIT_CORE": (0, 0),
    }
    if os.geteuid() != 0:
        # Root is exempt from RLIMIT_NPROC; for others it counts every task of the uid,
        # so the cap sits on top of what the user already runs.
        n = _uid_task_count(os.getuid()) + limits.processes
        wanted["RLIMIT_NPROC"] = (n, n)
    result = {}
    for name, (soft, hard) in wanted.items():
        # Without CAP_SYS_RESOURCE a hard limit cannot be raised: clamp to what we have.
        _, cur_hard = resource.getrlimit(getattr(resource, name))
        if cur_hard != resource.RLIM_INFINITY:
            hard = min(hard, cur_hard)
            soft = min(soft, hard)
        result[name] = (soft, hard)
    return result


def _uid_task_count(uid: int) -> int:
    count = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            st = os.stat(f"/proc/{entry}")
            if st.st_uid == uid:
                count += len(os.listdir(f"/proc/{entry}/task"))
        except OSError:
            continue
    return count


def _shim_limits(limits: Limits) -> dict[str, Any]:
    return {
        "rlimits": rlimits(limits),
        "nnp": True,
        "pdeathsig": int(signal.SIGKILL),
        "parent": os.getpid(),
        "oom_score_adj": 1000,
    }


def _read_shim_source() -> str | None:
    # Read once, at import, and passed with -c: a file replaced on disk under a
    # running referee (an upgrade) must not start a shim that expects another SPEC.
    try:
        return _SHIM_FILE.read_text(encoding="utf-8")
    except OSError:
        return None  # no source available (e.g. a zipped, compiled-only install)


_SHIM_SOURCE = _read_shim_source()


def shim_argv(spec: dict[str, Any]) -> list[str]:
    # -I: ignore PYTHON* variables and the user's site dir; -S: skip site (and with it
    # the import hooks of editable installs), which makes start-up several times faster.
    if _SHIM_SOURCE is None:
        raise SandboxError("the launcher shim's source is not available")
    # marshal rather than json: json imports re, which would slow the shim's start-up;
    # the shim runs on this same interpreter, so the format always matches.
    return [sys.executable, "-I", "-S", "-c", _SHIM_SOURCE, marshal.dumps(spec).hex(), "--"]
