"""``landlock``: no namespaces. The launcher shim applies a Landlock policy (the
filesystem, TCP and, from ABI 6, signals) and the seccomp filter, then execs the bot.
Escaped processes are caught only by the subreaper sweep."""

from __future__ import annotations

from typing import Any

from .. import seccomp
from ..base import (
    LaunchPlan,
    Layer,
    Prefix,
    SandboxError,
    announce,
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
        warning = (
            "sandbox layer 'landlock': no namespaces. UDP is not blocked"
            + ("" if abi >= 4 else ", TCP is not blocked")
            + ("" if abi >= 6 else ", bots can signal the referee")
            + "; escaped processes are caught only by the subreaper sweep."
        )
        layer = Layer(
            "landlock",
            f"landlock ABI {abi} (Python shim)",
            warning,
            tuple(isolation),
            landlock_abi=abi,
            tools=tools,
        )
        return with_seccomp(layer)

    def launch_prefix(self, plan: LaunchPlan) -> Prefix:
        layer = plan.layer
        spec: dict[str, Any] = {
            "landlock": landlock_policy(layer.landlock_abi, plan.ro_paths, plan.scratch)
        }
        if layer.seccomp:
            # Installed by the shim last, just before it execs the bot.
            spec["seccomp"] = seccomp.filter_program()
        return Prefix(limits_prefix(plan, spec, by_shim=True) + announce(layer))


KIND = Landlock()
