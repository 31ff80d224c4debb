"""Helpers for the competition-server tests: a real ``referee serve`` process on a
loopback port, talked to over HTTP."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
from conftest import ROOT

SAMPLES = ROOT / "sample_bots"

CONFIG = """
name = "Test <ladder>"
game = "chaos"
seed = 7

[ladder]
rounds = {rounds}
parallel = {parallel}
validation_rounds = 100
random_share = 0.2
# The matches run at the tests' own priority: the server's niced matches (nice 10
# by default) got a tenth of a CPU beside the other test worker, so every test that
# waits for one waited ten times as long (docs/server.md advises nice = 0 on a shared
# machine too). tests/test_server_nice.py checks ladder.nice itself.
nice = 0

[registration]
mode = "{mode}"
# The tests sign up many competitors from one address (the limit is tested in-process).
signups_per_hour = 1000

[submissions]
max_upload_kib = 256
max_files = 20
max_unpacked_mib = 4
per_hour = {per_hour}
challenges_per_hour = 2

[pool]
legs = 1
rounds = 200

[finals]
finalists = 2
best_of = 1
rounds = 200

# Wide: a loaded machine starved the (then niced) bots past a 5 s handshake (a
# crasher's exit code was not even seen) and a 1 s move. No test here waits for
# these limits to run out.
[limits]
move_timeout = 10.0
handshake_timeout = 60.0
"""

# The house bots of the test competitions' ladder: two Python bots and a C one.
HOUSE_BOTS = ("random", "cycler", "markov-c")


def free_port() -> int:
    """A port free now, for programs that cannot bind port 0 and say which port they
    got (nginx): another process may take it before the program binds it."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# How long a request or ``referee submit`` may take before the test gives up.
TIMEOUT_S = 300.0

# What ``referee serve`` prints once it listens, up to the line's end.
LISTENING = re.compile(r"^referee serve: .* on http://127\.0\.0\.1:(\d+)\n", re.MULTILINE)


def _new_log(stem: Path) -> Path:
    """``stem.log``, or ``stem-2.log`` ... for a server started again on the same data."""
    path, n = stem.with_name(stem.name + ".log"), 1
    while path.exists():
        n += 1
        path = stem.with_name(f"{stem.name}-{n}.log")
    return path


def write_config(
    directory: Path,
    rounds: int = 200,
    parallel: int = 1,
    mode: str = "open",
    per_hour: int = 12,
    bots: tuple[str, ...] = HOUSE_BOTS,
) -> Path:
    path = directory / "competition.toml"
    text = CONFIG.format(rounds=rounds, parallel=parallel, mode=mode, per_hour=per_hour)
    text += "".join(f'\n[[bot]]\nname = "{bot}"\ncommand = "{bot}"\n' for bot in bots)
    path.write_text(text)
    return path


class Server:
    """``referee serve`` as a child process; ``url`` once it answers.

    The server binds a port of the kernel's choosing (``--port 0``) and the test
    reads it from the line the server prints once it listens: a port picked free
    beforehand may be taken by another process (a test's server or client on the
    other worker) before the server binds it. ``port`` asks for a given one (a
    restart where its clients expect it)."""

    def __init__(
        self, config: Path, data: Path, extra: tuple[str, ...] = (), port: int = 0
    ) -> None:
        self.config, self.data = config, data
        data.parent.mkdir(parents=True, exist_ok=True)
        self.log = _new_log(data.parent / f"server-{data.name}")
        with open(self.log, "wb") as out:
            self.proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "referee",
                    "serve",
                    "--config",
                    str(config),
                    "--data",
                    str(data),
                    "--port",
                    str(port),
                    *extra,
                ],
                stdout=out,
                stderr=subprocess.STDOUT,
                cwd=ROOT,
            )
        self.port = int(
            wait_for(self._listening, 60, f"the server did not listen (log: {self.log})")
        )
        self.url = f"http://127.0.0.1:{self.port}"
        # A request may wait for a validation match, which a loaded machine's (then
        # niced) bots took over 60 s to play.
        self.client = httpx.Client(base_url=self.url, timeout=TIMEOUT_S)
        wait_for(self._up, 60, f"the server did not answer (log: {self.log})")

    def _listening(self) -> str | None:
        """The port of the server's "on http://..." line, once the whole line is written."""
        exited = self.proc.poll() is not None
        found = LISTENING.search(self.log.read_text(errors="replace"))
        if found is None and exited:
            raise AssertionError(f"the server exited: {self.log.read_text()}")
        return found[1] if found else None

    def _up(self) -> bool:
        if self.proc.poll() is not None:
            raise AssertionError(f"the server exited: {self.log.read_text()}")
        try:
            return self.client.get("/api/health").status_code == 200
        except httpx.TransportError:
            return False

    def get(self, path: str, **kw: Any) -> httpx.Response:
        return self.client.get(path, **kw)

    def json(self, path: str) -> Any:
        r = self.client.get(path)
        assert r.status_code == 200, (path, r.status_code, r.text)
        return r.json()

    def counts(self) -> dict[str, int]:
        return dict(self.json("/api/health")["matches"])

    def sign_up(self, name: str) -> str:
        """A competitor registered through the sign-up form (open registration);
        returns the token the page shows once."""
        form = re.search(r'name="csrf" value="([0-9a-f]+)"', self.client.get("/signup").text)
        assert form is not None
        r = self.client.post("/signup", data={"name": name, "csrf": form[1]})
        assert r.status_code == 200, r.text
        found = re.search(r'<pre id="token">([^<]+)</pre>', r.text)
        assert found is not None, r.text
        self.client.cookies.clear()  # the form signs its browser in; this client stays anonymous
        return found[1]

    def upload(self, token: str, data: bytes, **query: str) -> httpx.Response:
        """POST /api/submit as ``referee submit`` does, without the CLI's start-up."""
        return self.client.post(
            "/api/submit",
            params=query,
            content=data,
            headers={"Authorization": f"Bearer {token}"},
        )

    def add_competitor(self, name: str) -> str:
        """``referee serve --add-competitor NAME`` (the organiser's way, any mode)."""
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "referee",
                "serve",
                "--config",
                str(self.config),
                "--data",
                str(self.data),
                "--add-competitor",
                name,
            ],
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=60,
        )
        assert proc.returncode == 0, proc.stderr
        return proc.stdout.strip()

    def submit(self, token: str, path: Path, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [
                sys.executable,
                "-m",
                "referee",
                "submit",
                "--server",
                self.url,
                "--token",
                token,
                str(path),
                *args,
            ],
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=TIMEOUT_S,
        )

    def kill(self) -> None:
        """SIGKILL, as a crash would: no clean-up of any kind."""
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)
        self.client.close()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.kill(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self.client.close()


def wait_for(condition: Callable[[], Any], timeout: float, what: str) -> Any:
    """Poll ``condition`` (every 50 ms) until it returns something true."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s: {what}")
        time.sleep(0.05)
