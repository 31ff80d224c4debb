"""Containment for untrusted bots: launch prefixes, resource limits, process-tree control.

This module only *prepares* processes; it never runs an event loop. The match driver
builds a :class:`Launch` with :func:`prepare_launch` and starts it itself with
``subprocess.Popen(launch.argv, env=launch.env, cwd=launch.cwd, start_new_session=True)``
from the main thread. (``setpriv --pdeathsig`` and ``bwrap --die-with-parent`` fire when
the *thread* that forked the bot exits; trio's ``open_process`` forks from a worker
thread that idles out after 10 s and would take the bot with it.)

Layers, strongest first (the probes behind these choices are in the project's
containment research notes):

``bwrap``
    bubblewrap: user, pid, net, ipc, uts and mount namespaces; a read-only view of
    ``/usr``, the bot's own files and its interpreter; a writable scratch directory;
    sized tmpfs for ``/tmp`` and ``/dev/shm``.
``unshare``
    user, pid, net, mount, ipc and uts namespaces made by the launcher shim itself
    (no network; the referee is invisible and cannot be signalled), plus a Landlock
    filesystem policy when the kernel supports Landlock.
``landlock``
    no namespaces: Landlock restricts the filesystem, TCP and (ABI >= 6) signals. UDP
    is *not* blocked and escaped processes are only caught by the subreaper sweep.
``basic``
    resource limits, a clean environment and process-tree teardown only. It does not
    stop network use, file access or signals to the referee.

The first three also refuse a short list of system calls with a seccomp filter
(``referee/seccomp.py``): bwrap installs it (``--seccomp FD``, the read end of a pipe
in ``Launch.pass_fds``), and so does the shim, last, before it execs the bot.

Limits are set before the bot exists, by a launcher prefix rather than a
``preexec_fn``: ``prlimit ... -- setpriv --no-new-privs --pdeathsig KILL -- choom -n
1000 --`` (util-linux; basic and bwrap), or a small Python shim (``python -I -S -c
<source of _shim_main>``) that also makes the namespaces and applies Landlock (unshare
and landlock, and any layer when the util-linux tools are missing). Every wrapper
either execs the bot or lets go of its stdin and stdout, so that a bot closing a pipe
is noticed.
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
import tempfile
import time
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import msgspec

from . import seccomp

MARKER_ENV = "REFEREE_BOT_MARKER"
LAYERS = ("bwrap", "unshare", "landlock", "basic")  # strongest first: the order "auto" tries
SANDBOX_CHOICES = ("auto", *LAYERS)

# Exit status of the launcher shim when it could not set up containment (as a shell's
# "cannot execute"); its stderr line then starts with "referee-sandbox:".
SHIM_FAILURE_EXIT = 126

_MIB = 1024 * 1024
_DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"
# Host entries that may be symlinks into /usr (merged-/usr distros) or real directories.
_TOP_LEVEL_SYSTEM = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
# The few /etc entries that runtimes need: the dynamic loader's cache, Debian's
# alternatives (java), time zone, OpenSSL config (node aborts if it is unreadable) and
# per-JDK config dirs (matched by prefix).
_ETC_ENTRIES = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "localtime", "ssl")
_ETC_PREFIXES = ("java-",)
_DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")
# Read-only extras for the Landlock policy (bwrap builds its own /proc and /dev). JVMs
# and node read CPU and cgroup facts from here.
_LANDLOCK_EXTRA_RO = ("/sys/devices/system/cpu", "/sys/fs/cgroup")
_PROC_GLOBAL_RO = ("/proc/cpuinfo", "/proc/meminfo", "/proc/stat", "/proc/sys", "/proc/filesystems")


# Shell snippets that move stdin/stdout to fds 3/4 around bwrap (see prepare_launch).
_SH_STASH_STDIO = 'exec 3<&0 4>&1 0</dev/null 1>/dev/null && exec "$@"'

# The last step of every launch is _SH_ANNOUNCE (inside bwrap, as part of restoring
# stdio): it writes LAUNCH_TOKEN to the bot's stderr just before it execs the bot, so
# whatever a launch prints before it is the launcher's and whatever comes after is
# the bot's. A bot cannot take back a token written before it ran, so it cannot pass
# its own crash off as a launcher failure (which voids the match instead of losing
# it). proc.StderrCapture takes the token out of the stream. A program the layer
# leaves out of reach is the launcher's failure, found before the token; one that
# starts and then fails (a bad interpreter line) is the bot's.
LAUNCH_TOKEN = b"referee-launch: ok\n"
_SH_ANNOUNCE = (
    '[ -x "$1" ] || { printf "referee-sandbox: cannot execute %s\\n" "$1" >&2; exit 126; }; '
    'printf "referee-launch: ok\\n" >&2 && exec "$@"'
)
_SH_RESTORE_STDIO = "exec 0<&3 1>&4 3<&- 4<&- || exit 126; " + _SH_ANNOUNCE


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
    # RLIMIT_AS backstop only: node needs ~1 GiB and a default JVM >= 4 GiB of address
    # space, so this cannot be the memory limit.
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


class Layer(msgspec.Struct, frozen=True):
    """A containment layer that passed its start-up self-test on this machine."""

    name: str
    description: str  # tool versions, e.g. "bwrap 0.8.0; limits via util-linux 2.38.1"
    warning: str | None = None  # shown loudly to the user when the layer is weak
    # What the layer isolates beyond Layer 0: "net" (no network), "tcp" (TCP only),
    # "pid" (own pid namespace), "fs" (private filesystem view), "signals" (cannot
    # signal the referee), "proc" (cannot read other processes' /proc), "tmpfs" (sized
    # /tmp and /dev/shm), "syscalls" (a seccomp filter refuses the calls in ``seccomp``).
    isolation: tuple[str, ...] = ()
    self_test_ms: float = 0.0
    skipped: tuple[str, ...] = ()  # stronger layers that failed under "auto", with reasons
    landlock_abi: int = 0  # 0 when Landlock is not applied by this layer
    tools: dict[str, str] = msgspec.field(default_factory=dict)  # resolved helper paths
    # The system calls the layer's seccomp filter refuses (referee/seccomp.py); empty
    # when it installs none.
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

    def close_fds(self) -> None:
        for fd in self.pass_fds:
            with contextlib.suppress(OSError):
                os.close(fd)


class TreeUsage(NamedTuple):
    """Resource use of a process tree at one instant."""

    rss_kib: int  # sum of the resident set of every live process in the tree
    cpu_s: float  # user + system CPU, including children that were already reaped
    pids: list[int]  # the live tree (zombies included), root first; [] if the root is gone


# ---------------------------------------------------------------------------
# Layer selection


_self_tests: dict[str, Layer | SandboxError] = {}


def choose_layer(name: str = "auto") -> Layer:
    """Return a working containment layer.

    ``name`` is "auto" (the strongest layer that passes its self-test) or one of
    :data:`LAYERS` (that layer or :class:`SandboxError`). Each self-test actually starts
    ``true`` under the layer's full launch prefix; results are cached per process.
    """
    if name not in SANDBOX_CHOICES:
        raise ValueError(f"unknown sandbox layer {name!r}; choose one of {SANDBOX_CHOICES}")
    if name != "auto":
        result = _tested_layer(name)
        if isinstance(result, SandboxError):
            raise result
        return result
    skipped: list[str] = []
    for candidate in LAYERS:
        result = _tested_layer(candidate)
        if isinstance(result, Layer):
            return msgspec.structs.replace(result, skipped=tuple(skipped))
        skipped.append(f"{candidate}: {result}")
    raise SandboxError("no containment layer works here: " + "; ".join(skipped))


def _tested_layer(name: str) -> Layer | SandboxError:
    if name not in _self_tests:
        start = time.perf_counter()
        try:
            layer = _probe_layer(name)
            _self_test(layer)
        except SandboxError as exc:
            _self_tests[name] = exc
        else:
            ms = round((time.perf_counter() - start) * 1000, 1)
            _self_tests[name] = msgspec.structs.replace(layer, self_test_ms=ms)
    return _self_tests[name]


def _probe_layer(name: str) -> Layer:
    """Static checks for one layer, cheapest first; raises SandboxError."""
    tools: dict[str, str] = {}
    limiter = _limiter_tools()
    tools.update(limiter)
    sh = shutil.which("sh")
    if sh is None:
        raise SandboxError("no sh on PATH (a launch ends with sh, which announces the bot)")
    tools["sh"] = sh
    limits_by = (
        f"limits via util-linux {_util_linux_version(limiter['prlimit'])}"
        if "prlimit" in limiter
        else "limits via Python shim"
    )
    if name == "basic":
        warning = (
            "sandbox layer 'basic': bots are NOT isolated. They can use the network, read "
            "and write your files, read other processes' /proc entries and signal the "
            "referee. Install bubblewrap (Debian/Ubuntu package 'bubblewrap') or enable "
            "unprivileged user namespaces for real isolation."
        )
        return Layer("basic", f"basic ({limits_by})", warning, (), tools=tools)
    if name == "landlock":
        abi = landlock_abi()
        if abi < 1:
            raise SandboxError("Landlock is not supported by this kernel")
        isolation = ["fs", "proc"]
        if abi >= 4:
            isolation.append("tcp")
        if abi >= 6:
            isolation.append("signals")
        warning = (
            "sandbox layer 'landlock': no namespaces. UDP is not blocked"
            + ("" if abi >= 4 else ", TCP is not blocked")
            + ("" if abi >= 6 else ", bots can signal the referee")
            + "; escaped processes are caught only by the subreaper sweep."
        )
        return _with_seccomp(
            Layer(
                "landlock",
                f"landlock ABI {abi} (Python shim)",
                warning,
                tuple(isolation),
                landlock_abi=abi,
                tools=tools,
            )
        )
    if name == "unshare":
        # The namespaces are made by the shim with unshare(2), not by util-linux
        # unshare: that tool waits for the bot holding its stdin and stdout, so a bot
        # closing them would never be noticed. The shim's waiting parent closes them.
        _require_userns()
        abi = landlock_abi()
        isolation = ["net", "pid", "signals", "proc"]
        desc = "unshare(2) user/pid/net/mount/ipc/uts namespaces (Python shim)"
        if abi >= 1:
            isolation.append("fs")
            desc += f" + landlock ABI {abi}"
        return _with_seccomp(
            Layer("unshare", desc, None, tuple(isolation), landlock_abi=abi, tools=tools)
        )
    if name == "bwrap":
        path = shutil.which("bwrap")
        if path is None:
            raise SandboxError("bwrap not found on PATH (Debian/Ubuntu package 'bubblewrap')")
        _require_userns()
        version = _run_quiet([path, "--version"]).strip() or "bwrap (unknown version)"
        help_text = _run_quiet([path, "--help"])
        if "--disable-userns" not in help_text:
            raise SandboxError(f"{version} is too old (needs --disable-userns, bwrap >= 0.8)")
        isolation = ["net", "pid", "fs", "signals", "proc"]
        if "--size" in help_text:
            isolation.append("tmpfs")
        tools["bwrap"] = path
        layer = Layer("bwrap", f"{version}; {limits_by}", None, tuple(isolation), tools=tools)
        return _with_seccomp(layer) if "--seccomp" in help_text else layer
    raise ValueError(name)


def _with_seccomp(layer: Layer) -> Layer:
    """``layer`` with the seccomp filter (referee/seccomp.py) where this machine can
    have it: a table for its architecture, and a kernel that takes filters returning
    an errno. The layer then says so in ``seccomp``, ``isolation`` and its
    description; elsewhere it is returned as it is."""
    refused = tuple(seccomp.refused_calls())
    try:
        actions = Path("/proc/sys/kernel/seccomp/actions_avail").read_text().split()
    except OSError:
        return layer  # no CONFIG_SECCOMP_FILTER (the file came with Linux 4.14)
    if not refused or "errno" not in actions:
        return layer
    return msgspec.structs.replace(
        layer,
        description=f"{layer.description}; seccomp refuses {len(refused)} system calls",
        isolation=(*layer.isolation, "syscalls"),
        seccomp=refused,
    )


def _seccomp_pipe() -> int:
    """The read end of a pipe that holds the seccomp filter and is closed at the
    other end: ``bwrap --seccomp FD`` reads it to the end. Numbered 10 or above, so
    that the launch's own moves of fds 3 and 4 cannot land on it."""
    program = seccomp.filter_program()
    assert program is not None
    r, w = os.pipe2(os.O_CLOEXEC)
    try:
        os.write(w, program)  # well under a pipe's buffer: never blocks
        fd = fcntl.fcntl(r, fcntl.F_DUPFD_CLOEXEC, 10)
    finally:
        os.close(w)
        os.close(r)
    return fd


def _require_userns() -> None:
    try:
        value = Path("/proc/sys/user/max_user_namespaces").read_text().strip()
    except OSError:
        return  # unknown: let the real self-test decide
    if value == "0":
        raise SandboxError("user namespaces are disabled (user.max_user_namespaces = 0)")


def _self_test(layer: Layer) -> None:
    """Start ``true`` under the layer exactly as a bot would be started."""
    with tempfile.TemporaryDirectory(prefix="referee-selftest-") as tmp:
        launch = prepare_launch(
            ["true"], bot_dir=None, scratch=Path(tmp), limits=Limits(), layer=layer
        )
        try:
            proc = subprocess.Popen(
                launch.argv,
                env=launch.env,
                cwd=launch.cwd,
                start_new_session=True,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                pass_fds=launch.pass_fds,
            )
        except OSError as exc:
            raise SandboxError(f"self-test failed: {exc}") from exc
        finally:
            launch.close_fds()
        try:
            _, stderr = proc.communicate(timeout=10)
        except subprocess.TimeoutExpired as exc:
            kill_tree(proc.pid)
            proc.communicate()
            raise SandboxError("self-test failed: `true` did not finish within 10 s") from exc
        if proc.returncode != 0:
            err = stderr.decode("utf-8", "replace").strip().splitlines()
            detail = err[-1] if err else f"exit status {proc.returncode}"
            raise SandboxError(f"self-test failed: {detail}")
        if LAUNCH_TOKEN not in stderr:
            raise SandboxError("self-test failed: the launch did not announce the start")


def _limiter_tools() -> dict[str, str]:
    tools = {}
    for tool in ("prlimit", "setpriv", "choom"):
        path = shutil.which(tool)
        if path:
            tools[tool] = path
    if "prlimit" not in tools or "setpriv" not in tools:
        tools.pop("prlimit", None)
        tools.pop("setpriv", None)
    return tools


@functools.cache
def _util_linux_version(path: str) -> str:
    # "prlimit from util-linux 2.38.1" -> "2.38.1"
    return _run_quiet([path, "--version"]).strip().rsplit(" ", 1)[-1] or "unknown"


def _run_quiet(argv: list[str]) -> str:
    try:
        proc = subprocess.run(argv, capture_output=True, timeout=5, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return (proc.stdout or proc.stderr).decode("utf-8", "replace")


def containment_record(layer: Layer, limits: Limits) -> dict[str, Any]:
    """The ``containment`` section of a match record."""
    return {
        "layer": layer.name,
        "description": layer.description,
        "isolation": list(layer.isolation),
        "seccomp": list(layer.seccomp),
        "warning": layer.warning,
        "limits": msgspec.to_builtins(limits),
    }


# ---------------------------------------------------------------------------
# Launch preparation


def prepare_launch(
    command: Sequence[str | os.PathLike[str]],
    *,
    bot_dir: Path | None,
    scratch: Path,
    limits: Limits,
    layer: Layer,
    marker: str = "",
) -> Launch:
    """Build the argv, environment and cwd that start ``command`` contained in ``layer``.

    Relative paths in ``command`` are resolved against the referee's current directory
    (the bot's cwd becomes ``scratch``); ``command[0]`` is looked up on the referee's
    PATH. Inside bwrap every path keeps its host name, so nothing else is rewritten.

    Files visible to the bot under bwrap and Landlock: ``bot_dir`` (if given), the
    directory of the first argument that names an existing file or directory (the
    script, jar or class dir), the program itself and the install prefix of every link
    on its symlink chain (a venv, pyenv, nvm), ``/usr`` and a few ``/etc`` entries.
    """
    argv, program, script = _resolve_command(command)
    scratch = scratch.resolve()
    scratch.mkdir(mode=0o700, parents=True, exist_ok=True)
    ro_paths = _bot_paths(program, script, bot_dir)

    inside_tmp = "/tmp" if layer.name == "bwrap" else str(scratch)
    path_dirs = _DEFAULT_PATH.split(":")
    program_dir = str(Path(program).parent)
    if program_dir not in path_dirs:
        path_dirs.insert(0, program_dir)
    env = {
        "PATH": ":".join(path_dirs),
        "HOME": str(scratch),
        "LANG": "C.UTF-8",
        "TMPDIR": inside_tmp,
    }
    if marker:
        env[MARKER_ENV] = marker

    shim_spec: dict[str, Any] = {}
    prefix: list[str] = []
    pass_fds: tuple[int, ...] = ()
    if layer.name in ("landlock", "unshare") or "prlimit" not in layer.tools:
        # The shim is the first process anyway: let it set the limits too.
        shim_spec.update(_shim_limits(limits))
    else:
        prefix += _util_linux_prefix(limits, layer.tools)
    if layer.name == "unshare":
        shim_spec["namespaces"] = True
    if layer.landlock_abi >= 1:
        shim_spec["landlock"] = _landlock_policy(layer.landlock_abi, ro_paths, scratch)
    if layer.seccomp and layer.name in ("unshare", "landlock"):
        # Installed by the shim last, just before it execs the bot (it still mounts).
        shim_spec["seccomp"] = seccomp.filter_program()
    if shim_spec:
        prefix += _shim_argv(shim_spec)
    if layer.name != "bwrap":  # under bwrap the step that restores stdio announces
        prefix += [layer.tools["sh"], "-c", _SH_ANNOUNCE, "sh"]
    if layer.name == "bwrap":
        # bwrap's monitor and its pid 1 keep fds 0-2 for the whole match, so a bot
        # closing stdin or stdout would go unnoticed. Hand the pipes over as fds 3 and
        # 4 instead (bwrap closes those in its own processes) and move them back to
        # 0 and 1 just before the bot starts.
        sh = layer.tools["sh"]
        prefix = [sh, "-c", _SH_STASH_STDIO, "sh", *prefix]
        prefix += _bwrap_args(layer, limits, ro_paths, scratch, env)
        if layer.seccomp:
            # bwrap installs the filter on the bot's side only, after its own setup.
            pass_fds = (_seccomp_pipe(),)
            prefix[-1:-1] = ["--seccomp", str(pass_fds[0])]  # before bwrap's "--"
        prefix += [sh, "-c", _SH_RESTORE_STDIO, "sh"]
    return Launch(
        argv=prefix + argv, env=env, cwd=str(scratch), layer=layer.name, pass_fds=pass_fds
    )


def _resolve_command(
    command: Sequence[str | os.PathLike[str]],
) -> tuple[list[str], str, str | None]:
    """Absolute argv, the program's path, and the first path argument (the script)."""
    if not command:
        raise ValueError("empty bot command")
    argv = [os.fspath(part) for part in command]
    first = argv[0]
    found = shutil.which(first) if os.sep not in first else first
    if found is None or not os.path.exists(found):
        raise FileNotFoundError(f"bot program not found: {first!r}")
    argv[0] = os.path.abspath(found)
    script = None
    for i, arg in enumerate(argv[1:], start=1):
        if not arg or arg.startswith("-"):
            continue
        # Only the first existing path counts as the bot's own file (its directory is
        # made visible); later path arguments stay invisible under bwrap/Landlock.
        if script is None and os.path.exists(arg):
            argv[i] = script = os.path.abspath(arg)
        elif os.sep in arg and not os.path.isabs(arg) and os.path.exists(arg):
            argv[i] = os.path.abspath(arg)
    return argv, argv[0], script


def _bot_paths(program: str, script: str | None, bot_dir: Path | None) -> list[str]:
    """Read-only paths a bot needs: its dir, its program's install prefixes, the script."""
    paths: list[str] = []
    # A directory as broad as "/", /home or the home dir itself is never exposed whole
    # (a bot started as ~/bot would otherwise see all of the user's files).
    if bot_dir is not None and not _too_broad(bot_dir.resolve()):
        paths.append(str(bot_dir.resolve()))
    for hop in _symlink_chain(program):
        paths.append(_install_prefix(hop))
    if script is not None:
        for hop in _symlink_chain(script):
            if not os.path.isdir(hop):
                paths.append(_install_prefix(hop))
            elif not _too_broad(Path(hop)):
                paths.append(hop)
    # Keep only paths not already visible under /usr or another entry; parents first.
    result: list[str] = []
    for path in sorted(set(paths), key=lambda p: (p.count("/"), p)):
        if path == "/usr" or path.startswith("/usr/"):
            continue
        if any(path == kept or path.startswith(kept.rstrip("/") + "/") for kept in result):
            continue
        result.append(path)
    return result


def _symlink_chain(path: str, limit: int = 16) -> list[str]:
    """``path`` and every symlink target after it, as absolute paths (dirs resolved)."""
    chain = []
    current = os.path.abspath(path)
    for _ in range(limit):
        # Resolve directories but not the last component: each hop's location matters
        # (a venv's bin/python lives in the venv even though it links elsewhere).
        head, tail = os.path.split(current)
        current = os.path.join(os.path.realpath(head), tail)
        chain.append(current)
        if not os.path.islink(current):
            break
        current = os.path.join(os.path.dirname(current), os.readlink(current))
    return chain


def _install_prefix(path: str) -> str:
    """The directory to expose for a program file.

    ``<prefix>/bin/x`` exposes ``<prefix>`` when it looks like an install prefix (has
    ``lib``/``lib64`` or is a venv): interpreters load their library from there. A
    directory that is too broad (``/``, a top-level dir, the home dir) is never exposed
    whole; the file alone is exposed instead.
    """
    parent = Path(path).parent
    candidate = parent
    if parent.name == "bin":
        root = parent.parent
        markers = ("lib", "lib64", "libexec", "pyvenv.cfg")
        if any((root / m).exists() for m in markers):
            candidate = root
    elif parent.name == "shims":
        # pyenv/rbenv/asdf shims exec the tool from its root, which holds the versions.
        candidate = parent.parent
    if _too_broad(candidate):
        candidate = parent
    if _too_broad(candidate):
        return path
    return str(candidate)


def _too_broad(path: Path) -> bool:
    return len(path.parts) <= 2 or path == Path.home()


def _util_linux_prefix(limits: Limits, tools: dict[str, str]) -> list[str]:
    rl = _rlimits(limits)
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


def _rlimits(limits: Limits) -> dict[str, tuple[int, int]]:
    wanted = {
        "RLIMIT_CPU": (math.ceil(limits.cpu_s), math.ceil(limits.cpu_s) + 1),
        "RLIMIT_AS": (limits.address_space_mib * _MIB,) * 2,
        "RLIMIT_NOFILE": (limits.open_files,) * 2,
        "RLIMIT_FSIZE": (limits.file_size_mib * _MIB,) * 2,
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
        "rlimits": _rlimits(limits),
        "nnp": True,
        "pdeathsig": int(signal.SIGKILL),
        "parent": os.getpid(),
        "oom_score_adj": 1000,
    }


def _shim_argv(spec: dict[str, Any]) -> list[str]:
    # -I: ignore PYTHON* variables and the user's site dir; -S: skip site (and with it
    # the import hooks of editable installs), which makes start-up several times faster.
    if _SHIM_SOURCE is None:
        raise SandboxError("the launcher shim's source is not available")
    # marshal rather than json: json imports re, which would double the shim's start-up
    # time; the shim runs on this same interpreter, so the format always matches.
    return [sys.executable, "-I", "-S", "-c", _SHIM_SOURCE, marshal.dumps(spec).hex(), "--"]


def _bwrap_args(
    layer: Layer, limits: Limits, ro_paths: list[str], scratch: Path, env: dict[str, str]
) -> list[str]:
    args = [
        layer.tools["bwrap"],
        "--unshare-all",
        "--unshare-user",
        "--disable-userns",
        "--die-with-parent",
        # No --new-session: the referee already made the bot a session leader, and a
        # new session would put the sandbox's pid 1 out of reach of killpg.
        "--proc",
        "/proc",
        "--dev",
        "/dev",
    ]
    size = str(limits.tmpfs_mib * _MIB)
    sized = ["--size", size] if "tmpfs" in layer.isolation else []
    # --dev gives an unsized /dev/shm (a 100 MB write outside the RSS went through in
    # the probes), so both writable tmpfs get their own size.
    args += [*sized, "--tmpfs", "/dev/shm", *sized, "--tmpfs", "/tmp"]
    args += ["--ro-bind", "/usr", "/usr"]
    for top in _TOP_LEVEL_SYSTEM:
        if os.path.islink(top):
            args += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            args += ["--ro-bind", top, top]
    for etc in _etc_paths():
        args += ["--ro-bind", etc, etc]
    scratch_s = str(scratch)
    mounts = [(p, "--ro-bind") for p in ro_paths if p != scratch_s] + [(scratch_s, "--bind")]
    # Parents before children, so a deeper bind is not hidden by a later shallower one.
    for path, how in sorted(mounts, key=lambda m: m[0].count("/")):
        args += [how, path, path]
    args += ["--chdir", scratch_s, "--clearenv"]
    for key, value in env.items():
        args += ["--setenv", key, value]
    args.append("--")
    return args


def _etc_paths() -> list[str]:
    try:
        names = os.listdir("/etc")
    except OSError:
        return []
    return sorted(
        f"/etc/{name}"
        for name in names
        if name in _ETC_ENTRIES or any(name.startswith(p) for p in _ETC_PREFIXES)
    )


# ---------------------------------------------------------------------------
# Landlock and the launcher shim

_SYS_LANDLOCK_CREATE_RULESET = 444  # same number on every architecture (since 5.13)
_PR_SET_CHILD_SUBREAPER = 36


@functools.cache
def _libc() -> ctypes.CDLL:
    lib = ctypes.CDLL(None, use_errno=True)
    lib.syscall.restype = ctypes.c_long
    return lib


def landlock_abi() -> int:
    """The kernel's Landlock ABI version, or 0 when Landlock is unavailable."""
    try:
        abi = _libc().syscall(
            ctypes.c_long(_SYS_LANDLOCK_CREATE_RULESET),
            None,
            ctypes.c_size_t(0),
            ctypes.c_uint32(1),  # LANDLOCK_CREATE_RULESET_VERSION
        )
    except (OSError, AttributeError):
        return 0
    return max(int(abi), 0)


def _landlock_policy(abi: int, ro_paths: Iterable[str], scratch: Path) -> dict[str, Any]:
    ro = ["/usr", *(p for p in _TOP_LEVEL_SYSTEM if os.path.exists(p)), *_etc_paths()]
    ro += [p for p in _LANDLOCK_EXTRA_RO if os.path.exists(p)]
    ro += list(ro_paths)
    # "/proc/self" is opened by the shim, so the rule covers the bot's own /proc entry
    # only (its pid does not change at exec). Other processes' entries stay closed:
    # as root, Landlock's ptrace check alone lets /proc/<referee>/environ be read.
    ro += ["/proc/self", *_PROC_GLOBAL_RO]
    return {"abi": abi, "ro": ro, "rw": [str(scratch)], "dev": list(_DEVICES)}


def _shim_main(args: list[str]) -> None:
    """Launcher shim: ``python -I -S -c <this function's source> SPEC -- ARGV``.

    Applies SPEC (a marshalled dict, hex-encoded: rlimits, no-new-privs, parent-death
    signal, oom_score_adj, namespaces, Landlock policy, seccomp filter) to itself,
    then execs ARGV. It
    runs without ``site`` so that it starts in a few ms, hence it is self-contained:
    standard library only, no module globals. Any failure exits with status 126 and a ``referee-sandbox:`` line on
    stderr; the bot is never started half-contained.
    """
    import ctypes
    import marshal
    import os
    import resource
    import signal
    import stat
    import sys

    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long

    def check(result: int, what: str) -> int:
        if result < 0:
            err = ctypes.get_errno()
            raise OSError(err, f"{what}: {os.strerror(err)}")
        return result

    def apply_landlock(policy: dict) -> None:  # a JSON object from _landlock_policy
        abi = int(policy["abi"])
        handled = (1 << 13) - 1  # ABI 1: execute .. make_sym
        if abi >= 2:
            handled |= 1 << 13  # refer
        if abi >= 3:
            handled |= 1 << 14  # truncate
        if abi >= 5:
            handled |= 1 << 15  # ioctl_dev
        execute, write_file, read_file, read_dir = 1, 2, 4, 8
        file_rights = execute | write_file | read_file | (1 << 14) | (1 << 15)

        class RulesetAttr(ctypes.Structure):
            _fields_ = [
                ("handled_access_fs", ctypes.c_uint64),
                ("handled_access_net", ctypes.c_uint64),  # ABI 4: TCP bind and connect
                ("scoped", ctypes.c_uint64),  # ABI 6: abstract unix sockets and signals
            ]

        class PathBeneathAttr(ctypes.Structure):
            _pack_ = 1
            _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]

        attr = RulesetAttr(handled, 3 if abi >= 4 else 0, 3 if abi >= 6 else 0)
        size = 8 if abi < 4 else 16 if abi < 6 else 24  # the struct grew with the ABI
        ruleset = check(
            libc.syscall(
                ctypes.c_long(444), ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0)
            ),
            "landlock_create_ruleset",
        )
        rules = [(p, execute | read_file | read_dir) for p in policy["ro"]]
        rules += [(p, handled) for p in policy["rw"]]
        rules += [(p, read_file | write_file | (1 << 15)) for p in policy["dev"]]
        for path, rights in rules:
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue  # absent on this machine: nothing to allow
            try:
                # Rules on a file may only carry file rights (EINVAL otherwise).
                if not stat.S_ISDIR(os.fstat(fd).st_mode):
                    rights &= file_rights
                rule = PathBeneathAttr(rights & handled, fd)
                check(
                    libc.syscall(
                        ctypes.c_long(445),
                        ctypes.c_int(ruleset),
                        ctypes.c_int(1),  # LANDLOCK_RULE_PATH_BENEATH
                        ctypes.byref(rule),
                        ctypes.c_uint32(0),
                    ),
                    f"landlock_add_rule({path})",
                )
            finally:
                os.close(fd)
        check(libc.prctl(38, 1, 0, 0, 0), "prctl(PR_SET_NO_NEW_PRIVS)")
        check(
            libc.syscall(ctypes.c_long(446), ctypes.c_int(ruleset), ctypes.c_uint32(0)),
            "landlock_restrict_self",
        )
        os.close(ruleset)

    def install_seccomp(program: bytes) -> None:  # from referee/seccomp.py
        class SockFprog(ctypes.Structure):
            _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

        buf = ctypes.create_string_buffer(program, len(program))
        prog = SockFprog(len(program) // 8, ctypes.addressof(buf))
        check(libc.prctl(38, 1, 0, 0, 0), "prctl(PR_SET_NO_NEW_PRIVS)")
        # PR_SET_SECCOMP, SECCOMP_MODE_FILTER
        check(libc.prctl(22, 2, ctypes.byref(prog), 0, 0), "prctl(PR_SET_SECCOMP)")

    def enter_namespaces() -> None:
        """New user, pid, net, mount, ipc and uts namespaces; fork the bot as pid 1.

        The parent stays outside as a monitor (a PID namespace needs a forked pid 1):
        it lets go of stdin and stdout so the bot alone holds the pipes, waits, and
        exits as the bot did. The bot dies with the monitor (parent-death signal).
        """
        uid, gid = os.getuid(), os.getgid()
        flags = 0x10000000 | 0x20000000 | 0x40000000 | 0x00020000 | 0x08000000 | 0x04000000
        check(libc.unshare(flags), "unshare(user, pid, net, mount, ipc, uts)")
        for name, text in (
            ("setgroups", "deny"),
            ("uid_map", f"0 {uid} 1"),
            ("gid_map", f"0 {gid} 1"),
        ):
            with open(f"/proc/self/{name}", "w") as f:
                f.write(text)
        child = os.fork()
        if child == 0:
            check(libc.prctl(1, 9, 0, 0, 0), "prctl(PR_SET_PDEATHSIG)")
            ms_rec, ms_private = 1 << 14, 1 << 18
            check(libc.mount(b"none", b"/", None, ms_rec | ms_private, None), "mount(private /)")
            # A /proc of the new namespace: the referee and other bots are not in it.
            nosuid_nodev_noexec = 2 | 4 | 8
            check(libc.mount(b"proc", b"/proc", b"proc", nosuid_nodev_noexec, None), "mount /proc")
            return
        devnull = os.open("/dev/null", os.O_RDWR)
        os.dup2(devnull, 0)
        os.dup2(devnull, 1)
        os.closerange(3, 65536)
        while True:
            try:
                _, status = os.waitpid(child, 0)
                break
            except InterruptedError:
                continue
        if os.WIFSIGNALED(status):
            sig = os.WTERMSIG(status)
            if sig not in (signal.SIGKILL, signal.SIGSTOP):
                signal.signal(sig, signal.SIG_DFL)  # (those two cannot be handled)
            os.kill(os.getpid(), sig)  # die the same way, as util-linux unshare does
            os._exit(128 + sig)
        os._exit(os.waitstatus_to_exitcode(status))

    try:
        spec = marshal.loads(bytes.fromhex(args[0]))
        if len(args) < 3 or args[1] != "--":
            raise ValueError("usage: SPEC -- ARGV")
        argv = args[2:]
        for name, (soft, hard) in spec.get("rlimits", {}).items():
            resource.setrlimit(getattr(resource, name), (soft, hard))
        if spec.get("nnp"):
            check(libc.prctl(38, 1, 0, 0, 0), "prctl(PR_SET_NO_NEW_PRIVS)")
        if spec.get("pdeathsig"):
            check(libc.prctl(1, int(spec["pdeathsig"]), 0, 0, 0), "prctl(PR_SET_PDEATHSIG)")
            if os.getppid() != spec.get("parent", os.getppid()):
                raise RuntimeError("the referee exited during start-up")
        if spec.get("oom_score_adj") is not None:
            try:
                with open("/proc/self/oom_score_adj", "w") as f:
                    f.write(str(spec["oom_score_adj"]))
            except OSError:
                pass  # best effort: a host OOM then picks by size alone
        if spec.get("namespaces"):
            enter_namespaces()  # returns in the new PID namespace's pid 1 only
        if spec.get("landlock"):
            apply_landlock(spec["landlock"])
        if spec.get("seccomp"):
            install_seccomp(spec["seccomp"])
        os.execv(argv[0], argv)
    except Exception as exc:  # every setup failure alike: never run the bot half-contained
        sys.stderr.write(f"referee-sandbox: {type(exc).__name__}: {exc}\n")
        sys.stderr.flush()
        os._exit(126)


def _read_shim_source() -> str | None:
    # Read now, at import: a file replaced on disk under a running referee would
    # yield the wrong lines later. The function is top-level and undecorated, so
    # it runs from its ``def`` to the next line that is not indented (read
    # directly: importing inspect for this would cost every start ~13 ms).
    try:
        lines = Path(__file__).read_text(encoding="utf-8").splitlines()
    except OSError:
        return None  # no source available (e.g. a zipped, compiled-only install)
    start = _shim_main.__code__.co_firstlineno - 1
    if not 0 <= start < len(lines) or not lines[start].startswith("def _shim_main("):
        return None
    end = start + 1
    while end < len(lines) and (not lines[end].strip() or lines[end][0].isspace()):
        end += 1
    body = "\n".join(lines[start:end])
    return f"{body}\nimport sys\n_shim_main(sys.argv[1:])\n"


_SHIM_SOURCE = _read_shim_source()


# ---------------------------------------------------------------------------
# Process trees

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


def _descendants(pid: int) -> list[int]:
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


def _tree_tids(pid: int) -> Iterator[int]:
    """Every thread of ``pid`` and its descendants."""
    for proc in _descendants(pid):
        for tid in _tids(proc):
            yield int(tid)


def spread_tree(pid: int, cpus: set[int]) -> int:
    """Let every thread of ``pid`` and its descendants run on ``cpus`` (a bot started
    confined to fewer); returns how many threads took it. Speed only: a thread that
    is gone, or refuses, is passed over, and one started during the walk keeps the
    CPUs of the thread that started it."""
    done = 0
    for tid in _tree_tids(pid):
        try:
            os.sched_setaffinity(tid, cpus)
        except OSError:
            continue
        done += 1
    return done


def slice_tree(pid: int, ns: int) -> int:
    """Ask for time slices of ``ns`` nanoseconds (0: the kernel's default) for every
    thread of ``pid`` and its descendants; threads and processes they start later
    inherit it. Returns how many threads took it: speed only, like spread_tree."""
    return sum(set_slice(tid, ns) for tid in _tree_tids(pid))


class _SchedAttr(ctypes.Structure):
    _fields_ = [  # struct sched_attr, first version (48 bytes)
        ("size", ctypes.c_uint32),
        ("sched_policy", ctypes.c_uint32),
        ("sched_flags", ctypes.c_uint64),
        ("sched_nice", ctypes.c_int32),
        ("sched_priority", ctypes.c_uint32),
        ("sched_runtime", ctypes.c_uint64),
        ("sched_deadline", ctypes.c_uint64),
        ("sched_period", ctypes.c_uint64),
    ]


# (sched_setattr, sched_getattr) on this machine; elsewhere no slice is asked for.
_SCHED_ATTR_CALLS = {"x86_64": (314, 315), "aarch64": (274, 275), "riscv64": (274, 275)}.get(
    os.uname().machine
)
_FAIR_POLICIES = (os.SCHED_OTHER, os.SCHED_BATCH)


def set_slice(tid: int, ns: int) -> bool:
    """Ask the kernel to run thread ``tid`` (0: the calling one) in time slices of
    ``ns`` nanoseconds (0: the default), keeping its policy and nice value. Linux
    6.12 and later take the request (sched_attr.sched_runtime of a fair task, kept
    between 0.1 and 100 ms); older kernels accept and ignore it. False where it
    cannot be asked: another architecture, a real-time thread, a thread that is gone
    or not ours."""
    if _SCHED_ATTR_CALLS is None:
        return False
    setattr_nr, getattr_nr = _SCHED_ATTR_CALLS
    libc = _libc()
    attr = _SchedAttr()
    size = ctypes.sizeof(attr)
    if libc.syscall(ctypes.c_long(getattr_nr), tid, ctypes.byref(attr), size, 0) != 0:
        return False
    if attr.sched_policy not in _FAIR_POLICIES:
        return False
    attr.size, attr.sched_flags, attr.sched_runtime = size, 0, ns
    return libc.syscall(ctypes.c_long(setattr_nr), tid, ctypes.byref(attr), 0) == 0


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
    for p in _descendants(pid):
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


# PF_EXITING from the kernel's sched.h: the task is inside do_exit().
_PF_EXITING = 0x4


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
# the last. (A fixed 2 ms was much of a short match's teardown, with the CPU idle.)
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
            for p in _descendants(pid):
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
            candidates = set(hit) | set(_descendants(pid)) | set(_group_members(pid))
            for p in candidates:
                ident = _identity(p)
                if ident is None or (p in hit and hit[p] != ident[1]):
                    continue  # gone, a zombie, or the pid was reused by a stranger
                hit.setdefault(p, ident[1])
                _signal(p, signal.SIGKILL)
                live.append(p)
            if not live or time.monotonic() > deadline:
                break
            # SIGKILLed processes need a moment to exit: usually well under a
            # millisecond, so wait briefly first, then longer.
            time.sleep(pause)
            pause = min(2 * pause, _LAST_PAUSE)
    except Exception:  # teardown must never fail the match
        pass
    if len(_doomed) + len(hit) > _DOOMED_MAX:
        _doomed.clear()  # only a memory bound; entries are normally removed on reaping
    _doomed.update(hit)
    return len(hit)


_subreaper: bool | None = None


def enable_subreaper() -> bool:
    """Make orphaned descendants re-parent to this process (once); True on success."""
    global _subreaper
    if _subreaper is None:
        try:
            _subreaper = _libc().prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
        except (OSError, AttributeError):
            _subreaper = False
    return _subreaper


def after_spawn(pid: int) -> bool:
    """Best-effort ``oom_score_adj = 1000`` for the bot's tree (the launcher does it too)."""
    ok = True
    for p in _descendants(pid):
        try:
            with open(f"/proc/{p}/oom_score_adj", "w") as f:
                f.write("1000")
        except OSError:
            ok = False
    return ok


def _describe(pid: int) -> str:
    """ "pid cmdline", plus the bot marker when the process carries one (for attribution)."""
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
    key = MARKER_ENV.encode() + b"="
    for var in _read(f"{where}/environ").split(b"\0"):
        if var.startswith(key):
            text += f" [{var[len(key) :].decode('utf-8', 'replace')[:80]}]"
            break
    return text


def sweep_escaped(exclude_pids: set[int], timeout: float = 2.0) -> list[str]:
    """Kill and reap this process's children that are not managed bots.

    With :func:`enable_subreaper` on, a bot's orphaned descendants (``setsid`` daemons,
    double forks) become our children; call this after each teardown. Each one is
    SIGKILLed with its tree and reaped by its own pid (never ``waitpid(-1)``, which
    could steal a managed bot's exit status). Returns "pid cmdline [marker]" for each
    escapee: a child that was still alive and that :func:`kill_tree` had not already
    killed. Zombies, processes already inside exit, and processes of a torn-down tree
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
                    found[p] = _describe(p)
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
