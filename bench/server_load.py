"""The competition server under load, on 127.0.0.1 only (not a test: figures go
into docs/performance.md by hand).

    python bench/server_load.py [--clients 200] [--seconds 30] [--stored 10000] [-j 2]
                                [--match-nice N]

1. Throughput: ``referee tournament`` (single round robin of the sample bots,
   ``--rounds``, ``-j``) against the server's ladder with the same bots, match
   length and ``-j``: matches per minute of each, measured one after the other.
2. Load: the server's database is filled to ``--stored`` finished matches (copies
   of real ones), then ``--clients`` concurrent clients read the leaderboard, bot,
   match and API pages for ``--seconds`` while the ladder plays: p50/p99 latency,
   errors, and the ladder's matches per minute during the load against without;
   the same latencies after the first two think times (every reader connected)
   and over the first second alone (readers connecting, pages not yet made).
   Beside them: the CPU the server and the readers' client spent per page (they
   share the machine with the matches), the host's load average before and after,
   how long the server's loop waited for a CPU per page, and how often the
   kernel's accept queue overflowed (dropped connections wait a second or more
   for the client to try again).
Bounded: the client count is capped at 500, the time at 300 s, and every
address is 127.0.0.1.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BOTS = ["random", "cycler", "frequency", "iocaine", "markov-c", "frequency-js"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _bots() -> str:
    return "".join(f'\n[[bot]]\nname = "{b}"\ncommand = "{b}"\n' for b in BOTS)


def league_text(rounds: int, jobs: int) -> str:
    return (
        f'name = "bench"\ngame = "chaos"\nseed = 11\njobs = {jobs}\n'
        f"[pool]\nlegs = 2\nrounds = {rounds}\n[finals]\nfinalists = 0\n{_bots()}"
    )


def competition_text(rounds: int, jobs: int, nice: int | None = None) -> str:
    nice_line = "" if nice is None else f"nice = {nice}\n"
    return (
        f'name = "bench"\ngame = "chaos"\nseed = 11\n'
        f"[ladder]\nrounds = {rounds}\nparallel = {jobs}\n{nice_line}{_bots()}"
    )


def tournament_rate(work: Path, rounds: int, jobs: int) -> float:
    cfg = work / "league.toml"
    cfg.write_text(league_text(rounds, jobs))
    out = work / "league"
    started = time.monotonic()
    subprocess.run(
        [sys.executable, "-m", "referee", "tournament", "--config", str(cfg), "--out", str(out),
         "--quiet", "-j", str(jobs)],
        check=True, cwd=ROOT, capture_output=True,
    )  # fmt: skip
    wall = time.monotonic() - started
    matches = len(BOTS) * (len(BOTS) - 1)
    return matches / wall * 60


class Server:
    def __init__(self, work: Path, rounds: int, jobs: int, nice: int | None = None) -> None:
        self.cfg = work / "competition.toml"
        self.cfg.write_text(competition_text(rounds, jobs, nice))
        self.data = work / "data"
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = open(work / "server.log", "ab")  # noqa: SIM115
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "referee", "serve", "--config", str(self.cfg), "--data",
             str(self.data), "--port", str(self.port)],
            cwd=ROOT, stdout=self.log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        import httpx

        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(self.url + "/api/health").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise SystemExit("the server did not start (see server.log)")
            time.sleep(0.1)

    def done(self) -> int:
        import httpx

        counts = httpx.get(self.url + "/api/health", timeout=30).json()["matches"]
        return int(counts.get("ladder.done", 0))

    def rate(self, seconds: float) -> float:
        first, t0 = self.done(), time.monotonic()
        time.sleep(seconds)
        return (self.done() - first) / (time.monotonic() - t0) * 60

    def cpu_s(self) -> float:
        """CPU seconds the server process has used (user and system)."""
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def cpu_wait_s(self) -> float | None:
        """Seconds the server's main thread (its event loop) has spent ready to run
        but waiting for a CPU (Linux schedstat; None where it is not kept)."""
        try:
            fields = Path(f"/proc/{self.proc.pid}/schedstat").read_text().split()
        except OSError:
            return None
        return int(fields[1]) / 1e9

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(timeout=60)


def listen_overflows() -> int | None:
    """Connections the kernel dropped because a listening socket's accept queue was
    full, machine-wide so far (Linux; None elsewhere)."""
    try:
        lines = Path("/proc/net/netstat").read_text().splitlines()
    except OSError:
        return None
    for names, values in zip(lines[::2], lines[1::2], strict=False):
        if names.startswith("TcpExt:"):
            found = dict(zip(names.split(), values.split(), strict=False))
            return int(found.get("ListenOverflows", 0))
    return None


def fill(data: Path, stored: int) -> int:
    """Copy finished ladder matches until ``stored`` matches are in the database."""
    conn = sqlite3.connect(data / "server.sqlite")
    with conn:
        (have,) = conn.execute("SELECT COUNT(*) FROM matches").fetchone()
        rows = conn.execute(
            "SELECT * FROM matches WHERE kind = 'ladder' AND status = 'done'"
        ).fetchall()
        cols = [c[1] for c in conn.execute("PRAGMA table_info(matches)")]
        copies = []
        k = 0
        while have + len(copies) < stored and rows:
            row = list(rows[k % len(rows)])
            row[cols.index("id")] = None
            copies.append(row)
            k += 1
        marks = ",".join("?" * len(cols))
        conn.executemany(f"INSERT INTO matches VALUES ({marks})", copies)
    (n,) = conn.execute("SELECT COUNT(*) FROM matches").fetchone()
    conn.close()
    return int(n)


async def load(
    url: str, clients: int, seconds: float, paths: list[str], think: float
) -> dict[str, Any]:
    """``clients`` readers, each on a keep-alive connection of its own, loading
    ``paths`` in turn with a think time between pages. The client speaks HTTP/1.1
    through h11 (hypercorn's own parser) on plain trio sockets: it has to share the
    server's CPUs, and a full HTTP client library would spend several times the
    server's own time per request on its side."""
    import h11
    import trio

    host, port = url.removeprefix("http://").split(":")
    latencies: list[float] = []
    steady: list[float] = []  # after the first two think times (every reader is connected)
    first: list[float] = []  # started in the first second (readers connecting, pages cold)
    errors: dict[str, int] = {}
    started = time.perf_counter()
    settled = started + 2 * think
    first_second = started + 1.0
    deadline = time.monotonic() + seconds

    async def get(stream: Any, conn: Any, path: str) -> int:
        request = h11.Request(method="GET", target=path, headers=[("Host", host)])
        await stream.send_all(conn.send(request) + conn.send(h11.EndOfMessage()))
        status = 0
        while True:
            event = conn.next_event()
            if event is h11.NEED_DATA:
                data = await stream.receive_some(65536)
                conn.receive_data(data)
                if not data and conn.their_state is not h11.DONE:
                    raise ConnectionError("the server closed the connection")
            elif isinstance(event, h11.Response):
                status = event.status_code
            elif isinstance(event, h11.EndOfMessage):
                conn.start_next_cycle()
                return status
            elif isinstance(event, h11.ConnectionClosed):
                raise ConnectionError("the server closed the connection")

    async def client(k: int) -> None:
        rng = random.Random(k)
        i = k
        stream: Any = None
        conn: Any = None
        # Clients start spread over one think time, as readers arrive.
        await trio.sleep(rng.uniform(0, think))
        while time.monotonic() < deadline:
            path = paths[i % len(paths)]
            i += 1
            t = time.perf_counter()
            try:
                if stream is None:
                    stream = await trio.open_tcp_stream(host, int(port))
                    conn = h11.Connection(h11.CLIENT)
                with trio.fail_after(30):
                    status = await get(stream, conn, path)
                if status != 200:
                    errors[str(status)] = errors.get(str(status), 0) + 1
            except (OSError, ConnectionError, h11.ProtocolError, trio.TooSlowError) as exc:
                errors[type(exc).__name__] = errors.get(type(exc).__name__, 0) + 1
                if stream is not None:
                    await stream.aclose()
                stream = None
            latencies.append(time.perf_counter() - t)
            if t >= settled:
                steady.append(latencies[-1])
            if t < first_second:
                first.append(latencies[-1])
            # A reader looks at a page before the next (0: a closed loop).
            await trio.sleep(rng.uniform(0.5 * think, 1.5 * think))
        if stream is not None:
            await stream.aclose()

    cpu0 = time.process_time()
    async with trio.open_nursery() as nursery:
        for k in range(clients):
            nursery.start_soon(client, k)
    client_cpu = time.process_time() - cpu0
    n = len(latencies)
    return {
        "requests": n,
        "per_s": round(n / seconds, 1),
        **percentiles(latencies),
        "steady": {"requests": len(steady), **percentiles(steady)},
        "first_second": {"requests": len(first), **percentiles(first)},
        "errors": errors,
        "client_cpu_s": round(client_cpu, 2),
        "client_cpu_ms_per_request": round(client_cpu * 1e3 / max(n, 1), 2),
    }


def percentiles(latencies: list[float]) -> dict[str, float | None]:
    ordered = sorted(latencies)
    n = len(ordered)
    if not n:
        return {"p50_ms": None, "p99_ms": None, "max_ms": None}
    return {
        "p50_ms": round(ordered[n // 2] * 1e3, 1),
        "p99_ms": round(ordered[min(n - 1, int(n * 0.99))] * 1e3, 1),
        "max_ms": round(ordered[-1] * 1e3, 1),
    }


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--clients", type=int, default=200)
    p.add_argument("--seconds", type=float, default=30.0)
    p.add_argument("--stored", type=int, default=10_000)
    p.add_argument("--rounds", type=int, default=1000)
    p.add_argument("-j", "--jobs", type=int, default=2)
    p.add_argument(
        "--think", type=float, default=1.0, help="mean seconds between a client's requests"
    )
    p.add_argument(
        "--match-nice",
        type=int,
        default=None,
        help="the server's ladder.nice (default: the server's default)",
    )
    p.add_argument("--skip-tournament", action="store_true")
    args = p.parse_args()
    clients = min(args.clients, 500)
    seconds = min(args.seconds, 300.0)
    import trio

    report: dict[str, Any] = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "cpus": len(os.sched_getaffinity(0)),
        "load_average": os.getloadavg()[0],
        "clients": clients,
        "seconds": seconds,
        "rounds": args.rounds,
        "jobs": args.jobs,
        "think_s": args.think,
        "match_nice": args.match_nice,
        "nice": os.getpriority(os.PRIO_PROCESS, 0),
    }
    with tempfile.TemporaryDirectory(prefix="server-bench-") as tmp:
        work = Path(tmp)
        if not args.skip_tournament:
            report["tournament_per_min"] = round(tournament_rate(work, args.rounds, args.jobs), 2)
            print("tournament matches/min:", report["tournament_per_min"], flush=True)
        server = Server(work, args.rounds, args.jobs, args.match_nice)
        try:
            report["ladder_per_min"] = round(server.rate(max(seconds, 60.0)), 2)
            print("ladder matches/min:", report["ladder_per_min"], flush=True)
            server.stop()
            report["stored"] = fill(server.data, args.stored)
            server = Server(work, args.rounds, args.jobs, args.match_nice)
            report["ladder_per_min_stored"] = round(server.rate(seconds), 2)
            import httpx

            mid = httpx.get(server.url + "/api/matches?kind=ladder&status=done&limit=1").json()[0]
            paths = ["/", "/api/leaderboard", f"/matches/{mid['id']}", f"/bots/{BOTS[0]}",
                     "/api/matches?limit=50"]  # fmt: skip
            report["load_average_before_load"] = os.getloadavg()[0]
            overflows = listen_overflows()
            first, t0, cpu0 = server.done(), time.monotonic(), server.cpu_s()
            wait0 = server.cpu_wait_s()
            report["load"] = trio.run(load, server.url, clients, seconds, paths, args.think)
            served = report["load"]["requests"] or 1
            report["load"]["server_cpu_ms_per_request"] = round(
                (server.cpu_s() - cpu0) * 1e3 / served, 2
            )
            wait1 = server.cpu_wait_s()
            if wait0 is not None and wait1 is not None:
                # How long the server was ready to answer but had no CPU: what a
                # lower priority for the matches (--match-nice) is meant to shrink.
                report["load"]["server_cpu_wait_ms_per_request"] = round(
                    (wait1 - wait0) * 1e3 / served, 2
                )
            report["load_average_after_load"] = os.getloadavg()[0]
            after = listen_overflows()
            if overflows is not None and after is not None:
                report["load"]["listen_overflows"] = after - overflows
            report["ladder_per_min_under_load"] = round(
                (server.done() - first) / (time.monotonic() - t0) * 60, 2
            )
        finally:
            server.stop()
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
