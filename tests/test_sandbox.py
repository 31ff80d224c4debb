"""referee.sandbox, with real processes started through prepare_launch in every layer.

Each layer test is skipped (with the self-test's reason) only when the layer does not
work on this machine; under CI=true a layer CI must provide (bwrap, unshare) fails
instead. The layer used is printed. Nothing here sleeps to synchronise:
children report readiness on stdout and the tests poll /proc with deadlines.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import msgspec
import pytest
from conftest import CI_REQUIRED_LAYERS, IN_CI, proc_files, run_cli, skip_or_fail

from referee import sandbox
from referee.sandbox import Limits, proctree

ROOT = Path(__file__).resolve().parent.parent
SECRET_VAR = "REFEREE_SANDBOX_TEST_SECRET"


def wait_for(predicate: Callable[[], bool], timeout: float = 60.0, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what or predicate}")
        time.sleep(0.005)


def marked(marker: str) -> list[int]:
    """Live (non-zombie) processes whose environment carries ``marker``."""
    needle = f"{sandbox.MARKER_ENV}={marker}".encode()
    return [
        pid
        for pid, f in proc_files("environ", "stat")
        if needle in f["environ"].split(b"\0") and _state_in(f["stat"]) not in (b"Z", b"X")
    ]


def _state_in(stat: bytes) -> bytes:
    """The state letter of a /proc/<pid>/stat text (after the command name)."""
    return stat[stat.rfind(b")") + 2 :].split()[0]


@pytest.fixture(params=sandbox.LAYERS)
def layer(request: pytest.FixtureRequest) -> sandbox.Layer:
    try:
        chosen = sandbox.choose_layer(request.param)
    except sandbox.SandboxError as exc:
        reason = f"layer {request.param} does not work here: {exc}"
        if request.param in CI_REQUIRED_LAYERS:
            skip_or_fail(reason)
        pytest.skip(reason)
    print(f"layer: {chosen.name} ({chosen.description}); self-test {chosen.self_test_ms} ms")
    return chosen


class Bot:
    """A Python snippet started through prepare_launch; always torn down."""

    def __init__(
        self,
        layer: sandbox.Layer,
        tmp: Path,
        code: str,
        *args: str,
        limits: Limits | None = None,
    ) -> None:
        self.marker = f"rfb-test-{os.urandom(4).hex()}"
        bot_dir = tmp / "bot"
        bot_dir.mkdir(parents=True)
        script = bot_dir / "bot.py"
        script.write_text(textwrap.dedent(code))
        self.scratch = tmp / "scratch"
        self.launch = sandbox.prepare_launch(
            [sys.executable, str(script), *args],
            bot_dir=None,
            scratch=self.scratch,
            limits=limits or Limits(),
            layer=layer,
            marker=self.marker,
        )
        try:
            self.proc = subprocess.Popen(
                self.launch.argv,
                env=self.launch.env,
                cwd=self.launch.cwd,
                start_new_session=True,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                pass_fds=self.launch.pass_fds,
            )
        finally:
            self.launch.close_fds()
        sandbox.after_spawn(self.proc.pid)

    def line(self) -> str:
        assert self.proc.stdout is not None
        return self.proc.stdout.readline().decode().strip()

    def finish(self, timeout: float = 30) -> tuple[str, str]:
        out, err = self.proc.communicate(timeout=timeout)
        return out.decode(), err.decode()

    def close(self) -> None:
        sandbox.kill_tree(self.proc.pid)
        self.proc.kill()
        try:
            self.proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            # An escapee a failed test left behind still holds the pipes: the test has
            # already failed; do not hang the suite on it.
            for pipe in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
                if pipe is not None:
                    pipe.close()
            self.proc.wait(timeout=10)


@pytest.fixture
def spawn(tmp_path: Path) -> Iterator[Callable[..., Bot]]:
    bots: list[Bot] = []

    def start(layer: sandbox.Layer, code: str, *args: str, limits: Limits | None = None) -> Bot:
        bot = Bot(layer, tmp_path / f"b{len(bots)}", code, *args, limits=limits)
        bots.append(bot)
        return bot

    yield start
    for bot in bots:
        bot.close()


# -- layer selection -----------------------------------------------------------------


def test_auto_picks_a_working_layer() -> None:
    layer = sandbox.choose_layer("auto")
    print(f"auto: {layer.name} ({layer.description}); skipped: {layer.skipped}")
    assert layer.name in sandbox.LAYERS
    assert sandbox.choose_layer("auto") == layer  # cached
    if layer.name == "basic":
        assert layer.warning and "NOT isolated" in layer.warning
    record = sandbox.containment_record(layer, Limits())
    assert record["layer"] == layer.name
    assert record["limits"]["memory_mib"] == 1024
    # Where bubblewrap works (CI installs it), auto must pick it, the strongest layer:
    # a fallback that hid a broken bwrap would weaken every match quietly.
    try:
        bwrap = sandbox.choose_layer("bwrap")
    except sandbox.SandboxError as exc:
        if IN_CI:
            pytest.fail(f"CI=true, but layer bwrap does not work here: {exc}", pytrace=False)
    else:
        assert layer.name == bwrap.name, f"auto picked {layer.name} although bwrap works"
        assert layer.skipped == ()


def test_unknown_layer_is_refused() -> None:
    with pytest.raises(ValueError):
        sandbox.choose_layer("chroot")


def test_limits_defaults_round_trip() -> None:
    limits = Limits()
    assert limits.address_space_mib >= 4096  # node and java need the room
    assert msgspec.json.decode(msgspec.json.encode(limits), type=Limits) == limits
    with pytest.raises(msgspec.ValidationError):
        msgspec.json.decode(b'{"cpu_seconds": 1}', type=Limits)


def test_missing_program_is_reported(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        sandbox.prepare_launch(
            ["no-such-bot-program-here"],
            bot_dir=None,
            scratch=tmp_path,
            limits=Limits(),
            layer=sandbox.choose_layer("basic"),
        )


# -- what the bot sees ------------------------------------------------------------------

LIMITS_PROBE = """
    import json, os
    limits = {}
    for line in open("/proc/self/limits").read().splitlines()[1:]:
        limits[line[:26].strip()] = line[26:].split()[:2]
    status = dict(x.split(":", 1) for x in open("/proc/self/status").read().splitlines())
    print(json.dumps({
        "limits": limits,
        "nnp": status["NoNewPrivs"].strip(),
        "oom": open("/proc/self/oom_score_adj").read().strip(),
        "cwd": os.getcwd(),
        "session_leader": os.getpgrp() == os.getsid(0) == os.getpid(),
        "seccomp": status["Seccomp"].strip(),  # 2: a filter is installed
        "fds": sorted(int(fd) for fd in os.listdir("/proc/self/fd")),
    }))
"""


def test_limits_visible_in_child(layer: sandbox.Layer, spawn: Callable[..., Bot]) -> None:
    limits = Limits(cpu_s=7, open_files=64, file_size_mib=3, address_space_mib=8192)
    bot = spawn(layer, LIMITS_PROBE, limits=limits)
    out, err = bot.finish()
    assert bot.proc.returncode == 0, err
    seen = json.loads(out)
    print(seen)
    lim = seen["limits"]
    assert lim["Max cpu time"] == ["7", "8"]  # soft = budget, hard = soft + 1
    assert lim["Max open files"] == ["64", "64"]
    assert lim["Max file size"] == [str(3 * 1024 * 1024)] * 2
    assert lim["Max address space"] == [str(8192 * 1024 * 1024)] * 2
    assert lim["Max core file size"] == ["0", "0"]
    assert seen["nnp"] == "1"  # setuid binaries cannot raise privileges
    assert seen["oom"] == "1000"  # first in line for the OOM killer
    assert seen["cwd"] == str(bot.scratch.resolve())
    if layer.name in ("basic", "landlock"):
        assert seen["session_leader"]  # exec chain: the bot is the process Popen made
    # The seccomp filter is in force exactly where the layer says so, and the pipe
    # that handed it to bwrap is not left open in the bot (only stdio and the fd
    # that listed /proc/self/fd).
    assert seen["seccomp"] == ("2" if layer.seccomp else "0")
    assert ("syscalls" in layer.isolation) == bool(layer.seccomp)
    assert seen["fds"] == [0, 1, 2, 3]


ENV_PROBE = """
    import json, os, sys
    print(json.dumps(dict(os.environ)))
    try:
        with open(f"/proc/{sys.argv[1]}/environ", "rb") as f:
            print("referee-environ: read", len(f.read()))
    except OSError as exc:
        print("referee-environ: blocked", type(exc).__name__)
"""


def test_environment_is_minimal(
    layer: sandbox.Layer, spawn: Callable[..., Bot], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(SECRET_VAR, "hunter2")
    bot = spawn(layer, ENV_PROBE, str(os.getpid()))
    out, err = bot.finish()
    assert bot.proc.returncode == 0, err
    env_line, environ_line = out.splitlines()
    env = json.loads(env_line)
    assert env[sandbox.MARKER_ENV] == bot.marker
    assert env["HOME"] == str(bot.scratch.resolve())
    assert env["LANG"] == "C.UTF-8"
    assert SECRET_VAR not in env
    # (PWD: set by the sh that hands the pipes over inside bwrap.)
    assert set(env) <= {"PATH", "HOME", "LANG", "TMPDIR", "PWD", sandbox.MARKER_ENV}
    # Reading the referee's own environment through /proc:
    if "proc" in layer.isolation:
        assert environ_line.startswith("referee-environ: blocked"), out
    else:
        assert environ_line.startswith("referee-environ: read"), out


NET_PROBE = """
    import socket, sys
    tcp_port, udp_port = int(sys.argv[1]), int(sys.argv[2])
    try:
        socket.create_connection(("127.0.0.1", tcp_port), timeout=2).close()
        print("tcp: connected")
    except OSError as exc:
        print("tcp: blocked", type(exc).__name__)
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.sendto(b"x", ("127.0.0.1", udp_port))
        print("udp: sent")
    except OSError as exc:
        print("udp: blocked", type(exc).__name__)
    try:
        socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP).close()
        print("raw: opened")
    except OSError as exc:
        print("raw: blocked", type(exc).__name__)
"""


def test_network(layer: sandbox.Layer, spawn: Callable[..., Bot]) -> None:
    with (
        socket.socket(socket.AF_INET, socket.SOCK_STREAM) as tcp,
        socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp,
    ):
        tcp.bind(("127.0.0.1", 0))
        tcp.listen(4)
        udp.bind(("127.0.0.1", 0))
        bot = spawn(layer, NET_PROBE, str(tcp.getsockname()[1]), str(udp.getsockname()[1]))
        out, err = bot.finish()
        assert bot.proc.returncode == 0, err
        tcp.setblocking(False)
        udp.setblocking(False)
        try:
            tcp.accept()[0].close()
            tcp_reached = True
        except BlockingIOError:
            tcp_reached = False
        try:
            udp.recv(16)
            udp_reached = True
        except BlockingIOError:
            udp_reached = False
    tcp_contained = bool({"net", "tcp", "sockets"} & set(layer.isolation))
    assert ("tcp: blocked" in out) == tcp_contained, out
    assert tcp_reached == (not tcp_contained), out
    # Landlock does not cover UDP: a network namespace or the socket filter stops it.
    udp_contained = bool({"net", "sockets"} & set(layer.isolation))
    assert udp_reached == (not udp_contained), out
    if "sockets" in layer.isolation:
        assert "raw: blocked" in out, out


FS_PROBE = """
    import os, sys
    secret, outside = sys.argv[1].split("=", 1)[1], sys.argv[2].split("=", 1)[1]
    try:
        print("read-secret: ok", open(secret).read().strip())
    except OSError as exc:
        print("read-secret: blocked", type(exc).__name__)
    try:
        open(outside, "w").write("x")
        print("write-outside: ok")
    except OSError as exc:
        print("write-outside: blocked", type(exc).__name__)
    open("in-scratch.txt", "w").write("scratch is writable")
    print("scratch:", open("in-scratch.txt").read())
    print("own-dir:", sorted(os.listdir(os.path.dirname(os.path.abspath(__file__)))))
"""


def test_filesystem_view(layer: sandbox.Layer, spawn: Callable[..., Bot], tmp_path: Path) -> None:
    sibling = tmp_path / "sibling"
    sibling.mkdir()
    (sibling / "secret.txt").write_text("s3cret")
    outside = tmp_path / "outside.txt"
    bot = spawn(layer, FS_PROBE, f"--secret={sibling / 'secret.txt'}", f"--outside={outside}")
    out, err = bot.finish()
    assert bot.proc.returncode == 0, err
    assert "scratch: scratch is writable" in out
    if "disk" in layer.isolation:
        # The scratch directory is the bot's own tmpfs, sized by the kernel and gone
        # with its mount namespace: the host's directory stays empty.
        assert not (bot.scratch / "in-scratch.txt").exists()
    else:
        assert (bot.scratch / "in-scratch.txt").read_text() == "scratch is writable"
    assert "own-dir: ['bot.py']" in out  # the bot's own directory is readable
    # A bot of its own uid (the referee is root) gets only what anyone may: the
    # secret is in the test's private temporary directory, outside in root's.
    if "fs" in layer.isolation or "uid" in layer.isolation:
        assert "read-secret: blocked" in out, out
        # (Under bwrap the write may "succeed" into the sandbox's private /tmp.)
        assert not outside.exists()
    else:
        assert "read-secret: ok s3cret" in out, out
        assert outside.exists()


def test_signals_to_the_referee(layer: sandbox.Layer, spawn: Callable[..., Bot]) -> None:
    # Signal 0 only checks permission: harmless even where it is not blocked.
    code = """
        import os, sys
        try:
            os.kill(int(sys.argv[1]), 0)
            print("signal: allowed")
        except OSError as exc:
            print("signal: blocked", type(exc).__name__)
    """
    bot = spawn(layer, code, str(os.getpid()))
    out, err = bot.finish()
    assert bot.proc.returncode == 0, err
    expected = "signal: blocked" if "signals" in layer.isolation else "signal: allowed"
    assert out.startswith(expected), out


def test_tmpfs_is_capped_under_bwrap(spawn: Callable[..., Bot]) -> None:
    # Only bwrap gives the bot its own /tmp and /dev/shm (sized tmpfs).
    try:
        layer = sandbox.choose_layer("bwrap")
    except sandbox.SandboxError as exc:
        skip_or_fail(f"layer bwrap does not work here: {exc}")
    code = """
        import os
        for where in ("/dev/shm", "/tmp"):
            n = 0
            try:
                for i in range(8):
                    with open(f"{where}/fill{i}", "wb") as f:
                        for _ in range(4):
                            f.write(b"x" * (1 << 20))
                            n += 1
            except OSError as exc:
                print(where, "full after", n, exc.strerror)
            else:
                print(where, "took", n)
    """
    bot = spawn(layer, code, limits=Limits(tmpfs_mib=8))
    out, err = bot.finish()
    assert bot.proc.returncode == 0, err
    for where in ("/dev/shm", "/tmp"):
        line = next(x for x in out.splitlines() if x.startswith(where))
        words = line.split()
        assert words[1:3] == ["full", "after"] and int(words[3]) <= 8, out
        assert "No space left on device" in line, out


def test_cpu_limit_kills_even_when_sigxcpu_is_caught(
    layer: sandbox.Layer, spawn: Callable[..., Bot]
) -> None:
    code = """
        import signal
        signal.signal(signal.SIGXCPU, lambda *a: print("caught SIGXCPU", flush=True))
        print("burning", flush=True)
        while True:
            pass
    """
    bot = spawn(layer, code, limits=Limits(cpu_s=1))
    assert bot.line() == "burning"
    out, err = bot.finish()
    assert "caught SIGXCPU" in out, (out, err)
    # SIGKILL from the hard limit, one second later; bwrap reports signals as 128 + n.
    assert bot.proc.returncode in (-signal.SIGKILL, 128 + signal.SIGKILL), bot.proc.returncode


# -- process trees ------------------------------------------------------------------------

SETSID_TREE = """
    import os, sys, time
    total = int(sys.argv[1])
    budget = total
    main = os.getpid()
    while budget > 0:
        share = budget // 2
        budget -= share + 1
        if os.fork() == 0:
            os.setsid()
            budget = share
    if os.getpid() == main:
        print("forked", flush=True)
    while True:
        time.sleep(60)
"""


def test_kill_tree_kills_a_setsid_fork_tree(
    layer: sandbox.Layer, spawn: Callable[..., Bot]
) -> None:
    bot = spawn(layer, SETSID_TREE, "60")
    assert bot.line() == "forked"
    wait_for(lambda: len(marked(bot.marker)) >= 61, what="61 processes of the tree")
    usage = sandbox.tree_usage(bot.proc.pid)
    assert len(usage.pids) >= 61  # setsid does not hide them from the tree walk
    hit = sandbox.kill_tree(bot.proc.pid)
    assert hit >= 61
    assert bot.proc.wait(timeout=10) != 0
    wait_for(lambda: not marked(bot.marker), what="the tree to be gone")
    sandbox.sweep_escaped({bot.proc.pid})  # reap whatever died re-parented to us


def test_a_process_group_with_nobody_left_is_told_without_reading_proc(monkeypatch) -> None:
    child = subprocess.Popen(["sleep", "60"], start_new_session=True)
    try:
        assert proctree._group_members(child.pid) == [child.pid]  # found by the /proc scan
    finally:
        child.kill()
        child.wait()

    def no_scan(path: str) -> list[str]:
        raise AssertionError(f"listed {path}")

    monkeypatch.setattr(proctree.os, "listdir", no_scan)
    assert proctree._group_members(child.pid) == []  # reaped: the group is empty


def test_tree_usage_sees_a_grandchilds_memory_and_cpu(
    layer: sandbox.Layer, spawn: Callable[..., Bot]
) -> None:
    code = """
        import os, time
        if os.fork() == 0:
            hoard = b"x" * (200 << 20)
            end = time.process_time() + 0.3
            while time.process_time() < end:
                pass
            print("ready", flush=True)
            time.sleep(600)
        time.sleep(600)
    """
    bot = spawn(layer, code)
    assert bot.line() == "ready"
    usage = sandbox.tree_usage(bot.proc.pid)
    assert usage.pids[0] == bot.proc.pid
    assert len(usage.pids) >= 2
    assert usage.rss_kib >= 200 * 1024, usage
    assert usage.cpu_s >= 0.3, usage
    runs = 200
    start = time.process_time()  # CPU time: the wall clock also counts other processes
    for _ in range(runs):
        sandbox.tree_usage(bot.proc.pid)
    per_call_us = (time.process_time() - start) / runs * 1e6
    print(f"tree_usage: {per_call_us:.0f} us for {len(usage.pids)} processes")
    assert per_call_us < 5000  # ~100-300 us normally; generous for a loaded machine


# A setsid daemon that leaves the bot's tree; "ghost" also ends its main thread with
# pthread_exit while another thread sleeps on, so that its /proc entry shows a zombie.
# The bot waits for its daemon to have spoken before it exits: in a PID namespace the
# bot's exit ends the namespace, and a daemon not yet scheduled would die silent.
ESCAPEES = {
    "plain": """
        import os, time
        spoke, said = os.pipe()
        if os.fork() == 0:
            if os.fork() == 0:
                os.setsid()
                print("daemon", os.getpid(), flush=True)
                os.write(said, b"!")
                time.sleep(600)
            os._exit(0)
        os.close(said)
        os.wait()
        os.read(spoke, 1)
    """,
    "ghost": """
        import ctypes, os, threading, time
        spoke, said = os.pipe()
        if os.fork() == 0:
            if os.fork() == 0:
                os.setsid()
                threading.Thread(target=time.sleep, args=(600,)).start()
                print("daemon", os.getpid(), flush=True)
                os.write(said, b"!")
                ctypes.CDLL(None).pthread_exit(None)
            os._exit(0)
        os.close(said)
        os.wait()
        os.read(spoke, 1)
    """,
}


@pytest.mark.parametrize("escapee", sorted(ESCAPEES))
def test_sweep_escaped_finds_a_setsid_escapee(
    layer: sandbox.Layer, spawn: Callable[..., Bot], escapee: str
) -> None:
    assert sandbox.enable_subreaper()
    bot = spawn(layer, ESCAPEES[escapee])
    line = bot.line()
    assert line.startswith("daemon"), line
    bot.proc.wait(timeout=10)  # the bot itself has exited, its grandchild has not
    # In a PID namespace the daemon dies with the namespace's pid 1; otherwise it is
    # now our child (the subreaper) and only the sweep catches it.
    if "pid" in layer.isolation:
        wait_for(lambda: not marked(bot.marker), what="the namespace to die")
        assert sandbox.sweep_escaped({bot.proc.pid}) == []
    else:
        assert marked(bot.marker), "the escapee should still be alive"
        escaped = sandbox.sweep_escaped({bot.proc.pid})
        assert len(escaped) == 1, escaped
        assert escaped[0].split()[0] == line.split()[1]
        assert f"[{bot.marker}]" in escaped[0]
        assert not marked(bot.marker)


def test_only_a_process_with_no_thread_left_counts_as_exiting() -> None:
    """sweep_escaped spares processes already inside exit (bwrap's pid 1 waiting for its
    namespace to empty); a zombie main thread with a live thread is not one of them."""
    assert not proctree._exiting(os.getpid())
    code = """if True:
        import ctypes, threading, time
        threading.Thread(target=time.sleep, args=(600,)).start()
        print("daemon", flush=True)
        ctypes.CDLL(None).pthread_exit(None)
    """
    ghost = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE)
    try:
        assert ghost.stdout is not None
        assert ghost.stdout.readline().startswith(b"daemon")
        wait_for(lambda: _state(ghost.pid) == b"Z", what="the main thread to end")
        assert not proctree._exiting(ghost.pid)
        assert proctree._identity(ghost.pid) is not None
    finally:
        ghost.kill()
        ghost.wait()
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    wait_for(lambda: _state(dead.pid) == b"Z", what="the child to exit")
    assert proctree._exiting(dead.pid)
    assert proctree._identity(dead.pid) is None
    dead.wait()


def _state(pid: int) -> bytes:
    return _state_in(Path(f"/proc/{pid}/stat").read_bytes())


def test_a_bot_closing_stdout_is_seen(layer: sandbox.Layer, spawn: Callable[..., Bot]) -> None:
    # No wrapper process (bwrap's monitor, the namespace shim) may hold the bot's pipes,
    # or a bot that closes stdout while alive would look like a hang.
    code = """
        import os, time
        print("hello", flush=True)
        os.close(1)
        time.sleep(600)
    """
    bot = spawn(layer, code)
    assert bot.line() == "hello"
    assert bot.line() == ""  # EOF while the bot still runs
    assert bot.proc.poll() is None


def test_vanished_processes_are_harmless() -> None:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    assert sandbox.tree_usage(proc.pid) == sandbox.TreeUsage(0, 0.0, [])
    assert sandbox.kill_tree(proc.pid) == 0


def run_launch(launch: sandbox.Launch) -> subprocess.CompletedProcess[bytes]:
    """Run a prepared launch to the end, as the referee would start it."""
    try:
        return subprocess.run(
            launch.argv,
            env=launch.env,
            cwd=launch.cwd,
            start_new_session=True,
            capture_output=True,
            timeout=60,
            pass_fds=launch.pass_fds,
        )
    finally:
        launch.close_fds()


def test_relative_script_is_resolved(
    layer: sandbox.Layer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The bot runs in its scratch dir, so "bots/x.py" must mean the referee's cwd's.
    (tmp_path / "bots").mkdir()
    (tmp_path / "bots" / "x.py").write_text("print('relative ok')\n")
    monkeypatch.chdir(tmp_path)
    launch = sandbox.prepare_launch(
        [sys.executable, "bots/x.py"],
        bot_dir=None,
        scratch=tmp_path / "scratch",
        limits=Limits(),
        layer=layer,
    )
    assert str(tmp_path / "bots" / "x.py") in launch.argv
    proc = run_launch(launch)
    assert proc.stdout == b"relative ok\n", proc.stderr


def test_broad_directories_are_never_exposed(tmp_path: Path) -> None:
    try:
        layer = sandbox.choose_layer("bwrap")
    except sandbox.SandboxError as exc:
        skip_or_fail(f"layer bwrap does not work here: {exc}")
    launch = sandbox.prepare_launch(
        [sys.executable, "-c", "pass"],
        bot_dir=Path.home(),
        scratch=tmp_path / "scratch",
        limits=Limits(),
        layer=layer,
    )
    launch.close_fds()
    bound = {launch.argv[i + 1] for i, a in enumerate(launch.argv) if a == "--ro-bind"}
    assert str(Path.home()) not in bound
    assert "/" not in bound


def test_every_launch_announces_the_bot_before_it_runs(
    layer: sandbox.Layer, tmp_path: Path
) -> None:
    # Whatever the bot writes comes after the token, so a bot cannot pass its own
    # start-up crash off as the launcher's failure (which would void the match).
    launch = sandbox.prepare_launch(
        [sys.executable, "-c", "import sys; sys.stderr.write('bot speaks\\n')"],
        bot_dir=None,
        scratch=tmp_path / "scratch",
        limits=Limits(),
        layer=layer,
    )
    proc = run_launch(launch)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == sandbox.LAUNCH_TOKEN + b"bot speaks\n"


FAKE_BWRAP = """#!/bin/sh
# Passes the probes and the self-test (a shell that reads /proc/self/status), then
# fails every bot as a broken bubblewrap would, before starting it.
case "$1" in
  --version) echo "bubblewrap 0.8.0"; exit 0 ;;
  --help) echo "--disable-userns --size"; exit 0 ;;
esac
while [ "$#" -gt 0 ] && [ "$1" != "--" ]; do shift; done
shift
case "$*" in
  */proc/self/status*) exec "$@" ;;
esac
echo "bwrap: Can't mount proc on /newroot/proc: Operation not permitted" >&2
exit 1
"""


FAKE_BWRAP_ERROR = "bwrap: Can't mount proc on /newroot/proc: Operation not permitted"


def _with_fake_bwrap(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``python -m referee ARGS`` with FAKE_BWRAP first on PATH."""
    try:
        sandbox.base.require_userns()
    except sandbox.SandboxError as exc:
        skip_or_fail(f"no user namespaces: {exc}")
    fake_dir = tmp_path / "fakebin"
    fake_dir.mkdir()
    (fake_dir / "bwrap").write_text(FAKE_BWRAP)
    (fake_dir / "bwrap").chmod(0o755)
    return run_cli(*args, env={**os.environ, "PATH": f"{fake_dir}{os.pathsep}{os.environ['PATH']}"})


ROCK_BOT = f"{sys.executable} {ROOT / 'tests' / 'zoo' / 'rock.py'}"


def test_a_launcher_that_fails_voids_the_match_with_a_one_line_error(tmp_path: Path) -> None:
    replay = tmp_path / "voided.jsonl"
    done = _with_fake_bwrap(
        tmp_path, "match", ROCK_BOT, ROCK_BOT, "--sandbox", "bwrap", "--replay", str(replay)
    )
    # Nobody is charged: no result, and the organiser is told why, in one line.
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stdout == ""
    # Both seats fail alike; whichever exit is judged first is named.
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    assert re.fullmatch(
        rf"referee match: the sandbox could not start seat [01]: {re.escape(FAKE_BWRAP_ERROR)}",
        lines[0],
    ), lines
    # No empty replay is left behind; the seats' stderr logs, which say why, are.
    assert not replay.exists()
    assert FAKE_BWRAP_ERROR in (tmp_path / "voided.seat0.stderr.log").read_text()


def test_a_launcher_that_fails_stops_a_league_and_says_why(tmp_path: Path) -> None:
    out = tmp_path / "league"
    done = _with_fake_bwrap(
        tmp_path, "tournament", ROCK_BOT, ROCK_BOT, "--rounds", "5", "--legs", "1",
        "--finalists", "0", "--sandbox", "bwrap", "--quiet", "--out", str(out),
    )  # fmt: skip
    assert done.returncode != 0
    assert "the sandbox could not start seat" in done.stderr, done.stderr
    assert FAKE_BWRAP_ERROR in done.stderr
    # Nothing was scored: the match is still to be played when the league resumes.
    assert "--resume" in done.stderr


def _script_launch(layer: sandbox.Layer, tmp_path: Path, text: str) -> sandbox.Launch:
    """An executable script bot.sh holding ``text``, prepared for launch in ``layer``."""
    program = tmp_path / "bot.sh"
    program.write_text(text)
    program.chmod(0o755)
    return sandbox.prepare_launch(
        [str(program)], bot_dir=None, scratch=tmp_path / "scratch", limits=Limits(), layer=layer
    )


def test_a_program_the_layer_cannot_reach_is_the_launchers_failure(
    layer: sandbox.Layer, tmp_path: Path
) -> None:
    # Gone between the referee's checks and the launch: nothing of the bot ever ran,
    # so there is no start token and the match is void, not lost.
    launch = _script_launch(layer, tmp_path, "#!/bin/sh\nexit 0\n")
    (tmp_path / "bot.sh").unlink()
    proc = run_launch(launch)
    assert proc.returncode != 0
    assert sandbox.LAUNCH_TOKEN not in proc.stderr, proc.stderr


def test_a_bot_that_starts_and_fails_to_run_is_the_bots_failure(
    layer: sandbox.Layer, tmp_path: Path
) -> None:
    # A bad interpreter line fails the bot's own exec, after the token: its crash.
    proc = run_launch(_script_launch(layer, tmp_path, "#!/nonexistent/interpreter\n"))
    assert proc.returncode != 0
    assert proc.stderr.startswith(sandbox.LAUNCH_TOKEN), proc.stderr


def test_the_registry_lists_every_layer_strongest_first_and_the_cli_offers_them() -> None:
    assert sandbox.LAYERS == ("bwrap", "unshare", "landlock", "basic")
    assert sandbox.SANDBOX_CHOICES == ("auto", *sandbox.LAYERS)
    out = run_cli("match", "--help")
    assert "{auto,bwrap,unshare,landlock,basic}" in out.stdout
