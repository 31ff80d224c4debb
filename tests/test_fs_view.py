"""What of the host's shared places a bot sees, layer by layer, and the kernel's cap
on its writable space: a real bot (Python, started by ``prepare_launch``) looks for
a file the test left in the host's /tmp, lists /run, tries to write there, and
fills its scratch directory past the disk limit, then /tmp and /dev/shm."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import CI_REQUIRED_LAYERS, skip_or_fail

from referee import sandbox
from referee.sandbox import Limits

PROBE = """
    import errno, json, os, sys
    marker, out = sys.argv[1].split("=", 1)[1], {}
    out["marker"] = os.path.exists(marker)
    try:
        out["run"] = sorted(os.listdir("/run"))
    except OSError as exc:
        out["run"] = errno.errorcode[exc.errno]
    try:
        open("/run/bot-was-here", "w").close()
        out["write_run"] = "ok"
    except OSError as exc:
        out["write_run"] = errno.errorcode[exc.errno]
    st = os.statvfs(".")
    out["scratch_mib"] = st.f_blocks * st.f_frsize >> 20
    out["scratch_mine"] = os.stat(".").st_uid == os.getuid()
    written = 0
    try:
        with open("fill.bin", "wb") as f:
            for _ in range(40):
                f.write(b"\\0" * (1 << 20))
                f.flush()
                written += 1
        out["fill"] = "ok"
    except OSError as exc:
        out["fill"] = errno.errorcode[exc.errno]
    out["written_mib"] = written
    # The shared places: 1 MiB at a time up to 40 MiB, then the file goes (under
    # basic it is on the host's /tmp).
    for place in ("/tmp", "/dev/shm"):
        path, written = f"{place}/probe-fill-{os.getpid()}", 0
        try:
            with open(path, "wb") as f:
                for _ in range(40):
                    f.write(b"\\0" * (1 << 20))
                    f.flush()
                    written += 1
            out[place] = "ok"
        except OSError as exc:
            out[place] = errno.errorcode[exc.errno]
        out[place + "_mib"] = written
        try:
            os.unlink(path)
        except OSError:
            pass
    print(json.dumps(out))
"""


@pytest.mark.parametrize("layer_name", sandbox.LAYERS)
def test_the_hosts_shared_places_and_the_disk_cap(layer_name: str, tmp_path: Path) -> None:
    try:
        layer = sandbox.choose_layer(layer_name)
    except sandbox.SandboxError as exc:
        if layer_name in CI_REQUIRED_LAYERS:
            skip_or_fail(f"layer {layer_name} unavailable here: {exc}")
        pytest.skip(str(exc))
    marker = Path(f"/tmp/fs-view-{os.getpid()}-{layer_name}")
    marker.write_text("the host's /tmp\n")
    bot_dir = tmp_path / "bot"
    bot_dir.mkdir()
    script = bot_dir / "probe.py"
    script.write_text(textwrap.dedent(PROBE))
    limits = Limits(disk_mib=16, tmpfs_mib=8)
    launch = sandbox.prepare_launch(
        [sys.executable, str(script), f"--marker={marker}"],
        bot_dir=None,
        scratch=tmp_path / "scratch",
        limits=limits,
        layer=layer,
    )
    try:
        proc = subprocess.run(
            launch.argv,
            env=launch.env,
            cwd=launch.cwd,
            start_new_session=True,
            capture_output=True,
            timeout=60,
            pass_fds=launch.pass_fds,
        )
    finally:
        launch.close_fds()
        marker.unlink()
        sandbox.release_uid(launch.uid if launch.leased else None)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    seen = json.loads(proc.stdout)
    if layer_name in ("bwrap", "unshare"):
        # Its own /tmp (a fresh tmpfs) and an empty /run it cannot write to (under
        # unshare's Landlock policy it may not even list it).
        assert seen["marker"] is False, seen
        assert seen["run"] in ([], "ENOENT", "EACCES"), seen
        assert seen["write_run"] in ("EROFS", "ENOENT", "EACCES"), seen
    # Its scratch directory is its own in every layer (bwrap as root makes its tmpfs
    # root's: the launch hands it over before it drops to the bot's uid).
    assert seen["scratch_mine"] is True, seen
    if "disk" in layer.isolation:
        # The scratch directory is a tmpfs of the disk limit: the kernel stops the
        # writes at 16 MiB (ENOSPC), whatever the watchdog would have seen.
        assert seen["scratch_mib"] == limits.disk_mib, seen
        assert seen["fill"] == "ENOSPC" and seen["written_mib"] <= limits.disk_mib, seen
        # Written to the bot's own tmpfs, gone with its sandbox: not on the host.
        assert list((tmp_path / "scratch").iterdir()) == []
    else:
        assert seen["fill"] == "ok", seen
    # The shared places: a tmpfs of tmpfs_mib where the layer mounts one and nothing
    # closes it (ENOSPC), closed by Landlock's policy (EACCES, unshare on a kernel
    # with Landlock as well), or the host's own (basic: 40 MiB went in).
    for place in ("/tmp", "/dev/shm"):
        if layer_name == "bwrap" or (layer_name == "unshare" and layer.landlock_abi < 1):
            assert seen[place] == "ENOSPC" and seen[place + "_mib"] <= limits.tmpfs_mib, seen
        elif layer_name in ("unshare", "landlock"):
            assert seen[place] == "EACCES" and seen[place + "_mib"] == 0, seen
        else:
            assert seen[place] == "ok" and seen[place + "_mib"] == 40, seen
    # Both make the scratch directory a tmpfs of the limit (bwrap with --size, which
    # every bwrap the layer accepts has); only unshare caps its inodes too.
    assert layer_name not in ("bwrap", "unshare") or "disk" in layer.isolation
    assert ("inodes" in layer.isolation) == (layer_name == "unshare")
