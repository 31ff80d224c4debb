"""``kill -9`` of ``referee serve`` in the middle of a ladder match, then a restart:
every accepted version and every finished match is still there, unchanged, the
interrupted match is played again (same seed, to the end), and the killed server
left no bot running. The server runs with invitation-only registration: the
organiser's ``--add-competitor`` token is the only way in."""

from __future__ import annotations

from pathlib import Path

from conftest import processes_mentioning
from serverkit import SAMPLES, Server, wait_for, write_config

ROUNDS = 20_000


def test_kill_9_mid_match_loses_nothing(tmp_path: Path) -> None:
    # 20,000 rounds: a C bot's match lasts over a second even on an idle machine (2,000
    # rounds took 0.14 s, and the match could end between finding it and looking for it).
    # House bots in C too: a Python bot's 20,000-round match takes many times as long,
    # and c-bot's first ladder match waits for the one already on.
    config = write_config(
        tmp_path, rounds=ROUNDS, parallel=1, mode="invite", bots=("cycler-c", "markov-c")
    )
    data = tmp_path / "data"
    server = Server(config, data)
    try:
        # Invitation only: no sign-up link, and the sign-up page refuses with the reason.
        assert 'href="/signup"' not in server.get("/").text
        for r in (server.get("/signup"), server.client.post("/signup", data={"name": "x"})):
            assert r.status_code == 403 and "ask the organiser for a token" in r.text
        token = server.add_competitor("alice")  # prints the token, and only it
        assert token.startswith("rt_") and len(token.split()) == 1
        c_bot = (SAMPLES / "bin" / "minimal_c").read_bytes()
        r = server.upload(token, c_bot, filename="minimal_c", name="c-bot")
        assert r.status_code == 200 and r.json()["message"].startswith("accepted, version 1")

        def c_bot_mid_match() -> dict | None:
            for m in server.json("/api/matches?status=running"):
                replays = list((data / "replays").glob(f"m{m['id']}.*.part.jsonl*"))
                if "c-bot" in (m["bot0"], m["bot1"]) and replays and replays[0].stat().st_size:
                    return dict(m)
            return None

        def snapshot_mid_match() -> tuple | None:
            # Until c-bot's match is on, one request per look: the looks (every 50 ms)
            # are not to take the CPU from the match they wait for.
            if c_bot_mid_match() is None:
                return None
            # What finished is read first, so that the kill follows the sight of the
            # running bot as closely as the test can make it.
            before = {m["id"]: m for m in server.json("/api/matches?status=done&limit=1000")}
            board_before = server.json("/api/leaderboard")
            running = c_bot_mid_match()
            if running is None or not processes_mentioning(str(data / "versions")):
                return None
            return running, before, board_before

        running, before, board_before = wait_for(
            snapshot_mid_match, 600, "a ladder match of c-bot in progress, its bot running"
        )
        server.kill()
        # The match was really cut off: its replay is still the part being written.
        assert list((data / "replays").glob(f"m{running['id']}.*.part.jsonl*"))
    finally:
        if server.proc.poll() is None:
            server.stop()

    # The worker sees its coordinator gone and ends the match: no bot is left.
    wait_for(lambda: not processes_mentioning(str(data / "versions")), 60, "c-bot to be stopped")

    # A public replay copy the kill interrupted between its write and its rename.
    (data / "public").mkdir(exist_ok=True)
    torn_copy = data / "public" / "m1.s1.jsonl.gz.0123456789ab.part"
    torn_copy.write_bytes(b"half of a copy")

    again = Server(config, data)
    try:
        after = {m["id"]: m for m in again.json("/api/matches?status=done&limit=1000")}
        # Every match finished before the kill is there, with the same result.
        for mid, m in before.items():
            assert after[mid] == m
        board = again.json("/api/leaderboard")
        assert {e["bot"] for e in board["entries"]} == {e["bot"] for e in board_before["entries"]}
        c_bot = next(e for e in board["entries"] if e["bot"] == "c-bot")
        assert c_bot["version"] == 1 and c_bot["owner"] == "alice"
        # The interrupted match is played again, with its seed, to the end.
        replayed = wait_for(
            lambda: (m := again.json(f"/api/matches/{running['id']}"))["status"] == "done" and m,
            600,
            "the interrupted match to be played again",
        )
        assert replayed["seed"] == running["seed"]
        assert replayed["steps"] == ROUNDS
        assert replayed["bot0"] == running["bot0"] and replayed["bot1"] == running["bot1"]
        assert (data / replayed["replay"]).is_file()
        # Counts: nothing lost, nothing doubled.
        done = again.json("/api/matches?status=done&limit=1000")
        ids = [m["id"] for m in done]
        assert len(ids) == len(set(ids))
        assert set(before) | {running["id"]} <= set(ids)
        assert not list((data / "replays").glob(f"m{running['id']}.*.part.jsonl*"))
        assert not torn_copy.exists()
    finally:
        again.stop()
