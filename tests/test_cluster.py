"""``referee tournament --cluster``: a real Dask scheduler and two workers on
loopback, bots shipped as verified archives, a worker killed mid-tournament."""

from __future__ import annotations

import importlib.util
import io
import json
import os
import signal
import sqlite3
import subprocess
import sys
import tarfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
import trio

# Looked for, not imported: importing it takes seconds, which every test process that
# only collects this file (each worker of make test) paid; the tests import it when
# they make an executor (referee.tournament.cluster).
if importlib.util.find_spec("distributed") is None:  # a dev dependency: CI installs it
    from conftest import IN_CI, skip_or_fail

    if not IN_CI:
        pytest.skip("dask.distributed is not installed", allow_module_level=True)
    skip_or_fail("dask.distributed is not installed")

from conftest import processes_mentioning, submit_then  # noqa: E402
from test_tournament import without_timing  # noqa: E402

from referee.match import MatchConfig  # noqa: E402
from referee.tournament.cluster import (  # noqa: E402
    ArchiveError,
    DaskExecutor,
    localize,
    pack_dir,
    package_bot,
    play_on_worker,
    unpack_bot,
)
from referee.tournament.worker import Job  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
START_TIMEOUT = 40.0

# Four deterministic bots; a short sleep per round keeps each match in progress long
# enough for the fault test to catch one.
BOT = """\
import json, sys, time
MOVES = ("rock", "paper", "scissors", "lizard", "spock")
hello = json.loads(sys.stdin.readline())
print(json.dumps({{"name": "{name}"}}), flush=True)
for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("type") == "end":
        break
    r = msg["round"]
    time.sleep(0.003)
    print(json.dumps({{"round": r, "real_move": MOVES[({expr}) % 5]}}), flush=True)
"""
BOTS = {"rocky": "0", "cyclic": "r", "stride": "r * 3 + 1", "mixer": "(r * r) // 3"}
LEAGUE = ["--legs", "1", "--rounds", "100", "--finalists", "0", "--seed", "3", "--quiet"]


def _kill(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    proc.wait()


class Cluster:
    def __init__(self, base: Path) -> None:
        self.base = base
        self.procs: list[subprocess.Popen[bytes]] = []
        self.workers: list[subprocess.Popen[bytes]] = []
        self.homes: list[Path] = []
        self.address = ""

    def _spawn(self, args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
        log = open(cwd / "process.log", "wb")
        with log:
            proc = subprocess.Popen(
                [sys.executable, "-m", *args],
                cwd=cwd,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # killed as a group in cleanup
            )
        self.procs.append(proc)
        return proc

    def start(self) -> None:
        sched_dir = self.base / "scheduler"
        sched_dir.mkdir()
        info = sched_dir / "scheduler.json"
        self._spawn(
            ["distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", "0",
             "--no-dashboard", "--scheduler-file", str(info)],
            sched_dir, dict(os.environ),
        )  # fmt: skip
        deadline = time.monotonic() + START_TIMEOUT
        while not info.exists() or not info.read_text().strip().endswith("}"):
            assert time.monotonic() < deadline, "the scheduler did not start"
            time.sleep(0.05)
        self.address = json.loads(info.read_text())["address"]
        for k in (1, 2):
            self.add_worker(f"w{k}")

    def add_worker(self, name: str) -> None:
        # Each worker lives in a directory of its own, with its own TMPDIR and bot
        # cache: nothing tells it where the coordinator keeps the bots.
        home = self.base / name
        (home / "tmp").mkdir(parents=True)
        env = {
            **os.environ,
            "TMPDIR": str(home / "tmp"),
            "REFEREE_CLUSTER_CACHE": str(home / "cache"),
        }
        proc = self._spawn(
            ["distributed.cli.dask_worker", self.address, "--nworkers", "1", "--nthreads", "1",
             "--no-nanny", "--no-dashboard", "--name", name, "--local-directory", str(home)],
            home, env,
        )  # fmt: skip
        self.workers.append(proc)
        self.homes.append(home)

    def wait_for_workers(self, n: int) -> None:
        from distributed import Client

        with Client(self.address, timeout=START_TIMEOUT, set_as_default=False) as client:
            client.wait_for_workers(n, timeout=START_TIMEOUT)

    def stop(self) -> None:
        for proc in reversed(self.procs):
            _kill(proc)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    c = Cluster(tmp_path_factory.mktemp("cluster"))
    try:
        c.start()
        c.wait_for_workers(2)
        yield c
    finally:
        c.stop()


@pytest.fixture(scope="module")
def league(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The bots (in a directory no worker is told about) and the league played
    locally, the reference every cluster run must equal."""
    base = tmp_path_factory.mktemp("coordinator")
    bots = base / "bots"
    bots.mkdir()
    for name, expr in BOTS.items():
        (bots / f"{name}.py").write_text(BOT.format(name=name, expr=expr))
    cmds = [f"python3 {bots / name}.py" for name in BOTS]
    local = base / "local"
    proc = _referee(base, *cmds, *LEAGUE, "-j", "2", "--out", str(local))
    assert proc.returncode == 0, proc.stderr[-3000:]
    return {"base": base, "bots": bots, "cmds": cmds, "results": _results(local)}


def _referee(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "referee", "tournament", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _results(out: Path) -> Any:
    return without_timing(json.loads((out / "results.json").read_text()))


def _commands(db: Path) -> list[str]:
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT result FROM matches WHERE status = 'done'").fetchall()
    return [arg for (r,) in rows for s in json.loads(r)["seats"] for arg in s["command"]]


def test_league_on_the_cluster_equals_the_local_league(
    cluster: Cluster, league: dict[str, Any]
) -> None:
    out = league["base"] / "on-cluster"
    proc = _referee(league["base"], *league["cmds"], *LEAGUE, "--cluster", cluster.address,
                    "--out", str(out))  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert _results(out) == league["results"]
    # The matches ran the unpacked copies in the workers' caches, not the originals.
    scripts = [a for a in _commands(out / "tournament.sqlite") if a.endswith(".py")]
    assert scripts and not any(a.startswith(str(league["bots"])) for a in scripts)
    caches = tuple(str(h / "cache") + "/" for h in cluster.homes)
    assert all(a.startswith(caches) for a in scripts)
    assert sorted((out / "replays").iterdir()) and not list((out / "replays").glob("*.part*"))


def _in_match(home: Path) -> bool:
    """Whether this worker is in the middle of a match (its replay has begun)."""
    return any(p.stat().st_size for p in (home / "tmp").glob("referee-match-*/replays/*"))


def _done(db: Path) -> int:
    try:
        with sqlite3.connect(db, timeout=1) as conn:
            (n,) = conn.execute("SELECT COUNT(*) FROM matches WHERE status = 'done'").fetchone()
    except sqlite3.Error:
        return 0
    return int(n)


def test_a_worker_killed_mid_match_loses_nothing(cluster: Cluster, league: dict[str, Any]) -> None:
    out = league["base"] / "with-a-fault"
    coordinator = subprocess.Popen(
        [sys.executable, "-m", "referee", "tournament", *league["cmds"], *LEAGUE,
         "--cluster", cluster.address, "--out", str(out)],
        cwd=league["base"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        start_new_session=True,
    )  # fmt: skip
    try:
        victim, home = cluster.workers[0], cluster.homes[0]
        deadline = time.monotonic() + 60
        # Once the tournament is under way, kill the worker in the middle of a match.
        while not (_done(out / "tournament.sqlite") >= 1 and _in_match(home)):
            assert coordinator.poll() is None, "finished before a worker could be killed"
            assert time.monotonic() < deadline, "no match started on the first worker"
            time.sleep(0.01)
        victim.kill()
        victim.wait()
        stdout, stderr = coordinator.communicate(timeout=90)
    finally:
        _kill(coordinator)
    assert coordinator.returncode == 0, stderr.decode()[-3000:]
    assert _done(out / "tournament.sqlite") == len(league["results"]["matches"])
    assert _results(out) == league["results"]
    # The abandoned match's bots did not outlive the worker (a deadline: its bots see
    # their input end at once, but a loaded machine may be slow to schedule them).
    deadline = time.monotonic() + 60
    while processes_mentioning(str(home / "cache")):
        assert time.monotonic() < deadline, "the killed worker's bots are still running"
        time.sleep(0.1)
    # The replacement worker keeps the cluster at two for any later test.
    cluster.add_worker("w3")


def _job(tmp: Path, label_cmds: list[tuple[str, list[str]]]) -> Job:
    cfg = MatchConfig(rounds=100, seed=9, replay=str(tmp / "m1.part.jsonl"), log_dir=str(tmp))
    return Job(
        id="m1",
        bots=[{"command": cmd, "label": label} for label, cmd in label_cmds],
        cfg=msgspec.to_builtins(cfg),
    )


def test_the_executor_reports_the_worker_playing_each_match(
    cluster: Cluster, league: dict[str, Any], tmp_path: Path
) -> None:
    bots = league["bots"]
    job = _job(tmp_path, [(n, [sys.executable, str(bots / f"{n}.py")]) for n in BOTS][:2])

    async def main() -> tuple[dict[str, Any], list[Any], list[Any]]:
        ex = await trio.to_thread.run_sync(DaskExecutor, cluster.address)
        seen: list[Any] = []

        def playing() -> bool:
            seen[:] = [w for w in ex.workers() if w.job == "m1"]
            return bool(seen)

        async def nothing() -> None:
            pass

        try:
            outcome = await submit_then(ex, job, playing, nothing)
            return outcome, seen, ex.workers()
        finally:
            await ex.aclose()

    outcome, busy, after = trio.run(main)
    assert outcome.reason == "complete" and outcome.steps == 100
    assert outcome.replay is not None and Path(outcome.replay) == tmp_path / "m1.part.jsonl"
    assert (tmp_path / "m1.part.jsonl").stat().st_size > 0
    assert busy[0].pid in {p.pid for p in cluster.workers} and busy[0].since is not None
    assert all(w.job is None for w in after) and sum(w.done for w in after) >= 1


def test_a_tampered_archive_is_refused(tmp_path: Path) -> None:
    src = tmp_path / "bot"
    src.mkdir()
    (src / "bot.py").write_text("print('hello')\n")
    digest, data = pack_dir(src)
    assert pack_dir(src) == (digest, data)  # reproducible: the hash names the content
    cache = tmp_path / "cache"
    cache.mkdir()

    # One byte changed in transit: refused, and nothing is unpacked.
    bad = bytearray(data)
    bad[len(bad) // 2] ^= 0xFF
    with pytest.raises(ArchiveError, match="does not match its sha256"):
        unpack_bot(digest, bytes(bad), cache)
    # A different (well-formed) archive under the original's name: refused too.
    evil = io.BytesIO()
    with tarfile.open(fileobj=evil, mode="w:gz") as tar:
        payload = b"import os; os.system('echo pwned')\n"
        info = tarfile.TarInfo("bot.py")
        info.size = len(payload)
        tar.addfile(info, io.BytesIO(payload))
    with pytest.raises(ArchiveError):
        unpack_bot(digest, evil.getvalue(), cache)
    assert not (cache / digest).exists()

    # The genuine archive unpacks; a cached copy changed afterwards is replaced.
    unpacked = unpack_bot(digest, data, cache)
    assert (unpacked / "bot.py").read_text() == "print('hello')\n"
    os.chmod(unpacked, 0o700)
    os.chmod(unpacked / "bot.py", 0o600)
    (unpacked / "bot.py").write_text("print('changed')\n")
    assert (unpack_bot(digest, data, cache) / "bot.py").read_text() == "print('hello')\n"

    # The command is rewritten to the unpacked file and this machine's Python.
    pkg, _data = package_bot("b", ["/opt/elsewhere/bin/python3.12", str(src / "bot.py")])
    assert pkg.archive == digest
    assert localize(pkg, unpacked) == [sys.executable, str(unpacked / "bot.py")]


def test_a_worker_with_another_referee_release_refuses() -> None:
    with pytest.raises(ArchiveError, match="same referee on every worker"):
        play_on_worker("k", {"id": "m1", "cfg": {}}, [], {}, "referee 0.0.0, old-format 0")


def test_cluster_without_dask_is_one_line(tmp_path: Path) -> None:
    code = (
        "import sys; sys.modules['distributed'] = None\n"
        "from referee.cli import main\n"
        "sys.exit(main(['tournament', 'rock', 'cycler', '--cluster', 'tcp://127.0.0.1:1',"
        f" '--out', {str(tmp_path / 'out')!r}]))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode != 0
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "pip install 'referee[cluster]'" in lines[0], proc.stderr
    assert not (tmp_path / "out").exists()
