"""A cgroup per bot (referee/sandbox/cgroups.py): what the header says is enforced by
the kernel and what is sampled, each bot's own peak memory, the bot inside its cgroup
before it runs, escapees charged to their own bot and never to the opponent, no
cgroup left behind, and the same referee as an unprivileged user (no cgroup: every
limit sampled, and said so). The attack bots themselves are played in every layer, as
root and as an unprivileged user, by test_zoo.py.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from conftest import UNPRIVILEGED_UID, needs, skip_or_fail, unprivileged_referee

from referee import sandbox
from referee.match import kernel_limit_fault
from referee.sandbox.cgroups import (
    CgroupHost,
    Hierarchy,
    Reading,
    cpu_weight_of_nice,
    detect,
    sweep_stale,
)

ROOT = Path(__file__).resolve().parent.parent
MINIMAL_C = ROOT / "sample_bots" / "bin" / "minimal_c"
ZOO_C = ROOT / "tests" / "zoo" / "c"

needs_c = needs(not MINIMAL_C.is_file(), "the C sample bots are not built (make bots)")


@pytest.fixture(scope="module")
def framing_escapee(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The C framing escapee, built here (test_zoo may be building the zoo's own
    copies at the same moment)."""
    cc = shutil.which(os.environ.get("CC", "cc"))
    if cc is None:
        skip_or_fail("no C compiler")
    out = tmp_path_factory.mktemp("cbots") / "framing_escapee"
    subprocess.run(
        [cc, "-O1", "-o", str(out), str(ZOO_C / "framing_escapee.c")], check=True, timeout=120
    )
    return out


def _cgroups_or_skip() -> CgroupHost:
    cg = sandbox.cgroup_host()
    if cg.where("memory") is None or cg.where("pids") is None:
        pytest.skip(f"no memory and pids cgroup for this user here: {cg.missing}")
    return cg


def _match(*args: str, user: tuple[str, ...] | None = None) -> tuple[dict[str, Any], int, str]:
    argv = [*(user or (sys.executable,)), "-m", "referee", "match", *args]
    proc = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd="/"
    )
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    return (json.loads(out) if "--json" in args else {"text": out}), proc.pid, err


def _seat(result: dict[str, Any], seat: int) -> dict[str, Any]:
    verdict: dict[str, Any] = next(s for s in result["seats"] if s["seat"] == seat)["verdict"]
    return verdict


def _leftover_cgroups(referee_pid: int) -> list[str]:
    """Cgroups a referee of that pid made that are still there."""
    found = []
    for h in sandbox.cgroup_host().hierarchies:
        found += [n for n in os.listdir(h.base) if n.startswith(f"referee-{referee_pid}-")]
    return found


# -- pure --------------------------------------------------------------------


def test_a_cgroup_reading_over_a_limit_is_the_bots_fault() -> None:
    limits = sandbox.Limits(memory_mib=256, processes=64)
    assert kernel_limit_fault(Reading(peak_bytes=100 << 20), limits) is None
    kind, detail = kernel_limit_fault(Reading(peak_bytes=256 << 20, oom_kills=1), limits) or (
        None,
        "",
    )
    assert kind == "memory_limit"
    assert "256 MiB" in detail and "killed 1" in detail
    kind, detail = kernel_limit_fault(Reading(fork_refusals=3), limits) or (None, "")
    assert kind == "process_limit"
    assert "64" in detail and "refused 3" in detail


def test_the_header_says_what_is_sampled_where_no_cgroup_is_had() -> None:
    sampled = sandbox.enforcement(sandbox.NO_CGROUPS)
    assert set(sampled) >= {"memory", "processes", "cpu_share", "teardown", "peak_memory"}
    assert not any(v.startswith("kernel") for v in sampled.values()), sampled
    assert sampled["processes"] == "sampled"  # (as root: no RLIMIT_NPROC at all)
    shared = sandbox.enforcement(sandbox.NO_CGROUPS, shared_nproc=True)["processes"]
    assert shared.startswith("sampled;") and "shared by both seats" in shared
    hybrid = CgroupHost(
        (
            Hierarchy("/v2", True, ("cpuacct", "kill")),
            Hierarchy("/v1mem", False, ("memory", "peak")),
            Hierarchy("/v1pids", False, ("pids",)),
        )
    )
    said = sandbox.enforcement(hybrid)
    assert said["memory"] == "kernel (cgroup v1 memory)"
    assert said["processes"] == "kernel (cgroup v1 pids)"
    assert said["teardown"] == "kernel (cgroup v2 kill)"
    assert said["cpu_share"] == "sampled"  # no cpu controller in this host
    assert said["peak_memory"] == "kernel (cgroup v1 peak)"


def test_a_niced_referees_bots_get_the_weight_of_its_nice_value() -> None:
    assert cpu_weight_of_nice(0) == 1024
    assert cpu_weight_of_nice(-5) == 1024  # never more than a plain process
    assert cpu_weight_of_nice(7) == 215
    assert cpu_weight_of_nice(19) == 15


def _mountinfo(fstype: str, point: Path, options: str, root: str = "/") -> str:
    return f"30 25 0:26 {root} {point} rw,nosuid shared:4 - {fstype} cgroup rw,{options}\n"


def test_a_delegated_cgroup_v2_subtree_gets_the_bots_controllers(tmp_path: Path) -> None:
    # A systemd scope delegated to the referee: its controllers are available but
    # not yet enabled for children, and it alone is in it (what systemd-run --scope
    # -p Delegate=yes makes). A directory tree stands in for the cgroup2 file system.
    scope = tmp_path / "cg2" / "user.slice" / "referee.scope"
    scope.mkdir(parents=True)
    (scope / "cgroup.controllers").write_text("cpuset cpu io memory pids\n")
    (scope / "cgroup.subtree_control").write_text("")
    (scope / "cgroup.procs").write_text(f"{os.getpid()}\n")
    (scope / "cgroup.kill").write_text("")
    found = detect(
        "0::/user.slice/referee.scope\n", _mountinfo("cgroup2", tmp_path / "cg2", "nsdelegate")
    )
    (h,) = found.hierarchies
    assert h.base == str(scope) and h.v2
    assert set(h.roles) == {"memory", "pids", "cpu", "cpuacct", "kill"}
    assert (scope / "cgroup.subtree_control").read_text() == "+cpu +memory +pids"
    assert found.missing == ""
    assert sandbox.enforcement(found)["memory"] == "kernel (cgroup v2 memory)"


def test_cgroup_v1_controllers_are_used_under_the_referees_own_cgroup(tmp_path: Path) -> None:
    # A v1 memory hierarchy that places the referee in a nested cgroup, pids at its
    # root, a v2 tree with no controllers beside them (this machine's layout), and a
    # cpuacct hierarchy that adds nothing the v2 tree does not.
    for sub in ("memory/jobs/42", "pids", "cpuacct", "unified"):
        (tmp_path / sub).mkdir(parents=True)
    (tmp_path / "unified" / "cgroup.controllers").write_text("")
    (tmp_path / "unified" / "cgroup.subtree_control").write_text("")
    (tmp_path / "unified" / "cgroup.kill").write_text("")
    mounts = _mountinfo("cgroup", tmp_path / "memory", "memory")
    mounts += _mountinfo("cgroup", tmp_path / "pids", "pids")
    mounts += _mountinfo("cgroup", tmp_path / "cpuacct", "cpuacct")
    mounts += _mountinfo("cgroup2", tmp_path / "unified", "")
    own = "4:memory:/jobs/42\n8:pids:/\n2:cpuacct:/\n0::/\n"
    found = detect(own, mounts)
    roles = {h.base: h.roles for h in found.hierarchies}
    assert roles == {
        str(tmp_path / "unified"): ("cpuacct", "kill"),
        str(tmp_path / "memory" / "jobs" / "42"): ("memory", "peak"),
        str(tmp_path / "pids"): ("pids",),
    }
    assert found.missing == "no writable cgroup with cpu"
    said = sandbox.enforcement(found)
    assert said["memory"] == "kernel (cgroup v1 memory)"
    assert said["teardown"] == "kernel (cgroup v2 kill)"
    assert said["cpu_share"] == "sampled"


def test_a_hierarchy_that_does_not_show_the_referees_cgroup_is_passed_over(
    tmp_path: Path,
) -> None:
    (tmp_path / "memory").mkdir()
    # Mounted from /other (a container's view): the referee's /jobs is not in it.
    mounts = _mountinfo("cgroup", tmp_path / "memory", "memory", root="/other")
    found = detect("4:memory:/jobs\n", mounts)
    assert found.hierarchies == ()
    assert not any(v.startswith("kernel") for v in sandbox.enforcement(found).values())


# -- real matches ------------------------------------------------------------


@needs_c
def test_each_bot_runs_in_a_cgroup_of_its_own_from_before_it_starts() -> None:
    _cgroups_or_skip()
    # The bot's first act is to show its cgroups: it is in them before it runs.
    show = f"sh -c 'cat /proc/self/cgroup >&2; exec {MINIMAL_C}'"
    result, pid, _ = _match(
        show, show, "--rounds", "5", "--sandbox", "basic", "--json", "--no-replay"
    )
    enforced = result["containment"]["enforcement"]
    assert enforced["memory"].startswith("kernel"), enforced
    assert enforced["processes"].startswith("kernel"), enforced
    names = set()
    for seat in (0, 1):
        verdict = _seat(result, seat)
        assert verdict.get("status", "ok") == "ok", verdict
        lines = [ln for ln in verdict["stderr_head"].splitlines() if "referee-" in ln]
        for role in ("memory", "pids"):
            assert any(f":{role}:" in ln or ln.startswith("0::") for ln in lines), lines
        names |= {ln.rsplit("/", 1)[-1] for ln in lines}
    assert len(names) >= 2, names  # one cgroup per seat, not a shared one
    assert all(n.startswith(f"referee-{pid}-") for n in names), names
    assert _leftover_cgroups(pid) == []


@needs_c
@pytest.mark.parametrize("cgroups", ["auto", "off"])
def test_the_peak_memory_is_the_bots_own(cgroups: str) -> None:
    # Before: both seats showed the referee's own pre-exec fork (about 31 MiB each).
    result, pid, _ = _match(
        str(MINIMAL_C),
        str(MINIMAL_C),
        "--rounds",
        "20",
        "--cgroups",
        cgroups,
        "--json",
        "--no-replay",
    )
    for seat in (0, 1):
        peak = _seat(result, seat)["peak_rss_kib"]
        assert 0 < peak < 12 * 1024, (cgroups, peak)
    if cgroups == "off":
        enforced = dict(result["containment"]["enforcement"])
        # The disk is the layer's (a sized tmpfs is the kernel's, cgroups or not).
        layer = sandbox.choose_layer(result["containment"]["layer"])
        assert enforced.pop("disk") == sandbox.disk_enforcement(layer.isolation)
        assert set(enforced.values()) <= {"sampled", "process tree walk"}, enforced
    assert _leftover_cgroups(pid) == []


@needs_c
def test_the_match_prints_and_records_what_the_kernel_enforces(tmp_path: Path) -> None:
    cg = _cgroups_or_skip()
    replay = tmp_path / "m.jsonl"
    printed, _, _ = _match(str(MINIMAL_C), str(MINIMAL_C), "--rounds", "5", "--replay", str(replay))
    memory_by = cg.kernel["memory"]
    assert f"memory kernel ({memory_by} memory)" in " ".join(printed["text"].split())
    header = json.loads(replay.read_text().splitlines()[0])
    assert header["containment"]["enforcement"]["memory"] == f"kernel ({memory_by} memory)"
    check = subprocess.run(
        [sys.executable, "-m", "referee", "verify", str(replay)], capture_output=True, text=True
    )
    assert check.returncode == 0, check.stdout + check.stderr


@needs_c
@pytest.mark.parametrize("cgroups", ["auto", "off"])
def test_an_escapee_that_drops_its_marker_is_charged_to_its_own_bot(
    cgroups: str, framing_escapee: Path
) -> None:
    # Its cgroup (auto) or, as root, its uid (off) says whose it is; before, it was
    # charged to both seats, so a bot could frame its opponent.
    if cgroups == "auto":
        _cgroups_or_skip()
    elif os.geteuid() != 0:
        pytest.skip("without cgroups only a uid of its own (root) names the escapee's bot")
    result, _, _ = _match(
        str(framing_escapee),
        str(MINIMAL_C),
        "--rounds",
        "10",
        "--sandbox",
        "basic",
        "--cgroups",
        cgroups,
        "--json",
        "--no-replay",
    )
    framer, victim = _seat(result, 0), _seat(result, 1)
    assert framer["status"] == "escaped_process", framer
    assert any("framing_escapee --sleep" in e for e in framer["escaped_processes"]), framer
    assert victim.get("status", "ok") == "ok", victim
    assert not victim.get("escaped_processes"), victim


@needs_c
def test_an_unprivileged_referee_samples_says_so_and_charges_no_one_it_cannot_tell(
    framing_escapee: Path,
) -> None:
    user = unprivileged_referee()
    if user is None:
        pytest.skip("cannot run the referee as an unprivileged uid here (not root, or no setpriv)")
    # Where that uid can run it (pytest's own directories are root's alone).
    shared = Path(tempfile.mkdtemp(prefix="cgroup-test-"))
    try:
        shared.chmod(0o755)
        bot = shared / "framing_escapee"
        shutil.copy(framing_escapee, bot)
        _check_unprivileged(user, bot)
    finally:
        shutil.rmtree(shared)


def _check_unprivileged(user: tuple[str, ...], bot: Path) -> None:
    result, _, _ = _match(
        str(bot),
        str(MINIMAL_C),
        "--rounds",
        "10",
        "--sandbox",
        "basic",
        "--json",
        "--no-replay",
        user=user,
    )
    enforced = result["containment"]["enforcement"]
    assert not any(v.startswith("kernel") for v in enforced.values()), enforced
    # The kernel's process cap is there, but one for the whole user: said so.
    assert enforced["processes"] == (
        "sampled; kernel cap RLIMIT_NPROC per user, shared by both seats"
    ), enforced
    assert result["containment"]["bot_uids"] == [UNPRIVILEGED_UID, UNPRIVILEGED_UID]
    for seat in (0, 1):
        verdict = _seat(result, seat)
        # Both bots share the referee's uid, there is no cgroup and the escapee
        # dropped its marker: recorded, charged to no one.
        assert verdict.get("status", "ok") == "ok", verdict
        assert not verdict.get("escaped_processes"), verdict
        assert any("--sleep" in e for e in verdict["extra"]["escaped_unattributed"]), verdict
        assert 0 < verdict["peak_rss_kib"] < 12 * 1024, verdict


TMPFS_WRITER = """
import json, sys
sys.stdin.readline()
print(json.dumps({"name": "tmpfs_writer"}), flush=True)
for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("type") != "turn":
        break
    if msg["round"] == 2:
        for i in range(3):  # the scratch directory, a tmpfs; files under RLIMIT_FSIZE
            with open(f"held{i}.bin", "wb") as f:
                for _ in range(50):
                    f.write(b"\\1" * (1 << 20))
                    f.flush()
    print(json.dumps({"round": msg["round"], "real_move": "rock"}), flush=True)
"""


@pytest.mark.parametrize("layer", ["bwrap", "unshare"])
def test_tmpfs_pages_count_against_the_bots_memory_cgroup(layer: str, tmp_path: Path) -> None:
    # 150 MiB written to the bot's scratch tmpfs (which may hold 256 MiB) are in no
    # process's resident set, but the kernel charges them to the writer's memory
    # cgroup: at a limit of 100 MiB, with no swap to put them in, it is killed.
    cg = _cgroups_or_skip()
    if any(line.split()[0] != "Filename" for line in Path("/proc/swaps").read_text().splitlines()):
        pytest.skip("this host has swap: tmpfs pages over the limit go there, not to an OOM kill")
    try:
        sandbox.choose_layer(layer)
    except sandbox.SandboxError as exc:
        skip_or_fail(f"layer {layer} unavailable here: {exc}")
    bot = tmp_path / "tmpfs_writer.py"
    bot.write_text(TMPFS_WRITER)
    result, pid, _ = _match(
        f"{sys.executable} {bot}",
        str(MINIMAL_C),
        *("--rounds", "5", "--sandbox", layer, "--memory-mib", "100", "--disk-mib", "256"),
        *("--move-timeout", "10", "--json", "--no-replay"),
    )
    verdict = _seat(result, 0)
    assert verdict["status"] == "memory_limit" and verdict["disqualified"], verdict
    assert "the kernel killed" in verdict["faults"][0]["detail"], verdict
    assert cg.where("memory") is not None
    assert _leftover_cgroups(pid) == []


def test_the_pids_cgroup_refuses_the_fork_past_the_limit_exactly() -> None:
    # The zoo's fork_cap forks until a fork is refused and says how many it made:
    # with a pids cgroup the kernel refuses the one that would pass the limit, so
    # the bot's cgroup (the bot, its children, and the launch's processes that stay
    # in it: a handful at most) never holds more than the limit. Without one, up
    # to 400 went in before a reading counted them (docs/security.md).
    _cgroups_or_skip()
    limit = sandbox.Limits().processes
    fork_cap = ROOT / "tests" / "zoo" / "fork_cap.py"
    result, pid, _ = _match(
        f"{sys.executable} {fork_cap}",
        str(MINIMAL_C),
        *("--rounds", "5", "--sandbox", "basic", "--move-timeout", "5", "--json", "--no-replay"),
    )
    verdict = _seat(result, 0)
    assert verdict["status"] == "process_limit" and verdict["disqualified"], verdict
    assert "the kernel refused" in verdict["faults"][0]["detail"], verdict
    stderr = verdict["stderr_head"] + verdict["stderr_tail"]
    said = [ln for ln in stderr.splitlines() if ln.startswith("forks: ")]
    assert said and said[0].endswith("then refused (Resource temporarily unavailable)"), said
    made = int(said[0].split()[1])
    assert limit - 8 <= made < limit, said  # the bot itself is one of the limit
    assert _leftover_cgroups(pid) == []


FORK_HOLD = ROOT / "tests" / "bots" / "fork_hold.py"
FORK_EACH_ROUND = ROOT / "tests" / "zoo" / "fork_each_round.py"


@pytest.mark.parametrize("layer", ["basic", "unshare"])
def test_an_unprivileged_referee_charges_the_seat_that_took_the_shared_process_cap(
    layer: str,
) -> None:
    # As an unprivileged user without a pids cgroup, both seats are one user under
    # one RLIMIT_NPROC. Seat 1 (started after seat 0, so its cap is no lower) forks
    # until refused, staying within its own limit of 256, and plays on; seat 0 forks
    # a child every round and dies of the refused fork. Before, seat 0 was charged
    # (crash, disqualified) and seat 1 won; now seat 1 is out for taking more than
    # its share and seat 0 gets a sandbox_error that does not put it out. (Should
    # the watchdog count seat 1 over 256 first, it is out before seat 0 forks.)
    user = unprivileged_referee()
    if user is None:
        pytest.skip("cannot run the referee as an unprivileged uid here (not root, or no setpriv)")
    shared = Path(tempfile.mkdtemp(prefix="nproc-test-"))
    try:
        shared.chmod(0o755)
        for bot in (FORK_HOLD, FORK_EACH_ROUND, FORK_EACH_ROUND.parent / "zoolib.py"):
            shutil.copy(bot, shared)
        replays = shared / "replays"
        replays.mkdir()
        os.chown(replays, UNPRIVILEGED_UID, UNPRIVILEGED_UID)
        replay = replays / "m.jsonl"
        python = user[-1]
        result, _, _ = _match(
            f"{python} {shared / FORK_EACH_ROUND.name}",
            f"{python} {shared / FORK_HOLD.name}",
            *("--rounds", "10", "--sandbox", layer, "--cgroups", "off"),
            # Forked Python processes count their shared pages in each resident set.
            *("--memory-mib", "8000", "--json", "--replay", str(replay)),
            user=user,
        )
        check = subprocess.run(
            [sys.executable, "-m", "referee", "verify", str(replay)],
            capture_output=True,
            text=True,
        )
    finally:
        shutil.rmtree(shared)
    assert check.returncode == 0, check.stdout + check.stderr
    victim, holder = _seat(result, 0), _seat(result, 1)
    assert "fork_hold: " in holder["stderr_head"], holder
    assert holder["status"] == "process_limit" and holder["disqualified"], holder
    assert not victim.get("disqualified"), victim
    assert victim.get("status", "ok") in ("ok", "sandbox_error"), victim
    if victim.get("status") == "sandbox_error":
        (fault,) = victim["faults"]
        assert "seat 1 held" in fault["detail"], fault
        assert "exit code 1" in fault["detail"], fault
    assert result["winner"] == 0, result


def test_a_dead_referees_cgroups_are_swept_with_what_is_left_in_them() -> None:
    cg = _cgroups_or_skip()
    # A referee killed before its teardown leaves its bots' cgroups, and in them any
    # escapee (a setsid grandchild has no parent-death signal). Pid 2**22 + 1 is
    # above the kernel's largest pid: no live referee has it.
    name = f"referee-{2**22 + 1}-{os.urandom(4).hex()}-seat0"
    dirs = [os.path.join(h.base, name) for h in cg.hierarchies]
    for d in dirs:
        os.mkdir(d)
    join = 'for f in "$@"; do echo 0 > "$f"; done; exec sleep 60'
    escapee = subprocess.Popen(["sh", "-c", join, "sh", *(f"{d}/cgroup.procs" for d in dirs)])
    try:
        procs = Path(dirs[0], "cgroup.procs")
        while not procs.read_text().split():  # until it has joined
            assert escapee.poll() is None
        sweep_stale(cg)
        assert escapee.wait(timeout=5) == -9
        assert [d for d in dirs if os.path.exists(d)] == []
    finally:
        escapee.kill()
        escapee.wait()
        for d in dirs:
            if os.path.exists(d):
                os.rmdir(d)


END_THREAD_FLOOD = ROOT / "tests" / "bots" / "end_thread_flood.py"


@needs_c
def test_a_limit_found_only_at_teardown_disqualifies_like_one_found_during_play(
    tmp_path: Path,
) -> None:
    # The bot starts threads once it has been sent "end": the kernel refuses the one
    # past its process limit, and only the cgroup's last reading, at teardown, shows
    # it (no watchdog reading comes after "end"). Before, that
    # fault set its status but not "disqualified": the result still counted it as a
    # player in good standing, and the replay failed its own verification.
    _cgroups_or_skip()
    replay = tmp_path / "m.jsonl"
    bot = f"{sys.executable} {END_THREAD_FLOOD}"
    common = [bot, str(MINIMAL_C), "--rounds", "5"]
    result, pid, _ = _match(*common, "--json", "--replay", str(replay))
    verdict = _seat(result, 0)
    assert verdict["status"] == "process_limit", verdict
    assert "the kernel refused" in verdict["faults"][0]["detail"], verdict
    assert "end_thread_flood: started" in verdict["stderr_head"], verdict
    assert verdict["disqualified"] is True, verdict
    seats = {s["seat"]: s for s in result["seats"]}
    assert seats[0]["stats"]["disqualified"], seats[0]  # what a league counts
    assert not seats[1]["stats"].get("disqualified"), seats[1]
    assert result["winner"] == 1 and seats[1]["placement"] < seats[0]["placement"], result
    assert _seat(result, 1).get("status", "ok") == "ok"
    check = subprocess.run(
        [sys.executable, "-m", "referee", "verify", str(replay)], capture_output=True, text=True
    )
    assert check.returncode == 0, check.stdout + check.stderr
    assert _leftover_cgroups(pid) == []


# -- cgroup v2 on a fake cgroupfs ------------------------------------------------
#
# This host's controllers are on cgroup v1 (its v2 tree has none), so the v2 path
# is checked against a directory tree that stands in for cgroupfs: what the code
# writes there and what it makes of what the kernel would write.


def _fake_v2_scope(root: Path, peak: bool) -> Path:
    """A delegated v2 scope holding only this process, its controllers available
    but not enabled for children; with ``memory.peak`` (Linux 5.19+) or without."""
    scope = root / "user.slice" / "referee.scope"
    scope.mkdir(parents=True)
    (scope / "cgroup.controllers").write_text("cpuset cpu io memory pids\n")
    (scope / "cgroup.subtree_control").write_text("")
    (scope / "cgroup.procs").write_text(f"{os.getpid()}\n")
    (scope / "cgroup.kill").write_text("")
    for name in ("memory.max", "memory.current", "pids.max", "cpu.weight"):
        (scope / name).write_text("max\n" if name.endswith(".max") else "0\n")
    if peak:
        (scope / "memory.peak").write_text("0\n")
    return scope


def _fake_v2_host(tmp_path: Path, peak: bool) -> tuple[CgroupHost, Path]:
    _fake_v2_scope(tmp_path / "cg2", peak)
    found = detect(
        "0::/user.slice/referee.scope\n", _mountinfo("cgroup2", tmp_path / "cg2", "nsdelegate")
    )
    (h,) = found.hierarchies
    return found, Path(h.base)


def _kernel_files(d: Path, current: int, peak: int | None) -> None:
    """What the kernel shows in a bot's v2 cgroup after some play."""
    (d / "memory.current").write_text(f"{current}\n")
    if peak is not None:
        (d / "memory.peak").write_text(f"{peak}\n")
    (d / "memory.events").write_text("low 0\nhigh 0\nmax 7\noom 1\noom_kill 1\noom_group_kill 1\n")
    (d / "pids.current").write_text("3\n")
    (d / "pids.events").write_text("max 2\n")
    (d / "cpu.stat").write_text("usage_usec 1250000\nuser_usec 1000000\nsystem_usec 250000\n")
    (d / "cgroup.procs").write_text("")


def test_a_v2_bots_cgroup_gets_its_limits_and_is_read_as_the_kernel_writes_it(
    tmp_path: Path,
) -> None:
    found, scope = _fake_v2_host(tmp_path, peak=True)
    assert (scope / "cgroup.subtree_control").read_text() == "+cpu +memory +pids"
    limits = sandbox.Limits(memory_mib=96, processes=40)
    cg = sandbox.BotCgroup.create(found, "seat0", limits)
    (d,) = (Path(p) for p in cg.dirs.values())
    assert d.parent == scope and d.name.startswith(f"referee-{os.getpid()}-")
    assert (d / "memory.max").read_text() == str(96 * 1024 * 1024)
    assert (d / "memory.swap.max").read_text() == "0"
    assert (d / "memory.oom.group").read_text() == "1"
    assert (d / "pids.max").read_text() == "40"
    nice = os.getpriority(os.PRIO_PROCESS, 0)
    assert (d / "cpu.weight").read_text() == str(round(cpu_weight_of_nice(nice) * 100 / 1024))
    assert not (d / "cpu.shares").exists() and not (d / "memory.limit_in_bytes").exists()
    assert cg.join_files() == [str(d / "cgroup.procs")]
    _kernel_files(d, current=5 << 20, peak=96 << 20)
    reading = cg.read()
    assert reading == Reading(5 << 20, 96 << 20, 1, 3, 2, 1.25), reading
    kind, _detail = kernel_limit_fault(reading, limits) or (None, "")
    assert kind == "memory_limit"
    # The teardown: the whole cgroup killed at once through cgroup.kill, then removed.
    assert cg.kill(timeout=0.1)
    assert (d / "cgroup.kill").read_text() == "1"
    for f in d.iterdir():  # (cgroupfs removes its own files with the directory)
        f.unlink()
    cg.remove()
    assert not d.exists() and cg.dirs == {}
    said = sandbox.enforcement(found)
    assert said["memory"] == "kernel (cgroup v2 memory)"
    assert said["processes"] == "kernel (cgroup v2 pids)"
    assert said["teardown"] == "kernel (cgroup v2 kill)"
    assert said["cpu_time"] == "kernel (cgroup v2 accounting)"
    assert said["peak_memory"] == "kernel (cgroup v2 peak)"


def test_a_v2_kernel_without_memory_peak_samples_the_peak_and_says_so(tmp_path: Path) -> None:
    # memory.peak came with Linux 5.19: before it, the peak is the highest
    # memory.current the readings saw (the watchdog reads every 100 ms).
    found, _scope = _fake_v2_host(tmp_path, peak=False)
    cg = sandbox.BotCgroup.create(found, "seat0", sandbox.Limits())
    (d,) = (Path(p) for p in cg.dirs.values())
    try:
        _kernel_files(d, current=40 << 20, peak=None)
        assert cg.read().peak_bytes == 40 << 20
        _kernel_files(d, current=8 << 20, peak=None)
        assert cg.read().peak_bytes == 40 << 20  # the highest seen, not the last
        said = sandbox.enforcement(found)
        assert said["memory"] == "kernel (cgroup v2 memory)"
        assert said["peak_memory"] == "sampled (cgroup v2 memory use at each reading)"
    finally:
        for f in d.iterdir():
            f.unlink()
        cg.remove()
