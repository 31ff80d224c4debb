"""What a cgroup per bot costs a bot's launch: the time from making the launch
(cgroup included) to the start token on the bot's stderr, and the teardown of the
cgroup, with and without cgroups, paired and interleaved, in each layer.

    python bench/cgroup_launch.py [--runs N] [--layers bwrap,basic]

Prints the median and the 90th percentile of each, in milliseconds. The bot is
``true`` (it exits at once): what is timed is the launch, not the bot.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from referee import sandbox
from referee.sandbox.base import LAUNCH_TOKEN


def launch_ms(layer: sandbox.Layer, cg: sandbox.CgroupHost | None) -> tuple[float, float]:
    """(launch to start token, cgroup teardown) in ms for one bot."""
    with tempfile.TemporaryDirectory(prefix="referee-bench-") as tmp:
        start = time.perf_counter()
        group = sandbox.BotCgroup.create(cg, "bench", sandbox.Limits()) if cg else None
        launch = sandbox.prepare_launch(
            ["true"],
            bot_dir=None,
            scratch=Path(tmp),
            limits=sandbox.Limits(),
            layer=layer,
            cgroup_procs=group.join_files() if group else (),
        )
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
        launch.close_fds()
        assert proc.stderr is not None
        seen = b""
        while LAUNCH_TOKEN not in seen:
            chunk = proc.stderr.read1(4096)
            if not chunk:
                raise SystemExit(f"no start token: {seen!r}")
            seen += chunk
        took = time.perf_counter() - start
        proc.wait()
        sandbox.release_uid(launch.uid if launch.leased else None)
        start = time.perf_counter()
        if group is not None:
            group.remove()
        return took * 1000, (time.perf_counter() - start) * 1000


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=40)
    p.add_argument("--layers", default=",".join(sandbox.LAYERS))
    args = p.parse_args()
    cg = sandbox.cgroup_host()
    if not cg.hierarchies:
        raise SystemExit(f"no cgroups here: {cg.missing}")
    for name in args.layers.split(","):
        try:
            layer = sandbox.choose_layer(name)
        except sandbox.SandboxError as exc:
            print(f"{name}: unavailable ({exc})")
            continue
        times: dict[bool, list[float]] = {False: [], True: []}
        removal: list[float] = []
        for _ in range(args.runs):
            for with_cg in (False, True):  # interleaved: the same load for both
                took, gone = launch_ms(layer, cg if with_cg else None)
                times[with_cg].append(took)
                if with_cg:
                    removal.append(gone)
        for with_cg, values in times.items():
            values.sort()
            p90 = values[int(0.9 * (len(values) - 1))]
            label = "cgroup" if with_cg else "none  "
            print(
                f"{name:8} {label} launch median {statistics.median(values):6.2f} ms, "
                f"p90 {p90:6.2f} ms"
            )
        print(f"{name:8} cgroup removal median {statistics.median(removal):6.2f} ms")


if __name__ == "__main__":
    main()
