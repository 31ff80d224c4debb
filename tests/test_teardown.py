"""What a bot leaves behind cannot fail the teardown, hide from the disk limit, or
outlive its match: referee/sandbox/cleanup.py and disk.py, and the sweep of a killed
referee's scratch directories through the real CLI."""

from __future__ import annotations

import ctypes
import fcntl
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from conftest import ROOT, skip_or_fail

from referee import sandbox
from referee.sandbox import Scratch, disk_usage, remove_ipc, remove_tree, sweep_stale_scratch
from referee.sandbox.disk import _walk

# 2 characters a level: 4200 > PATH_MAX (4096), and deeper than Python's recursion
# limit (the zoo's deep_tree makes 3000, as the attack that found the hole did).
DEPTH = 2100


def _chain(top: Path, depth: int, payload: bytes = b"") -> None:
    """``depth`` nested directories "d" below ``top`` (made with directory fds, as a
    path that long cannot be used), with ``payload`` in a file at the bottom."""
    fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(depth):
        os.mkdir("d", dir_fd=fd)
        child = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = child
    if payload:
        out = os.open("bottom", os.O_WRONLY | os.O_CREAT, 0o600, dir_fd=fd)
        os.write(out, payload)
        os.close(out)
    os.close(fd)


def test_a_chain_deeper_than_path_max_with_closed_modes_is_removed(tmp_path: Path) -> None:
    top = tmp_path / "scratch"
    top.mkdir()
    try:
        _chain(top, DEPTH, b"x" * 4096)
    except BaseException:
        remove_tree(top)
        raise
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep").write_text("not the bot's")
    (top / "link").symlink_to(outside)  # removed, never followed
    (top / "closed").mkdir()
    (top / "closed" / "f").write_text("x")
    (top / "closed").chmod(0)
    (top / "readonly").mkdir()
    (top / "readonly" / "f").write_text("x")
    (top / "readonly").chmod(0o500)
    os.mkfifo(top / "fifo")
    top.chmod(0o500)
    assert remove_tree(top)
    assert not top.exists()
    assert (outside / "keep").read_text() == "not the bot's"


def test_a_tree_that_is_a_link_or_a_file_or_missing_is_handled(tmp_path: Path) -> None:
    target = tmp_path / "target"
    target.mkdir()
    (target / "keep").write_text("x")
    (tmp_path / "link").symlink_to(target)
    assert remove_tree(tmp_path / "link") and (target / "keep").exists()
    (tmp_path / "file").write_text("x")
    assert remove_tree(tmp_path / "file") and not (tmp_path / "file").exists()
    assert remove_tree(tmp_path / "missing")


def test_the_disk_walk_counts_what_lies_deeper_than_path_max(tmp_path: Path) -> None:
    # A walk by path met ENAMETOOLONG half-way down and counted nothing below it.
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(20):  # 20 * 256 characters > PATH_MAX
        os.mkdir("L" * 255, dir_fd=fd)
        child = os.open("L" * 255, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = child
    out = os.open("bottom", os.O_WRONLY | os.O_CREAT, 0o600, dir_fd=fd)
    os.write(out, b"x" * (1 << 20))
    os.close(out)
    os.close(fd)
    try:
        used = disk_usage(tmp_path, [], False, 100_000)
    finally:
        remove_tree(tmp_path / ("L" * 255))  # (pytest's own clean-up cannot)
    assert used.complete
    assert used.entries == 20 + 1
    assert used.bytes >= 1 << 20


def test_a_disk_walk_stops_at_its_budgets(tmp_path: Path) -> None:
    for i in range(50):
        (tmp_path / f"dir{i}").mkdir()
        for j in range(40):
            (tmp_path / f"dir{i}" / f"f{j}").write_bytes(b"")
    whole = _walk(str(tmp_path), 100_000)
    assert whole.complete and whole.entries == 50 * 41
    by_entries = _walk(str(tmp_path), 100)
    assert not by_entries.complete and 100 < by_entries.entries <= 100 + 41
    by_time = _walk(str(tmp_path), 100_000, budget_s=0.0)
    assert not by_time.complete and by_time.entries < whole.entries


def test_system_v_objects_made_by_a_bots_process_are_removed() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    key = 0x5EF00000 + os.getpid() % 0xFFFF
    child = os.fork()
    if child == 0:  # the "bot": makes a segment and a queue, and leaves
        ok = libc.shmget(key, 1 << 16, 0o1000 | 0o600) >= 0
        queue = libc.msgget(key, 0o1000 | 0o600)

        class Msg(ctypes.Structure):
            _fields_ = [("mtype", ctypes.c_long), ("text", ctypes.c_char * 8)]

        ok = ok and queue >= 0 and libc.msgsnd(queue, ctypes.byref(Msg(1, b"x")), 8, 0) == 0
        os._exit(0 if ok else 1)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0

    def keys(kind: str) -> set[int]:
        with open(f"/proc/sysvipc/{kind}") as f:
            return {int(line.split()[0]) for line in f.read().splitlines()[1:]}

    assert key in keys("shm") and key in keys("msg")
    removed = remove_ipc(None, {child})
    assert len(removed) == 2, removed
    assert key not in keys("shm") and key not in keys("msg")


_HOLDER = """
import sys, time
from referee.sandbox import Scratch
s = Scratch(0, sys.argv[1])
print(s.path, flush=True)
time.sleep(60)
"""


def test_a_scratch_directory_is_swept_only_once_its_owner_is_dead(tmp_path: Path) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(tmp_path)], stdout=subprocess.PIPE, cwd=ROOT
    )
    try:
        assert holder.stdout is not None
        path = Path(holder.stdout.readline().decode().strip())
        (path / "work").write_text("in use")
        assert sweep_stale_scratch(str(tmp_path)) == []  # alive: never touched
        assert (path / "work").exists()
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    assert sweep_stale_scratch(str(tmp_path)) == [str(path)]
    assert os.listdir(tmp_path) == []
    # A directory without a lock (another program's, or an older referee's) stays
    # while it is young (see the test of old lock-less directories below).
    (tmp_path / "referee-seat0-abcdefgh").mkdir()
    assert sweep_stale_scratch(str(tmp_path)) == []
    mine = Scratch(1, str(tmp_path))
    assert sweep_stale_scratch(str(tmp_path)) == []  # held by this very process
    assert mine.remove() and sorted(os.listdir(tmp_path)) == ["referee-seat0-abcdefgh"]


def test_a_sweep_that_locks_a_new_lock_file_first_costs_only_a_new_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another referee's start-up sweep can open and lock a lock file in the instant
    between its making and its owner's flock (it looks like a dead referee's). The
    owner must then make another, not fail the match ("cannot make a scratch
    directory": seen under load in the zoo)."""
    from referee.sandbox import cleanup

    made: list[str] = []
    held: list[int] = []
    real_mkstemp = tempfile.mkstemp

    def mkstemp_then_sweep(*args: object, **kwargs: object) -> tuple[int, str]:
        fd, name = real_mkstemp(*args, **kwargs)  # type: ignore[call-overload]
        made.append(name)
        if len(made) == 1:  # a sweep takes the first one and removes it at once
            assert sweep_stale_scratch(str(tmp_path)) == [name[: -len(cleanup.LOCK_SUFFIX)]]
        elif len(made) == 2:  # a sweep holds the second one's lock, at work on it
            sweeper = os.open(name, os.O_RDWR)
            fcntl.flock(sweeper, fcntl.LOCK_EX | fcntl.LOCK_NB)
            held.append(sweeper)
        return fd, name

    monkeypatch.setattr(cleanup.tempfile, "mkstemp", mkstemp_then_sweep)
    scratch = Scratch(0, str(tmp_path))
    os.close(held[0])
    assert len(made) == 3 and not os.path.exists(made[0])
    assert scratch.path.is_dir() and str(scratch.lock) == made[2]
    assert sweep_stale_scratch(str(tmp_path)) == [made[1][: -len(cleanup.LOCK_SUFFIX)]]
    assert scratch.remove() and os.listdir(tmp_path) == []


HANG_BOT = 'import sys\nsys.stdin.readline()\nprint(\'{"name": "h"}\', flush=True)\n'
HANG_BOT += "import time\ntime.sleep(600)\n"


def test_the_next_referee_sweeps_the_scratch_of_one_killed_mid_match(tmp_path: Path) -> None:
    bot = tmp_path / "hang.py"
    bot.write_text(HANG_BOT)
    base = tmp_path / "tmp"
    base.mkdir()
    base.chmod(0o1777)
    env = {**os.environ, "TMPDIR": str(base)}
    argv = [sys.executable, "-m", "referee", "match", f"python {bot}", f"python {bot}"]
    argv += ["--move-timeout", "30", "--handshake-timeout", "30", "--no-replay", "--quiet"]
    victim = subprocess.Popen(argv, env=env, cwd=ROOT, stdout=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while len([p for p in base.iterdir() if p.is_dir()]) < 2:
            assert time.monotonic() < deadline, "the referee made no scratch directories"
            assert victim.poll() is None
            time.sleep(0.05)
    finally:
        victim.send_signal(signal.SIGKILL)
        victim.wait()
    left = sorted(p.name for p in base.iterdir())
    assert len(left) == 4, left  # two directories, two locks
    rounds = ["--rounds", "3", "--json", "--no-replay", "--quiet"]
    rock = [sys.executable, "-m", "referee", "match", "rock", "cycler", *rounds]
    proc = subprocess.run(rock, env=env, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert list(base.iterdir()) == []


def test_a_league_with_a_deep_tree_attacker_finishes_and_charges_it_alone(
    tmp_path: Path,
) -> None:
    # The attacker hides 32 MiB below 1108 nested directories: on the old referee the
    # disk walk missed it and the teardown's rmtree raised RecursionError, and after
    # three such deaths of its worker the league stopped. Played under basic, whose
    # scratch directories are the host's: bwrap and unshare make each a tmpfs of
    # --disk-mib, which refuses the writes (the zoo checks that), so nothing deep is
    # left there to walk or remove.
    attacker = ROOT / "tests" / "zoo" / "deep_disk_hog.py"
    out = tmp_path / "league"
    argv = [sys.executable, "-m", "referee", "tournament", "rock", "cycler", f"python {attacker}"]
    argv += ["--rounds", "10", "--move-timeout", "20", "--disk-mib", "16", "--legs", "1"]
    argv += ["--sandbox", "basic"]
    argv += ["--finalists", "0", "--seed", "3", "-j", "2", "--out", str(out), "--quiet"]
    proc = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr[-2000:]
    results = json.loads((out / "results.json").read_text())
    assert results["complete"]
    verdicts = [(s["bot"], s["verdict"]) for m in results["matches"] for s in m["seats"]]
    assert len(verdicts) == 6
    for bot, verdict in verdicts:
        if bot == "deep_disk_hog":
            assert verdict["status"] == "disk_limit" and verdict["disqualified"], verdict
        else:
            assert verdict["status"] == "ok" and not verdict["faults"], (bot, verdict)


# A referee's launch of a bot under bwrap, killed between its fork and bwrap's exec
# (its child kills it): bwrap then arms --die-with-parent after the death it should
# have seen, and the sandbox lives on with its bot. The window is hit by a kill at any
# moment of a launch only some of the time; this makes it certain.
_DYING_LAUNCH = """\
import os, signal, subprocess, sys
from pathlib import Path
from referee import sandbox

base, bot = sys.argv[1], sys.argv[2]
seat = sandbox.Scratch(0, base)
launch = sandbox.prepare_launch(
    [sys.executable, bot],
    bot_dir=None,
    scratch=seat.path,
    limits=sandbox.Limits(),
    layer=sandbox.choose_layer("bwrap"),
)
subprocess.Popen(
    launch.argv, env=launch.env, cwd=launch.cwd, pass_fds=launch.pass_fds,
    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
    start_new_session=True, preexec_fn=lambda: os.kill(os.getppid(), signal.SIGKILL),
)
os.kill(os.getpid(), signal.SIGKILL)
"""


def _running_from(base: Path) -> list[str]:
    """Live processes that name ``base`` on their command line or run below it."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                if f.read().rsplit(b")", 1)[1].split()[0] in (b"Z", b"X"):
                    continue
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmdline = f.read().replace(b"\0", b" ").decode(errors="replace")
            cwd = os.readlink(f"/proc/{entry}/cwd")
        except (OSError, IndexError):
            continue
        if str(base) in cmdline or cwd.startswith(str(base)):
            found.append(f"{entry} {cmdline[:120]}")
    return found


def test_the_sweep_kills_a_dead_referees_bwrap_sandbox_and_leaves_nothing(
    tmp_path: Path,
) -> None:
    # A referee SIGKILLed mid-match under bwrap leaves its scratch directories and
    # their locks; a sandbox whose launch died while bwrap was being set up lives
    # on, bot and all. The next referee's sweep kills that sandbox (it names the
    # scratch directory whose lock is free) and removes everything. Before, it
    # removed the directories and left the sandbox running.
    try:
        sandbox.choose_layer("bwrap")
    except sandbox.SandboxError as exc:
        skip_or_fail(f"layer bwrap does not work here: {exc}")
    bot = tmp_path / "hang.py"
    bot.write_text(HANG_BOT)
    # The sandbox's bot: it writes nothing (its stdout's reader is dead: a write
    # would end it by SIGPIPE), and runs until it is killed.
    silent = tmp_path / "silent.py"
    silent.write_text("import time\nwhile True:\n    time.sleep(1)\n")
    base = tmp_path / "tmp"
    base.mkdir()
    base.chmod(0o1777)
    env = {**os.environ, "TMPDIR": str(base)}
    argv = [sys.executable, "-m", "referee", "match", f"python {bot}", f"python {bot}"]
    argv += ["--move-timeout", "30", "--handshake-timeout", "30", "--sandbox", "bwrap"]
    argv += ["--cgroups", "off", "--no-replay", "--quiet"]
    victim = subprocess.Popen(argv, env=env, cwd=ROOT, stdout=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while len([p for p in base.iterdir() if p.is_dir()]) < 2:
            assert time.monotonic() < deadline, "the referee made no scratch directories"
            assert victim.poll() is None
            time.sleep(0.05)
    finally:
        victim.send_signal(signal.SIGKILL)
        victim.wait()
    # The sandbox that outlives its launch. Under load bwrap sometimes still dies
    # with it (its parent's death came first): a few tries.
    for _attempt in range(5):
        launcher = subprocess.run(
            [sys.executable, "-c", _DYING_LAUNCH, str(base), str(silent)], cwd=ROOT, timeout=60
        )
        assert launcher.returncode == -signal.SIGKILL
        deadline = time.monotonic() + 5
        while not [p for p in _running_from(tmp_path) if "silent.py" in p]:
            if time.monotonic() > deadline:
                break
            time.sleep(0.05)
        else:
            break
    left = _running_from(tmp_path)
    # The precondition: a sandbox lives on, its bot running.
    assert any("silent.py" in p for p in left), left
    assert any(p.split()[1].endswith("/bwrap") for p in left), left
    assert len([p for p in base.iterdir() if p.name.endswith(".lock")]) >= 3
    rounds = ["--rounds", "3", "--sandbox", "bwrap", "--cgroups", "off", "--json"]
    rock = [sys.executable, "-m", "referee", "match", "rock", "cycler", *rounds, "--no-replay"]
    proc = subprocess.run(rock, env=env, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert _running_from(tmp_path) == []
    assert list(base.iterdir()) == []
    # Killed by the sweep before the match, not found by its teardown: as root the
    # leftover bot ran as a bot uid whose lease its dead referee no longer held, so
    # a bot of this match could be given the same uid and be charged with it.
    for seat in json.loads(proc.stdout)["seats"]:
        assert not seat["verdict"]["escaped_processes"], seat["verdict"]
        assert seat["verdict"]["status"] == "ok", seat["verdict"]


_LEASE_HOLDER = """\
import sys, time
from referee import sandbox
uid = int(sys.argv[1])
print(sandbox.lease_uid(sandbox.Limits(uid_first=uid, uid_count=1)), flush=True)
time.sleep(60)
"""


def _old_lockless(base: Path, name: str, owner: int) -> Path:
    """A scratch directory as a referee from before the locks left it: no lock
    file, a file in it, owned by ``owner``, unchanged for an hour."""
    path = base / name
    path.mkdir(mode=0o700)
    (path / "state").write_text("left")
    if owner != os.geteuid():  # (a bot uid: as root)
        os.chown(path / "state", owner, owner)
        os.chown(path, owner, owner)
    hour_ago = time.time() - 3600
    os.utime(path, (hour_ago, hour_ago))
    return path


def test_an_older_referees_lockless_scratch_is_swept_only_when_nothing_can_own_it(
    tmp_path: Path,
) -> None:
    # Before, a directory without a lock file was never swept: those of referees
    # from before the locks piled up in /tmp for good.
    base = tmp_path / "tmp"
    base.mkdir()
    me = os.geteuid()
    gone = [_old_lockless(base, "referee-seat0-oldmine1", me)]
    young = base / "referee-seat1-youngmin"
    young.mkdir()
    in_use = _old_lockless(base, "referee-seat0-inuse123", me)
    others = _old_lockless(base, "referee-seat1-others12", 12345) if me == 0 else None
    held = free = None
    holder = None
    if me == 0:
        # Bot uids from the top of the range (a referee leases from the bottom).
        first, count = sandbox.Limits().uid_first, sandbox.Limits().uid_count
        free_uid, held_uid = first + count - 1, first + count - 2
        free = _old_lockless(base, "referee-seat0-freelea1", free_uid)
        gone.append(free)
        held = _old_lockless(base, "referee-seat1-heldlea1", held_uid)
        holder = subprocess.Popen(
            [sys.executable, "-c", _LEASE_HOLDER, str(held_uid)], stdout=subprocess.PIPE, cwd=ROOT
        )
    user = subprocess.Popen(["sleep", "60"], cwd=in_use)
    try:
        if holder is not None:
            assert holder.stdout is not None
            assert holder.stdout.readline().split() == [
                f"({held_uid},".encode(),
                f"{held_uid})".encode(),
            ]
        removed = sweep_stale_scratch(str(base))
        assert sorted(removed) == sorted(str(p) for p in gone)
        left = {p.name for p in base.iterdir()}
        assert left == {p.name for p in (young, in_use, others, held) if p is not None}, (
            left
        )  # young, in use, another user's, a live referee's uid
        assert (in_use / "state").exists()
        # Once nothing uses it and no one holds its uid, it goes too.
        user.kill()
        user.wait()
        if holder is not None:
            holder.kill()
            holder.wait()
        again = sweep_stale_scratch(str(base))
        assert sorted(again) == sorted(str(p) for p in (in_use, held) if p is not None)
    finally:
        user.kill()
        user.wait()
        if holder is not None:
            holder.kill()
            holder.wait()


# A bot uid range other than the default (referee/sandbox/base.py, Limits): below the
# unprivileged test uid, so no default-range bot and no test referee runs as it.
OTHER_RANGE = sandbox.Limits(uid_first=59900, uid_count=4)


def _sleeper_as(uid: int, cwd: Path) -> subprocess.Popen[bytes]:
    """``sleep`` as ``uid`` (and its gid) working in ``cwd``, as a bot of a dead
    referee would be left (the working directory is entered before the uid drops)."""
    return subprocess.Popen(["sleep", "60"], cwd=cwd, user=uid, group=uid, extra_groups=[])


def test_the_sweep_follows_the_configured_bot_uid_range(tmp_path: Path) -> None:
    # A dead referee configured with another uid range left a bot running in its
    # scratch directory, and an older referee a lock-less directory of such a uid.
    # The next referee of that range kills the one and removes both; before, the
    # sweep knew only the default range: it left the bot running and the old
    # directory in place ("another user's").
    if os.geteuid() != 0:
        skip_or_fail("bot uids are leased only by a root referee")
    base = tmp_path / "tmp"
    base.mkdir()
    base.chmod(0o1777)
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(base)], stdout=subprocess.PIPE, cwd=ROOT
    )
    assert holder.stdout is not None
    path = Path(holder.stdout.readline().decode().strip())
    holder.kill()
    holder.wait()
    first = OTHER_RANGE.uid_first
    bot = _sleeper_as(first, path)
    old = _old_lockless(base, "referee-seat1-otherrng", first + 1)
    try:
        # The default range's referee: the old directory is not its to judge.
        assert sweep_stale_scratch(str(base)) == [str(path)] and old.exists()
        assert bot.poll() is None  # (and the bot runs on: not a uid of its range)
        bot.kill()
        bot.wait()
        # The dead referee's directory and its lock again, the lock free.
        path.mkdir(mode=0o700)
        Path(f"{path}.lock").touch()
        bot = _sleeper_as(first, path)
        removed = sweep_stale_scratch(str(base), OTHER_RANGE)
        assert sorted(removed) == sorted([str(old), str(path)])
        assert bot.wait(timeout=10) == -signal.SIGKILL
        assert list(base.iterdir()) == []
    finally:
        bot.kill()
        bot.wait()


def test_the_suites_leftover_check_sees_the_bots_of_any_leased_range() -> None:
    # The end-of-suite check (tests/conftest.py) reports a process of a bot uid left
    # after its lease ended, for every range a referee here leased from, not only
    # the default one.
    if os.geteuid() != 0:
        skip_or_fail("bot uids are leased only by a root referee")
    from conftest import left_behind, traces

    before = traces()
    leased = sandbox.lease_uid(OTHER_RANGE)
    assert leased is not None and leased[0] in sandbox.bot_uid_range(OTHER_RANGE)
    assert leased[0] in sandbox.ever_leased()
    bot = _sleeper_as(leased[0], Path("/"))
    try:
        # While the lease is held, it is a live referee's bot.
        assert not [t for t in left_behind(before, traces()) if f"process {bot.pid} " in t]
        sandbox.release_uid(leased[0])
        left = left_behind(before, traces())
        assert any(t.startswith(f"process {bot.pid} of uid {leased[0]}:") for t in left), left
    finally:
        sandbox.release_uid(leased[0])
        bot.kill()
        bot.wait()
