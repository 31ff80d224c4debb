"""The ladder's ratings and pairings (pure code), and the site's replay check
(in-process)."""

from __future__ import annotations

import random
import threading
from functools import partial
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
import pytest
import trio
import trio.testing

from referee.server import app as server_app
from referee.server import context as server_context
from referee.server.config import CompetitionConfig
from referee.server.db import Store
from referee.server.matchmaking import (
    UNRATED_WIDTH,
    Rated,
    choose_pair,
    leaderboard_order,
    rate,
)
from referee.tournament.schedule import Played
from referee.tournament.standings import Standing, ratings

FIXTURES = Path(__file__).parent / "fixtures" / "replays"


def _results(n_bots: int, n: int, seed: int) -> list[tuple[int, int, int | None, int, int]]:
    rng = random.Random(seed)
    strength = [rng.gauss(0, 1) for _ in range(n_bots)]
    out: list[tuple[int, int, int | None, int, int]] = []
    for _ in range(n):
        a, b = rng.sample(range(n_bots), 2)
        p = 1 / (1 + np.exp(strength[b] - strength[a]))
        u = rng.random()
        out.append((a + 10, b + 10, 0 if u < 0.9 * p else 1 if u < 0.9 else None, 0, 1))
    return out


def test_rate_matches_the_tournament_fit() -> None:
    results = _results(6, 600, 1)
    versions = [10 + i for i in range(6)] + [99]  # 99 has not played
    rated = rate(versions, results, samples=300)
    games = [
        Played(
            id=str(k),
            seats=(a - 10, b - 10),
            final=(0, 0),
            standard=(0, 0),
            winner=None if w is None else (a - 10 if w == 0 else b - 10),
        )
        for k, (a, b, w, _f0, _f1) in enumerate(results)
    ]
    rows = [Standing(rank=0, bot=i, name=str(i)) for i in range(7)]
    ratings(rows, games, samples=300)
    # The same fit and the same intervals (one function), both centred on the
    # versions that have played; the unplayed bot has a rating of 0 and no interval.
    for r, row in zip(rated[:6], rows[:6], strict=True):
        assert (r.rating, r.low, r.high) == (row.rating, row.rating_low, row.rating_high)
        assert r.low < r.rating < r.high
    assert (rows[6].rating, rows[6].rating_low, rows[6].rating_high) == (0.0, None, None)
    assert sum(r.rating for r in rated[:6]) == pytest.approx(0.0, abs=0.5)
    assert sum(r.games for r in rated) == 2 * len(results)
    assert sum(r.faults for r in rated) == len(results)
    assert rated[6].games == 0 and rated[6].high - rated[6].low == UNRATED_WIDTH
    # Rank ranges among the versions that have played; the unplayed one could be
    # anywhere and is last on the leaderboard, with no order probability.
    assert (rated[6].rank_low, rated[6].rank_high) == (1, 7)
    order = leaderboard_order(rated)
    assert order[-1] == 6 and rated[6].order_prob is None
    for rank, i in enumerate(order[:-1], start=1):
        assert 1 <= rated[i].rank_low <= rank <= rated[i].rank_high <= 6, (rank, rated[i])
        prob = rated[i].order_prob
        assert (prob is None) == (rank == 6) and (prob is None or 0.5 <= prob <= 1.0)
    assert rated[order[0]].rank_high < 6 and rated[order[-2]].rank_low > 1


def test_pairing_rules() -> None:
    rng = random.Random(3)
    rated = [
        Rated(version=1, rating=0, low=-50, high=50, games=100),
        Rated(version=2, rating=10, low=-40, high=60, games=100),
        Rated(version=3, rating=0, low=-1000, high=1000, games=0),  # new
        Rated(version=4, rating=900, low=880, high=920, games=100),
    ]
    seen: dict[frozenset[int], int] = {}
    last = None
    for _ in range(2000):
        pair = choose_pair(rated, rng, random_share=0.1, last_pair=last)
        assert pair is not None and pair[0] != pair[1]
        key = frozenset(pair)
        assert key != last  # never the same pair twice in a row
        seen[key] = seen.get(key, 0) + 1
        last = key
    new = sum(v for k, v in seen.items() if 3 in k)
    settled_far = seen.get(frozenset((1, 4)), 0)
    assert new > 1000  # the new version plays in most matches
    assert 0 < settled_far < 200  # a foregone pair is played only by the random share
    assert choose_pair(rated, rng, busy=frozenset({1, 2, 3})) is None
    assert set(choose_pair(rated, rng, busy=frozenset({1, 2})) or ()) == {3, 4}


def test_readers_of_one_match_share_its_replay_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Readers who open a just-finished match's page at once wait for one check of
    its replay; each starting its own would fill the server with threads."""
    store = Store(tmp_path)
    a = store.add_version("a", None, "sample:a", ["a"], "active")
    b = store.add_version("b", None, "sample:b", ["b"], "active")
    mid = store.add_match("ladder", a.id, b.id, 1, 10, status="done")
    row = store.match(mid)
    assert row is not None
    row = msgspec.structs.replace(row, replay="replays/m1.jsonl")
    checked: list[Path] = []
    lock = threading.Lock()
    release = threading.Event()  # set once every reader has arrived and is waiting

    def slow_check(path: Path) -> str:
        release.wait(30)
        with lock:
            checked.append(path)
        return "OK: checked"

    monkeypatch.setattr(server_context, "verify_summary", slow_check)
    site: Any = server_app.Site(store, None, CompetitionConfig(), tmp_path)  # type: ignore[arg-type]
    answers: list[str] = []

    async def main() -> None:
        async def read() -> None:
            answers.append(await site.replay_check(row))

        async with trio.open_nursery() as nursery:
            for _ in range(20):
                nursery.start_soon(read)
            await trio.testing.wait_all_tasks_blocked()
            release.set()

    trio.run(main)
    assert checked == [tmp_path / "replays/m1.jsonl"]
    assert answers == ["OK: checked"] * 20
    assert store.verify_summary(mid) == "OK: checked" and not site.verifying
    trio.run(main)  # kept: not checked again
    assert len(checked) == 1
    store.close()


def test_warm_up_makes_the_first_readers_pages_before_the_server_listens(tmp_path: Path) -> None:
    """What ``referee serve`` does before it opens its port: every template is
    compiled, the leaderboard's bots' and the recent matches' pages answer 200
    in-process, and the recent matches' replays are verified and kept."""
    from serverkit import write_config

    from referee.server.command import seed_samples
    from referee.server.config import load_competition
    from referee.server.ladder import Ladder

    cfg = load_competition(write_config(tmp_path))
    data = tmp_path / "data"
    (data / "replays").mkdir(parents=True)
    store = Store(data)
    seed_samples(store, cfg)
    v0, v1 = (v.id for v in store.current_versions()[:2])
    mid = store.add_match("ladder", v0, v1, 1, 200, status="done")
    replay = FIXTURES / "lean-1.2-chaos-tricks.jsonl"
    (data / "replays" / "m1.jsonl").write_bytes(replay.read_bytes())
    # A finished match as the ladder records it (the fixture's bots are others).
    store.conn.execute(
        "UPDATE matches SET finished = created, winner = 0, score0 = 12, score1 = 3, "
        "faults0 = 0, faults1 = 0, dq0 = 0, dq1 = 0, status0 = 'ok', status1 = 'ok', "
        "steps = 200, wall_s = 1.5, replay = 'replays/m1.jsonl' WHERE id = ?",
        (mid,),
    )
    ladder = Ladder(store, cfg, data, None, None, 7)  # type: ignore[arg-type]
    site = server_app.Site(store, ladder, cfg, data)

    async def main() -> list[tuple[str, int]]:
        await ladder.refresh()
        return await server_app.warm_up(site, server_app.build_app(site))

    statuses = dict(trio.run(main))
    assert all(code == 200 for code in statuses.values()), statuses
    assert {"/", "/api/leaderboard", f"/matches/{mid}", "/bots/random"} <= set(statuses)
    compiled = {name for _loader, name in site.env.cache.keys()}  # type: ignore[union-attr]
    assert compiled == set(site.env.list_templates())
    assert (store.verify_summary(mid) or "").startswith("OK")
    # Made for this ladder generation: the first reader gets it as it is.
    assert f"/matches/{mid}?" in site.cache
    store.close()


def test_an_idle_connection_outlives_the_clients_own_expiry() -> None:
    """A server that closes idle connections no later than its clients do races them:
    a request sent as the server closes is lost without a response."""
    import httpx

    from referee.server.command import http_config

    config = http_config("127.0.0.1", 8080)
    client_expiry = httpx.Limits().keepalive_expiry
    assert client_expiry is not None
    assert config.keep_alive_timeout >= 2 * client_expiry
    assert config.bind == ["127.0.0.1:8080"] and config.backlog >= 1024


def test_a_response_cut_short_by_the_connection_closing_leaves_no_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A client that closes its connection once it has read a whole response while
    the server's last message for it is still on its way (a refusal of an upload it
    had not finished sending): hypercorn closes the socket from its reading task
    while the application's send is under way, and that send failed with
    trio.BusyResourceError, logged with a traceback. The meeting, which a loaded
    machine brings about by chance, is made certain here: the close holds the
    socket's sending side until the application's last send has been tried."""
    import logging

    from hypercorn.config import Config
    from hypercorn.trio import serve

    closing, last_send_tried = trio.Event(), trio.Event()
    real_send_eof = trio.SocketStream.send_eof

    async def held_send_eof(self: trio.SocketStream) -> None:
        with self._send_conflict_detector:  # what trio's own send_eof holds
            closing.set()
            await last_send_tried.wait()
        await real_send_eof(self)

    monkeypatch.setattr(trio.SocketStream, "send_eof", held_send_eof)

    async def refusal(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        headers = [(b"content-length", b"2"), (b"connection", b"close")]
        await send({"type": "http.response.start", "status": 401, "headers": headers})
        await send({"type": "http.response.body", "body": b"no", "more_body": True})
        await closing.wait()
        try:
            await send({"type": "http.response.body", "body": b""})
        finally:
            last_send_tried.set()

    logged: list[logging.LogRecord] = []
    log = logging.getLogger("test.hypercorn.errors")
    log.addHandler(type("Keep", (logging.Handler,), {"emit": lambda _, r: logged.append(r)})())
    config = Config()
    config.bind, config.accesslog, config.errorlog = ["127.0.0.1:0"], None, log
    received = b""

    async def main() -> None:
        nonlocal received
        stop = trio.Event()
        with trio.fail_after(60):
            async with trio.open_nursery() as nursery:
                app = server_app.quiet_when_the_connection_closes(refusal)
                binds = await nursery.start(partial(serve, app, config, shutdown_trigger=stop.wait))
                port = int(binds[0].rsplit(":", 1)[1])
                client = await trio.open_tcp_stream("127.0.0.1", port)
                # The upload's body is never sent: the refusal comes first.
                await client.send_all(b"POST /api/submit HTTP/1.1\r\nHost: x\r\n")
                await client.send_all(b"Content-Length: 4\r\n\r\n")
                while not received.endswith(b"\r\n\r\nno"):
                    chunk = await client.receive_some()
                    assert chunk, received
                    received += chunk
                await client.aclose()
                await last_send_tried.wait()
                stop.set()

    trio.run(main)
    assert received.startswith(b"HTTP/1.1 401")
    assert [r.getMessage() for r in logged if r.levelno >= logging.ERROR] == []
