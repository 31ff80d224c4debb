"""Containment for untrusted bots: launch prefixes, resource limits, process-tree control.

This package only *prepares* processes; it never runs an event loop. The match driver
builds a :class:`Launch` with :func:`prepare_launch` and starts it itself with
``subprocess.Popen(launch.argv, env=launch.env, cwd=launch.cwd, start_new_session=True)``
from the main thread. (``setpriv --pdeathsig`` and ``bwrap --die-with-parent`` fire when
the *thread* that forked the bot exits; trio's ``open_process`` forks from a worker
thread that idles out and would take the bot with it.)

Modules:

``layers/``
    one module per containment layer (bwrap, unshare, landlock, basic), each a
    :class:`base.LayerKind`: a probe and a launch prefix. ``registry`` finds them;
    "auto" takes the strongest whose self-test passes (``choose``).
``base``
    the records (Limits, Layer, Launch) and the launch steps layers share: resource
    limits by util-linux (``prlimit ... -- setpriv --no-new-privs --pdeathsig KILL --
    choom -n 1000 --``) or by the launcher shim, and the announcement of the bot.
``shim``
    the launcher shim (``python -I -S -c <its source>``): limits, namespaces,
    Landlock and the seccomp filter, for layers that need them; then it execs the bot.
``seccomp``
    the system calls a contained bot may not make, as a filter program.
``paths``
    what a bot may see: its own files, its interpreter, host system entries.
``proctree``
    process-tree accounting (RSS, CPU) and teardown (kill_tree, the subreaper sweep).
``cgroups``
    a cgroup per bot where the host allows one: kernel-enforced memory and process
    limits, CPU weight, the kill of a whole tree, the bot's own peak memory.
``sched``
    CPU affinity and time slices for a bot's threads.
``identity``
    the unprivileged uid each bot runs as when the referee is root.
``cleanup``
    what a bot leaves behind, removed whatever it is: scratch trees of any depth and
    mode, System V IPC objects, and the scratch directories of a killed referee.
``disk``
    what a bot's writable places hold, walked with directory fds within a budget.

Every wrapper either execs the bot or lets go of its stdin and stdout, so that a bot
closing a pipe is noticed.
"""

from __future__ import annotations

from .base import (
    LAUNCH_TOKEN,
    MARKER_ENV,
    SHIM_FAILURE_EXIT,
    Launch,
    Layer,
    LayerKind,
    Limits,
    SandboxError,
)
from .cgroups import NO_CGROUPS, BotCgroup, CgroupHost, disk_enforcement, enforcement
from .cgroups import Reading as CgroupReading
from .cgroups import host as cgroup_host
from .choose import choose_layer
from .cleanup import (
    Scratch,
    clear_keyrings,
    remove_ipc,
    remove_owned,
    remove_tree,
    sweep_stale_scratch,
)
from .disk import DiskUsage, disk_usage, tmpfs_usage
from .fairness import FairShare
from .identity import (
    BotUnreachable,
    bot_uid_range,
    ever_leased,
    lease_held,
    lease_uid,
    release_uid,
)
from .launch import containment_record, prepare_launch
from .paths import landlock_abi
from .proctree import (
    TreeUsage,
    after_spawn,
    cpus_busy_s,
    describe_strays,
    enable_subreaper,
    kill_tree,
    live_strays,
    peak_vm_hwm_kib,
    release_tracee,
    sweep_escaped,
    tree_cpu_s,
    tree_usage,
    tree_wait_s,
)
from .registry import LAYERS, SANDBOX_CHOICES
from .sched import (
    carry_nice,
    group_nice_to_carry,
    session_nice,
    set_slice,
    slice_tree,
    spread_tree,
)

__all__ = [
    "LAUNCH_TOKEN",
    "LAYERS",
    "MARKER_ENV",
    "SANDBOX_CHOICES",
    "SHIM_FAILURE_EXIT",
    "Launch",
    "Scratch",
    "Layer",
    "LayerKind",
    "Limits",
    "SandboxError",
    "TreeUsage",
    "DiskUsage",
    "BotUnreachable",
    "BotCgroup",
    "NO_CGROUPS",
    "CgroupHost",
    "CgroupReading",
    "cgroup_host",
    "describe_strays",
    "disk_enforcement",
    "enforcement",
    "live_strays",
    "peak_vm_hwm_kib",
    "FairShare",
    "after_spawn",
    "carry_nice",
    "cpus_busy_s",
    "disk_usage",
    "tmpfs_usage",
    "choose_layer",
    "clear_keyrings",
    "containment_record",
    "enable_subreaper",
    "group_nice_to_carry",
    "kill_tree",
    "landlock_abi",
    "lease_held",
    "lease_uid",
    "prepare_launch",
    "release_tracee",
    "remove_ipc",
    "remove_owned",
    "remove_tree",
    "sweep_stale_scratch",
    "bot_uid_range",
    "ever_leased",
    "release_uid",
    "session_nice",
    "set_slice",
    "slice_tree",
    "spread_tree",
    "sweep_escaped",
    "tree_cpu_s",
    "tree_usage",
    "tree_wait_s",
]
