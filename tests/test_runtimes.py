"""Every language runtime this machine has runs under every containment layer's
seccomp filter (an allow-list: referee/sandbox/seccomp.py) and mount view.

A hello-world protocol bot per runtime (tests/bots/runtimes/: CPython, node, a JVM,
Go, Rust, C, C++, and .NET as Mono: Debian packages no Microsoft .NET) plays a short
match through the real CLI under each layer, and every sample bot of the catalog
plays one match under one of the layers in turn. A runtime this machine lacks is
skipped with the reason; under CI=true the ones CI installs (.ci/run: Python, node,
a C compiler, Go) fail instead.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from conftest import CI_REQUIRED_LAYERS, ROOT, skip_or_fail

from referee import sandbox
from referee.catalog import sample_bots

SOURCES = ROOT / "tests" / "bots" / "runtimes"
OPPONENT = ROOT / "sample_bots" / "bin" / "minimal_c"
ARGS = ("--rounds", "5", "--json", "--no-replay", "--quiet", "--move-timeout", "20")
# Runtimes that .ci/run makes sure of: missing under CI=true is a failure.
CI_RUNTIMES = {"python", "node", "c", "go"}


def _tool(name: str) -> str | None:
    found = shutil.which(name)
    if found is None and name in ("rustc", "cargo"):
        home = Path.home() / ".cargo" / "bin" / name
        found = str(home) if home.exists() else None
    return found


def _build(runtime: str, out: Path) -> list[str] | str:
    """The command that starts ``runtime``'s hello bot (built into ``out``), or why
    it cannot be had here."""
    src = SOURCES
    compilers = {
        "c": "cc",
        "cpp": "c++",
        "rust": "rustc",
        "go": "go",
        "java": "javac",
        "dotnet": "mcs",
    }
    if runtime == "python":
        return [sys.executable, str(src / "hello.py")]
    if runtime == "node":
        node = _tool("node")
        return [node, str(src / "hello.js")] if node else "node is not installed"
    compiler = _tool(compilers[runtime])
    if compiler is None:
        return f"{compilers[runtime]} is not installed"
    binary = out / f"hello_{runtime}"
    env = dict(os.environ, GOCACHE=str(out / "gocache"))
    commands = {
        "c": [compiler, "-O1", "-o", str(binary), str(src / "hello.c")],
        "cpp": [compiler, "-O1", "-pthread", "-o", str(binary), str(src / "hello.cpp")],
        "rust": [compiler, "-O", "-o", str(binary), str(src / "hello.rs")],
        "go": [compiler, "build", "-o", str(binary), str(src / "hello.go")],
        "java": [compiler, "-d", str(out / "java"), str(src / "Hello.java")],
        "dotnet": [compiler, f"-out:{out / 'hello.exe'}", str(src / "hello.cs")],
    }
    proc = subprocess.run(
        commands[runtime], capture_output=True, text=True, timeout=120, env=env, cwd=out
    )
    if proc.returncode != 0:
        return f"building the {runtime} bot failed: {proc.stderr[-500:]}"
    if runtime == "java":
        java = _tool("java")
        return [java, "-cp", str(out / "java"), "Hello"] if java else "java is not installed"
    if runtime == "dotnet":
        mono = _tool("mono")
        return [mono, str(out / "hello.exe")] if mono else "mono is not installed"
    return [str(binary)]


RUNTIMES = ("python", "node", "c", "cpp", "rust", "go", "java", "dotnet")


@pytest.fixture(scope="module")
def layers() -> list[sandbox.Layer]:
    found = []
    for name in sandbox.LAYERS:
        try:
            found.append(sandbox.choose_layer(name))
        except sandbox.SandboxError as exc:
            if name in CI_REQUIRED_LAYERS:
                skip_or_fail(f"layer {name} unavailable here: {exc}")
    return found


def _match(bot: list[str] | str, opponent: list[str] | str, layer: str) -> dict[str, Any]:
    def arg(cmd: list[str] | str) -> str:
        return cmd if isinstance(cmd, str) else subprocess.list2cmdline(cmd)

    argv = [sys.executable, "-m", "referee", "match", arg(bot), arg(opponent), *ARGS]
    argv += ["--sandbox", layer]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=180, cwd=ROOT)
    if proc.returncode not in (0, 3):
        return {"error": proc.stderr[-2000:]}
    return json.loads(proc.stdout)


def _assert_clean(result: dict[str, Any], what: str) -> None:
    assert "error" not in result, f"{what}: {result.get('error')}"
    assert result["reason"] == "complete", f"{what}: {result['reason']}"
    for seat in result["seats"]:
        verdict = seat["verdict"]
        assert verdict["status"] == "ok", f"{what}: {json.dumps(verdict)[:2000]}"


def _assert_seat_clean(result: dict[str, Any], seat: int, what: str) -> None:
    assert "error" not in result, f"{what}: {result.get('error')}"
    verdict = result["seats"][seat]["verdict"]
    assert verdict["status"] == "ok", f"{what}: {json.dumps(verdict)[:2000]}"
    assert not verdict["faults"], f"{what}: {verdict['faults']}"
    # It played every round (a pair-mate that failed would fail this too, named in
    # the message by its seat's verdict).
    other = result["seats"][1 - seat]["verdict"]
    assert result["reason"] == "complete", f"{what}: {result['reason']}, other seat {other}"
    assert result["steps"] == 5, f"{what}: {result['steps']} rounds"


Outcome = tuple[dict[str, Any], int] | str  # (the match's JSON, the runtime's seat), or why not


@pytest.fixture(scope="module")
def runtime_results(
    layers: list[sandbox.Layer], tmp_path_factory: pytest.TempPathFactory
) -> dict[tuple[str, str], Outcome]:
    """(runtime, layer) -> the match it played and its seat, or why it is missing.
    Under each layer the runtimes play each other two by two (half the matches: a
    match costs mostly the referee's own start), an odd one the C sample bot."""
    out = tmp_path_factory.mktemp("runtimes")
    out.chmod(0o755)  # the bots' own uids (the referee as root) must reach it
    commands = {runtime: _build(runtime, out) for runtime in RUNTIMES}
    for path in out.rglob("*"):
        path.chmod(0o755)
    fallback = [str(OPPONENT)] if OPPONENT.exists() else commands["python"]
    ready = [runtime for runtime, command in commands.items() if not isinstance(command, str)]
    jobs: list[tuple[str, str | None, str]] = []
    for layer in layers:
        for i in range(0, len(ready), 2):
            jobs.append((ready[i], ready[i + 1] if i + 1 < len(ready) else None, layer.name))

    def play(job: tuple[str, str | None, str]) -> dict[str, Any]:
        first, second, layer_name = job
        return _match(commands[first], commands[second] if second else fallback, layer_name)

    results: dict[tuple[str, str], Outcome] = {}
    with ThreadPoolExecutor(4) as pool:
        for (first, second, layer_name), result in zip(jobs, pool.map(play, jobs), strict=True):
            results[(first, layer_name)] = (result, 0)
            if second is not None:
                results[(second, layer_name)] = (result, 1)
    for runtime, command in commands.items():
        if isinstance(command, str):
            for layer in layers:
                results[(runtime, layer.name)] = command
    return results


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_each_runtime_plays_under_each_layer(
    runtime: str,
    layers: list[sandbox.Layer],
    runtime_results: dict[tuple[str, str], Outcome],
) -> None:
    for layer in layers:
        outcome = runtime_results[(runtime, layer.name)]
        if isinstance(outcome, str):
            if runtime in CI_RUNTIMES:
                skip_or_fail(outcome)
            pytest.skip(outcome)
        result, seat = outcome
        _assert_seat_clean(result, seat, f"{runtime} under {layer.name}")
        assert result["containment"]["layer"] == layer.name


def test_every_sample_bot_plays_under_the_layers_in_turn(layers: list[sandbox.Layer]) -> None:
    """Each sample bot once (two a match), the layers taken in turn: every bot runs
    under the filter of one layer, and every layer runs bots of every language."""
    bots = [bot for bot in sample_bots() if "chaos" in bot.games]
    missing = [bot.name for bot in bots if not bot.available()]
    if missing:
        skip_or_fail(f"sample bots not built (make bots): {missing}")
    by_language: dict[str, list[str]] = {}
    for bot in bots:
        by_language.setdefault(bot.language.lower(), []).append(bot.name)
    # Interleave the languages, so that each layer gets a mix of them.
    order: list[str] = []
    while any(by_language.values()):
        for names in by_language.values():
            if names:
                order.append(names.pop())
    if len(order) % 2:
        order.append(order[0])
    pairs = [(order[i], order[i + 1]) for i in range(0, len(order), 2)]
    jobs = [(a, b, layers[i % len(layers)].name) for i, (a, b) in enumerate(pairs)]
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda job: _match(*job), jobs))
    for (a, b, layer), result in zip(jobs, results, strict=True):
        _assert_clean(result, f"{a} vs {b} under {layer}")
