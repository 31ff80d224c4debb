"""``referee serve`` as a real process on a loopback port: the ladder of the sample
bots, the leaderboard page and API, and submissions through ``referee submit``
(real Python, C and JavaScript bots; hostile archives refused with a reason); then
the pages over HTTP (sign-up, sign-in cookies, CSRF, the competitor's own stderr
logs, match pages with the replay viewer, challenge matches), and a real headless
chromium that signs up, uploads a bot through the form and watches one of its
matches in the replay viewer.

Every test here only adds to the ladder (competitors and bots of its own), so they
share one server: starting it and its first matches is paid once."""

from __future__ import annotations

import io
import re
import shutil
import socket
import tarfile
import zipfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from conftest import needs, needs_node
from serverkit import SAMPLES, Server, wait_for, write_config


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    base = tmp_path_factory.mktemp("serve")
    srv = Server(write_config(base, mode="open", parallel=1, per_hour=12), base / "data")
    try:
        yield srv
    finally:
        srv.stop()


@pytest.fixture(scope="module")
def token(server: Server) -> str:
    return server.add_competitor("alice")


def python_bot(directory: Path) -> Path:
    """A Python bot as a directory: the random sample bot and its helper module."""
    directory.mkdir(parents=True, exist_ok=True)
    for name in ("random_bot.py", "chaosbot.py"):
        shutil.copy(SAMPLES / "python" / name, directory / name)
    return directory


def ladder_done(server: Server) -> int:
    return server.counts().get("ladder.done", 0)


def test_ladder_plays_and_the_leaderboard_follows(server: Server) -> None:
    board = server.json("/api/leaderboard")
    assert {e["bot"] for e in board["entries"]} == {"random", "cycler", "markov-c"}
    first = wait_for(lambda: ladder_done(server) >= 2 and ladder_done(server), 300, "2 matches")
    later = wait_for(lambda: (n := ladder_done(server)) > first and n, 300, "one more match")

    # Each finished ladder match counts once for each of its two bots, once the
    # ratings are refreshed after its commit.
    def consistent() -> dict | None:
        board = server.json("/api/leaderboard")
        games = sum(e["games"] for e in board["entries"])
        return board if games == 2 * board["matches"].get("ladder.done", 0) else None

    board = wait_for(consistent, 60, "the leaderboard to count every finished match")
    assert board["matches"]["ladder.done"] >= later
    assert all(e["low"] <= e["rating"] <= e["high"] for e in board["entries"] if e["games"])
    assert [e["rank"] for e in board["entries"]] == [1, 2, 3]
    assert all(1 <= e["rank_low"] <= e["rank_high"] <= 3 for e in board["entries"])
    # Versions that have played first, by rating; each but the last of them with the
    # share of the ratings' posterior draws in which it is above the next.
    played = [e for e in board["entries"] if e["games"]]
    assert played == board["entries"][: len(played)]
    ratings = [e["rating"] for e in played]
    assert ratings == sorted(ratings, reverse=True)
    assert all(0.0 <= e["order_prob"] <= 1.0 for e in played[:-1])
    assert all(e["order_prob"] is None for e in board["entries"][len(played) - 1 :])
    page = server.get("/")
    assert page.status_code == 200
    for e in board["entries"]:
        assert f'href="/bots/{e["bot"]}"' in page.text
        if e["games"]:  # the rank range on the bot's row (none while provisional)
            ranks = str(e["rank_low"])
            if e["rank_high"] != e["rank_low"]:
                ranks += f"-{e['rank_high']}"
            if e["provisional"]:
                ranks = "&ndash;"
            assert f'<td class="n">{ranks}</td>\n<td><a href="/bots/{e["bot"]}"' in page.text
    matches = server.json("/api/matches?kind=ladder&status=done")
    assert len(matches) >= later
    one = server.json(f"/api/matches/{matches[0]['id']}")
    assert one["outcome"]["steps"] == 200
    # stderr belongs to the bots' owners: never in the public API
    assert all("stderr_tail" not in s["verdict"] for s in one["outcome"]["seats"])


def test_python_c_and_js_bots_are_accepted(server: Server, token: str, tmp_path: Path) -> None:
    before = ladder_done(server)
    proc = server.submit(
        token,
        python_bot(tmp_path / "pybot"),
        "--name",
        "py-bot",
        "--command",
        "python3 random_bot.py",
    )
    assert proc.returncode == 0, proc.stderr
    assert "accepted, version 1, validation match passed, now in the ladder" in proc.stdout
    c_bot = SAMPLES / "bin" / "minimal_c"
    proc = server.submit(token, c_bot, "--name", "c-bot")
    assert proc.returncode == 0, proc.stderr + proc.stdout
    # A second upload of the same bot is its version 2.
    again = server.upload(token, c_bot.read_bytes(), filename="minimal_c", name="c-bot")
    assert again.json()["message"].startswith("accepted, version 2"), again.text
    names = {e["bot"]: e for e in server.json("/api/leaderboard")["entries"]}
    assert names["c-bot"]["version"] == 2 and names["c-bot"]["owner"] == "alice"
    assert "py-bot" in names
    # The new versions are played in the ladder.
    wait_for(
        lambda: any(
            "c-bot" in (m["bot0"], m["bot1"])
            for m in server.json("/api/matches?kind=ladder&status=done&limit=100")
        ),
        180,
        "a ladder match of c-bot",
    )
    assert ladder_done(server) > before


@needs_node
def test_js_bot_in_a_zip(server: Server, token: str, tmp_path: Path) -> None:
    archive = tmp_path / "jsbot.zip"
    with zipfile.ZipFile(archive, "w") as z:
        for name in ("random.js", "chaosbot.js"):
            z.write(SAMPLES / "js" / name, name)
    proc = server.submit(token, archive, "--name", "js-bot", "--command", "node random.js")
    assert proc.returncode == 0, proc.stderr
    assert "accepted, version 1" in proc.stdout


def test_a_bot_that_fails_the_handshake_is_refused_with_the_reason(
    server: Server, token: str, tmp_path: Path
) -> None:
    bad = tmp_path / "crasher.py"
    bad.write_text(
        "import sys\nprint('cannot find my weights file', file=sys.stderr)\nsys.exit(3)\n"
    )
    proc = server.submit(token, bad)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "handshake in round 0" in proc.stderr
    assert "exit code 3" in proc.stderr
    assert "cannot find my weights file" in proc.stderr  # the stderr tail
    entries = {e["bot"] for e in server.json("/api/leaderboard")["entries"]}
    assert "crasher" not in entries


def _tar(members: list[tuple[tarfile.TarInfo, bytes | None]]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for info, data in members:
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return buf.getvalue()


def _file(name: str, data: bytes = b"print('hi')\n") -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    return info, data


def _link(name: str, target: str, kind: bytes = tarfile.SYMTYPE) -> tuple[tarfile.TarInfo, None]:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = target
    return info, None


def _device(name: str) -> tuple[tarfile.TarInfo, None]:
    info = tarfile.TarInfo(name)
    info.type = tarfile.CHRTYPE
    info.devmajor, info.devminor = 1, 3
    return info, None


def _sparse_2gib() -> bytes:
    """A real 2 GiB sparse file packed by GNU tar with --sparse: the upload is a few
    hundred bytes, the member unpacks to 2 GiB."""
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        with open(Path(d) / "main.py", "wb") as f:
            f.truncate(2 << 30)
        subprocess.run(["tar", "--sparse", "-czf", "sparse.tar.gz", "main.py"], cwd=d, check=True)
        return (Path(d) / "sparse.tar.gz").read_bytes()


def _zip_bomb(files: int, mib: int) -> bytes:
    """Zeros: each MiB packs to about 1 KiB."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for i in range(files):
            z.writestr(f"f{i}.py", b"\0" * (mib << 20))
    return buf.getvalue()


HOSTILE = {
    "dotdot.tar.gz": (lambda: _tar([_file("../evil.py")]), "'..' is not allowed"),
    "absolute.tar.gz": (lambda: _tar([_file("/tmp/evil.py")]), "absolute paths"),
    "symlink.tar.gz": (
        lambda: _tar([_link("main.py", "/etc/passwd")]),
        "links are not allowed",
    ),
    "hardlink.tar.gz": (
        lambda: _tar([_link("main.py", "/etc/passwd", tarfile.LNKTYPE)]),
        "links are not allowed",
    ),
    "device.tar.gz": (lambda: _tar([_device("main.py")]), "only regular files"),
    "sparse.tar.gz": (_sparse_2gib, "a file unpacks to more than 4 MiB"),
    "bomb.zip": (lambda: _zip_bomb(1, 16), "a file unpacks to more than 4 MiB"),
    "bombs.zip": (lambda: _zip_bomb(8, 1), "the archive unpacks to more than 4 MiB"),
    "many.tar.gz": (
        lambda: _tar([_file(f"f{i}.py") for i in range(25)]),
        "too many files",
    ),
    "garbage.tar.gz": (lambda: b"\x1f\x8bnot really", "not a readable tar archive"),
}


@pytest.mark.parametrize("filename", sorted(HOSTILE))
def test_hostile_archives_are_refused(server: Server, filename: str) -> None:
    # Over HTTP as referee submit sends an archive (its exit code and message for a
    # refusal are tested below): each upload by a new competitor, as the hourly
    # budget counts refusals too.
    token = server.sign_up(f"mallory-{filename}")
    make, reason = HOSTILE[filename]
    r = server.upload(token, make(), filename=filename, command="python3 main.py")
    assert r.status_code == 400, r.text
    assert reason in r.json()["error"], r.text
    # Nothing was written outside the data directory, nor left half-unpacked in it.
    assert not (server.data.parent / "evil.py").exists()
    assert not list((server.data / "versions").glob("upload-*"))


def test_limits_and_tokens(server: Server, tmp_path: Path) -> None:
    big = tmp_path / "big.py"
    big.write_bytes(b"#" * (300 << 10))
    token = server.sign_up("bulky")
    proc = server.submit(token, big)
    assert proc.returncode == 2 and "over the limit of 256 KiB" in proc.stderr, proc.stderr
    bad = server.client.post("/api/submit", content=b"x", headers={"Authorization": "Bearer nope"})
    assert bad.status_code == 401 and bad.json() == {"error": "unknown token"}
    assert server.client.post("/api/submit", content=b"x").status_code == 401
    # The hourly budget: 12 uploads, refused ones included; the 13th is a 429.
    spam = server.sign_up("spammer")
    junk = tmp_path / "junk.tar.gz"
    junk.write_bytes(_tar([_file("../x.py")]))
    codes = [
        server.client.post(
            "/api/submit?filename=junk.tar.gz",
            content=junk.read_bytes(),
            headers={"Authorization": f"Bearer {spam}"},
        ).status_code
        for _ in range(13)
    ]
    assert codes == [400] * 12 + [429]


def test_a_refusal_before_the_body_says_the_connection_closes(server: Server) -> None:
    """A refusal sent before the request's body arrived ends the connection (the server
    cannot tell where the next request would start), so it must say so: a client that
    reused the connection would lose its next request without a response."""
    host, port = server.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=30) as conn:
        head = f"POST /api/submit HTTP/1.1\r\nHost: {host}\r\nContent-Length: 4\r\n\r\n"
        conn.sendall(head.encode())  # the body is held back: the refusal comes first
        reply = b""
        while b"\r\n\r\n" not in reply:
            chunk = conn.recv(4096)
            assert chunk, reply
            reply += chunk
        status, *headers = reply.split(b"\r\n\r\n")[0].decode().split("\r\n")
        assert status.startswith("HTTP/1.1 401"), status
        assert "connection: close" in [h.lower() for h in headers], headers
    # A GET's error leaves the connection open for the next request.
    first = server.client.get("/api/matches/999999")
    assert first.status_code == 404 and "connection" not in first.headers


def test_one_competitor_cannot_take_anothers_bot_name(
    server: Server, token: str, tmp_path: Path
) -> None:
    c_bot = (SAMPLES / "bin" / "minimal_c").read_bytes()
    r = server.upload(token, c_bot, filename="minimal_c", name="owned")
    assert r.status_code == 200, r.text
    other = server.sign_up("eve")
    proc = server.submit(other, SAMPLES / "bin" / "minimal_c", "--name", "owned")
    assert proc.returncode == 2
    assert "belongs to someone else" in proc.stderr


def test_html_in_a_bot_name_is_text(server: Server, token: str) -> None:
    # (No "/": a name holds no path separator, see test_server_input.)
    name = "<script>alert(1)<script>"
    proc = server.submit(token, SAMPLES / "bin" / "minimal_c", "--name", name)
    assert proc.returncode == 0, proc.stderr
    page = server.get("/").text
    assert "&lt;script&gt;alert(1)&lt;script&gt;" in page
    assert "<script>alert(1)" not in page
    bot = server.get("/bots/%3Cscript%3Ealert(1)%3Cscript%3E")
    assert bot.status_code == 200
    assert "<script>alert(1)" not in bot.text
    # The ladder still runs.
    n = ladder_done(server)
    wait_for(lambda: ladder_done(server) > n, 300, "another ladder match")


def test_add_competitor_twice_is_a_one_line_error(server: Server) -> None:
    import subprocess
    import sys

    from conftest import ROOT

    server.sign_up("twice")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "referee",
            "serve",
            "--config",
            str(server.config),
            "--data",
            str(server.data),
            "--add-competitor",
            "twice",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip() == "referee serve: competitor 'twice' already exists"


def test_a_port_in_use_is_a_one_line_error(server: Server, tmp_path: Path) -> None:
    import subprocess
    import sys

    from conftest import ROOT

    proc = subprocess.run(
        [sys.executable, "-m", "referee", "serve", "--config", str(server.config), "--data",
         str(tmp_path / "other"), "--port", str(server.port)],
        capture_output=True, text=True, cwd=ROOT, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().endswith(
        f"cannot serve on 127.0.0.1:{server.port}: Address already in use"
    )
    assert "Traceback" not in proc.stderr


def test_validation_matches_are_private(server: Server, token: str) -> None:
    crasher = b"import sys\nprint('secret path /home/me/weights', file=sys.stderr)\nsys.exit(1)\n"
    r = server.client.post(
        "/api/submit?filename=secret.py&name=secret",
        content=crasher,
        headers={"Authorization": f"Bearer {token}"},
    )
    assert r.status_code == 422
    answer = r.json()
    assert answer["accepted"] is False and answer["validation"]["fault"] == "handshake"
    assert "secret path" in answer["validation"]["stderr_tail"]
    mid = answer["validation"]["match"]
    assert server.get(f"/matches/{mid}").status_code == 404
    assert server.get(f"/api/matches/{mid}").status_code == 404
    assert server.get("/api/matches?kind=validation").status_code == 403
    listed = server.json("/api/matches?limit=1000")
    assert all(m["kind"] != "validation" for m in listed)
    assert "secret path" not in server.get("/bots/secret").text


def test_the_data_directory_is_the_owners_only(server: Server) -> None:
    """A real server's data directory after its matches: other local users read
    nothing (the bots' uids may only pass through to their own versions)."""
    import stat

    wait_for(lambda: ladder_done(server) >= 1, 300, "a finished ladder match")

    def mode(path: Path) -> int:
        return stat.S_IMODE(path.stat().st_mode)

    assert mode(server.data) == 0o711
    for name in ("server.sqlite", "server.sqlite-wal", "server.sqlite-shm"):
        assert mode(server.data / name) == 0o600, name
    for name in ("logs", "replays"):
        assert mode(server.data / name) == 0o700, name


# -- the pages ------------------------------------------------------------------

NOISY_BOT = """\
import json, sys
print("<script>alert('stderr')</script> starting up", file=sys.stderr, flush=True)
hello = json.loads(sys.stdin.readline())
moves = hello["params"]["moves"]
print(json.dumps({"name": "noisy", "version": "1"}), flush=True)
for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("type") != "turn":
        break
    print(json.dumps({"round": msg["round"], "real_move": moves[msg["round"] % len(moves)]}),
          flush=True)
"""


def sign_up(server: Server, name: str) -> tuple[httpx.Client, str]:
    """A browser-like client signed up through the form; (client, token)."""
    client = httpx.Client(base_url=server.url, timeout=60.0)
    form = client.get("/signup")
    r = client.post("/signup", data={"name": name, "csrf": csrf_of(form.text)})
    assert r.status_code == 200, r.text
    token = re.search(r'<pre id="token">([^<]+)</pre>', r.text)
    assert token is not None
    cookie = r.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie
    return client, token[1]


def csrf_of(page: str) -> str:
    found = re.search(r'name="csrf" value="([0-9a-f]+)"', page)
    assert found is not None
    return found[1]


@pytest.fixture(scope="module")
def owner(server: Server, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """A competitor who uploaded the noisy bot through the form."""
    client, token = sign_up(server, "<b>olga<b>")
    me = client.get("/me")
    assert me.status_code == 200
    assert "&lt;b&gt;olga&lt;b&gt;" in me.text and "<b>olga" not in me.text
    r = client.post(
        "/me/upload",
        data={"name": "noisy", "csrf": csrf_of(me.text)},
        files={"file": ("noisy.py", NOISY_BOT.encode())},
    )
    assert r.status_code == 200, r.text
    assert "accepted, version 1" in r.text
    return {"client": client, "token": token, "csrf": csrf_of(me.text)}


def noisy_match(server: Server) -> dict:
    def find() -> dict | None:
        for m in server.json("/api/matches?kind=ladder&status=done&limit=200"):
            if "noisy" in (m["bot0"], m["bot1"]):
                return dict(m)
        return None

    return dict(wait_for(find, 180, "a ladder match of the noisy bot"))


def test_forms_need_the_csrf_token(server: Server, owner: dict) -> None:
    client = owner["client"]
    r = client.post("/me/upload", data={"name": "x"}, files={"file": ("x.py", b"print(1)\n")})
    assert r.status_code == 403 and "CSRF" in r.text
    r = client.post("/me/challenge", data={"bot": "noisy", "opponent": "random", "csrf": "0" * 32})
    assert r.status_code == 403
    assert client.post("/logout", data={}).status_code == 403
    # Without the session cookie the same forms ask to sign in.
    anonymous = httpx.Client(base_url=server.url)
    r = anonymous.post("/me/upload", data={"csrf": owner["csrf"]}, files={"file": ("x.py", b"")})
    assert r.status_code == 401


def test_stderr_logs_are_the_owners_only_and_escaped(server: Server, owner: dict) -> None:
    m = noisy_match(server)
    seat = 0 if m["bot0"] == "noisy" else 1
    path = f"/me/logs/{m['id']}/{seat}"
    r = owner["client"].get(path)
    assert r.status_code == 200
    assert "&lt;script&gt;alert(&#39;stderr&#39;)&lt;/script&gt; starting up" in r.text
    assert "<script>alert(" not in r.text
    # An id past SQLite's integers is no such match (it was a 500 at 443f509).
    assert owner["client"].get("/me/logs/99999999999999999999/0").status_code == 404
    # The opponent's seat is a sample bot: not this competitor's log.
    assert owner["client"].get(f"/me/logs/{m['id']}/{1 - seat}").status_code == 403
    other, _token = sign_up(server, "peter")
    assert other.get(path).status_code == 403
    assert httpx.get(server.url + path).status_code == 401
    # The public record and page never carry the stderr text. (The word "alert"
    # alone may appear: another test names a bot "<script>alert(1)</script>", and
    # the ladder may pair it with this one.)
    public = str(server.json(f"/api/matches/{m['id']}"))
    page = server.get(f"/matches/{m['id']}").text
    viewer = server.get(f"/matches/{m['id']}/viewer").text
    replay = server.get(f"/matches/{m['id']}/replay.jsonl").text
    for shown in (public, page, viewer, replay, other.get(f"/matches/{m['id']}/viewer").text):
        assert "starting up" not in shown
        assert "stderr')" not in shown and "stderr&#39;)" not in shown
        assert str(server.data) not in shown  # nor the server's paths
    # The owner's own viewer and download keep it.
    assert "starting up" in owner["client"].get(f"/matches/{m['id']}/viewer").text
    assert "starting up" in owner["client"].get(f"/matches/{m['id']}/replay.jsonl").text


def test_match_page_viewer_and_replay_download(server: Server, owner: dict) -> None:
    m = noisy_match(server)
    page = server.get(f"/matches/{m['id']}")
    assert page.status_code == 200
    assert 'id="verify" class="ok">OK: 200 rounds, chain intact' in page.text
    assert f'src="/matches/{m["id"]}/viewer"' in page.text
    viewer = server.get(f"/matches/{m['id']}/viewer")
    assert viewer.status_code == 200 and 'id="replay-data"' in viewer.text
    replay = server.get(f"/matches/{m['id']}/replay.jsonl")
    assert replay.status_code == 200
    assert replay.text.startswith('{"type":"header"') or '"header"' in replay.text.split("\n")[0]
    assert server.get("/matches/999999").status_code == 404
    assert server.get("/matches/999999/replay.jsonl").status_code == 404


def test_challenge_is_unranked(server: Server, owner: dict) -> None:
    client = owner["client"]
    r = client.post(
        "/me/challenge",
        data={"bot": "noisy", "opponent": "cycler", "csrf": owner["csrf"]},
        follow_redirects=False,
    )
    assert r.status_code == 303
    mid = int(r.headers["location"].rsplit("/", 1)[1])
    done = wait_for(
        lambda: (m := server.json(f"/api/matches/{mid}"))["status"] == "done" and m,
        180,
        "the challenge match",
    )
    assert done["kind"] == "challenge" and done["steps"] == 200
    assert "challenge" in client.get("/me").text

    # Ratings count ladder matches only (those between the bots' current versions).
    def settled() -> bool:
        board = server.json("/api/leaderboard")
        current = {(e["bot"], e["version"]) for e in board["entries"]}
        ladder = [
            m
            for m in server.json("/api/matches?kind=ladder&status=done&limit=1000")
            if {(m["bot0"], m["bot0_version"]), (m["bot1"], m["bot1_version"])} <= current
        ]
        return sum(e["games"] for e in board["entries"]) == 2 * len(ladder)

    wait_for(settled, 60, "the leaderboard to count the ladder matches")
    # Someone else's bot cannot be entered in a challenge.
    r = client.post(
        "/me/challenge",
        data={"bot": "cycler", "opponent": "noisy", "csrf": owner["csrf"]},
    )
    assert r.status_code == 403


def test_public_pages_are_kept_but_never_a_signed_in_one(server: Server, owner: dict) -> None:
    for path in ("/", "/api/leaderboard", "/bots/noisy", "/api/matches?limit=5"):
        first = server.get(path)
        assert first.status_code == 200 and first.headers["etag"], path
        again = server.get(path, headers={"If-None-Match": first.headers["etag"]})
        # 304 unless the ladder moved on in between; then the page is made again.
        assert again.status_code == 304 or again.headers["etag"] != first.headers["etag"]
        assert server.get(path, headers={"If-None-Match": '"stale"'}).status_code == 200
    # The signed-in page names its competitor and carries the CSRF token ...
    mine = owner["client"].get("/")
    assert 'name="csrf"' in mine.text and 'href="/me"' in mine.text
    # ... and is never what an anonymous reader is sent, nor kept for them.
    assert 'name="csrf"' not in server.get("/").text
    assert 'name="csrf"' in owner["client"].get("/").text


def test_sign_in_with_a_token_and_out(server: Server, owner: dict) -> None:
    client = httpx.Client(base_url=server.url)
    assert client.get("/me", follow_redirects=False).status_code == 303
    form = csrf_of(client.get("/login").text)
    # A foreign page's form (login CSRF) is refused, even with a valid token.
    foreign = {"origin": "https://elsewhere.example"}
    r = client.post("/login", data={"token": owner["token"], "csrf": form}, headers=foreign)
    assert r.status_code == 403 and "referee_session" not in client.cookies
    assert client.post("/login", data={"token": "rt_wrong", "csrf": form}).status_code == 401
    r = client.post("/login", data={"token": owner["token"], "csrf": form}, follow_redirects=False)
    assert r.status_code == 303
    me = client.get("/me")
    assert "noisy" in me.text
    session = client.cookies["referee_session"]
    out = client.post("/logout", data={"csrf": csrf_of(me.text)}, follow_redirects=False)
    assert out.status_code == 303
    assert client.get("/me", follow_redirects=False).status_code == 303
    # Signing out ended the session on the server: its old cookie opens nothing.
    client.cookies.set("referee_session", session)
    assert client.get("/me", follow_redirects=False).status_code == 303
    # A forged cookie is no session.
    client.cookies.set("referee_session", "1.1700000000.deadbeef")
    assert client.get("/me", follow_redirects=False).status_code == 303


# -- a real browser ---------------------------------------------------------------

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")


@needs(
    CHROMIUM is None or CHROMEDRIVER is None,
    "needs Debian's chromium and chromium-driver (apt-get install chromium chromium-driver)",
)
def test_browser_signs_up_uploads_and_watches_a_replay(server: Server, tmp_path: Path) -> None:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    options = webdriver.ChromeOptions()
    assert CHROMIUM is not None and CHROMEDRIVER is not None
    options.binary_location = CHROMIUM
    for arg in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        options.add_argument(arg)
    options.add_argument(f"--user-data-dir={tmp_path / 'profile'}")
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    wait = WebDriverWait(driver, 120)
    try:
        driver.get(server.url + "/signup")
        driver.find_element(By.NAME, "name").send_keys("browser-user")
        driver.find_element(By.CSS_SELECTOR, "form[action='/signup'] button").click()
        # After a click, wait for the next page: a busy machine may not have loaded it yet.
        assert wait.until(lambda d: d.find_element(By.ID, "token")).text.startswith("rt_")
        driver.get(server.url + "/me")
        bot = tmp_path / "cbot"
        bot.write_bytes((SAMPLES / "bin" / "cycler_c").read_bytes())
        form = driver.find_element(By.ID, "upload")
        form.find_element(By.NAME, "name").send_keys("browser-bot")
        form.find_element(By.NAME, "file").send_keys(str(bot))
        form.find_element(By.CSS_SELECTOR, "button").click()
        answer = wait.until(lambda d: d.find_element(By.ID, "answer"))
        assert "accepted, version 1" in answer.text
        driver.get(server.url + "/")
        link = driver.find_element(By.CSS_SELECTOR, "#leaderboard a[href='/bots/browser-bot']")
        assert link.text == "browser-bot"

        def browser_bot_match() -> int | None:
            for m in server.json("/api/matches?kind=ladder&status=done&limit=200"):
                if "browser-bot" in (m["bot0"], m["bot1"]):
                    return int(m["id"])
            return None

        mid = wait_for(browser_bot_match, 180, "a ladder match of browser-bot")
        link.click()
        wait.until(lambda d: d.current_url.endswith("/bots/browser-bot"))
        wait.until(lambda d: d.find_element(By.CSS_SELECTOR, f"a[href='/matches/{mid}']")).click()
        assert "OK:" in wait.until(lambda d: d.find_element(By.ID, "verify")).text
        driver.switch_to.frame(driver.find_element(By.ID, "viewer"))
        status = wait.until(
            lambda d: (
                (s := d.find_element(By.ID, "status")).get_attribute("data-ready") == "yes" and s
            )
        )
        assert status.get_attribute("data-error") is None
        assert status.get_attribute("data-rounds") == "200"
        ink = dict(item.split(":") for item in status.get_attribute("data-ink").split(","))
        assert ink and all(int(v) > 500 for v in ink.values()), ink
    finally:
        driver.quit()


def app_tracebacks(log: str) -> list[str]:
    """The tracebacks in a server log, each with the lines that follow it up to the
    next log line."""
    return [record for record in re.split(r"\n(?=\{\"ts\"|\[\d{4}-)", log) if "Traceback" in record]


def test_the_servers_log_holds_no_traceback(server: Server) -> None:
    """Last in this file: every request the tests above sent, hostile ones
    included, was answered without an exception escaping into the log."""
    assert app_tracebacks(server.log.read_text(errors="replace")) == []
