"""The hostile bot zoo: each bot, how to start it, and the verdict it must get per layer.

Every bot plays normally until round 3 (``BAD_ROUND``) and then does its one bad thing.
Expectations depend on what the containment layer isolates (``Layer.isolation`` from
``referee.sandbox``): "net", "tcp", "sockets", "pid", "fs", "signals", "proc", "tmpfs",
"syscalls", "unix" (no host Unix socket in reach), "disk" (the kernel caps the
writable places: tmpfs of the disk limit), "inodes" (and the scratch tmpfs's
entries); and on what the host's cgroups give each
bot (``referee.sandbox.cgroups``): "cgroup" (a cgroup of its own: escapees stay in
it), "memcg" (the kernel's memory limit: every page charged, shmem and memfd
included), "pidscg" (the kernel's exact process limit). Run ``python
tests/zoo/catalog.py`` to print the table for the four layers, with and without
cgroups.

Command templates use these placeholders, filled in by the test at run time (no
machine-specific paths are written here):

``{python}`` the interpreter running the tests; ``{node}`` node; ``{zoo}`` this
directory; ``{bin}`` the compiled C bots (``tests/zoo/bin``, built by ``make -C
tests/zoo``); ``{tcp_port}``/``{udp_port}`` the test's listeners on 127.0.0.1;
``{target}`` a path outside the bot's scratch dir; ``{secret}`` a file in a sibling
bot's directory; ``{secret_name}`` a variable in the referee's environment;
``{unix_tmp}``/``{unix_dir}``/``{unix_abstract}`` the test's Unix socket listeners (a
0777 socket in /tmp, one in a temporary directory, an abstract name).

Paths the bot must *not* get access to are passed as ``--name=PATH``, never as bare
arguments: the launcher exposes the directory of the first bare path argument (the
bot's own script), and the match driver may pick a bare path as the bot's directory.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

_SLOW_MOVE = ("--move-timeout", "20")
_SMALL_MEMORY = ("--memory-mib", "256", *_SLOW_MOVE)

ZOO_DIR = Path(__file__).resolve().parent
BIN_DIR = ZOO_DIR / "bin"
BAD_ROUND = 3

# Bots whose bad thing is on the wire or in the clock (what they print, or when):
# the referee judges them the same way under every layer, so the suite plays them
# under the layer ``--sandbox auto`` picks only. Crashes, closed pipes and
# everything a layer contains (processes, memory, files, network, signals) are
# played under every layer.
LAYER_INDEPENDENT = frozenset(
    {
        "hang",
        "busy",
        "no_read",
        "long_line",
        "bad_utf8",
        "lone_surrogate",
        "nan",
        "deep_array_64k",
        "big_int",
        "dup_keys",
        "extra_field",
        "wrong_round",
        "stdout_flood",
        "stderr_flood",
    }
)

# The isolation sets of the layers as built on a machine with Landlock ABI >= 6 (see
# referee.sandbox); tests use the real Layer.isolation of the machine they run on.
TYPICAL_ISOLATION = {
    "bwrap": frozenset(
        {"net", "pid", "fs", "signals", "proc", "tmpfs", "syscalls", "unix", "disk"}
    ),
    "unshare": frozenset(
        {"net", "pid", "signals", "proc", "fs", "syscalls", "unix", "disk", "inodes", "tmpfs"}
    ),
    "landlock": frozenset({"fs", "proc", "tcp", "signals", "syscalls", "sockets", "unix"}),
    "basic": frozenset({"syscalls"}),
}


# What a host whose cgroups the referee may use adds to every layer (root here).
CGROUP_TAGS = frozenset({"cgroup", "memcg", "pidscg"})

# What a root referee gives every bot beyond its layer: a uid of its own (which also
# keeps the referee's and the other bots' processes out of its signals and /proc)
# and, where the host has them, cgroups. An unprivileged referee's bots share its
# uid and get no cgroup: the catalog's expectations without these keys are theirs.
ROOT_TAGS = frozenset({"uid", "signals", "proc"}) | CGROUP_TAGS

# Bots that get the same verdict from an unprivileged referee by other means: their
# memory and processes sampled instead of counted by a cgroup (memhog, fork_bomb),
# their tree killed by a walk instead of with its cgroup (setsid_tree), their System
# V objects and keys removed by their pids or namespace, or left to the user's own
# keyring, instead of by their own uid (ipc_leftovers, keyring_leftover).
SAME_VERDICT_OTHER_MEANS = frozenset(
    {"memhog", "fork_bomb", "setsid_tree", "ipc_leftovers", "keyring_leftover"}
)


@dataclass(frozen=True)
class Expect:
    """What the bot's verdict must look like."""

    status: frozenset[str]  # any of these
    disqualified: bool
    round: int | None = None  # round of the first fault, when it is fixed
    stderr: tuple[str, ...] = ()  # substrings of the stderr kept (placeholders allowed)
    exit_code: int | None = None
    escaped: bool = False  # verdict.escaped_processes must be non-empty
    # The signal that killed it, and the first fault's exact words: one text per kind
    # of fault, the same in every layer.
    signal: str | None = None
    detail: str | None = None


@dataclass(frozen=True)
class Skip:
    reason: str


@dataclass(frozen=True)
class ZooBot:
    name: str
    argv: tuple[str, ...]  # template, see the module docstring
    expect: Callable[[frozenset[str]], Expect | Skip]  # isolation set -> expectation
    needs: str = "python"  # "python", "c" or "node"
    referee_args: tuple[str, ...] = ()  # extra CLI options for this bot's match
    note: str = ""

    @property
    def program_index(self) -> int:
        """Index in ``argv`` of the bot's own file (in the command line of its processes)."""
        return 0 if self.needs == "c" else 1


def _py(script: str, *args: str) -> tuple[str, ...]:
    return ("{python}", "{zoo}/" + script, *args)


def _c(binary: str) -> tuple[str, ...]:
    return ("{bin}/" + binary,)


def _node(script: str) -> tuple[str, ...]:
    return ("{node}", "{zoo}/node/" + script)


def _always(expect: Expect | Skip) -> Callable[[frozenset[str]], Expect | Skip]:
    return lambda isolation: expect


def ok(*stderr: str) -> Expect:
    return Expect(frozenset({"ok"}), disqualified=False, stderr=stderr)


def fatal(
    *status: str,
    round: int | None = BAD_ROUND,
    exit_code: int | None = None,
    signal: str | None = None,
) -> Expect:
    detail = None
    if signal is not None:
        detail = f"the bot exited (killed by {signal})"
    elif exit_code is not None:
        detail = f"the bot exited (exit code {exit_code})"
    return Expect(
        frozenset(status),
        disqualified=True,
        round=round,
        exit_code=exit_code,
        signal=signal,
        detail=detail,
    )


def round_fault(status: str) -> Expect:
    """A fault that costs one round; the bot plays on and is not disqualified."""
    return Expect(frozenset({status}), disqualified=False, round=BAD_ROUND)


def _escape(isolation: frozenset[str]) -> Expect:
    # In a PID namespace the leftover tree dies with the namespace's pid 1; without
    # one it is re-parented to the referee (a subreaper) and swept after teardown.
    if "pid" in isolation:
        return ok()
    return Expect(frozenset({"escaped_process"}), disqualified=False, escaped=True)


def _hidden_memory(probe: str) -> Callable[[frozenset[str]], Expect]:
    # Pages no resident set shows (a memfd written, never mapped; SysV segments
    # detached): only a memory cgroup counts them. Without one they go unseen, a
    # limit sampled from /proc cannot do better (docs/security.md).
    def expect(isolation: frozenset[str]) -> Expect:
        if "memcg" in isolation:
            return fatal("memory_limit", round=None)
        return ok(f"{probe}: held 512 MiB")

    return expect


def _escapee_hog(isolation: frozenset[str]) -> Expect:
    # Its cgroup, or a PID namespace (the escapee is re-parented to the namespace's
    # pid 1, inside the tree the watchdog reads), keep counting its processes and
    # memory; without either the sweep finds it at the end.
    if {"memcg", "pidscg", "pid"} & isolation:
        return fatal("memory_limit", "process_limit", round=None)
    return Expect(frozenset({"escaped_process"}), disqualified=False, escaped=True)


def _framing(isolation: frozenset[str]) -> Expect:
    # It dropped its marker; the test checks that the opponent is never charged.
    if "pid" in isolation:
        return ok()  # it died with the namespace
    if "cgroup" in isolation or "uid" in isolation:
        # Its cgroup or its own uid says whose it is.
        return Expect(frozenset({"escaped_process"}), disqualified=False, escaped=True)
    return ok()  # nothing ties it to one bot: recorded, charged to no one


def _fork_bomb(isolation: frozenset[str]) -> Expect:
    if "pidscg" not in isolation and "uid" not in isolation:
        # An unprivileged referee's RLIMIT_NPROC refuses the fork past the limit
        # (EAGAIN), and a bot that does not catch it may die of it (exit code 1) before
        # a watchdog reading counts its tree: disqualified all the same, but no counter
        # says the kernel refused it a fork (as the pids cgroup's does), so the fault
        # is the crash (docs/security.md, "As root and as an unprivileged user").
        return fatal("memory_limit", "process_limit", "timeout", "crash", round=None)
    return fatal("memory_limit", "process_limit", "timeout", round=None)


def _fork_cap(isolation: frozenset[str]) -> Expect:
    if "pidscg" in isolation:
        # The kernel refused the fork past the limit: exactly at it.
        expect = fatal("process_limit", round=None)
        return Expect(expect.status, True, None, stderr=("then refused",))
    return fatal("process_limit", "memory_limit", "timeout", round=None)


def _blocked_if(key: str, label: str, otherwise: str) -> Callable[[frozenset[str]], Expect]:
    # A bot of its own uid ("uid": the referee is root) is refused by file permissions
    # what is not its own: the sibling's secret is 0600, the outside directory root's.
    def expect(isolation: frozenset[str]) -> Expect:
        blocked = key in isolation or (key == "fs" and "uid" in isolation)
        return ok(f"{label}: blocked" if blocked else f"{label}: {otherwise}")

    return expect


def _syscalls(isolation: frozenset[str]) -> Expect:
    # Without the filter the outcome depends on the machine (a sysctl may refuse
    # io_uring, Yama may refuse ptrace): only the filter's promise is checked.
    if "syscalls" not in isolation:
        return ok()
    return ok(*(f"{probe}: blocked" for probe in SYSCALL_PROBES))


SYSCALL_PROBES = ("ptrace", "io_uring", "keyring", "affinity", "slice", "mount")

# tests/zoo/c/kernel_surface.c: the kernel surface behind no-capability walls.
KERNEL_PROBES = (
    "userns",
    "clone3-userns",
    "netlink-netfilter",
    "modify_ldt",
    "personality",
    "vsock",
    "memfd_secret",
    "io_setup",
    "io_uring",
    "pidfd_getfd",
    "kcmp",
    "keyctl",
)


def _kernel_surface(isolation: frozenset[str]) -> Expect:
    # Without the filter the outcome depends on the machine (the kernel's
    # configuration, sysctls): only the filter's promise is checked.
    if "syscalls" not in isolation:
        return ok()
    return ok(*(f"{probe}: blocked" for probe in KERNEL_PROBES))


def _unix(isolation: frozenset[str]) -> Expect:
    # A connected pair works everywhere (runtimes use one).
    if "unix" in isolation:
        return ok(
            "unix-tmp: blocked", "unix-dir: blocked", "unix-abstract: blocked", "socketpair: ok"
        )
    return ok("unix-tmp: connected", "unix-dir: connected", "socketpair: ok")


def _disk_hog(isolation: frozenset[str]) -> Expect:
    # --disk-mib 16: the kernel refuses the writes past it (a tmpfs of 16 MiB), or the
    # disk watcher finds them.
    if "disk" in isolation:
        return ok("disk: stopped (OSError)")
    return fatal("disk_limit", round=None)


def _deep_disk(isolation: frozenset[str]) -> Expect:
    # --disk-mib 16: a tmpfs of 16 MiB refuses the 32 MiB at the chain's bottom.
    if "disk" in isolation:
        return ok("deep_disk_hog: stopped (OSError)")
    return fatal("disk_limit", round=None)


def _late_disk(isolation: frozenset[str]) -> Expect:
    # --disk-mib 16: a tmpfs of 16 MiB refuses the 64 MiB allocation.
    if "disk" in isolation:
        return ok("late_disk_hog: OSError")
    return fatal("disk_limit", round=20)


def _fallocate(isolation: frozenset[str]) -> Expect:
    # --disk-mib 64: a tmpfs of 64 MiB takes four files of 16 MiB.
    if "disk" in isolation:
        return ok("fallocate: stopped after 64 MiB (ENOSPC)")
    return fatal("disk_limit", round=None)


def _file_flood(isolation: frozenset[str]) -> Expect:
    # 20000 empty files > disk_files (16384): a tmpfs with that many inodes refuses
    # the rest; elsewhere the watchdog counts them (a walk, or bwrap's tmpfs's count).
    if "inodes" in isolation:
        return ok("files: stopped after 16383 (ENOSPC)")
    return fatal("disk_limit", round=None)


def _tcp(isolation: frozenset[str]) -> Expect:
    contained = bool({"net", "tcp", "sockets"} & isolation)
    return ok("tcp: blocked" if contained else "tcp: connected")


def _shm(isolation: frozenset[str]) -> Expect:
    # bwrap and unshare give /dev/shm its own sized tmpfs; Landlock does not allow it.
    contained = "tmpfs" in isolation or "fs" in isolation
    return ok("shm: blocked" if contained else "shm: wrote 200 MiB")


def _privileges(isolation: frozenset[str]) -> Expect:
    # Never root, never a capability, so never a raw socket nor the host's name, in
    # any layer; priorities are refused by the seccomp filter, or by another uid's
    # missing rights (an unprivileged referee's basic bot may renice its own user's
    # processes: docs/security.md).
    expected = ["root: no", "caps: none", "raw: blocked", "hostname: blocked"]
    if "syscalls" in isolation or "uid" in isolation:
        expected += ["renice-self: blocked", "renice-other: blocked"]
    return ok(*expected)


def _write(isolation: frozenset[str]) -> Expect:
    if "fs" in isolation or "uid" in isolation:
        return ok("write-target: blocked", "write-botdir: blocked")
    return ok("write-target: ok", "write-botdir: ok")


def _signal(isolation: frozenset[str]) -> Expect | Skip:
    if "signals" not in isolation:
        return Skip("this layer cannot stop kill(getppid()): it would kill the referee")
    return ok("kill-parent: blocked")


def _environ(isolation: frozenset[str]) -> Expect:
    if "proc" in isolation:
        return ok("{secret_name} not found")
    return ok("environ: found {secret_name}")


ZOO: tuple[ZooBot, ...] = (
    ZooBot("rock", _py("rock.py"), _always(ok()), note="the well-behaved opponent"),
    # -- time and CPU
    ZooBot("hang", _py("hang.py"), _always(fatal("timeout"))),
    ZooBot("busy", _py("busy.py"), _always(fatal("timeout"))),
    ZooBot(
        "catch_sigxcpu",
        _py("catch_sigxcpu.py"),
        _always(fatal("cpu_limit", round=None)),
        # 0.3 s of CPU took over 2 s of wall time on a loaded machine: the CPU budget,
        # not the clock, must be what stops it.
        referee_args=("--cpu-s", "1", *_SLOW_MOVE),
        note="burns 0.3 s per move from round 3 and ignores SIGXCPU",
    ),
    ZooBot("no_read", _py("no_read.py"), _always(fatal("timeout"))),
    # -- pipes and exits
    ZooBot("close_stdin", _py("close_stdin.py"), _always(fatal("closed_stdin", round=4))),
    ZooBot("close_stdout", _py("close_stdout.py"), _always(fatal("closed_stdout"))),
    ZooBot("exit3", _py("exit3.py"), _always(fatal("crash", exit_code=3))),
    ZooBot(
        "fake_launcher",
        _py("fake_launcher.py"),
        _always(
            Expect(
                frozenset({"handshake"}),
                disqualified=True,
                round=0,
                stderr=("referee-sandbox: OSError", "bwrap: Creating new namespace failed"),
                exit_code=126,
            )
        ),
        note="imitates a launcher's failure at start-up, which would void the match",
    ),
    ZooBot("segv", _py("segv.py"), _always(fatal("crash", signal="SIGSEGV"))),
    # (abort as a PID namespace's pid 1 ends in SIGSEGV: see abort.py)
    ZooBot("abort", _py("abort.py"), _always(fatal("crash"))),
    ZooBot("c_segv", _c("segv"), _always(fatal("crash", signal="SIGSEGV")), needs="c"),
    ZooBot("c_abort", _c("abort"), _always(fatal("crash")), needs="c"),
    # -- memory and processes
    # Filling memory takes a while on a loaded machine: a long move limit makes sure
    # the memory watchdog, not the clock, is what stops these bots. The limit is a
    # quarter of the default: the watchdog works the same at any limit, and touching
    # a whole GiB of pages cost each match about a second of CPU.
    ZooBot(
        "memhog",
        _py("memhog.py"),
        _always(fatal("memory_limit", round=None)),
        referee_args=_SMALL_MEMORY,
    ),
    ZooBot(
        "ghost_memhog",
        _py("ghost_memhog.py"),
        _always(fatal("memory_limit", round=None)),
        referee_args=_SMALL_MEMORY,
    ),
    ZooBot(
        "c_memhog",
        _c("memhog"),
        _always(fatal("memory_limit", round=None)),
        needs="c",
        referee_args=_SMALL_MEMORY,
    ),
    ZooBot(
        "node_memhog",
        _node("memhog.js"),
        _always(fatal("memory_limit", round=None)),
        needs="node",
        referee_args=_SMALL_MEMORY,
    ),
    # Writing 200 MiB to a tmpfs took over 0.5 s on a busy CI machine: the verdict must
    # come from the containment, not the clock.
    ZooBot("shm_hog", _py("shm_hog.py"), _shm, referee_args=_SLOW_MOVE),
    ZooBot(
        "disk_hog",
        _py("disk_hog.py"),
        _disk_hog,
        referee_args=("--disk-mib", "16", "--rounds", "200"),
        note="a thread writes 96 MiB into the scratch directory while the bot answers",
    ),
    ZooBot(
        "deep_disk_hog",
        _py("deep_disk_hog.py"),
        _deep_disk,
        referee_args=("--disk-mib", "16", *_SLOW_MOVE),
        note="32 MiB below 1108 nested directories, where a walk by path cannot reach",
    ),
    ZooBot(
        "late_disk_hog",
        _py("late_disk_hog.py"),
        _late_disk,
        referee_args=("--disk-mib", "16"),
        note="64 MiB allocated just before its last reply",
    ),
    ZooBot(
        "fallocate_hog",
        _py("fallocate_hog.py"),
        _fallocate,
        referee_args=("--disk-mib", "64", *_SLOW_MOVE),
        note="1 GiB by fallocate in milliseconds, kept",
    ),
    ZooBot(
        "file_flood",
        _py("file_flood.py"),
        _file_flood,
        referee_args=_SLOW_MOVE,
        note="20000 empty files: over the entry limit, not the size",
    ),
    # While the bomb forks its 400 processes, the opponent's one reply of that round
    # came later than 0.5 s in two of three full suites on a loaded two-CPU machine
    # (2026-11-29; six zoo matches and the other test worker beside it), and the
    # opponent was put out of time: the bomb's verdict must come from the
    # containment (its process or memory limit), not the clock, and the opponent's
    # from its own behaviour.
    ZooBot(
        "fork_bomb",
        _py("fork_bomb.py"),
        _fork_bomb,
        referee_args=_SLOW_MOVE,
        note="400 processes; copy-on-write pages count in each one's RSS",
    ),
    ZooBot(
        "fork_cap",
        _py("fork_cap.py"),
        _fork_cap,
        referee_args=_SLOW_MOVE,
        note="forks until a fork is refused (400 at most) and says how many it made",
    ),
    ZooBot(
        "memfd_hog",
        _py("memfd_hog.py"),
        _hidden_memory("memfd"),
        referee_args=_SMALL_MEMORY,
        note="512 MiB written to memfds, never mapped",
    ),
    ZooBot(
        "sysv_hog",
        _py("sysv_hog.py"),
        _hidden_memory("sysv"),
        referee_args=_SMALL_MEMORY,
        note="512 MiB in detached SysV segments",
    ),
    ZooBot(
        "escapee_hog",
        _py("escapee_hog.py"),
        _escapee_hog,
        referee_args=_SMALL_MEMORY,
        note="a setsid grandchild with 300 processes and 384 MiB",
    ),
    ZooBot(
        "framing_escapee",
        _py("framing_escapee.py"),
        _framing,
        note="a setsid grandchild that drops its marker: never charged to the opponent",
    ),
    ZooBot("setsid_tree", _py("setsid_tree.py"), _escape),
    # Its round-3 reply came later than 0.5 s once with six matches on one CPU.
    ZooBot("c_fork_tree", _c("fork_tree"), _escape, needs="c", referee_args=_SLOW_MOVE),
    ZooBot("daemon_stdout", _py("daemon_stdout.py"), _escape),
    ZooBot("ghost_daemon", _py("ghost_daemon.py"), _escape),
    # -- what a teardown must survive and remove (every match still ends with its
    # result and its footer; the scratch directory and IPC objects are gone after it)
    ZooBot(
        "deep_tree",
        _py("deep_tree.py"),
        _always(ok("deep_tree: 3000 levels")),
        referee_args=_SLOW_MOVE,  # 3000 mkdirs took over 0.5 s on a loaded machine
        note="3000 nested directories: deeper than PATH_MAX and the recursion limit",
    ),
    ZooBot("hostile_modes", _py("hostile_modes.py"), _always(ok("hostile_modes: left"))),
    ZooBot("ptrace_fork", _py("ptrace_fork.py"), _always(ok("ptrace_fork: forked"))),
    ZooBot("stopped_zombies", _py("stopped_zombies.py"), _escape),
    ZooBot("ipc_leftovers", _py("ipc_leftovers.py"), _always(ok("ipc: made"))),
    ZooBot("keyring_leftover", _py("keyring_leftover.py"), _always(ok("keyring: "))),
    # -- output
    ZooBot(
        "stdout_flood",
        _py("stdout_flood.py"),
        _always(fatal("protocol_error", round=4)),
        note="the extra lines answer rounds 4, 5 and 6, in order, with round 3: three "
        "protocol errors",
    ),
    ZooBot("long_line", _py("long_line.py"), _always(fatal("line_too_long"))),
    ZooBot(
        "stderr_flood",
        _py("stderr_flood.py"),
        _always(ok("stderr_flood: 4 MiB written")),
        referee_args=_SLOW_MOVE,
    ),
    # -- malformed replies (protocol/README.md: each is a lost round, not a disqualification)
    ZooBot("bad_utf8", _py("bad_utf8.py"), _always(round_fault("protocol_error"))),
    ZooBot("lone_surrogate", _py("lone_surrogate.py"), _always(round_fault("protocol_error"))),
    ZooBot("nan", _py("nan.py"), _always(round_fault("protocol_error"))),
    ZooBot(
        "deep_array",
        _py("deep_array.py"),
        _always(fatal("line_too_long")),
        note="100,000 deep is 200 KB: over the 64 KiB line limit before any parsing",
    ),
    ZooBot("deep_array_64k", _py("deep_array_64k.py"), _always(round_fault("protocol_error"))),
    ZooBot("big_int", _py("big_int.py"), _always(round_fault("protocol_error"))),
    ZooBot("dup_keys", _py("dup_keys.py"), _always(ok()), note="last key wins"),
    ZooBot("extra_field", _py("extra_field.py"), _always(round_fault("protocol_error"))),
    ZooBot("wrong_round", _py("wrong_round.py"), _always(round_fault("protocol_error"))),
    # -- escaping the sandbox
    ZooBot("tcp_connect", _py("tcp_connect.py", "--port={tcp_port}"), _tcp),
    ZooBot("udp_send", _py("udp_send.py", "--port={udp_port}"), _always(ok())),
    ZooBot("write_outside", _py("write_outside.py", "--target={target}"), _write),
    ZooBot(
        "read_sibling",
        _py("read_sibling.py", "--secret={secret}"),
        _blocked_if("fs", "read-sibling", "ok"),
    ),
    ZooBot("signal_referee", _py("signal_referee.py"), _signal),
    ZooBot("read_environ", _py("read_environ.py", "--name={secret_name}"), _environ),
    ZooBot("refused_syscalls", _py("refused_syscalls.py"), _syscalls),
    ZooBot("privileges", _py("privileges.py"), _privileges),
    ZooBot(
        "unix_connect",
        _py(
            "unix_connect.py",
            "--tmp-socket={unix_tmp}",
            "--dir-socket={unix_dir}",
            "--abstract={unix_abstract}",
        ),
        _unix,
    ),
    ZooBot("kernel_surface", _c("kernel_surface"), _kernel_surface, needs="c"),
    # -- other runtimes
    ZooBot("node_rock", _node("rock.js"), _always(ok()), needs="node"),
)

BY_NAME = {bot.name: bot for bot in ZOO}


def expectation(bot: ZooBot, isolation: frozenset[str] | tuple[str, ...]) -> Expect | Skip:
    return bot.expect(frozenset(isolation))


def depends_on_root(bot: ZooBot, layer: str) -> bool:
    """Whether the referee's being root (ROOT_TAGS) changes the bot's expected
    verdict in ``layer`` (as built on a typical machine, TYPICAL_ISOLATION), or the
    means that contain it (SAME_VERDICT_OTHER_MEANS)."""
    typical = TYPICAL_ISOLATION[layer]
    changed = expectation(bot, typical | ROOT_TAGS) != expectation(bot, typical)
    return changed or bot.name in SAME_VERDICT_OTHER_MEANS


def _describe(e: Expect | Skip) -> str:
    if isinstance(e, Skip):
        return "skip"
    text = "|".join(sorted(e.status))
    if e.disqualified:
        text += " DQ"
    return text


if __name__ == "__main__":
    for tags, title in ((frozenset(), "without cgroups"), (CGROUP_TAGS, "with cgroups")):
        print(title)
        layers = list(TYPICAL_ISOLATION)
        print(f"{'bot':16}" + "".join(f"{name:34}" for name in layers))
        for bot in ZOO:
            row = [_describe(expectation(bot, TYPICAL_ISOLATION[name] | tags)) for name in layers]
            print(f"{bot.name:16}" + "".join(f"{cell:34}" for cell in row))
