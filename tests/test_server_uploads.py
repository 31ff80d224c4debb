"""Uploads that cannot hurt the server: hostile archives unpacked without recursion
and refused with their reason, the scratch tree removed however deep, and (against a
real server on loopback) bodies streamed to disk under a size cap, a minimum rate
and caps on uploads in flight."""

from __future__ import annotations

import functools
import io
import os
import re
import socket
import subprocess
import sys
import tarfile
import time
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from conftest import ROOT
from serverkit import Server, wait_for, write_config

from referee.server.intake import Limits, Refused, remove_tree, sweep_scratch, unpack

LIMITS = Limits(max_files=20, max_unpacked=4 << 20)
BOT = b"print('hi')\n"


def _tar(members: list[tuple[str, bytes | None]], mode: str = "w:gz") -> bytes:
    """A tar of (name, content) members; content None is a directory."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode=mode, format=tarfile.PAX_FORMAT) as tar:
        for name, data in members:
            info = tarfile.TarInfo(name)
            if data is None:
                info.type = tarfile.DIRTYPE
                tar.addfile(info)
            else:
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def _zip(members: list[tuple[str, bytes]]) -> bytes:
    import warnings

    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns of a duplicate name: wanted here
        with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as z:
            for name, data in members:
                z.writestr(name, data)
    return buf.getvalue()


def _long_name_header(size: int, compress: bool = True) -> bytes:
    """A tar whose first member is a GNU long-name header of ``size`` bytes: tarfile
    reads such a header whole into memory (200 MB of it packs to 200 KB)."""
    import gzip

    header = tarfile.TarInfo("././@LongLink")
    header.type = tarfile.GNUTYPE_LONGNAME
    header.size = size
    raw = header.tobuf(format=tarfile.GNU_FORMAT) + b"a" * size + bytes(-size % 512)
    main = tarfile.TarInfo("main.py")
    main.size = len(BOT)
    raw += main.tobuf(format=tarfile.GNU_FORMAT) + BOT + bytes(-len(BOT) % 512) + bytes(1024)
    return gzip.compress(raw, 6) if compress else raw


def _deep(depth: int) -> str:
    return "d/" * depth + "main.py"


# Each archive is made when a test first asks for it (``hostile``), not at import:
# the header bomb alone packs 200 MiB, which every test process that only collects
# this file (each worker of make test) paid for.
HOSTILE: dict[str, tuple[Callable[[], bytes], str]] = {
    # 20,000 directories deep in one member's name: a few hundred bytes packed.
    "deep.tar.gz": (
        lambda: _tar([(_deep(20_000), BOT)]),
        "nested 20001 deep, over the limit of 32",
    ),
    "deep-dirs.tar.gz": (
        lambda: _tar([("d/" * 33, None), ("main.py", BOT)]),
        "nested 33 deep, over the limit of 32",
    ),
    "deep.zip": (lambda: _zip([(_deep(5_000), BOT)]), "nested 5001 deep, over the limit of 32"),
    "twice.tar.gz": (lambda: _tar([("main.py", BOT), ("main.py", BOT)]), "the name appears twice"),
    "twice-dot.tar": (
        lambda: _tar([("main.py", BOT), ("./main.py", BOT)], mode="w"),
        "the name appears twice",
    ),
    "twice.zip": (lambda: _zip([("main.py", BOT), ("main.py", BOT)]), "the name appears twice"),
    "file-then-dir.tar.gz": (
        lambda: _tar([("lib", BOT), ("lib/x.py", BOT), ("main.py", BOT)]),
        "lib is both a file and a directory",
    ),
    "dir-then-file.zip": (
        lambda: _zip([("lib/x.py", BOT), ("lib", BOT), ("main.py", BOT)]),
        "lib is both a directory and a file",
    ),
    "long-name.tar.gz": (lambda: _tar([("x" * 300 + ".py", BOT)]), "name too long"),
    "many-dirs.tar.gz": (
        lambda: _tar([(f"d{i}/", None) for i in range(30)] + [("main.py", BOT)]),
        "too many directories: more than 20",
    ),
    # A header bomb: members by the thousand, each a few bytes packed.
    "headers.tar.gz": (
        lambda: _tar([("d/", None)] * 5000),
        "too many archive members: more than 40",
    ),
    "headers.zip": (
        lambda: _zip([(f"f{i}.py", b"") for i in range(5000)]),
        "too many archive members: 5000, over 40",
    ),
    "bomb.tar.gz": (
        lambda: _tar([("main.py", b"\0" * (5 << 20))]),
        "a file unpacks to more than 4 MiB",
    ),
    "bombs.zip": (
        lambda: _zip([(f"f{i}.py", b"\0" * (1 << 20)) for i in range(6)]),
        "the archive unpacks to more than 4 MiB",
    ),
    "long-header.tar.gz": (
        lambda: _long_name_header(1 << 20),
        "an archive header of 1,048,576 bytes (a long name or PAX header), over the limit",
    ),
    "long-header.tar": (
        lambda: _long_name_header(1 << 20, compress=False),
        "over the limit of 64 KiB",
    ),
    "header-bomb.tar.gz": (
        lambda: _long_name_header(200 << 20),
        "the archive unpacks to more than 4 MiB (stopped while decompressing)",
    ),
    "truncated.tar.gz": (
        lambda: _tar([("main.py", BOT * 1000)])[:-40],
        "not a readable tar archive",
    ),
    "garbage.zip": (lambda: b"PK\x03\x04" + b"\xff" * 100, "not a readable zip archive"),
}


@functools.cache
def hostile(filename: str) -> tuple[bytes, str]:
    """The archive ``filename`` of HOSTILE and the reason it must be refused with."""
    make, reason = HOSTILE[filename]
    return make(), reason


@pytest.mark.parametrize("filename", sorted(HOSTILE))
def test_hostile_archive_is_refused_with_its_reason(tmp_path: Path, filename: str) -> None:
    data, reason = hostile(filename)
    source = tmp_path / "body"
    source.write_bytes(data)
    store = tmp_path / "versions"
    started = time.process_time()  # CPU time: the wall clock also counts other processes
    with pytest.raises(Refused) as refused:
        unpack(source, filename, None, store, LIMITS)
    assert reason in str(refused.value), str(refused.value)
    assert refused.value.status == 400
    assert time.process_time() - started < 5
    assert list(store.iterdir()) == [], "the scratch directory was left behind"


def test_a_good_archive_unpacks_with_directories(tmp_path: Path) -> None:
    source = tmp_path / "body"
    source.write_bytes(_tar([("lib/", None), ("lib/util.py", b"x = 1\n"), ("main.py", BOT)]))
    got = unpack(source, "bot.tar.gz", None, tmp_path / "versions", LIMITS)
    assert got.command == ["python3", "main.py"] and got.files == 2
    assert (tmp_path / "versions" / got.sha256 / "lib" / "util.py").read_bytes() == b"x = 1\n"
    assert [p.name for p in (tmp_path / "versions").iterdir()] == [got.sha256]


def test_tars_made_by_gnu_tar_with_long_names_unpack(tmp_path: Path) -> None:
    # Long names are where tar formats differ (a GNU long-name header, a PAX header):
    # the header walk must follow both as tarfile does.
    src = tmp_path / "src"
    deep = src / ("d" * 120) / ("e" * 120)
    deep.mkdir(parents=True)
    (deep / ("f" * 100 + ".py")).write_bytes(b"x = 1\n")
    (src / "main.py").write_bytes(BOT)
    for fmt in ("gnu", "posix"):
        archive = tmp_path / f"{fmt}.tar.xz"
        subprocess.run(
            ["tar", f"--format={fmt}", "-cJf", str(archive), "-C", str(src), "."], check=True
        )
        got = unpack(archive, archive.name, None, tmp_path / f"v-{fmt}", LIMITS)
        assert got.files == 2 and got.command == ["python3", "main.py"], fmt
        assert list((tmp_path / f"v-{fmt}" / got.sha256).rglob("f*.py")), fmt
    assert not list(tmp_path.glob("*.tar.xz.tar")), "the decompressed tar was left behind"


def test_compiled_source_is_not_run_by_an_interpreter(tmp_path: Path) -> None:
    source = tmp_path / "bot.c"
    source.write_bytes(b"int main(void) { return 0; }\n")
    with pytest.raises(Refused) as refused:
        unpack(source, "bot.c", None, tmp_path / "versions", LIMITS)
    assert "C source: build it first" in str(refused.value)
    assert "python3" not in str(refused.value)


def test_the_client_says_compiled_source_must_be_built(tmp_path: Path) -> None:
    source = tmp_path / "bot.c"
    source.write_text("int main(void) { return 0; }\n")
    proc = subprocess.run(
        [sys.executable, "-m", "referee", "submit", str(source)]
        + ["--server", "http://127.0.0.1:9", "--token", "t"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    assert proc.returncode == 2, proc.stderr
    assert "bot.c is C source: build it first" in proc.stderr, proc.stderr
    assert "python3" not in proc.stderr and "cannot reach" not in proc.stderr


def _deep_tree(base: Path, depth: int) -> None:
    """``depth`` nested directories under ``base``, made one component at a time (the
    whole path is far beyond PATH_MAX), with a file at the bottom."""
    fd = os.open(base, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(depth):
            os.mkdir("directory", dir_fd=fd)
            child = os.open("directory", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = child
        os.close(os.open("main.py", os.O_WRONLY | os.O_CREAT, 0o600, dir_fd=fd))
    finally:
        os.close(fd)


def test_start_up_sweep_removes_a_tree_too_deep_for_a_recursive_walk(tmp_path: Path) -> None:
    # What the old unpacker left behind: 20,011 directories under versions/upload-*.
    versions = tmp_path / "versions"
    (versions / "upload-old").mkdir(parents=True)
    # 1,500 deep: beyond a recursive walk's stack, 15 KB of path beyond PATH_MAX.
    _deep_tree(versions / "upload-old", 1500)
    (versions / "upload-file").write_bytes(b"x")
    (versions / "0123abcd").mkdir()  # a stored version stays
    assert sweep_scratch(versions) == 2
    assert [p.name for p in versions.iterdir()] == ["0123abcd"]
    remove_tree(tmp_path / "missing")  # nothing there: nothing to do


# -- against a real server on loopback ------------------------------------------------

# A body is dropped once it has had 1 s plus 1 s for each KiB it brought: a trickle
# of bytes goes after about a second, while 200 KB sent at once keep their uploads
# in flight for minutes, however slowly a loaded machine runs the test beside them
# (at 64 KiB/s they had 4 s, and a test that took longer saw them dropped).
LIMITS_TOML = """[submissions]
in_flight = 3
in_flight_each = 2
min_rate_kib = 1
body_grace_s = 1.0
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    base = tmp_path_factory.mktemp("uploads")
    config = write_config(base, per_hour=4)
    text = config.read_text().replace("[submissions]\n", LIMITS_TOML, 1)
    config.write_text(text)
    srv = Server(config, base / "data")
    try:
        yield srv
    finally:
        srv.stop()


def _cpu_s(pid: int) -> float:
    """The CPU time (user and system) a process has used, in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _leftovers(server: Server) -> list[Path]:
    return [
        *(server.data / "versions").glob("upload-*"),
        *(server.data / "uploads").glob("upload-*"),
    ]


def _open_upload(server: Server, token: str, length: int, first: bytes) -> socket.socket:
    """An upload whose body is sent by hand: the headers and ``first`` now."""
    sock = socket.create_connection(("127.0.0.1", server.port))
    head = (
        "POST /api/submit?filename=bot.tar.gz&name=slow HTTP/1.1\r\n"
        f"Host: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n"
        f"Content-Length: {length}\r\n\r\n"
    )
    sock.sendall(head.encode() + first)
    return sock


def _answer(sock: socket.socket, trickle: bool = False, limit_s: float = 60.0) -> bytes:
    """The server's whole answer (it closes the connection); with ``trickle`` one
    more byte of the body every 0.2 s until the answer comes."""
    sock.settimeout(0.2)
    got = b""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        try:
            data = sock.recv(65536)
        except TimeoutError:
            if trickle and not got:
                try:
                    sock.sendall(b"x")
                except OSError:
                    pass
            continue
        except ConnectionResetError:
            break
        if not data:
            break
        got += data
    sock.close()
    return got


def test_a_stalled_body_is_dropped(server: Server) -> None:
    # A body trickled at 5 bytes a second (the minimum is 1 KiB/s after the first
    # second here) is dropped with the reason, not waited for, and its file removed.
    bob = server.sign_up("bob-up")
    started = time.monotonic()
    answer = _answer(_open_upload(server, bob, 1_000, b"x"), trickle=True)
    assert answer.startswith(b"HTTP/1.1 408"), answer
    assert b"the upload arrived too slowly" in answer, answer
    # Dropped after about a second (the whole body would take 200 s); the bound is
    # wide for a loaded machine.
    assert time.monotonic() - started < 60
    wait_for(lambda: not _leftovers(server), 60, "the received body to be removed")


def test_bodies_go_to_disk_and_uploads_in_flight_are_capped(server: Server) -> None:
    alice, bob, carol = (server.sign_up(n) for n in ("alice-up", "bob-up2", "carol-up"))
    uploads = server.data / "uploads"
    # Two of alice's uploads wait for the rest of their bodies (their 200 KB came at
    # full speed: the server gives them minutes more).
    a1 = _open_upload(server, alice, 250_000, b"\0" * 200_000)
    a2 = _open_upload(server, alice, 250_000, b"\1" * 200_000)

    def received() -> list[int]:
        return sorted(p.stat().st_size for p in uploads.glob("upload-*"))

    # Each body is written to a file of the data directory as it arrives.
    wait_for(lambda: received() == [200_000, 200_000], 60, "both bodies on disk")
    # A third of alice's is refused before its body is read, and counts.
    third = server.upload(alice, b"x", filename="bot.tar.gz", name="third")
    assert third.status_code == 429 and "uploads in flight" in third.json()["error"], third.text
    assert third.headers["retry-after"] == "5"
    b1 = _open_upload(server, bob, 250_000, b"\2" * 200_000)
    wait_for(lambda: len(received()) == 3, 60, "bob's body on disk")
    busy = server.upload(carol, b"x", filename="bot.tar.gz", name="busy")
    assert busy.status_code == 503 and "3 uploads already" in busy.json()["error"], busy.text
    assert busy.headers["retry-after"] == "5"
    # The clients hang up: their places and files are freed.
    for sock in (a1, a2, b1):
        sock.close()
    wait_for(lambda: not _leftovers(server), 60, "the received bodies to be removed")
    # alice's next upload is read (and refused for what it is).
    again = server.upload(alice, b"junk", filename="bot.tar.gz", name="again")
    assert again.status_code == 400 and "not a readable tar archive" in again.json()["error"]
    # Her four uploads of the hour are spent, the refused and lost ones included.
    spent = server.upload(alice, b"junk", filename="bot.tar.gz", name="again")
    assert spent.status_code == 429 and "upload limit reached" in spent.json()["error"]
    assert spent.headers.get("retry-after")


def test_refusals_read_by_the_client_and_counted(server: Server, tmp_path: Path) -> None:
    dave = server.sign_up("dave-up")
    # Over the size limit (256 KiB) by far: the server answers before reading the body
    # and closes; the client shows that answer, not the broken pipe of its send.
    big = tmp_path / "big.py"
    big.write_bytes(b"#" * (4 << 20))
    proc = server.submit(dave, big)
    assert proc.returncode == 2, proc.stderr
    assert "refused: the upload is over the limit of 256 KiB" in proc.stderr, proc.stderr
    assert "cannot reach" not in proc.stderr and "Broken pipe" not in proc.stderr
    # Hostile archives over HTTP: each a 400 with its reason, quickly, nothing left.
    for filename in ("deep.tar.gz", "twice.tar.gz"):
        data, reason = hostile(filename)
        started = _cpu_s(server.proc.pid)  # the server's CPU time, not the wall clock's
        r = server.upload(dave, data, filename=filename, name="hostile")
        assert r.status_code == 400 and reason in r.json()["error"], r.text
        assert _cpu_s(server.proc.pid) - started < 5
    assert not _leftovers(server)
    junk = tmp_path / "junk.tar.gz"
    junk.write_bytes(b"junk")
    refused = server.submit(dave, junk)
    assert refused.returncode == 2 and "not a readable tar archive" in refused.stderr
    # The fifth upload of the hour: the four refused ones counted.
    spent = server.submit(dave, junk)
    assert spent.returncode == 2 and "upload limit reached: 4 per hour" in spent.stderr
    # What became of the latest upload, as the server tells it.
    status = server.submit(dave, Path("-"), "--status")
    assert status.returncode == 3, status.stderr
    assert "junk" in status.stderr and "refused" in status.stderr, status.stderr
    assert "not a readable tar archive" in status.stderr, status.stderr


def test_the_upload_form_is_received_the_same_way(server: Server) -> None:
    browser = httpx.Client(base_url=server.url, timeout=30)
    signup = re.search(r'name="csrf" value="([0-9a-f]+)"', browser.get("/signup").text)
    assert signup is not None
    r = browser.post("/signup", data={"name": "frank-up", "csrf": signup[1]})
    assert r.status_code == 200, r.text
    me = browser.get("/me")
    found = re.search(r'name="csrf" value="([0-9a-f]+)"', me.text)
    assert found is not None, me.text

    def post(name: str, data: bytes) -> httpx.Response:
        form = {"name": "formbot", "csrf": found[1]}
        return browser.post("/me/upload", data=form, files={"file": (name, data)})

    # A file over the limit, whether or not the form's body is too.
    for size in (260 << 10, 600 << 10):
        r = post("big.py", b"#" * size)
        assert r.status_code == 413 and "over the limit of 256 KiB" in r.text, r.status_code
    r = post("deep.tar.gz", hostile("deep.tar.gz")[0])
    assert r.status_code == 400 and "nested 20001 deep" in r.text
    assert not _leftovers(server)
    browser.close()


def test_after_a_lost_connection_the_client_asks_what_became_of_the_upload(
    server: Server, tmp_path: Path
) -> None:
    # The server is killed while it validates the upload (a bot 10 ms a move: the
    # validation match lasts at least 1 s) and started again: the client, which lost
    # its connection, asks the server (again and again while it is down) and reports
    # what it finally says, instead of "cannot reach" and "refused before it plays".
    # Last in this file: it kills the module's server.
    erin = server.sign_up("erin-up")
    steady = (Path(__file__).parent / "bots" / "steady.py").read_text()
    slow = tmp_path / "slowpoke.py"
    slow.write_text(
        steady.replace(
            "for line in sys.stdin:\n", "for line in sys.stdin:\n    time.sleep(0.01)\n"
        ).replace("import sys\n", "import sys\nimport time\n")
    )
    # What a kill during an upload leaves (and an older server's deep tree): swept when
    # the server starts again. Made now, where no sweep looks (only a start does), so
    # that after the kill the restart comes within the client's minute of asking again.
    (server.data / "uploads" / "upload-stale").write_bytes(b"x" * 1000)
    (server.data / "versions" / "upload-deep").mkdir()
    _deep_tree(server.data / "versions" / "upload-deep", 1500)
    client = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "referee",
            "submit",
            "--server",
            server.url,
            "--token",
            erin,
            str(slow),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    restarted = None
    try:

        def validating() -> bool:
            r = server.get("/api/bots/slowpoke")
            return r.status_code == 200 and r.json()["versions"][-1]["status"] == "validating"

        wait_for(validating, 60, "the upload to be stored and validating")
        server.kill()
        restarted = Server(server.config, server.data, port=server.port)
        assert not _leftovers(restarted)
        out, err = client.communicate(timeout=300)
    finally:
        if client.poll() is None:
            client.kill()
            client.wait()
        if restarted is not None:
            restarted.stop()
    assert client.returncode == 0, err
    assert "connection to" in err and "was lost" in err, err
    assert "slowpoke version 1" in out and "accepted, now in the ladder" in out, out
