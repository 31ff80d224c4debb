"""Shared helpers: run the real CLI, find leftover bot processes."""

from __future__ import annotations

import contextlib
import fcntl
import functools
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import pytest

ROOT = Path(__file__).resolve().parent.parent
TEST_BOTS = Path(__file__).resolve().parent / "bots"

# .ci/run sets CI=true. There every tool the tests need is installed on purpose, so a
# missing one is a broken CI machine, not a reason to skip: the test fails instead.
IN_CI = os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")
# The sandbox layers CI must provide (bubblewrap and util-linux's unshare are
# installed by .ci/run). Landlock is a kernel option CI cannot install, so it may skip.
CI_REQUIRED_LAYERS = ("bwrap", "unshare", "basic")


def skip_or_fail(reason: str) -> NoReturn:
    """Skip with ``reason``; under CI=true fail with it instead (see IN_CI)."""
    if IN_CI:
        pytest.fail(f"CI=true, but {reason}", pytrace=False)
    pytest.skip(reason)


def needs(missing: bool, reason: str) -> pytest.MarkDecorator:
    """A skipif mark that becomes a failure under CI=true (see ``skip_or_fail``)."""
    if missing and IN_CI:
        return pytest.mark.ci_missing(reason=reason)
    return pytest.mark.skipif(missing, reason=reason)


needs_node = needs(shutil.which("node") is None, "node is not installed")


# The uid the tests run an unprivileged referee as (through setpriv, when they run as
# root): no account has it, and it lies just below the bots' uid range
# (referee/sandbox/base.py, Limits.uid_first), so whatever of it is left after the
# suite is the suite's own leftover (see the end-of-suite check below).
UNPRIVILEGED_UID = 60999


@functools.cache
def unprivileged_referee() -> tuple[str, ...] | None:
    """A command that runs a Python interpreter with the referee importable as
    UNPRIVILEGED_UID, with no capability, where that works here; None where not (the
    tests do not run as root, or setpriv is missing). The interpreter must also be one
    that uid may start again (the launcher shim is the referee's own interpreter): a
    virtual environment on a private home (a pyenv under /root, say) is not, so the
    system's Python is tried too, with this checkout and these site-packages on its
    path (the same minor version: compiled packages load)."""
    setpriv = shutil.which("setpriv")
    if os.geteuid() != 0 or setpriv is None:
        return None
    import site

    uid = UNPRIVILEGED_UID
    prefix = [setpriv, f"--reuid={uid}", f"--regid={uid}", "--clear-groups"]
    prefix += ["--inh-caps=-all", "--bounding-set=-all"]
    path = os.pathsep.join([str(ROOT), *site.getsitepackages()])
    check = (
        "import subprocess, sys, referee; subprocess.run([sys.executable, '-c', ''], check=True)"
    )
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    system = shutil.which(version, path="/usr/local/bin:/usr/bin:/bin") or ""
    for python in (os.path.realpath(sys.executable), system):
        if not python:
            continue
        command = [*prefix, "env", f"PYTHONPATH={path}", python]
        probe = subprocess.run([*command, "-c", check], capture_output=True, cwd="/")
        if probe.returncode == 0:
            return tuple(command)
    return None


# make test runs two files at a time (pytest-xdist, --dist loadfile), handing out
# files in collection order (--no-loadscope-reorder: by default pytest-xdist hands them
# out by their number of tests instead, which put long files of few tests last); the
# longest files go first so that none of them starts last and leaves the other worker
# idle. (Order of 2026-11-29: each file timed alone on one CPU, by its CPU time and
# its waits; the server files' ladders no longer wait behind niced bots. The rank
# calibration went from about 225 s to 100 s of CPU that afternoon, below the
# ladder's about 180 s.)
LONGEST_FIRST = (
    "test_zoo.py",
    "test_ladder_calibration.py",
    "test_rank_calibration.py",
    "test_tournament.py",
    "test_sprt.py",
    "test_runtimes.py",
    "test_server.py",
    "test_tournament_tables.py",
    "test_deception_bots.py",
    "test_languages.py",
    "test_gauntlet.py",
    "test_sample_bots.py",
    "test_server_ops.py",
    "test_cluster.py",
    "test_sloppy_determinism.py",
    "test_season.py",
    "test_fuzz_output.py",
    "test_server_uploads.py",
    "test_server_cluster.py",
    "test_match_faults.py",
    "test_stats.py",
    "test_sprt_estimates.py",
    "test_viewer.py",
    "test_server_crash.py",
    "test_server_finals.py",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    def rank(item: pytest.Item) -> int:
        name = item.path.name
        return LONGEST_FIRST.index(name) if name in LONGEST_FIRST else len(LONGEST_FIRST)

    items.sort(key=rank)  # stable: the tests of a file keep their order


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "ci_missing(reason): a requirement CI must provide is missing (fails)"
    )
    if not _is_xdist_worker(config):  # before any worker starts
        _before[:] = [traces()]


def pytest_runtest_setup(item: pytest.Item) -> None:
    for mark in item.iter_markers("ci_missing"):
        skip_or_fail(mark.kwargs["reason"])


async def submit_then(
    executor: Any,
    job: Any,
    ready: Callable[[], bool],
    then: Callable[[], Awaitable[None]],
    timeout: float = 30,
) -> Any:
    """Submit ``job`` to a tournament executor and, while it plays, wait until
    ``ready()`` holds (checked every 10 ms, failing after ``timeout`` s), then await
    ``then()``; returns the match outcome."""
    import trio

    result: dict[str, Any] = {}
    async with trio.open_nursery() as nursery:

        async def play() -> None:
            result["outcome"] = await executor.submit(job)

        nursery.start_soon(play)
        with trio.fail_after(timeout):
            while not ready():
                await trio.sleep(0.01)
        await then()
    return result["outcome"]


@pytest.fixture
def tmp_path(tmp_path: Path) -> Path:
    """pytest's own, open to everyone: when the tests run as root, each bot runs as a
    uid of its own and must be able to enter the directory that holds it, as a
    tournament's bot directories must be (docs/security.md)."""
    tmp_path.chmod(0o755)
    return tmp_path


@pytest.fixture(scope="session")
def tmp_path_factory(tmp_path_factory: pytest.TempPathFactory) -> pytest.TempPathFactory:
    """The same for directories made by module- and session-scoped fixtures."""
    mktemp = tmp_path_factory.mktemp

    def open_mktemp(basename: str, numbered: bool = True) -> Path:
        path = mktemp(basename, numbered)
        path.chmod(0o755)
        return path

    tmp_path_factory.mktemp = open_mktemp  # type: ignore[method-assign]
    return tmp_path_factory


def has_content(path: Path) -> bool:
    """A file that exists and is not empty (a replay whose header is out)."""
    return path.exists() and path.stat().st_size > 0


def replay_steps(path: Path) -> list[dict[str, Any]]:
    """The step records of a replay file, as JSON values (as the replay reader gives
    them back: a lean replay's turn messages and action fields restored)."""
    from referee.replay import iter_lines

    lines = [json.loads(line) for line in iter_lines(path)]
    return [line for line in lines if line["type"] == "step"]


ECHO_BOT = (
    "import sys\nfor line in sys.stdin:\n    sys.stdout.write(line)\n    sys.stdout.flush()\n"
)


def reply_latency_s(rounds: int = 30) -> float:
    """The slowest of ``rounds`` line round trips to a fresh Python process, now: how
    late a bot's reply can be on this machine under its current load. Tests whose move
    limits must not be hit by a well-behaved bot scale them by it."""
    proc = subprocess.Popen(
        [sys.executable, "-c", ECHO_BOT], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert proc.stdin is not None and proc.stdout is not None
    slowest = 0.0
    try:
        for i in range(rounds + 1):  # the first includes the interpreter's start-up
            start = time.monotonic()
            proc.stdin.write(b"ping\n")
            proc.stdin.flush()
            assert proc.stdout.readline() == b"ping\n"
            if i:
                slowest = max(slowest, time.monotonic() - start)
    finally:
        proc.kill()
        proc.wait()
    return slowest


def move_limit_s(floor: float, cap: float = 5.0) -> float:
    """A move limit of at least ``floor`` and at least 25 times the slowest reply seen
    just now (at most ``cap``): the well-behaved bots keep their margin on a loaded
    machine, and the faults the test provokes stay faults."""
    return round(min(cap, max(floor, 25 * reply_latency_s())), 3)


def played_cleanly(result: dict[str, Any], replay: Path) -> list[tuple[Any, Any, Any]]:
    """Assert that a match ran to its end with steps played and no fault of any seat
    (two matches that both failed the handshake would otherwise compare equal);
    returns each step's (observations, actions, outcome)."""
    steps = replay_steps(replay)
    assert result["reason"] == "complete", result["reason"]
    assert result["steps"] > 0 and len(steps) == result["steps"], (result["steps"], len(steps))
    for seat in result["seats"]:
        assert seat["verdict"]["status"] == "ok", seat["verdict"]
        assert not seat["verdict"]["faults"], seat["verdict"]["faults"]
    assert all(f is None for step in steps for f in step["fault"]), "a step recorded a fault"
    assert all(any(a is not None for a in step["act"]) for step in steps)
    return [(step["obs"], step["act"], step["out"]) for step in steps]


def run_cli(
    *args: str,
    timeout: float = 120,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess:
    """``python -m referee ARGS`` as a user would run it."""
    return subprocess.run(
        [sys.executable, "-m", "referee", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd or ROOT,
        env=env,
    )


def match_json(*args: str, timeout: float = 120) -> dict[str, Any]:
    proc = run_cli("match", *args, "--json", timeout=timeout)
    assert proc.returncode in (0, 3), proc.stderr
    return json.loads(proc.stdout)


def proc_files(*names: str) -> Iterator[tuple[int, dict[str, bytes]]]:
    """(pid, {name: contents}) for every other process whose /proc/<pid>/<name>
    files could all be read (a process may vanish, or hide them, meanwhile)."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        files = _read_proc(f"/proc/{entry}", names)
        if files is None or not all(files.values()):
            # A main thread that called pthread_exit is a zombie whose files cannot be
            # read while its other threads run on: read them through a live thread.
            for tid in _listdir(f"/proc/{entry}/task"):
                if tid != entry:
                    files = _read_proc(f"/proc/{entry}/task/{tid}", names) or files
                    break
        if files is not None:
            yield int(entry), files


def _read_proc(where: str, names: tuple[str, ...]) -> dict[str, bytes] | None:
    files = {}
    try:
        for name in names:
            with open(f"{where}/{name}", "rb") as f:
                files[name] = f.read()
    except OSError:
        return None
    return files


def _listdir(path: str) -> list[str]:
    try:
        return os.listdir(path)
    except OSError:
        return []


def processes_mentioning(text: str) -> list[int]:
    """PIDs whose command line contains ``text`` (a test's unique path)."""
    needle = text.encode()
    return [pid for pid, f in proc_files("cmdline") if needle in f["cmdline"]]


@pytest.fixture
def bot_copy(tmp_path: Path):
    """Copy a test bot into the test's own directory, so leftover processes are
    recognisable by path and nothing is shared between tests."""

    def make(name: str) -> Path:
        target = tmp_path / name
        target.write_bytes((TEST_BOTS / name).read_bytes())
        return target

    return make


# -- under CI, the areas that must not have been skipped away ----------------------------

# An area counts as run when at least one of its selected tests passed. A new skip path
# (or a layer that quietly stopped working) would otherwise leave it untested and green.
CI_MUST_RUN: dict[str, Callable[[str], bool]] = {
    "the bwrap sandbox layer": lambda node: (
        ("test_sandbox.py::" in node or "test_zoo.py::" in node) and "bwrap" in node
    ),
    "the unshare sandbox layer": lambda node: (
        ("test_sandbox.py::" in node or "test_zoo.py::" in node) and "unshare" in node
    ),
    "the headless browser tests": lambda node: "test_html_browser.py::" in node,
    # (selected only when the tests run as root: as another user, the zoo's own run is
    # the unprivileged one)
    "the zoo as an unprivileged referee": lambda node: (
        "test_zoo.py::test_zoo_bot[unprivileged-" in node
    ),
}


def unrun_areas(selected: list[str], passed: set[str]) -> list[str]:
    """The areas of CI_MUST_RUN with tests selected in this session but none passed."""
    missing = []
    for area, belongs in CI_MUST_RUN.items():
        mine = [node for node in selected if belongs(node)]
        if mine and not any(node in passed for node in mine):
            missing.append(f"{area}: {len(mine)} tests selected, none passed (all skipped?)")
    return missing


_selected: list[str] = []
_passed: set[str] = set()
_unrun: list[str] = []
_left: list[str] = []


def _is_xdist_worker(config: pytest.Config) -> bool:
    # Under pytest-xdist (make test runs the suite on two workers) each worker sees
    # only its own share of the results; the controller sees them all and judges.
    return hasattr(config, "workerinput")


# -- after the suite: nothing of a bot left behind ------------------------------------

# The scratch directories (and their locks), self-test and rerun directories a
# referee makes in the temporary directory (referee/sandbox/cleanup.py, choose.py).
LEFTOVER_PREFIX = "referee-"


@dataclass(frozen=True)
class Traces:
    """What of the referees and their bots is on this machine at one moment:
    ``referee-*`` entries of the temporary directories; processes and System V IPC
    objects ("kind id") of the bots' uids (the default lease range of referee/sandbox
    and every uid leased here, and UNPRIVILEGED_UID), processes as (pid, start time): (uid, command line)."""

    entries: frozenset[str]
    processes: dict[tuple[int, int], tuple[int, str]]
    ipc: dict[str, int]


def _temp_dirs() -> list[str]:
    return sorted({"/tmp", tempfile.gettempdir()})


def _bot_uids() -> frozenset[int]:
    """The bots' uids: the default lease range, and every uid a root referee here
    has leased (a test, a league or a server may configure another range)."""
    from referee import sandbox

    return frozenset(sandbox.bot_uid_range(sandbox.Limits())) | sandbox.ever_leased()


def _processes() -> dict[int, tuple[int, int, int, bytes]]:
    """pid: (uid, parent pid, start time, command line) of every process."""
    found = {}
    for entry in _listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            uid = os.stat(f"/proc/{entry}").st_uid
            stat_line = Path(f"/proc/{entry}/stat").read_bytes()
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue  # gone meanwhile
        name_end = stat_line.rfind(b")")
        after = stat_line[name_end + 2 :].split()
        command = cmdline.replace(b"\0", b" ").strip() or stat_line[: name_end + 1]
        # fields 4 (ppid) and 22 (starttime: a pid reused is another process)
        found[int(entry)] = (uid, int(after[1]), int(after[19]), command)
    return found


def _under_a_referee(pid: int, table: dict[int, tuple[int, int, int, bytes]]) -> bool:
    """Whether ``pid`` or one of its ancestors is a running referee (its bots, and
    what escaped them, are re-parented to it while it lives)."""
    seen = set()
    while pid in table and pid not in seen:
        seen.add(pid)
        uid, parent, _, command = table[pid]
        if b" -m referee " in command + b" ":
            return True
        pid = parent
    return False


def traces() -> Traces:
    bot_uids = _bot_uids()
    entries = set()
    for base in _temp_dirs():
        with contextlib.suppress(OSError):
            entries |= {
                os.path.join(base, n) for n in os.listdir(base) if n.startswith(LEFTOVER_PREFIX)
            }
    table = _processes()
    processes = {}
    for pid, (uid, _, start, command) in table.items():
        # UNPRIVILEGED_UID has no lease: its processes under a running referee (of
        # another suite on the same machine, say) are that referee's own.
        if uid in bot_uids or uid == UNPRIVILEGED_UID and not _under_a_referee(pid, table):
            processes[(pid, start)] = (uid, command.decode(errors="replace")[:120])
    ipc = {}
    for kind in ("shm", "sem", "msg"):
        with contextlib.suppress(OSError):
            lines = Path(f"/proc/sysvipc/{kind}").read_text().splitlines()
            names = lines[0].split() if lines else []
            for line in lines[1:]:
                row = dict(zip(names, line.split(), strict=False))
                owners = {int(row.get("uid", -1)), int(row.get("cuid", -1))}
                ident = row.get("shmid") or row.get("semid") or row.get("msqid")
                mine = [uid for uid in owners if uid in bot_uids or uid == UNPRIVILEGED_UID]
                if mine and ident is not None:
                    ipc[f"{kind} {ident}"] = mine[0]
    return Traces(frozenset(entries), processes, ipc)


def _live(path: str) -> bool:
    """Whether a referee still uses this entry: a scratch directory (or its lock)
    whose lock is held (referee/sandbox/cleanup.py), say of another suite running on
    the same machine meanwhile."""
    lock = path if path.endswith(".lock") else path + ".lock"
    try:
        fd = os.open(lock, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # let go at once, by the close
    except OSError:
        return True
    finally:
        os.close(fd)
    return False


def left_behind(before: Traces, after: Traces) -> list[str]:
    """What appeared since ``before`` and no live referee holds: a directory whose
    lock is free, a process or IPC object of a bot uid whose lease is free (or of
    UNPRIVILEGED_UID, which has none: a process of it under no running referee)."""
    from referee import sandbox

    def released(uid: int) -> bool:
        return uid == UNPRIVILEGED_UID or not sandbox.lease_held(uid)

    left = [path for path in sorted(after.entries - before.entries) if not _live(path)]
    for key, (uid, command) in sorted(after.processes.items()):
        if key not in before.processes and released(uid):
            left.append(f"process {key[0]} of uid {uid}: {command}")
    for ident, uid in sorted(after.ipc.items()):
        if ident not in before.ipc and released(uid):
            left.append(f"System V {ident} of uid {uid}")
    return left


_before: list[Traces] = []


def pytest_collection_finish(session: pytest.Session) -> None:
    if session.items:
        _selected[:] = [item.nodeid for item in session.items]


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_node_collection_finished(node: Any, ids: list[str]) -> None:
    # The controller collects nothing itself; every worker collects the same ids.
    if not _selected:
        _selected[:] = ids


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when == "call" and report.passed:
        _passed.add(report.nodeid)


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    _check_left_behind(session)
    # Only a run that went to its end is judged: after -x stopped it, or an interrupt,
    # the unrun tests say nothing (and the run has failed already).
    if not IN_CI or session.shouldstop or session.shouldfail:
        return
    if _is_xdist_worker(session.config):
        return
    if session.config.option.collectonly:  # nothing was meant to run
        return
    if exitstatus not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
        return
    _unrun[:] = unrun_areas(_selected, _passed)
    if _unrun:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def _check_left_behind(session: pytest.Session) -> None:
    """Fail the run if anything of a referee or a bot is left after it: once, after
    every worker (the controller under pytest-xdist). A process that was just killed
    gets up to five seconds to be gone."""
    if _is_xdist_worker(session.config) or session.config.option.collectonly or not _before:
        return
    deadline = time.monotonic() + 5
    while True:
        left = left_behind(_before[0], traces())
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    _left[:] = left
    if left and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: Any) -> None:
    for thing in _left:
        terminalreporter.write_line(f"left behind after the tests: {thing}", red=True, bold=True)
    for problem in _unrun:
        terminalreporter.write_line(f"CI=true, but {problem}", red=True, bold=True)
