"""The pages a newcomer reads, made in-process from a real store: unrated bots apart,
provisional ratings without rank ranges, ages instead of timestamps, scores rounded,
a challenge's real seed, and the crash text the match wrote."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import trio
from serverkit import write_config

from referee.server import api
from referee.server import app as server_app
from referee.server.command import seed_samples
from referee.server.config import load_competition
from referee.server.db import Store
from referee.server.display import PROVISIONAL_GAMES, age, score, score_pair, signed
from referee.server.ladder import Ladder


async def _fetch(app: Any, path: str) -> tuple[int, str]:
    status, body = 0, []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = int(message["status"])
        elif message["type"] == "http.response.body":
            body.append(message.get("body", b""))

    scope = {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"localhost")],
        "client": ("127.0.0.1", 0),
        "server": ("127.0.0.1", 0),
    }
    await app(scope, receive, send)
    return status, b"".join(body).decode()


SEAT_SCORES = [{"Final": 0.123456789, "Std": 0.14, "moves": 200}, {"Final": -0.1, "Std": 0}]


def _finish(store: Store, mid: int, crash: str) -> None:
    """A finished match as the ladder records it, with the outcome JSON of its seats."""
    store.conn.execute(
        "UPDATE matches SET status = 'done', finished = created, winner = 1, "
        "score0 = 0.123456789, score1 = -0.1, faults0 = 1, faults1 = 0, dq0 = 0, dq1 = 0, "
        "status0 = 'crash', status1 = 'ok', steps = 200, wall_s = 1.5 WHERE id = ?",
        (mid,),
    )
    verdicts = [
        {"status": "crash", "faults": [{"round": 5, "seat": 0, "kind": "crash", "detail": crash}]},
        {"status": "ok", "faults": []},
    ]
    outcome = {
        "winner": 1,
        "reason": "crash",
        "steps": 200,
        "seats": [
            {"seat": i, "label": f"seat{i}", "scores": SEAT_SCORES[i], "verdict": verdicts[i]}
            for i in (0, 1)
        ],
    }
    store.conn.execute(
        "INSERT INTO outcomes (match, outcome) VALUES (?, ?)", (mid, json.dumps(outcome))
    )


def test_pages_for_people(tmp_path: Path) -> None:
    cfg = load_competition(write_config(tmp_path))
    data = tmp_path / "data"
    store = Store(data)
    seed_samples(store, cfg)
    random_v, cycler_v, _markov = store.current_versions()
    # One ladder match between random and cycler: both have a single game; markov-c none.
    mid = store.add_match("ladder", random_v.id, cycler_v.id, 1, 200, status="queued")
    _finish(store, mid, "killed by SIGSEGV")
    token = store.add_competitor("newcomer")
    me = store.competitor_by_token(token)
    assert me is not None
    store.add_version("mine", me.id, "0" * 64, ["./mine"], "active")
    ladder = Ladder(store, cfg, data, None, None, 7)  # type: ignore[arg-type]
    site = server_app.Site(store, ladder, cfg, data)
    app = server_app.build_app(site)

    async def main() -> dict[str, tuple[int, str]]:
        await ladder.refresh()
        queued = await api.challenge(site, me, "mine", "random")
        return {
            path: await _fetch(app, path)
            for path in ("/", "/bots/random", "/bots/markov-c", f"/matches/{mid}", queued["url"])
        }

    pages = trio.run(main)
    assert all(status == 200 for status, _ in pages.values()), pages
    board = pages["/"][1]
    rated, _, unrated = board.partition('<table id="unrated">')
    # Unrated bots are listed apart, after the rated ones, and not ranked.
    assert "markov-c" in unrated and "mine" in unrated
    assert "markov-c" not in rated.split('<table id="rated">')[1]
    # One game each: provisional, no rank range (1-1 meant nothing), no zero-width
    # interval; the version's age, with the ISO time in the title.
    rows = re.findall(r"<tr>\n(.*?)</tr>", rated.split('<table id="rated">')[1], re.S)
    assert len(rows) == 2
    for row in rows:
        cells = re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)
        assert cells[1] == "&ndash;", cells
        assert cells[4] == "", cells  # no order probability while provisional
        assert "provisional" in cells[5], cells
        low_high = re.fullmatch(r"\[([+-]\d+), ([+-]\d+)\]", cells[6])
        assert cells[6] == "&ndash;" or (low_high and low_high[1] != low_high[2]), cells
        assert re.fullmatch(
            r'v1 <span class="muted" title="\d{4}-\d\d-\d\dT[\d:]+Z">just now</span>', cells[10]
        ), cells
    assert f"fewer than {PROVISIONAL_GAMES} games is provisional" in board
    # Scores rounded for people in the list of matches.
    assert "0.123 : -0.100" in board and "0.123456789" not in board
    assert "provisional" in pages["/bots/random"][1] and "rank 1" not in pages["/bots/random"][1]
    assert "not rated yet" in pages["/bots/markov-c"][1]
    # The match page: each score on a line of its own, rounded; the crash as the match
    # described it; the seed given.
    match = pages[f"/matches/{mid}"][1]
    assert (
        '<span class="score">Final <b>0.123</b></span><span class="score">Std <b>0.140</b></span>'
        in match
    )
    assert '<span class="score">moves <b>200</b></span>' in match
    assert "crash: killed by SIGSEGV" in match and "exit code" not in match
    assert re.findall(r"seed (\d+)", match) == ["1"]
    # A challenge shows the seed it is played with, never "seed 0".
    challenge_path = next(p for p in pages if p.startswith("/matches/") and p != f"/matches/{mid}")
    row = store.match(int(challenge_path.rsplit("/", 1)[1]))
    assert row is not None and row.kind == "challenge" and row.seed != 0
    assert re.findall(r"seed (\d+)", pages[challenge_path][1]) == [str(row.seed)]
    # The API keeps the exact values and says which ratings are provisional.
    entries = api.leaderboard_json(site)["entries"]
    assert {e["bot"]: e["provisional"] for e in entries}["random"] is True
    store.close()


def test_leaderboard_shows_the_posteriors_ranges_and_order(tmp_path: Path) -> None:
    """Cycler wins twelve ladder matches against random and twelve against
    markov-c, who split six between them; a newcomer is unplayed: the page shows the
    rank ranges and the probability that a bot is above the next one as the API
    gives them (from the ratings' posterior, stats/ladder.py): cycler surely first
    (range 1), the other two level (either of places 2 and 3), their order a toss-up."""
    cfg = load_competition(write_config(tmp_path))
    data = tmp_path / "data"
    store = Store(data)
    seed_samples(store, cfg)
    random_v, cycler_v, markov_v = store.current_versions()
    token = store.add_competitor("newcomer")
    me = store.competitor_by_token(token)
    assert me is not None
    store.add_version("mine", me.id, "0" * 64, ["./mine"], "active")
    meetings = [(random_v, cycler_v)] * 12 + [(markov_v, cycler_v)] * 12
    meetings += [(random_v, markov_v), (markov_v, random_v)] * 3
    for seed, (seat0, seat1) in enumerate(meetings, start=1):
        mid = store.add_match("ladder", seat0.id, seat1.id, seed, 200, status="queued")
        _finish(store, mid, "killed by SIGSEGV")  # seat 1 wins
    ladder = Ladder(store, cfg, data, None, None, 7)  # type: ignore[arg-type]
    site = server_app.Site(store, ladder, cfg, data)
    app = server_app.build_app(site)

    async def main() -> tuple[str, str]:
        await ladder.refresh()
        return (await _fetch(app, "/"))[1], (await _fetch(app, "/bots/cycler"))[1]

    board, cycler_page = trio.run(main)
    entries = api.leaderboard_json(site)["entries"]
    assert [e["bot"] for e in entries[:1]] == ["cycler"] and entries[3]["bot"] == "mine"
    top, second, third, unplayed = entries
    assert (top["rank_low"], top["rank_high"]) == (1, 1)
    assert (second["rank_low"], second["rank_high"]) == (2, 3)
    assert (third["rank_low"], third["rank_high"]) == (2, 3)
    assert top["order_prob"] >= 0.95  # 24 wins of 24 against the other two
    assert 0.4 <= second["order_prob"] <= 0.6  # level: three wins each
    assert third["order_prob"] is None and unplayed["order_prob"] is None
    assert all(e["low"] < e["rating"] < e["high"] for e in entries[:3])
    rated = board.split('<table id="rated">')[1].split("</table>")[0]
    rows = re.findall(r"<tr>\n(.*?)</tr>", rated, re.S)
    cells = [re.findall(r"<td[^>]*>(.*?)</td>", row, re.S) for row in rows]
    assert [c[1] for c in cells] == ["1", "2-3", "2-3"]
    assert [c[4] for c in cells] == [
        f"{top['order_prob']:.3f}",
        f"{second['order_prob']:.3f}",
        "",
    ]
    assert [c[6] for c in cells] == [
        f"[{signed(e['low'])}, {signed(e['high'])}]" for e in (top, second, third)
    ]  # as the tournament's pages print an interval: it is often far from symmetric
    assert "P(above next)" in board
    assert f"(95% [{signed(top['low'])}, {signed(top['high'])}])" in cycler_page
    store.close()


def test_ages_and_scores_for_people() -> None:
    now = time.time()
    iso = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now - 3 * 3600 - 5))
    assert age(iso, now) == "3 h ago"
    assert age(time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now - 30)), now) == "just now"
    assert age(time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now - 125)), now) == "2 min ago"
    assert age(time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now - 3 * 86400)), now) == "3 d ago"
    assert [score(v) for v in (0.1234567, 12, 3.0, -0.1, None)] == [
        "0.123",
        "12",
        "3",
        "-0.100",
        "",
    ]
    assert score_pair([-0.0512, 0.0]) == "-0.051 : 0.000" and score_pair([12.0, 3]) == "12 : 3"
    assert [signed(x) for x in (-0.3, 0.4, 12.6, -131.2)] == ["+0", "+0", "+13", "-131"]
