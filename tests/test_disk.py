"""referee.sandbox.disk: what a bot's writable space holds."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest
from conftest import skip_or_fail

from referee import sandbox
from referee.sandbox import Limits, disk_usage, tmpfs_usage


def test_a_launch_on_its_way_into_the_sandbox_is_not_charged_the_hosts_tmp(tmp_path: Path) -> None:
    # A process in our own mount namespace (here: this one) has the host's /tmp:
    # only the scratch directory counts for it.
    (tmp_path / "a.bin").write_bytes(b"x" * 8192)
    used = disk_usage(tmp_path, [os.getpid()], True, 100)
    assert used.entries == 1 and 8192 <= used.bytes < 65536


def test_a_tmpfs_reading_counts_nothing_of_the_hosts_file_systems(tmp_path: Path) -> None:
    # This process is in the host's mount namespace: no tmpfs of a bot to read.
    (tmp_path / "a.bin").write_bytes(b"x" * 8192)
    assert tmpfs_usage(tmp_path, [os.getpid()], True) == (0, 0, True)
    assert tmpfs_usage(tmp_path, [], True) == (0, 0, True)


def test_a_bwrap_bots_entries_are_read_from_its_scratch_tmpfs(tmp_path: Path) -> None:
    # A real bot under bwrap makes 300 files in its scratch directory (a tmpfs of its
    # own, out of the host's sight), then waits: the reading through /proc/<pid>/root
    # sees them without a walk, and the host's directory holds none.
    try:
        layer = sandbox.choose_layer("bwrap")
    except sandbox.SandboxError as exc:
        skip_or_fail(f"layer bwrap does not work here: {exc}")
    assert "disk" in layer.isolation and "inodes" not in layer.isolation
    code = (
        "import sys\n"
        "for i in range(300): open(f'f{i}', 'w').close()\n"
        "print('made', flush=True)\n"
        "sys.stdin.read()\n"
    )
    scratch = tmp_path / "scratch"
    launch = sandbox.prepare_launch(
        [sys.executable, "-c", code], bot_dir=None, scratch=scratch, limits=Limits(), layer=layer
    )
    proc = subprocess.Popen(
        launch.argv,
        env=launch.env,
        cwd=launch.cwd,
        start_new_session=True,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        pass_fds=launch.pass_fds,
    )
    try:
        launch.close_fds()
        assert proc.stdout is not None and proc.stdout.readline() == b"made\n"
        pids = sandbox.tree_usage(proc.pid).pids
        used = tmpfs_usage(scratch.resolve(), pids, True)
        # The 300 files, and what bwrap made in its /tmp on the way to the scratch
        # directory (a few directories).
        assert 300 <= used.entries < 320, used
        assert list(scratch.iterdir()) == []
        assert disk_usage(scratch, pids, False, 100).entries == 0  # what a walk would see
    finally:
        proc.kill()
        proc.communicate(timeout=10)
        sandbox.release_uid(launch.uid if launch.leased else None)


# -- what the header says of the disk, layer by layer ---------------------------

MINIMAL_C = Path(__file__).resolve().parent.parent / "sample_bots" / "bin" / "minimal_c"

# What each layer's writable places are, and so who enforces the disk limits.
DISK_BY_LAYER = {
    "bwrap": "kernel (tmpfs size), entries sampled (tmpfs count)",
    "unshare": "kernel (tmpfs size and inodes)",
    "landlock": "sampled (walk of the scratch directory)",
    "basic": "sampled (walk of the scratch directory), the host's /tmp not bounded",
}


@pytest.mark.parametrize("layer", sorted(DISK_BY_LAYER))
def test_the_header_says_per_layer_whether_the_disk_is_kernel_enforced(
    layer: str, tmp_path: Path
) -> None:
    try:
        sandbox.choose_layer(layer)
    except sandbox.SandboxError as exc:
        skip_or_fail(f"layer {layer} does not work here: {exc}")
    if not MINIMAL_C.is_file():
        skip_or_fail("the C sample bots are not built (make bots)")
    replay = tmp_path / "m.jsonl"
    common = [sys.executable, "-m", "referee", "match", str(MINIMAL_C), str(MINIMAL_C)]
    common += ["--rounds", "3", "--sandbox", layer, "--cgroups", "off"]
    printed = subprocess.run(
        [*common, "--replay", str(replay)], capture_output=True, text=True, timeout=120, cwd="/"
    )
    assert printed.returncode == 0, printed.stderr
    said = DISK_BY_LAYER[layer]
    limits_line = " ".join(printed.stdout.split())
    assert f"; disk {said}" in limits_line, printed.stdout
    header = json.loads(replay.read_text().splitlines()[0])
    assert header["containment"]["enforcement"]["disk"] == said
    as_json = subprocess.run(
        [*common, "--json", "--no-replay"], capture_output=True, text=True, timeout=120, cwd="/"
    )
    assert as_json.returncode == 0, as_json.stderr
    assert json.loads(as_json.stdout)["containment"]["enforcement"]["disk"] == said


def test_an_inode_flood_in_unshares_tmp_and_dev_shm_ends_in_enospc(tmp_path: Path) -> None:
    # Under unshare, /tmp and /dev/shm are the bot's own tmpfs: sized, and (as its
    # scratch tmpfs) with disk_files inodes. Before, they had no inode cap (the
    # kernel's default: half the host's RAM pages), so a bot could make entries
    # without end where the watchdog does not look.
    try:
        layer = sandbox.choose_layer("unshare")
    except sandbox.SandboxError as exc:
        skip_or_fail(f"layer unshare does not work here: {exc}")
    assert "inodes" in layer.isolation
    # Where the kernel has Landlock, its policy closes /tmp and /dev/shm to the bot
    # (EACCES: only the scratch directory is writable); the tmpfs and their caps are
    # what holds on a kernel without it, which the layer is here made as.
    layer = msgspec.structs.replace(layer, landlock_abi=0)
    files = 300
    code = (
        "import errno, os, sys\n"
        "for place in ('/tmp', '/dev/shm'):\n"
        "    made = 0\n"
        "    try:\n"
        f"        for i in range({files} * 2):\n"
        "            os.close(os.open(f'{place}/f{i}', os.O_WRONLY | os.O_CREAT, 0o600))\n"
        "            made += 1\n"
        "        print(place, made, 'none', flush=True)\n"
        "    except OSError as exc:\n"
        "        print(place, made, errno.errorcode[exc.errno], flush=True)\n"
    )
    launch = sandbox.prepare_launch(
        [sys.executable, "-c", code],
        bot_dir=None,
        scratch=tmp_path / "scratch",
        limits=Limits(disk_files=files),
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
        sandbox.release_uid(launch.uid if launch.leased else None)
    said = [line.split() for line in proc.stdout.decode().splitlines()]
    assert [(place, error) for place, _, error in said] == [
        ("/tmp", "ENOSPC"),
        ("/dev/shm", "ENOSPC"),
    ], (proc.stdout, proc.stderr)
    made = {place: int(n) for place, n, _ in said}
    # The tmpfs's own root takes an inode, and in /tmp so do the entries made on the
    # way to the scratch directory (where the test's tmp_path lies in /tmp: its
    # directories and mount points, a few more than its path's depth; 292 of 300 seen).
    assert made["/dev/shm"] == files - 1, made
    assert files - 1 - str(tmp_path).count("/") - 10 <= made["/tmp"] <= files - 1, made
