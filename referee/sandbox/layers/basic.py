"""``basic``: resource limits, a clean environment, process-tree teardown and the
seccomp filter (installed by the launcher shim; sockets as an ordinary program's)
only.

It does not stop network use, file access or signals to the referee; the user is
told so loudly. The filter keeps the kernel's attack surface as small as in the
other layers: no new namespaces, no io_uring, keyrings, ptrace, ...
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
    limits_by,
    limits_prefix,
    with_seccomp,
)

_WARNING = (
    "sandbox layer 'basic': bots are NOT isolated. They can use the network, read "
    "and write your files, read other processes' /proc entries and signal the "
    "referee. Install bubblewrap (Debian/Ubuntu package 'bubblewrap') or enable "
    "unprivileged user namespaces for real isolation."
)


class Basic:
    name = "basic"
    rank = 40
    private_tmp = False

    def probe(self) -> Layer:
        tools = common_tools()
        limits = "limits via Python shim"
        layer = Layer("basic", f"basic ({limits})", _WARNING, (), tools=tools)
        layer = with_seccomp(layer)
        if not layer.seccomp:
            layer = Layer("basic", f"basic ({limits_by(tools)})", _WARNING, (), tools=tools)
        return layer

    def launch_prefix(self, plan: LaunchPlan) -> Prefix:
        # Dropping to the seat's uid and installing the filter take the shim (which
        # then sets the limits too).
        spec: dict[str, Any] = {}
        if plan.layer.seccomp:
            spec["seccomp"] = bot_filter(sockets="host")
        by_shim = plan.identity is not None or bool(spec)
        return Prefix(limits_prefix(plan, spec, by_shim=by_shim) + announce(plan.layer))


KIND = Basic()
