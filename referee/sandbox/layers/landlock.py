"""``landlock``: no namespaces. The launcher shim applies a Landlock policy (the
filesystem, TCP and, from ABI 6, signals) and the seccomp filter, then execs the bot.
Escaped processes are caught only by the subreaper sweep."""

from __future__ import annotations

from typing import Any

import msgspec

from ..base import (
    LaunchPlan,
    Layer,
    Prefix,
    SandboxError,
    announce,
    bot_filter,
    common_tools,
    limits_prefix,
    with_seccomp,
)
from ..paths import landlock_abi, landlock_policy


class Landlock:
    name = "landlock"
    rank = 30
    private_tmp = False

    def probe(self) -> Layer:
        tools = common_tools()
        abi = landlock_abi()
        if abi < 1:
            raise SandboxError("Landlock is not supported by this kernel")
        isolation = ["fs", "proc"]
        if abi >= 4:
            isolation.append("tcp")
        if abi >= 6:
            isolation.append("signals")
        layer = with_seccomp(
            Layer(
                "landlock",
                f"landlock ABI {abi} (Python shim)",
                None,
                tuple(isolation),
                landlock_abi=abi,
                tools=tools,
            )
        )
        # The seccomp filter lets a bot create no socket here (socketpair only): no
        # UDP, no raw or packet sockets, no host Unix socket ("sockets", "unix").
        sockets = "syscalls" in layer.isolation
        if sockets:
            isolation = [*layer.isolation, "sockets", "unix"]
        else:
            isolation = list(layer.isolation)
        warning = (
            "sandbox layer 'landlock': no namespaces"
            + ("" if sockets else ". UDP and the host's Unix sockets are not blocked")
            + ("" if abi >= 4 or sockets else ", TCP is not blocked")
            + ("" if abi >= 6 else ", bots can signal the referee")
            + "; escaped processes are caught only by the subreaper sweep."
        )
        return msgspec.structs.replace(layer, isolation=tuple(isolation), warning=warning)

    def launch_prefix(self, plan: LaunchPlan) -> Prefix:
        layer = plan.layer
        spec: dict[str, Any] = {
            "landlock": landlock_policy(layer.landlock_abi, plan.ro_paths, plan.scratch)
        }
        if layer.seccomp:
            # Installed by the shim last, just before it execs the bot. No network
            # namespace and the host's file system in sight: no socket may be created
            # (socketpair may), so neither UDP nor the host's pathname Unix sockets.
            spec["seccomp"] = bot_filter(sockets="none")
        return Prefix(limits_prefix(plan, spec, by_shim=True) + announce(layer))


KIND = Landlock()
