"""``unshare``: user, pid, net, mount, ipc and uts namespaces made by the launcher
shim itself (no network; the referee is invisible and cannot be signalled), plus a
Landlock filesystem policy when the kernel supports Landlock, and the seccomp filter.

The namespaces are made by the shim with unshare(2), not by util-linux unshare: that
tool waits for the bot holding its stdin and stdout, so a bot closing them would
never be noticed. The shim's waiting parent closes them.
"""

from __future__ import annotations

from typing import Any

from ..base import (
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
        isolation = ["net", "pid", "signals", "proc"]
        desc = "unshare(2) user/pid/net/mount/ipc/uts namespaces (Python shim)"
        if abi >= 1:
            isolation.append("fs")
            desc += f" + landlock ABI {abi}"
        layer = Layer("unshare", desc, None, tuple(isolation), landlock_abi=abi, tools=tools)
        return with_seccomp(layer)

    def launch_prefix(self, plan: LaunchPlan) -> Prefix:
        layer = plan.layer
        spec: dict[str, Any] = {"namespaces": True}
        if layer.landlock_abi >= 1:
            spec["landlock"] = landlock_policy(layer.landlock_abi, plan.ro_paths, plan.scratch)
        if layer.seccomp:
            # Installed by the shim last, just before it execs the bot (it still mounts).
            spec["seccomp"] = bot_filter()
        return Prefix(limits_prefix(plan, spec, by_shim=True) + announce(layer))


KIND = Unshare()
