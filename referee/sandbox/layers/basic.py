"""``basic``: resource limits, a clean environment and process-tree teardown only.

It does not stop network use, file access or signals to the referee; the user is
told so loudly.
"""

from __future__ import annotations

from ..base import LaunchPlan, Layer, Prefix, announce, common_tools, limits_by, limits_prefix

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
        return Layer("basic", f"basic ({limits_by(tools)})", _WARNING, (), tools=tools)

    def launch_prefix(self, plan: LaunchPlan) -> Prefix:
        # Dropping to the seat's uid takes the shim (it makes the bot's files reachable).
        by_shim = plan.identity is not None
        return Prefix(limits_prefix(plan, {}, by_shim=by_shim) + announce(plan.layer))


KIND = Basic()
