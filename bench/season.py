"""A season of a competition, simulated on 127.0.0.1 (the long run's figures go into
docs/performance.md by hand; a short run is a test, tests/test_season.py).

    python bench/season.py [--competitors 50] [--minutes 10] [--readers 4]
                           [--hostile 0.2] [--json FILE] [--keep DIR]

A real ``referee serve`` (open registration, ``--trust-proxy 127.0.0.1``) and N
simulated competitors, each a thread with its own HTTP client and its own
X-Forwarded-For address (as if behind the proxy: every competitor is a visitor of
its own, for the server's per-address limits). Each signs up on the sign-up form
(the organiser's ``--add-competitor`` if the form refuses) and submits versions
of its bot over ``/api/submit`` for the length of the run:

- "tiered" competitors upload bots of known strength: uniformly random moves, but
  "rock" with probability q, for q in TIERS. Every adaptive opponent (the sample
  bots ``frequency`` and ``markov``, and the "counter" competitors) exploits the
  tell, so a weaker tier (larger q) should end lower. Each uploads ``--versions``
  versions (a rating belongs to a version, and a new one starts from no games),
  then its last version plays on;
- "counter" competitors upload a bot that beats the opponent's most frequent move;
- hostile competitors (a share ``--hostile``) send bad archives, an archive with a
  ``..`` member, an upload over the size limit, a body that stalls, a bot that
  crashes in round 5, a form POST from another site (CSRF), a forged session
  cookie, and now and then a good bot.

Readers load the leaderboard, bot and match pages and the API meanwhile. The
server's memory (RSS) is sampled every 2 s.

It reports, and fails (exit 1) unless each holds: no answer of 500 or more (but
503, the server's "busy, try again" with Retry-After, which is counted) and no
traceback in the server's log; no lost accepted submission (every version
answered "accepted" is active in the database at the end); every finished match's
replay verifies (``referee verify``'s check, in-process for all, plus the command
itself on a few); the server's RSS after warm-up grows by at most
``--rss-growth-mib``; the p99 page latency is under ``--p99-limit``. Whether
the final ladder orders the tiers correctly (mean rating per tier, and the rank
correlation of q with rating) is reported, and asserted unless too few games
were played to tell (``--order-min-games`` per tiered bot on average).

Bounded: at most 200 competitors and 60 minutes; every loop has a step limit and
a deadline, every request a timeout, and every address is 127.0.0.1.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import re
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
MAX_COMPETITORS = 200
MAX_MINUTES = 60.0
MAX_STEPS = 500  # actions of one competitor, whatever the length
# The chance a tiered bot plays "rock" instead of at random. Chosen where a match's
# result still depends on it: against a bot that counters the most frequent move,
# a 300-round match is lost about half the time at 0, most of the time at 0.05 and
# nearly always at 0.12 (a larger tell only loses as surely, so it could not be
# told from 0.12 by wins and losses, which is all a rating sees).
TIERS = (0.0, 0.05, 0.12)
UPLOAD_TIMEOUT = 180.0  # an upload waits for its validation match
PAGE_TIMEOUT = 30.0

CONFIG = """
name = "season"
game = "chaos"
seed = 2026

[ladder]
rounds = {rounds}
parallel = {jobs}
validation_rounds = {validation_rounds}
random_share = 0.2

[registration]
mode = "open"

[submissions]
max_upload_kib = 64
per_hour = 60
challenges_per_hour = 6

[limits]
move_timeout = 1.0
handshake_timeout = 10.0

[[bot]]
name = "random"
command = "random"

[[bot]]
name = "frequency"
command = "frequency"

[[bot]]
name = "markov"
command = "markov"
"""

_HEAD = """\
import json, random, sys
hello = json.loads(sys.stdin.readline())
moves = hello["params"]["moves"]
rng = random.Random(hello["seed"])
sys.stdout.write(json.dumps({{"name": "{name}", "version": "{version}"}}) + "\\n")
sys.stdout.flush()
"""

TIERED_BOT = (
    _HEAD
    + """\
for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("type") != "turn":
        break
    move = moves[0] if rng.random() < {q} else rng.choice(moves)
    sys.stdout.write(json.dumps({{"round": msg["round"], "real_move": move}}) + "\\n")
    sys.stdout.flush()
"""
)

COUNTER_BOT = (
    _HEAD
    + """\
BEATS = {{"rock": ["paper", "spock"], "paper": ["scissors", "lizard"],
          "scissors": ["rock", "spock"], "lizard": ["rock", "scissors"],
          "spock": ["paper", "lizard"]}}
seen = {{}}
for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("type") != "turn":
        break
    last = msg.get("opponent_last_visible")
    if last:
        seen[last] = seen.get(last, 0) + 1
    if seen and rng.random() < 0.9:
        top = max(sorted(seen), key=seen.get)
        move = rng.choice([m for m in BEATS.get(top, moves) if m in moves] or moves)
    else:
        move = rng.choice(moves)
    sys.stdout.write(json.dumps({{"round": msg["round"], "real_move": move}}) + "\\n")
    sys.stdout.flush()
"""
)

CRASHING_BOT = (
    _HEAD
    + """\
for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("round", 0) >= 5:
        raise SystemExit("season: crashing on purpose in round 5")
    sys.stdout.write(json.dumps({{"round": msg["round"], "real_move": moves[0]}}) + "\\n")
    sys.stdout.flush()
"""
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def rank_correlation(xs: list[float], ys: list[float]) -> float | None:
    """Spearman's rho (average ranks for ties)."""
    if len(xs) < 3:
        return None

    def ranks(v: list[float]) -> list[float]:
        order = sorted(range(len(v)), key=lambda i: v[i])
        out = [0.0] * len(v)
        i = 0
        while i < len(order):
            j = i
            while j + 1 < len(order) and v[order[j + 1]] == v[order[i]]:
                j += 1
            for k in range(i, j + 1):
                out[order[k]] = (i + j) / 2
            i = j + 1
        return out

    rx, ry = ranks(xs), ranks(ys)
    mx, my = statistics.fmean(rx), statistics.fmean(ry)
    num = sum((a - mx) * (b - my) for a, b in zip(rx, ry, strict=True))
    den = (sum((a - mx) ** 2 for a in rx) * sum((b - my) ** 2 for b in ry)) ** 0.5
    return None if den == 0 else num / den


class Log:
    """Every answer the simulated people got (thread-safe)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.answers: list[tuple[str, int, float]] = []  # (what, status, seconds)
        self.errors: list[str] = []  # transport errors (no answer at all)
        self.accepted: list[tuple[str, int]] = []  # (bot, version number)
        self.refused: dict[str, int] = {}
        self.signups = {"form": 0, "organiser": 0}

    def answer(self, what: str, status: int, seconds: float) -> None:
        with self.lock:
            self.answers.append((what, status, seconds))

    def error(self, what: str, exc: Exception) -> None:
        with self.lock:
            self.errors.append(f"{what}: {type(exc).__name__}: {exc}"[:200])


class Server:
    def __init__(self, work: Path, jobs: int, rounds: int, validation_rounds: int) -> None:
        self.work = work
        self.data = work / "data"
        self.config = work / "season.toml"
        self.config.write_text(
            CONFIG.format(rounds=rounds, jobs=jobs, validation_rounds=validation_rounds)
        )
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = work / "server.log"
        with open(self.log_path, "wb") as out:
            self.proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "referee",
                    "serve",
                    "--config",
                    str(self.config),
                    "--data",
                    str(self.data),
                    "--host",
                    "127.0.0.1",
                    "--port",
                    str(self.port),
                    "--trust-proxy",
                    "127.0.0.1",
                ],
                stdout=out,
                stderr=subprocess.STDOUT,
                cwd=ROOT,
            )
        deadline = time.monotonic() + 120
        with httpx.Client(timeout=5.0) as client:
            while True:
                if self.proc.poll() is not None:
                    raise SystemExit(f"the server exited: {self.log_path.read_text()[-2000:]}")
                try:
                    if client.get(self.url + "/api/health").status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                if time.monotonic() > deadline:
                    raise SystemExit("the server did not answer within 120 s")
                time.sleep(0.2)

    def add_competitor(self, name: str) -> str:
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
            timeout=120,
        )
        if proc.returncode != 0:
            raise RuntimeError(proc.stderr.strip()[-300:])
        return proc.stdout.strip()

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return int(self.proc.returncode)


def tar_with(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


class Competitor:
    def __init__(
        self,
        index: int,
        kind: str,
        server: Server,
        log: Log,
        stop_at: float,
        seed: int,
        pause: tuple[float, float],
    ) -> None:
        self.index = index
        self.kind = kind  # "tiered", "counter" or "hostile"
        self.tier = TIERS[index % len(TIERS)] if kind == "tiered" else None
        self.name = f"{kind}-{index:03d}"
        self.bot = f"bot-{index:03d}"
        self.server = server
        self.log = log
        self.stop_at = stop_at
        self.rng = random.Random(seed)
        self.pause = pause
        self.address = f"10.{index // 250}.{index % 250}.{1 + index % 200}"
        self.client = httpx.Client(
            base_url=server.url,
            timeout=httpx.Timeout(PAGE_TIMEOUT, read=UPLOAD_TIMEOUT),
            headers={"X-Forwarded-For": self.address},
        )
        self.token = ""
        self.version = 0
        self.uploads = 0  # good bots uploaded
        self.max_uploads = 2

    # -- requests ------------------------------------------------------------------

    def request(self, what: str, method: str, path: str, **kw: Any) -> httpx.Response | None:
        started = time.monotonic()
        try:
            r = self.client.request(method, path, **kw)
        except httpx.HTTPError as exc:
            self.log.error(what, exc)
            return None
        self.log.answer(what, r.status_code, time.monotonic() - started)
        return r

    def sign_up(self) -> bool:
        page = self.request("signup form", "GET", "/signup")
        csrf = ""
        if page is not None:
            found = re.search(r'name="csrf"\s+value="([^"]+)"', page.text)
            csrf = found[1] if found else ""
        r = self.request(
            "signup",
            "POST",
            "/signup",
            data={"name": self.name, "csrf": csrf},
            headers={"Origin": self.server.url},
        )
        found = re.search(r'<pre id="token">([^<]+)</pre>', r.text) if r is not None else None
        if r is not None and r.status_code == 200 and found:
            self.token = found[1]
            with self.log.lock:
                self.log.signups["form"] += 1
            return True
        try:
            self.token = self.server.add_competitor(self.name)
        except (RuntimeError, subprocess.TimeoutExpired) as exc:
            self.log.errors.append(f"{self.name}: cannot register: {exc}")
            return False
        with self.log.lock:
            self.log.signups["organiser"] += 1
        return True

    def upload(self, what: str, data: bytes, filename: str, name: str | None = None) -> None:
        r = self.request(
            what,
            "POST",
            "/api/submit",
            params={"filename": filename, "name": name or self.bot},
            content=data,
            headers={"Authorization": f"Bearer {self.token}"},
        )
        if r is None:
            return
        try:
            answer = r.json()
        except ValueError:
            answer = {}
        if r.status_code == 200 and answer.get("accepted"):
            with self.log.lock:
                self.log.accepted.append((str(answer["bot"]), int(answer["version"])))
        elif r.status_code < 500:
            with self.log.lock:
                self.log.refused[what] = self.log.refused.get(what, 0) + 1

    def good_bot(self) -> bytes:
        self.version += 1
        if self.kind == "counter" or self.tier is None:
            text = COUNTER_BOT.format(name=self.bot, version=self.version)
        else:
            text = TIERED_BOT.format(name=self.bot, version=self.version, q=self.tier)
        return text.encode()

    # -- hostile ---------------------------------------------------------------------

    def stalled_body(self) -> None:
        """Headers promising 60 KiB, 1 KiB sent, then silence: the server must let
        go (or answer), never hold on. We wait at most 20 s for it (less near the
        end of the run)."""
        started = time.monotonic()
        patience = max(2.0, min(20.0, self.stop_at - started + 2.0))
        try:
            with socket.create_connection(("127.0.0.1", self.server.port), timeout=patience) as s:
                s.sendall(
                    (
                        f"POST /api/submit?filename=s.py&name={self.bot} HTTP/1.1\r\n"
                        f"Host: 127.0.0.1\r\nAuthorization: Bearer {self.token}\r\n"
                        f"X-Forwarded-For: {self.address}\r\n"
                        "Content-Type: application/octet-stream\r\nContent-Length: 61440\r\n\r\n"
                    ).encode()
                    + b"#" * 1024
                )
                head = s.recv(200)
        except OSError:
            head = b""
        status = int(head.split()[1]) if head.startswith(b"HTTP/1.1 ") else 0
        self.log.answer("stalled body", status, time.monotonic() - started)

    def hostile_step(self) -> None:
        action = self.rng.choice(
            [
                "not an archive",
                "dotdot archive",
                "too large",
                "stalled body",
                "crashing bot",
                "csrf post",
                "forged cookie",
                "good bot",
            ]
        )
        if action == "not an archive":
            self.upload(action, os.urandom(2000), "bot.tar.gz")
        elif action == "dotdot archive":
            self.upload(action, tar_with({"../evil.py": b"print(1)\n"}), "bot.tar.gz")
        elif action == "too large":
            self.upload(action, b"#" * (80 << 10), "big.py")
        elif action == "stalled body":
            self.stalled_body()
        elif action == "crashing bot":
            self.version += 1
            text = CRASHING_BOT.format(name=self.bot, version=self.version)
            self.upload(action, text.encode(), "crash.py", name=self.bot + "-crash")
        elif action == "csrf post":
            # The session cookie the sign-up gave this client, a form from elsewhere.
            self.request(
                action,
                "POST",
                "/me/upload",
                files={"file": ("x.py", b"print(1)\n")},
                data={"name": "csrf-bot"},
                headers={"Origin": "http://evil.example", "Referer": "http://evil.example/"},
            )
        elif action == "forged cookie":
            with httpx.Client(base_url=self.server.url, timeout=PAGE_TIMEOUT) as forged:
                started = time.monotonic()
                try:
                    r = forged.get(
                        "/me",
                        headers={
                            "Cookie": "referee_session=1.1700000000.0123456789abcdef",
                            "X-Forwarded-For": self.address,
                        },
                    )
                    self.log.answer(action, r.status_code, time.monotonic() - started)
                except httpx.HTTPError as exc:
                    self.log.error(action, exc)
        elif self.uploads < self.max_uploads:
            self.uploads += 1
            self.upload("good upload", self.good_bot(), "bot.py")

    # -- the season --------------------------------------------------------------------

    def run(self) -> None:
        try:
            if not self.sign_up():
                return
            for step in range(MAX_STEPS):
                if time.monotonic() >= self.stop_at:
                    break
                if self.kind == "hostile":
                    self.hostile_step()
                elif self.uploads < self.max_uploads:
                    self.uploads += 1
                    self.upload("good upload", self.good_bot(), "bot.py")
                else:
                    break  # its last version plays on the ladder for the rest of the run
                lo, hi = self.pause
                # The first versions come quickly, then one now and then.
                wait = self.rng.uniform(lo, hi) * (0.3 if step == 0 else 1.0)
                time.sleep(max(0.0, min(wait, self.stop_at - time.monotonic())))
        finally:
            self.client.close()


def reader(server: Server, log: Log, stop_at: float, seed: int, pages: list[float]) -> None:
    """Loads pages as a visitor would, until ``stop_at``."""
    rng = random.Random(seed)
    with httpx.Client(base_url=server.url, timeout=PAGE_TIMEOUT) as client:
        bots: list[str] = []
        matches: list[int] = []
        for _ in range(100_000):
            if time.monotonic() >= stop_at:
                break
            choice = rng.random()
            if not bots:
                path, page = "/api/leaderboard", False
            elif choice < 0.25:
                path, page = "/", True
            elif choice < 0.45:
                path, page = f"/bots/{rng.choice(bots)}", True
            elif choice < 0.65 and matches:
                path, page = f"/matches/{rng.choice(matches)}", True
            elif choice < 0.85:
                path, page = "/api/leaderboard", False
            else:
                path, page = "/api/matches?limit=50", False
            started = time.monotonic()
            try:
                r = client.get(path, headers={"X-Forwarded-For": f"10.200.0.{1 + seed % 200}"})
            except httpx.HTTPError as exc:
                log.error(f"reader {path}", exc)
                continue
            took = time.monotonic() - started
            log.answer("page" if page else "api", r.status_code, took)
            if page and r.status_code == 200:
                with log.lock:
                    pages.append(took)
            if path == "/api/leaderboard" and r.status_code == 200:
                bots = [e["bot"] for e in r.json()["entries"]]
            elif path.startswith("/api/matches") and r.status_code == 200:
                matches = [m["id"] for m in r.json() if m["status"] == "done"] or matches
            time.sleep(rng.uniform(0.05, 0.3))


def sample_rss(pid: int, stop: threading.Event, samples: list[tuple[float, int]]) -> None:
    start = time.monotonic()
    for _ in range(100_000):
        try:
            with open(f"/proc/{pid}/status") as f:
                rss = next(int(x.split()[1]) for x in f if x.startswith("VmRSS:"))
        except (OSError, StopIteration):
            return
        samples.append((time.monotonic() - start, rss * 1024))
        if stop.wait(2.0):
            return


def verify_all(data: Path, cli_sample: int) -> dict[str, Any]:
    """Every finished match's replay checked as ``referee verify`` checks it."""
    from referee.step_report import verify_summary

    conn = sqlite3.connect(data / "server.sqlite")
    rows = conn.execute(
        "SELECT id, kind, replay FROM matches WHERE status = 'done' ORDER BY id"
    ).fetchall()
    conn.close()
    bad = []
    for mid, kind, replay in rows:
        summary = verify_summary(data / replay) if replay else "no replay"
        if not summary.startswith("OK"):
            bad.append(f"match {mid} ({kind}): {summary}")
    cli_bad = []
    for mid, _kind, replay in rows[-cli_sample:]:
        proc = subprocess.run(
            [sys.executable, "-m", "referee", "verify", str(data / replay)],
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=120,
        )
        if proc.returncode != 0:
            cli_bad.append(f"match {mid}: {proc.stdout.strip()[-200:]}")
    return {
        "matches": len(rows),
        "failed": bad,
        "cli_checked": min(cli_sample, len(rows)),
        "cli_failed": cli_bad,
    }


def lost_submissions(data: Path, accepted: list[tuple[str, int]]) -> list[str]:
    conn = sqlite3.connect(data / "server.sqlite")
    lost = []
    for bot, number in accepted:
        row = conn.execute(
            "SELECT v.status FROM versions v JOIN bots b ON b.id = v.bot "
            "WHERE b.name = ? AND v.number = ?",
            (bot, number),
        ).fetchone()
        if row is None or row[0] != "active":
            lost.append(f"{bot} v{number}: {'missing' if row is None else row[0]}")
    conn.close()
    return lost


def order_of_tiers(board: dict[str, Any], kinds: dict[str, float]) -> dict[str, Any]:
    """Mean rating per tier (q) of the tiered competitors' bots on the final board."""
    by_tier: dict[float, list[float]] = {}
    games: list[int] = []
    xs, ys = [], []
    for e in board.get("entries", []):
        q = kinds.get(e["bot"])
        if q is None or not e["games"]:
            continue
        by_tier.setdefault(q, []).append(float(e["rating"]))
        games.append(int(e["games"]))
        xs.append(q)
        ys.append(float(e["rating"]))
    means = {str(q): round(statistics.fmean(v), 1) for q, v in sorted(by_tier.items())}
    ordered = [means[str(q)] for q in sorted(by_tier)]
    return {
        "tier_mean_rating": means,
        "bots_per_tier": {str(q): len(v) for q, v in sorted(by_tier.items())},
        "mean_games": round(statistics.fmean(games), 1) if games else 0,
        "tiers_in_order": len(ordered) == len(TIERS)
        and all(a > b for a, b in zip(ordered, ordered[1:], strict=False)),
        "rank_correlation_q_rating": None
        if (rho := rank_correlation(xs, ys)) is None
        else round(rho, 3),
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--competitors", type=int, default=50)
    p.add_argument("--minutes", type=float, default=10.0)
    p.add_argument("--readers", type=int, default=4)
    p.add_argument("--hostile", type=float, default=0.2, help="share of hostile competitors")
    p.add_argument("--counter", type=float, default=0.3, help="share of counter competitors")
    p.add_argument("-j", "--jobs", type=int, default=2, help="ladder matches at once")
    p.add_argument("--rounds", type=int, default=300, help="rounds of a ladder match")
    p.add_argument("--validation-rounds", type=int, default=100)
    p.add_argument(
        "--versions",
        type=int,
        default=2,
        help="good versions a competitor uploads (then its last plays on: a rating is "
        "a version's, and a new version starts with no games)",
    )
    p.add_argument("--cli-verify", type=int, default=5, help="replays also checked by the command")
    p.add_argument(
        "--pause",
        type=float,
        nargs=2,
        default=(40.0, 90.0),
        metavar=("LO", "HI"),
        help="seconds between a competitor's uploads (uniform)",
    )
    p.add_argument("--p99-limit", type=float, default=2.0, help="seconds (default 2)")
    p.add_argument("--rss-growth-mib", type=float, default=40.0)
    p.add_argument("--order-min-games", type=float, default=8.0)
    p.add_argument("--json", type=Path, help="write the report here too")
    p.add_argument("--keep", type=Path, help="keep the server's directory here")
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args(argv)
    n = max(1, min(args.competitors, MAX_COMPETITORS))
    seconds = max(5.0, min(args.minutes, MAX_MINUTES) * 60)

    work = Path(tempfile.mkdtemp(prefix="season-"))
    os.chmod(work, 0o755)  # the bots run as uids of their own (as root) and enter it
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
    report: dict[str, Any] = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "cpus": len(os.sched_getaffinity(0)),
        "load_average_before": [round(x, 2) for x in os.getloadavg()],
        "nice": os.getpriority(os.PRIO_PROCESS, 0),
        "competitors": n,
        "seconds": seconds,
        "readers": args.readers,
        "jobs": args.jobs,
        "rounds": args.rounds,
        "validation_rounds": args.validation_rounds,
    }
    rng = random.Random(args.seed)
    kinds = []
    for _ in range(n):
        x = rng.random()
        kinds.append(
            "hostile"
            if x < args.hostile
            else "counter"
            if x < args.hostile + args.counter
            else "tiered"
        )
    report["kinds"] = {k: kinds.count(k) for k in ("tiered", "counter", "hostile")}
    log = Log()
    server = Server(work, args.jobs, args.rounds, args.validation_rounds)
    print(f"season: {n} competitors for {seconds:.0f} s on {server.url}", flush=True)
    started = time.monotonic()
    stop_at = started + seconds
    rss: list[tuple[float, int]] = []
    stop_sampling = threading.Event()
    threads: list[threading.Thread] = []
    pages: list[float] = []
    competitors = [
        Competitor(i, kind, server, log, stop_at, args.seed * 1000 + i, tuple(args.pause))
        for i, kind in enumerate(kinds)
    ]
    tiered = [c for c in competitors if c.kind == "tiered"]
    for k, c in enumerate(tiered):  # as many of each tier as can be
        c.tier = TIERS[k % len(TIERS)]
    for c in competitors:
        c.max_uploads = args.versions

    def spawn(target: Callable[..., None], *a: Any) -> None:
        t = threading.Thread(target=target, args=a, daemon=True)
        t.start()
        threads.append(t)

    spawn(sample_rss, server.proc.pid, stop_sampling, rss)
    for c in competitors:
        spawn(c.run)
    for r in range(args.readers):
        spawn(reader, server, log, stop_at, args.seed * 7 + r, pages)
    board: dict[str, Any] = {}
    try:
        for t in threads[1:]:
            # Competitors may be in an upload when the time is up: its answer waits
            # for a validation match, bounded by the client's timeout.
            t.join(timeout=max(1.0, stop_at - time.monotonic()) + UPLOAD_TIMEOUT + 30)
        report["threads_left"] = sum(t.is_alive() for t in threads[1:])
        with httpx.Client(base_url=server.url, timeout=PAGE_TIMEOUT) as client:
            board = client.get("/api/leaderboard").json()
            metrics = client.get("/metrics")
            report["metrics_ok"] = metrics.status_code == 200
    finally:
        stop_sampling.set()
        report["server_exit"] = server.stop()
        report["run_s"] = round(time.monotonic() - started, 1)
    report["load_average_after"] = [round(x, 2) for x in os.getloadavg()]

    statuses: dict[str, int] = {}
    for what, status, _s in log.answers:
        key = f"{what}: {status}"
        statuses[key] = statuses.get(key, 0) + 1
    report["answers"] = dict(sorted(statuses.items()))
    report["requests"] = len(log.answers)
    report["transport_errors"] = len(log.errors)
    report["transport_error_examples"] = log.errors[:5]
    # A 503 is the server saying "busy, come back later" (with Retry-After: every
    # upload slot taken), a refusal it means to give; any other 5xx is a failure.
    server_errors = [a for a in log.answers if a[1] >= 500 and a[1] != 503]
    report["busy_503"] = sum(1 for a in log.answers if a[1] == 503)
    server_log = server.log_path.read_text(errors="replace")
    report["tracebacks_in_log"] = server_log.count("Traceback")
    report["traceback_examples"] = [
        "\n".join(chunk.splitlines()[-16:]) for chunk in server_log.split("Traceback")[1:4]
    ]
    report["signups"] = log.signups
    report["accepted_uploads"] = len(log.accepted)
    report["refused_uploads"] = dict(sorted(log.refused.items()))
    lost = lost_submissions(server.data, log.accepted)
    report["lost_submissions"] = lost
    report["verify"] = verify_all(server.data, cli_sample=args.cli_verify)
    report["page_latency_s"] = {
        "n": len(pages),
        "p50": None if not pages else round(percentile(pages, 0.5) or 0, 4),
        "p99": None if not pages else round(percentile(pages, 0.99) or 0, 4),
        "max": None if not pages else round(max(pages), 4),
    }
    warm = [r for t, r in rss if t >= min(60.0, seconds / 4)]
    third = max(1, len(warm) // 3)
    rss_report = {
        "samples": len(rss),
        "first_mib": round(rss[0][1] / 2**20, 1) if rss else None,
        "after_warm_up_mib": round(statistics.median(warm[:third]) / 2**20, 1) if warm else None,
        "end_mib": round(statistics.median(warm[-third:]) / 2**20, 1) if warm else None,
        "max_mib": round(max(r for _t, r in rss) / 2**20, 1) if rss else None,
    }
    report["server_rss"] = rss_report
    tiers = {c.bot: c.tier for c in competitors if c.tier is not None}
    report["ladder"] = {
        "entries": len(board.get("entries", [])),
        "matches": board.get("matches"),
        **order_of_tiers(board, tiers),
    }

    problems = []
    if server_errors:
        problems.append(f"{len(server_errors)} answers of 500 or more (503 aside)")
    if report["tracebacks_in_log"]:
        problems.append(f"{report['tracebacks_in_log']} tracebacks in the server's log")
    if lost:
        problems.append(f"{len(lost)} accepted submissions lost")
    if report["verify"]["failed"] or report["verify"]["cli_failed"]:
        problems.append("replays that do not verify")
    if report["verify"]["matches"] == 0:
        problems.append("no match finished")
    if not log.accepted:
        problems.append("no upload was accepted")
    growth = (
        None
        if rss_report["end_mib"] is None
        else rss_report["end_mib"] - rss_report["after_warm_up_mib"]
    )
    report["server_rss"]["growth_mib"] = None if growth is None else round(growth, 1)
    if growth is not None and growth > args.rss_growth_mib:
        problems.append(f"the server's RSS grew by {growth:.1f} MiB after warm-up")
    p99 = report["page_latency_s"]["p99"]
    if p99 is not None and p99 > args.p99_limit:
        problems.append(f"p99 page latency {p99} s over {args.p99_limit} s")
    if report["server_exit"] != 0:
        problems.append(f"the server exited with {report['server_exit']} on SIGTERM")
    order = report["ladder"]
    # Judged when every tier has at least two rated bots with enough games between them.
    per_tier = order["bots_per_tier"]
    judged = order["mean_games"] >= args.order_min_games and (
        len(per_tier) == len(TIERS) and min(per_tier.values()) >= 2
    )
    order["judged"] = judged
    if judged and not order["tiers_in_order"]:
        problems.append("the ladder does not order the tiers of known strength")
    report["problems"] = problems
    text = json.dumps(report, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")
    if args.keep:
        subprocess.run(["cp", "-a", str(work) + "/.", str(args.keep)], check=False)
    subprocess.run(["rm", "-rf", str(work)], check=False)
    if problems:
        print("season: FAILED: " + "; ".join(problems), file=sys.stderr)
        return 1
    print("season: every check held", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
