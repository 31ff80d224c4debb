"""``referee serve`` as a real process on a loopback port: the ladder of the sample
bots, the leaderboard page and API, and submissions through ``referee submit``
(real Python, C and JavaScript bots; hostile archives refused with a reason)."""

from __future__ import annotations

import io
import shutil
import tarfile
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import needs_node
from serverkit import SAMPLES, Server, wait_for, write_config


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    base = tmp_path_factory.mktemp("serve")
    srv = Server(write_config(base, per_hour=12), base / "data")
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
    first = wait_for(lambda: ladder_done(server) >= 2 and ladder_done(server), 120, "2 matches")
    later = wait_for(lambda: (n := ladder_done(server)) > first and n, 120, "one more match")

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
    ratings = [e["rating"] for e in board["entries"]]
    assert ratings == sorted(ratings, reverse=True)
    page = server.get("/")
    assert page.status_code == 200
    for e in board["entries"]:
        assert f'href="/bots/{e["bot"]}"' in page.text
        if e["games"]:  # the rating interval and the rank range, on the bot's row
            ranks = str(e["rank_low"])
            if e["rank_high"] != e["rank_low"]:
                ranks += f"-{e['rank_high']}"
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
    "bombs.zip": (lambda: _zip_bomb(8, 1), "unpacks to 8,388,608 bytes, over the limit of 4 MiB"),
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
    name = "<script>alert(1)</script>"
    proc = server.submit(token, SAMPLES / "bin" / "minimal_c", "--name", name)
    assert proc.returncode == 0, proc.stderr
    page = server.get("/").text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<script>alert(1)</script>" not in page
    bot = server.get("/bots/%3Cscript%3Ealert(1)%3C%2Fscript%3E")
    assert bot.status_code == 200
    assert "<script>alert(1)" not in bot.text
    # The ladder still runs.
    n = ladder_done(server)
    wait_for(lambda: ladder_done(server) > n, 120, "another ladder match")


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
