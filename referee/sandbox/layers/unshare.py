"""``unshare``: user, pid, net, mount, ipc and uts namespaces made by the launcher
shim itself (no network; the referee is invisible and cannot be signalled), plus a
Landlock filesystem policy when the kernel supports Landlock, and the seccomp filter.

In its own mount namespace the shim puts fresh tmpfs over the host's shared places
(/tmp, /dev/shm of ``Limits.tmpfs_mib`` and ``Limits.disk_files`` inodes each;
/run, /var/run, /var/tmp empty and read-only), so that no host file or Unix socket
there is in sight, and a tmpfs of ``Limits.disk_mib`` over the scratch directory,
with ``Limits.disk_files`` inodes: the kernel caps the bot's disk (ENOSPC), its size
("disk") and its entries ("inodes"), and the referee need not read it. Pathname Unix
sockets elsewhere on the host stay visible, so the filter refuses socket(AF_UNIX)
(socketpair stays), as in every layer but basic.

The namespaces are made by the shim with unshare(2), not by util-linux unshare: that
tool waits for the bot holding its stdin and stdout, so a bot closing them would
never be noticed. The shim's waiting parent closes them.
"""

from __future__ import annotations

from typing import Any

import msgspec

from ..base import (
    MIB,
    LaunchPlan,
    Layer,
    Prefix,
    announce,
    bot_filter,
    common_tools,
    limits_prefix,
    require_userns,
    with_seccomp,
)
from ..paths import landlock_abi, landlock_policy


class Unshare:
    name = "unshare"
    rank = 20
    private_tmp = False

    def probe(self) -> Layer:
        tools = common_tools()
        require_userns()
        abi = landlock_abi()
        isolation = ["net", "pid", "signals", "proc", "tmpfs", "disk", "inodes"]
        desc = "unshare(2) user/pid/net/mount/ipc/uts namespaces (Python shim)"
        if abi >= 1:
            isolation.append("fs")
            desc += f" + landlock ABI {abi}"
        layer = with_seccomp(
            Layer("unshare", desc, None, tuple(isolation), landlock_abi=abi, tools=tools)
        )
        if "syscalls" in layer.isolation:
            # Host Unix sockets outside the hidden places: out of reach only because
            # the filter refuses socket(AF_UNIX).
            layer = msgspec.structs.replace(layer, isolation=(*layer.isolation, "unix"))
        return layer

    def launch_prefix(self, plan: LaunchPlan) -> Prefix:
        layer = plan.layer
        scratch = str(plan.scratch)
        tmpfs_bytes = plan.limits.tmpfs_mib * MIB
        # Each writable tmpfs has the entry limit as its inode count, as the scratch
        # tmpfs has: without one, a tmpfs takes half the host's RAM pages in inodes.
        inodes = plan.limits.disk_files
        spec: dict[str, Any] = {
            "namespaces": True,
            "mounts": {
                "sized": [("/tmp", tmpfs_bytes, inodes), ("/dev/shm", tmpfs_bytes, inodes)],
                "empty": ["/run", "/var/run", "/var/tmp"],
                "scratch": (scratch, plan.limits.disk_mib * MIB, plan.limits.disk_files),
                "keep": [p for p in plan.reach or plan.ro_paths if p != scratch],
            },
        }
        if layer.landlock_abi >= 1:
            spec["landlock"] = landlock_policy(layer.landlock_abi, plan.ro_paths, plan.scratch)
        if layer.seccomp:
            # Installed by the shim last, just before it execs the bot (it still mounts).
            spec["seccomp"] = bot_filter(sockets="netns")
        return Prefix(limits_prefix(plan, spec, by_shim=True) + announce(layer))


KIND = Unshare()
