"""Owners' data stays the owners': a bot that writes a unique marker to its stderr
plays a validation, a ladder and a challenge match on the real application
in-process (real bot processes through the real match worker), and every public
route, read by an anonymous visitor and by another competitor, carries no byte
of that stderr and no path of the server's data directory; the owner's own
pages and download keep them. The static site of a tournament holds neither."""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import re
import secrets
import subprocess
import sys
from pathlib import Path

import trio
from conftest import ROOT
from inprocess import InProcess, config, sign_up

from referee.step_report import verify_summary
from referee.tournament.executor import ProcessExecutor

MARKER = "stderr-marker-" + secrets.token_hex(8)

MARKED_BOT = f"""\
import json, sys
print("{MARKER} at start", file=sys.stderr, flush=True)
hello = json.loads(sys.stdin.readline())
moves = hello["params"]["moves"]
print(json.dumps({{"name": "marked", "version": "1"}}), flush=True)
for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("type") != "turn":
        break
    print(json.dumps({{"round": msg["round"], "real_move": moves[msg["round"] % len(moves)]}}),
          flush=True)
print("{MARKER} at the end", file=sys.stderr, flush=True)
"""


def public_paths(mids: list[int]) -> list[str]:
    paths = ["/", "/bots/marked", "/bots/random", "/api/leaderboard", "/api/health"]
    paths += ["/api/matches?limit=1000", "/api/bots/marked", "/finals", "/api/finals"]
    paths += ["/api/matches?kind=challenge", "/api/matches?status=done"]
    for mid in mids:
        paths += [f"/matches/{mid}", f"/matches/{mid}/viewer", f"/matches/{mid}/replay.jsonl"]
        paths += [f"/api/matches/{mid}"]
    return paths


def test_no_public_route_shows_a_bots_stderr_or_the_servers_paths(tmp_path: Path) -> None:
    data = tmp_path / "data"
    secret_bits = [MARKER.encode(), str(data).encode(), str(tmp_path).encode(), str(ROOT).encode()]

    async def main() -> None:
        executor = ProcessExecutor(1, data / "workers", share_cpus=False)
        server = InProcess(config(tmp_path), data, executor)
        store, ladder = server.store, server.ladder
        try:
            await ladder.refresh()
            async with server.client() as owner, server.client() as other:
                token = await sign_up(owner, "owner")
                await sign_up(other, "other")
                r = await owner.post(
                    "/api/submit",
                    params={"filename": "marked.py", "name": "marked"},
                    content=MARKED_BOT.encode(),
                    headers={"authorization": f"Bearer {token}"},
                    timeout=120,
                )
                assert r.status_code == 200, r.text
                validation = r.json()["validation"]["match"]
                mine = r.json()["version_id"]
                sample = next(v for v in store.current_versions() if v.bot_name == "random")
                ladder_match = store.add_match("ladder", mine, sample.id, 5, 60, status="queued")
                await ladder.play(ladder_match)
                r = await owner.post(
                    "/api/challenge",
                    json={"bot": "marked", "opponent": "cycler"},
                    headers={"authorization": f"Bearer {token}"},
                )
                assert r.status_code == 202, r.text
                challenge = r.json()["match"]
                await ladder.play(challenge)
                await ladder.refresh()
                mids = [validation, ladder_match, challenge]

                # The bot did write the marker, and its owner reads it.
                logs = await owner.get(f"/me/logs/{ladder_match}/0")
                assert MARKER in logs.text
                own = await owner.get(f"/matches/{ladder_match}/replay.jsonl")
                assert MARKER.encode() in own.content
                assert MARKER in (await owner.get(f"/matches/{ladder_match}/viewer")).text

                anonymous = server.client()
                for reader in (anonymous, other):
                    for path in public_paths(mids):
                        r = await reader.get(path)
                        assert r.status_code < 500, (path, r.status_code)
                        for bit in secret_bits:
                            assert bit not in r.content, (path, bit)
                    # What the public may download is a replay that verifies.
                    public = data.parent / "public.jsonl"
                    r = await reader.get(f"/matches/{ladder_match}/replay.jsonl")
                    public.write_bytes(r.content)
                    assert verify_summary(public).startswith("OK"), verify_summary(public)
                await anonymous.aclose()

                # The viewer's script runs under the page's CSP: its hash is the one
                # allowed, and only this site's match page may frame it.
                viewer = await other.get(f"/matches/{ladder_match}/viewer")
                csp = viewer.headers["content-security-policy"]
                scripts = re.findall(r"<script>(.*?)</script>", viewer.text, re.S)
                assert len(scripts) == 1
                digest = base64.b64encode(hashlib.sha256(scripts[0].encode()).digest()).decode()
                assert f"'sha256-{digest}'" in csp and "frame-ancestors 'self'" in csp
        finally:
            with trio.CancelScope(shield=True):
                await executor.aclose()
            server.close()

    trio.run(main)


def test_the_static_site_of_a_tournament_shows_no_stderr_or_paths(tmp_path: Path) -> None:
    bot = tmp_path / "bots" / "marked.py"
    bot.parent.mkdir()
    bot.write_text(MARKED_BOT)
    tour, site = tmp_path / "tour", tmp_path / "site"
    cli = [sys.executable, "-m", "referee"]
    played = subprocess.run(
        [*cli, "tournament", "--legs", "1", "--rounds", "30", "--finalists", "0"]
        + ["--quiet", "--out", str(tour), f"python3 {bot}", "random"],
        capture_output=True,
        cwd=ROOT,
        timeout=120,
    )
    assert played.returncode == 0, played.stderr
    replays = list((tour / "replays").iterdir())
    assert MARKER.encode() in gzip.decompress(replays[0].read_bytes())
    made = subprocess.run(
        [*cli, "site", str(tour), str(site)], capture_output=True, cwd=ROOT, timeout=60
    )
    assert made.returncode == 0, made.stderr
    for path in site.rglob("*"):
        if path.is_file():
            text = path.read_bytes()
            if path.name.endswith(".gz"):
                text = gzip.decompress(text)
            for bit in (MARKER, str(tmp_path), str(ROOT)):
                assert bit.encode() not in text, (path, bit)
    results = json.loads((site / "results.json").read_text())
    assert results["config"]["bots"][0]["argv"][-1] == "marked.py"
