"""Running a competition server: a SIGTERM while bots are starting leaves no bot
process and no scratch directory; start-up sweeps what a killed server left in its
own data directory and nothing of another's; ``/metrics`` and the JSON log lines."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest
from conftest import ROOT, needs
from serverkit import SAMPLES, Server, free_port, wait_for, write_config

needs_bwrap = needs(shutil.which("bwrap") is None, "bwrap is not installed")


def processes_under(path: Path) -> list[str]:
    """Processes whose command line names ``path`` or whose working directory is
    under it (a bot runs in its scratch directory), as "pid cmdline"."""
    me, needle, found = os.getpid(), str(path), []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == me:
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmdline = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        try:
            cwd = os.readlink(f"/proc/{entry}/cwd")
        except OSError:
            cwd = ""
        if needle in cmdline or cwd.startswith(needle):
            found.append(f"{entry} {cmdline[:300]}")
    return found


def scratch_left(*roots: Path) -> list[str]:
    """The bots' scratch directories (``referee-*``) anywhere under ``roots``."""
    return [str(p) for root in roots if root.is_dir() for p in root.rglob("referee-*")]


def admin(server: Server, *args: str) -> subprocess.CompletedProcess[str]:
    """``referee admin --data DIR ARGS`` beside the running server."""
    return subprocess.run(
        [sys.executable, "-m", "referee", "admin", "--data", str(server.data), *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )


def organiser_commands(server: Server, token: str) -> str:
    """``referee admin`` on a live server; returns the competitor's token then."""

    def auth(tok: str) -> int:  # 400 (the body is no JSON) once the token is accepted
        r = server.client.post(
            "/api/challenge", content=b"[", headers={"Authorization": f"Bearer {tok}"}
        )
        return r.status_code

    assert admin(server, "announce", "Finals <on Friday>").returncode == 0
    wait_for(lambda: "Finals &lt;on Friday&gt;" in server.get("/").text, 60, "the announcement")
    assert auth(token) == 400
    rotated = admin(server, "rotate-token", "ops")
    assert rotated.returncode == 0, rotated.stderr
    new = rotated.stdout.strip()
    assert new.startswith("rt_") and auth(token) == 401 and auth(new) == 400
    assert admin(server, "disable", "competitor", "ops").returncode == 0
    assert auth(new) == 401
    assert admin(server, "enable", "competitor", "ops").returncode == 0
    assert auth(new) == 400

    # A disputed match, re-checked: verified, played again from its seeds, compared.
    done_match = server.json("/api/matches?kind=ladder&status=done&limit=1")[0]["id"]
    rerun = admin(server, "rerun", str(done_match))
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    assert "verify: OK" in rerun.stdout and "IDENTICAL" in rerun.stdout
    again = admin(server, "rerun", str(done_match), "--requeue")
    assert again.returncode == 2 and "would count it twice" in again.stderr

    # A disabled bot is never paired again; its games and rating stay on the board.
    assert admin(server, "disable", "bot", "random").returncode == 0
    first = server.json("/api/matches?limit=1")[0]["id"]  # the last match it may be in
    done = server.counts().get("ladder.done", 0)
    wait_for(lambda: server.counts().get("ladder.done", 0) >= done + 2, 120, "ladder matches")
    later = [m for m in server.json("/api/matches?limit=200") if m["id"] > first]
    assert later and all("random" not in (m["bot0"], m["bot1"]) for m in later)
    entry = next(e for e in server.json("/api/leaderboard")["entries"] if e["bot"] == "random")
    assert entry["disabled"] is True
    listing = admin(server, "bots")
    assert listing.returncode == 0 and "random" in listing.stdout
    assert admin(server, "enable", "bot", "random").returncode == 0
    last = server.json("/api/matches?limit=1")[0]["id"]
    wait_for(
        lambda: any(
            "random" in (m["bot0"], m["bot1"])
            for m in server.json("/api/matches?limit=50")
            if m["id"] > last
        ),
        120,
        "a match of the enabled bot",
    )
    return new


def test_organiser_commands_then_sigterm_while_bots_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Short ladder matches on two workers: bots start all the time. The server's
    # temporary directory is the test's own, so anything it leaves is found there
    # (where scratch directories went before the server kept them in its data).
    tmp = tmp_path / "tmp"
    tmp.mkdir(mode=0o1777)
    tmp.chmod(0o1777)
    monkeypatch.setenv("TMPDIR", str(tmp))
    config = write_config(tmp_path, rounds=20, parallel=2, mode="invite")
    data = tmp_path / "data"
    server = Server(config, data)
    answers: list[Any] = []
    try:
        token = server.add_competitor("ops")
        wait_for(lambda: server.counts().get("ladder.done", 0) >= 2, 60, "ladder matches")
        metrics = server.get("/metrics")
        assert metrics.status_code == 200
        assert metrics.headers["content-type"].startswith("text/plain; version=0.0.4")
        text = metrics.text
        for family in (
            "referee_http_request_duration_seconds_bucket",
            "referee_upload_refusals_total",
            "referee_queue_depth",
            'referee_matches{kind="ladder",status="done"}',
            'referee_matches_finished_total{kind="ladder",status="done"}',
            "referee_validation_wait_seconds_count",
        ):
            assert family in text, family
        # Through a proxy (X-Forwarded-For), /metrics is no public page.
        assert server.get("/metrics", headers={"X-Forwarded-For": "1.2.3.4"}).status_code == 404
        token = organiser_commands(server, token)

        bot = (SAMPLES / "python" / "cycler.py").read_bytes()

        def upload() -> None:
            try:
                answers.append(server.upload(token, bot, filename="new.py", name="new-bot"))
            except Exception as exc:  # the server went away mid-answer: also fine here
                answers.append(exc)

        thread = threading.Thread(target=upload, daemon=True)
        thread.start()
        # The uploaded bot is starting or playing its validation match (its files are
        # under versions/), while ladder matches start beside it.
        wait_for(lambda: processes_under(data / "versions"), 60, "the validation match")
        server.proc.send_signal(signal.SIGTERM)
        server.proc.wait(timeout=60)
        thread.join(timeout=60)
    finally:
        server.stop()
    log = server.log.read_text()
    assert server.proc.returncode == 0, log[-3000:]
    assert "referee serve: stopped" in log
    assert processes_under(tmp_path) == [], log[-3000:]
    assert scratch_left(tmp, data / "scratch") == []
    # The upload was stored before it played: the stop tells the client so.
    assert answers and not isinstance(answers[0], Exception), answers
    assert answers[0].status_code in (200, 422, 503), answers[0].text
    if answers[0].status_code == 503:
        assert "validated when the server starts again" in answers[0].json()["error"]
    # One JSON line per request and per match.
    records = [json.loads(line) for line in log.splitlines() if line.startswith("{")]
    requests = [r for r in records if r["event"] == "request"]
    assert any(r["route"] == "/api/health" and r["status"] == 200 for r in requests)
    assert any(r["route"] == "/api/submit" and r["method"] == "POST" for r in requests)
    matches = [r for r in records if r["event"] == "match" and r["kind"] == "ladder"]
    assert matches and all(m["status"] in ("done", "failed") for m in matches)


def _sleeper(cwd: Path) -> subprocess.Popen[bytes]:
    """A stand-in for a bot a killed server left running in its scratch directory."""
    return subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(600)"], cwd=cwd, start_new_session=True
    )


def test_start_up_sweeps_its_own_leftovers_only(tmp_path: Path) -> None:
    config = write_config(tmp_path, rounds=30, parallel=1, mode="invite")
    data, other = tmp_path / "data", tmp_path / "other"
    left = data / "scratch" / "referee-seat0-left"
    theirs = other / "scratch" / "referee-seat0-live"
    for d in (left, theirs):
        d.mkdir(parents=True)
    (left / "state").write_text("a bot's file")
    stray, live = _sleeper(left), _sleeper(theirs)
    try:
        server = Server(config, data)
        try:
            assert stray.wait(timeout=10) == -signal.SIGKILL
            assert not left.exists()
            assert live.poll() is None and theirs.is_dir()
            log = server.log.read_text()
            assert "removed what a stopped server left: 1 bot processes" in log
        finally:
            server.stop()
    finally:
        for proc in (stray, live):
            if proc.poll() is None:
                proc.kill()
            proc.wait()


def test_admin_commands_fail_with_one_line(tmp_path: Path) -> None:
    from referee.server.db import Store

    Store(tmp_path / "data").close()
    for args, message in (
        (["--data", str(tmp_path / "none"), "list"], "no competition in"),
        (["--data", str(tmp_path / "data"), "disable", "bot", "ghost"], "no bot named 'ghost'"),
        (["--data", str(tmp_path / "data"), "rotate-token", "ghost"], "no competitor named"),
        (["--data", str(tmp_path / "data"), "rerun", "7"], "no match 7"),
        (["--data", str(tmp_path / "data"), "announce"], "give the announcement's text"),
    ):
        proc = subprocess.run(
            [sys.executable, "-m", "referee", "admin", *args],
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=60,
        )
        assert proc.returncode == 2, proc
        assert proc.stderr.count("\n") == 1 and message in proc.stderr, proc.stderr


# Plays along, and when its input ends (its referee is gone) lingers instead of
# exiting: what a careless or hostile bot does.
LINGERING_BOT = """\
import json, sys, time
hello = json.loads(sys.stdin.readline())
print(json.dumps({"name": "lingering"}), flush=True)
for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("type") == "end":
        break
    print(json.dumps({"round": msg["round"], "real_move": "rock"}), flush=True)
while True:
    time.sleep(1)
"""


def test_a_killed_worker_leaves_no_sandbox_behind(tmp_path: Path) -> None:
    """A worker killed in the middle of a match cannot stop its bots. bwrap's
    --die-with-parent ends only the sandbox's launcher; the sandbox's pid 1 and a
    bot that does not exit at the end of its input lived on for good (as the bwrap
    found after a server stop). The executor now sweeps the dead worker's scratch
    directory: every process running from it, and the directories."""
    import msgspec
    import trio
    from conftest import has_content, submit_then

    from referee.match import MatchConfig
    from referee.tournament.executor import ProcessExecutor
    from referee.tournament.worker import Job

    bot = tmp_path / "lingering.py"
    bot.write_text(LINGERING_BOT)
    replay = tmp_path / "m1.jsonl"
    # 2,000 rounds: the match is still on when the test has seen its bots (in 200 it
    # could end between the sight of its replay and the look for its bots).
    cfg = MatchConfig(rounds=2000, seed=1, replay=str(replay), log_dir=str(tmp_path / "logs"))
    job = Job(
        id="m1",
        bots=[{"command": [sys.executable, str(bot)], "label": f"linger{k}"} for k in (1, 2)],
        cfg=msgspec.to_builtins(cfg),
    )
    scratch = tmp_path / "scratch"
    first: list[str] = []

    async def main() -> Any:
        ex = ProcessExecutor(1, tmp_path / "logs", scratch=scratch)

        def bots_playing() -> bool:
            # The bots are looked for in the same poll that the kill follows.
            first[:] = processes_under(tmp_path)
            return has_content(replay) and sum("lingering.py" in p for p in first) >= 2

        async def kill_worker() -> None:
            victim = ex.workers()[0].pid
            assert victim is not None
            os.kill(victim, signal.SIGKILL)

        try:
            return await submit_then(ex, job, bots_playing, kill_worker, timeout=120)
        finally:
            await ex.aclose()

    outcome = trio.run(main)
    assert outcome.steps == 2000  # played again from the start by a new worker
    pids = {line.split()[0] for line in first}
    assert not [p for p in processes_under(tmp_path) if p.split()[0] in pids]
    assert processes_under(tmp_path) == []
    assert scratch_left(scratch) == []


# The launcher of a bot (a match worker) dies the moment it has started the bot,
# before bwrap could ask to die with it.
DYING_LAUNCHER = """\
import os, select, signal, subprocess, sys, tempfile
from pathlib import Path
from referee import sandbox

root, bot = Path(sys.argv[1]), sys.argv[2]
launch = sandbox.prepare_launch(
    [sys.executable, bot],
    bot_dir=None,
    scratch=Path(tempfile.mkdtemp(prefix="referee-seat0-", dir=root)),
    limits=sandbox.Limits(),
    layer=sandbox.choose_layer("bwrap"),
)


def kill_the_launcher():
    # Between fork and exec, the child kills its launcher and waits until it is dead
    # (its pidfd is readable once it has exited and its children were handed on):
    # bwrap then arms --die-with-parent after the death it should have seen. Without
    # the wait, a launcher not yet dead when bwrap armed it (a loaded machine) took
    # the sandbox with it.
    launcher = os.getppid()
    pidfd = os.pidfd_open(launcher)
    os.kill(launcher, signal.SIGKILL)
    select.select([pidfd], [], [])
    os.close(pidfd)
    assert os.getppid() != launcher


subprocess.Popen(
    launch.argv, env=launch.env, cwd=launch.cwd, pass_fds=launch.pass_fds,
    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
    start_new_session=True, preexec_fn=kill_the_launcher,
)
os.kill(os.getpid(), signal.SIGKILL)
"""


@needs_bwrap
def test_a_sandbox_whose_launcher_died_is_found_and_swept(tmp_path: Path) -> None:
    """The bwrap left after a server stop, reproduced: a launcher killed while its
    bot's sandbox is being set up leaves the sandbox running for good (bwrap's
    --die-with-parent is never armed, or ends only bwrap's monitor, not the
    sandbox's pid 1). Everything of it names its scratch directory, and the sweep
    of that directory's parent kills it all."""
    from referee import scratch

    root = tmp_path / "scratch"
    root.mkdir(mode=0o711)
    root.chmod(0o711)
    bot = tmp_path / "hung.py"
    bot.write_text("import time\nwhile True:\n    time.sleep(1)\n")
    launcher = subprocess.run(
        [sys.executable, "-c", DYING_LAUNCHER, str(root), str(bot)], cwd=ROOT, timeout=60
    )
    assert launcher.returncode == -signal.SIGKILL
    # The bot runs on in its sandbox, its launcher gone.
    wait_for(lambda: [p for p in processes_under(tmp_path) if "hung.py" in p], 60, "the bot")
    killed, removed = scratch.sweep(root)
    assert killed >= 1 and removed >= 1
    assert processes_under(tmp_path) == []
    assert scratch_left(root) == []


def _unit_from_docs() -> str:
    text = (ROOT / "docs" / "server.md").read_text()
    start = text.index("```ini\n# /etc/systemd/system/referee.service\n")
    return text[start + len("```ini\n") : text.index("\n```", start)] + "\n"


@needs(shutil.which("systemd-analyze") is None, "systemd-analyze is not installed")
def test_the_systemd_unit_in_the_docs(tmp_path: Path) -> None:
    """The unit in docs/server.md: it parses, its ExecStart is a command line that
    ``referee serve`` accepts, it has the hardening it claims, and
    ``systemd-analyze verify`` finds nothing wrong with it (run with ExecStart
    pointing at this checkout's ``referee``; nothing is started)."""
    import configparser
    import shlex

    from referee.cli import build_parser

    unit = _unit_from_docs()
    parser = configparser.ConfigParser(interpolation=None, strict=True)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read_string(unit)
    service = parser["Service"]
    argv = shlex.split(service["ExecStart"])
    assert Path(argv[0]).name == "referee" and argv[1] == "serve"
    args = build_parser(["serve"]).parse_args(argv[1:])
    assert args.host == "127.0.0.1" and args.trust_proxy == ["127.0.0.1"]
    assert str(args.data) in service["ReadWritePaths"].split()
    for key, value in {
        "NoNewPrivileges": "yes",
        "ProtectSystem": "strict",
        "PrivateTmp": "yes",
        "ProtectHome": "yes",
        "KillSignal": "SIGTERM",
    }.items():
        assert service[key] == value, key
    for needed in ("RestrictAddressFamilies", "CapabilityBoundingSet", "RestrictNamespaces"):
        assert service[needed].strip(), needed
    referee = Path(sys.executable).with_name("referee")
    assert referee.is_file(), referee
    local = tmp_path / "referee.service"
    local.write_text(unit.replace(argv[0], str(referee), 1))
    proc = subprocess.run(
        ["systemd-analyze", "verify", str(local)], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    assert "referee.service" not in proc.stderr, proc.stderr


def test_metrics_exposition_and_refusals() -> None:
    """The exposition is Prometheus' text format (every sample line parses, every
    histogram is cumulative and ends at +Inf with its count); an upload refused
    with a status and no reason is counted by its status, one whose handler gave
    a reason is counted once, under that reason."""
    import re

    import trio
    from starlette.routing import Route

    from referee.server import metrics

    metrics.reset()
    metrics.REGISTRY.log = False

    async def refuse(scope: Any, receive: Any, send: Any) -> None:
        if scope["query_string"] == b"why=1":
            metrics.count_refusal("bad_archive")
            status = 400
        else:
            status = 429
        await send({"type": "http.response.start", "status": status, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    routes = [Route("/api/submit", refuse, methods=["POST"]), Route("/bots/{name:path}", refuse)]
    app = metrics.instrument(refuse, routes)

    async def call(method: str, path: str, query: bytes = b"") -> None:
        scope = {"type": "http", "method": method, "path": path, "query_string": query}

        async def send(message: Any) -> None:
            pass

        await app(scope, None, send)

    async def main() -> None:
        await call("POST", "/api/submit")
        await call("POST", "/api/submit", b"why=1")
        await call("GET", "/bots/x/../../etc")
        await call("GET", "/nowhere")

    trio.run(main)
    metrics.count_refusal("not a reason")
    r = metrics.REGISTRY
    assert r.refusals["rate_limit"] == 1 and r.refusals["bad_archive"] == 1
    assert r.refusals["other"] == 1 and sum(r.refusals.values()) == 3
    text = r.render()
    value = r"(-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?|[-+]Inf|NaN)"
    sample = re.compile(r'^[a-z_:][a-z0-9_:]*(\{([a-z_]+="[^"\\\n]*",?)*\})? ' + value + "$")
    for line in text.splitlines():
        assert line.startswith("# HELP ") or line.startswith("# TYPE ") or sample.match(line), line
    assert 'route="/bots/{name:path}"' in text and 'route="unmatched"' in text
    buckets = [
        int(line.rsplit(" ", 1)[1])
        for line in text.splitlines()
        if line.startswith('referee_http_request_duration_seconds_bucket{route="/api/submit"')
    ]
    assert buckets == sorted(buckets) and buckets[-1] == 2
    assert 'referee_http_request_duration_seconds_count{route="/api/submit"} 2' in text
    metrics.reset()


def test_forwarded_headers_are_believed_from_the_proxy_only() -> None:
    import trio

    from referee.server.proxy import forwarded, parse_addresses

    seen: list[tuple[Any, str]] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        seen.append((scope["client"], scope["scheme"]))

    wrapped = forwarded(app, parse_addresses(["127.0.0.1"]))
    headers = [(b"x-forwarded-for", b"6.6.6.6, 203.0.113.9"), (b"x-forwarded-proto", b"https")]

    async def main() -> None:
        for client in (("127.0.0.1", 5000), ("198.51.100.7", 5000)):
            scope = {"type": "http", "client": client, "scheme": "http", "headers": headers}
            await wrapped(scope, None, None)
        bad = [(b"x-forwarded-for", b"not an address"), (b"x-forwarded-proto", b"gopher")]
        scope = {"type": "http", "client": ("127.0.0.1", 1), "scheme": "http", "headers": bad}
        await wrapped(scope, None, None)

    trio.run(main)
    # From the proxy: the last entry (the one it added) and its scheme; the visitor's
    # own claim (6.6.6.6) is never read. From anyone else: nothing changes.
    assert seen == [
        (("203.0.113.9", 0), "https"),
        (("198.51.100.7", 5000), "http"),
        (("127.0.0.1", 1), "http"),
    ]
    with pytest.raises(ValueError, match="not an IP address"):
        parse_addresses(["proxy.example"])


def _answers(client: httpx.Client) -> bool:
    try:
        return client.get("/api/health").status_code == 200
    except httpx.TransportError:
        return False


def _block_from_docs(fence: str, first_line: str) -> str:
    text = (ROOT / "docs" / "server.md").read_text()
    start = text.index(f"```{fence}\n{first_line}\n")
    return text[start + len(f"```{fence}\n") : text.index("\n```", start)] + "\n"


def _nginx_on_free_ports(conf: Path, template: str, tmp_path: Path) -> tuple[Any, str]:
    """nginx running the site of ``template`` on two loopback ports, once it answers;
    (nginx, its https address). nginx cannot be given port 0, so its ports are picked
    free first; another process may take one before nginx binds it, and then nginx is
    started again on others (a bind error is the only failure tried again)."""
    for attempt in range(5):
        https, http = free_port(), free_port()
        conf.write_text(
            template.replace("listen 443 ssl;", f"listen 127.0.0.1:{https} ssl;").replace(
                "listen 80;", f"listen 127.0.0.1:{http};"
            )
        )
        errors = tmp_path / f"nginx-{attempt}.err"
        with open(errors, "wb") as err:
            nginx = subprocess.Popen(["nginx", "-c", str(conf), "-p", str(tmp_path)], stderr=err)
        base = f"https://127.0.0.1:{https}"
        with httpx.Client(base_url=base, verify=False, timeout=30) as client:
            wait_for(lambda: nginx.poll() is not None or _answers(client), 60, "nginx")  # noqa: B023
        if nginx.poll() is None:
            return nginx, base
        why = errors.read_text(errors="replace")
        assert "Address already in use" in why, why
    raise AssertionError("nginx found its ports taken five times")


@needs(shutil.which("nginx") is None, "nginx is not installed")
def test_the_nginx_example_in_the_docs(tmp_path: Path) -> None:
    """docs/server.md's nginx site passes ``nginx -t`` (a throw-away certificate in
    place of Let's Encrypt's, the rest as written), and keeps what the server
    needs: Host passed through, X-Forwarded-For set (not appended), the scheme.
    Then it runs, on loopback ports, in front of a real server: signing in through
    it passes the Origin check and gets a Secure cookie, a foreign Origin does not,
    and the address a visitor claims is not the one the server sees."""
    site = _block_from_docs("nginx", "# /etc/nginx/sites-available/referee")
    assert "proxy_set_header X-Forwarded-For $remote_addr;" in site
    assert "proxy_set_header Host $http_host;" in site
    assert "proxy_set_header X-Forwarded-Proto $scheme;" in site
    assert "location = /metrics { return 404; }" in site
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    made = subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"]
        + ["-subj", "/CN=ladder.example.org", "-keyout", str(key), "-out", str(cert)],
        capture_output=True,
        timeout=60,
    )
    assert made.returncode == 0, made.stderr
    live = "/etc/letsencrypt/live/ladder.example.org/"
    site = site.replace(live + "fullchain.pem", str(cert)).replace(live + "privkey.pem", str(key))
    temp = " ".join(
        f"{kind}_temp_path {tmp_path / kind};" for kind in ("client_body", "proxy", "fastcgi")
    )
    temp += f" uwsgi_temp_path {tmp_path / 'uwsgi'}; scgi_temp_path {tmp_path / 'scgi'};"
    conf = tmp_path / "nginx.conf"
    conf.write_text(
        f"pid {tmp_path / 'nginx.pid'};\nerror_log stderr;\nevents {{}}\n"
        f"http {{\naccess_log off;\n{temp}\n{site}}}\n"
    )
    proc = subprocess.run(
        ["nginx", "-t", "-c", str(conf), "-p", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0 and "test is successful" in proc.stderr, proc.stderr

    # The same site on loopback ports, in front of a real server.
    server = Server(
        write_config(tmp_path, rounds=20, mode="invite"),
        tmp_path / "data",
        extra=("--trust-proxy", "127.0.0.1"),
    )
    template = (
        conf.read_text()
        .replace("http://127.0.0.1:8080", server.url)
        .replace("pid ", "daemon off;\nuser root;\npid ", 1)
    )
    nginx = None
    try:
        nginx, base = _nginx_on_free_ports(conf, template, tmp_path)
        token = server.add_competitor("alice")
        with httpx.Client(base_url=base, verify=False, timeout=30) as browser:
            for origin, expected in (("https://evil.example", 403), (base, 303)):
                page = browser.get("/login")
                csrf = re.search(r'name="csrf" value="([^"]+)"', page.text)
                assert csrf is not None, page.text
                r = browser.post(
                    "/login",
                    data={"token": token, "csrf": csrf[1]},
                    headers={"Origin": origin, "X-Forwarded-For": "6.6.6.6"},
                )
                assert r.status_code == expected, (origin, r.status_code, r.text[-500:])
            cookies = r.headers.get_list("set-cookie")
            assert cookies and all("secure" in c.lower() for c in cookies), cookies
            assert browser.get("/me").status_code == 200
    finally:
        if nginx is not None:
            nginx.send_signal(signal.SIGQUIT)
            nginx.wait(timeout=30)
        server.stop()
    log = [json.loads(line) for line in server.log.read_text().splitlines() if line[:1] == "{"]
    logins = [e for e in log if e.get("route") == "/login" and e["method"] == "POST"]
    assert len(logins) == 2 and {e["client"] for e in logins} == {"127.0.0.1"}


@needs(shutil.which("caddy") is None, "caddy is not installed")
def test_the_caddy_example_in_the_docs(tmp_path: Path) -> None:
    """docs/server.md's Caddyfile passes ``caddy validate`` (nothing is started)."""
    caddyfile = tmp_path / "Caddyfile"
    caddyfile.write_text(_block_from_docs("caddyfile", "# /etc/caddy/Caddyfile"))
    home = {"HOME": str(tmp_path), "XDG_DATA_HOME": str(tmp_path / "data")}
    proc = subprocess.run(
        ["caddy", "validate", "--config", str(caddyfile), "--adapter", "caddyfile"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **home, "XDG_CONFIG_HOME": str(tmp_path / "config")},
    )
    assert proc.returncode == 0 and "Valid configuration" in proc.stdout + proc.stderr, (
        proc.stdout + proc.stderr
    )[-2000:]
