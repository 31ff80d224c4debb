"""The hostile bot zoo, played through the real CLI in every layer this machine supports.

Each zoo bot (tests/zoo/catalog.py) plays a 20-round match against a well-behaved bot
that plays rock (see ``_opponent``):

    python -m referee match "<zoo bot>" "<rock>" --rounds 20 --move-timeout 0.5
        --sandbox <layer> --json

and the test checks the verdict the catalog expects for that layer, that sandbox
probes failed (from the verdict's stderr tail and from the test's own listeners and
files), and that no process of the bot is left afterwards.

The matches of one layer run concurrently in a batch (the first test of a layer starts
the batch for every selected bot of that layer), which keeps the suite to about a
minute per layer; leftovers are looked for once the whole batch has finished.

When the tests run as root, the zoo is also played by an unprivileged referee
(``unprivileged-<layer>-<bot>``: the referee as conftest's UNPRIVILEGED_UID through
setpriv, in every layer that uid can use here), whose bots share its uid and get no
cgroup: each must get the catalog's verdict for the layer's isolation without
catalog.ROOT_TAGS. A full unprivileged zoo (201 matches) took 94-110 s of CPU,
which the suite's five minutes on two CPUs cannot take; so a run plays, as the
unprivileged referee, only the bots whose expected verdict the referee's being root
changes in that layer, or the means that contain them (catalog.depends_on_root: 40
tests, 24 s of CPU), and CI (CI=true) or REFEREE_ZOO_UNPRIVILEGED=all plays the
whole zoo.
"""

from __future__ import annotations

import ctypes
import json
import os
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

import pytest
from conftest import (
    CI_REQUIRED_LAYERS,
    IN_CI,
    UNPRIVILEGED_UID,
    needs,
    proc_files,
    skip_or_fail,
    unprivileged_referee,
)
from zoo import catalog  # tests/ is on sys.path (pytest's rootdir conftest)
from zoo.catalog import ZOO, Expect, Skip, ZooBot

from referee import sandbox

ROOT = Path(__file__).resolve().parent.parent
BASE_ARGS = (
    "--rounds",
    "20",
    "--move-timeout",
    "0.5",
    "--time-bank",
    "0",
    "--json",
    "--no-replay",
    "--quiet",
)
SECRET_NAME = "REFEREE_ZOO_SECRET"
PARALLEL = 6
# A 20-round match needs ~45 MiB; the 100 MB line and the floods must not add to it.
REFEREE_RSS_LIMIT_KIB = 150 * 1024


def _cli_help() -> str:
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "referee", "match", "--help"],
            capture_output=True,
            text=True,
            timeout=60,
            cwd=ROOT,
        )
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return proc.stdout if proc.returncode == 0 else ""


CLI_HELP = _cli_help()
pytestmark = needs(
    "--sandbox" not in CLI_HELP, "'python -m referee match --sandbox' is not available"
)


def cgroup_tags(cg: sandbox.CgroupHost) -> frozenset[str]:
    """What a host's cgroups add to every layer (the matches run with ``--cgroups
    auto``): the catalog's cgroup keys."""
    tags = {"cgroup"} if cg.hierarchies else set()
    if cg.where("memory") is not None:
        tags.add("memcg")
    if cg.where("pids") is not None:
        tags.add("pidscg")
    return frozenset(tags)


def isolation_of(layer: sandbox.Layer) -> frozenset[str]:
    """The layer's isolation and what this host's cgroups add to it, for a referee
    run by the tests' own user: the catalog's keys."""
    return frozenset(layer.isolation) | cgroup_tags(sandbox.cgroup_host())


@dataclass(frozen=True)
class Referee:
    """Who runs the referee. OWN: the tests' own user (as root: each bot a uid of its
    own, and cgroups). UNPRIVILEGED: conftest's UNPRIVILEGED_UID, through setpriv, when
    the tests run as root: the bots share its uid and get no cgroup, so what the
    kernel enforced as root is sampled, and what a uid of their own refused them
    (another bot's files, the user's own files) is refused only by the layer."""

    label: str  # prefix of the test ids, "" for OWN
    command: tuple[str, ...]  # runs a Python with the referee importable, as that user
    uid: int
    python: str  # the interpreter of the zoo's Python bots: one that user may start


OWN = Referee("", (sys.executable,), os.geteuid(), sys.executable)


def _unprivileged() -> Referee | None:
    command = unprivileged_referee()
    if command is None:
        return None
    return Referee("unprivileged", command, UNPRIVILEGED_UID, command[-1])


# What each layer is for the unprivileged referee (its self-tests run as that uid),
# and what its cgroups add: asked once, of a referee process of that uid.
_PROBE_LAYERS = """
import json
from referee import sandbox
found = {}
for name in sandbox.LAYERS:
    try:
        layer = sandbox.choose_layer(name)
    except sandbox.SandboxError as exc:
        found[name] = {"error": str(exc)}
    else:
        found[name] = {"description": layer.description, "isolation": list(layer.isolation)}
cg = sandbox.cgroup_host()
print(json.dumps({"layers": found, "cgroups": {
    "hierarchies": len(cg.hierarchies),
    "memory": cg.where("memory") is not None,
    "pids": cg.where("pids") is not None}}))
"""
_layers_seen: dict[str, dict[str, Any]] = {}


def _layer_of(referee: Referee, name: str) -> tuple[sandbox.Layer, frozenset[str]]:
    """The layer ``name`` as ``referee`` gets it on this host and its full isolation
    (with the cgroup keys); skips (fails under CI, for the layers CI must have) when
    that referee cannot use it."""
    if referee is OWN:
        try:
            layer = sandbox.choose_layer(name)
        except sandbox.SandboxError as exc:
            _unavailable(name, str(exc))
        return layer, isolation_of(layer)
    if referee.label not in _layers_seen:
        proc = subprocess.run(
            [*referee.command, "-c", _PROBE_LAYERS],
            capture_output=True,
            text=True,
            timeout=120,
            cwd="/",
        )
        assert proc.returncode == 0, proc.stderr
        _layers_seen[referee.label] = json.loads(proc.stdout)
    seen = _layers_seen[referee.label]
    found = seen["layers"][name]
    if "error" in found:
        _unavailable(name, f"{found['error']} (as uid {referee.uid})")
    cg = seen["cgroups"]
    tags = {"cgroup"} if cg["hierarchies"] else set()
    tags |= {tag for tag, key in (("memcg", "memory"), ("pidscg", "pids")) if cg[key]}
    layer = sandbox.Layer(name, found["description"], isolation=tuple(found["isolation"]))
    return layer, frozenset(layer.isolation) | tags


def _unavailable(name: str, why: str) -> NoReturn:
    reason = f"layer {name} unavailable here: {why}"
    if name in CI_REQUIRED_LAYERS:
        skip_or_fail(reason)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def c_bots() -> Path | None:
    """Build the C zoo bots once; None when there is no compiler."""
    if shutil.which("make") is None or shutil.which(os.environ.get("CC", "cc")) is None:
        return None
    proc = subprocess.run(
        ["make", "-s", "-C", str(catalog.ZOO_DIR)], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    return catalog.BIN_DIR


@dataclass
class Run:
    """One zoo match and everything needed to judge it."""

    bot: ZooBot
    layer: sandbox.Layer
    isolation: frozenset[str]  # the layer's, with the cgroup keys
    referee: Referee
    argv: list[str]
    places: dict[str, str]
    program: str  # the bot's own file: in the command line of all its processes
    result: dict[str, Any] | None = None
    error: str = ""
    stderr: str = ""
    tcp_connections: int = 0
    udp_datagrams: int = 0
    leftovers: list[str] = field(default_factory=list)


class Probes:
    """The host side of the sandbox probes: listeners, an outside path, a secret."""

    def __init__(self, tmp: Path, owner: int | None = None) -> None:
        self.tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.tcp.bind(("127.0.0.1", 0))
        self.tcp.listen(8)
        self.tcp.setblocking(False)
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(("127.0.0.1", 0))
        self.udp.setblocking(False)
        outside = tmp / "outside"
        outside.mkdir()
        sibling = tmp / "sibling-bot"
        sibling.mkdir()
        self.secret = sibling / "secret.txt"
        self.secret.write_text("sibling-secret-42\n")
        self.secret.chmod(0o600)  # another bot's own file
        self.target = outside / "written-by-bot.txt"
        if owner is not None:
            # An unprivileged referee's bots run as its own user: the outside directory
            # and the sibling's secret are that user's own, as a real user's would be.
            for path in (outside, sibling, self.secret):
                os.chown(path, owner, owner)
        # The host's Unix sockets, open to everyone: one in /tmp itself, one in a
        # temporary directory of its own (open to the bots' uids), one abstract.
        tag = f"{os.getpid()}-{tmp.name}"
        self.unix_dir = Path(tempfile.mkdtemp(prefix="zoo-unix-"))
        self.unix_dir.chmod(0o755)
        self.unix_paths = [Path(f"/tmp/zoo-unix-{tag}.sock"), self.unix_dir / "host.sock"]
        self.unix_abstract = f"referee-zoo-{tag}"
        self.unix: list[socket.socket] = []
        for address in [*map(str, self.unix_paths), "\0" + self.unix_abstract]:
            listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            listener.bind(address)
            listener.listen(8)
            listener.setblocking(False)
            if not address.startswith("\0"):
                os.chmod(address, 0o777)
            self.unix.append(listener)

    def places(self, python: str, c_bin: Path | None) -> dict[str, str]:
        return {
            "python": python,
            "node": shutil.which("node") or "node",
            "zoo": str(catalog.ZOO_DIR),
            "bin": str(c_bin or catalog.BIN_DIR),
            "tcp_port": str(self.tcp.getsockname()[1]),
            "udp_port": str(self.udp.getsockname()[1]),
            "target": str(self.target),
            "secret": str(self.secret),
            "secret_name": SECRET_NAME,
            "unix_tmp": str(self.unix_paths[0]),
            "unix_dir": str(self.unix_paths[1]),
            "unix_abstract": self.unix_abstract,
        }

    def drain(self) -> tuple[int, int]:
        """Connections (TCP and Unix) and datagrams that reached the host so far."""
        conns = datagrams = 0
        for listener in [self.tcp, *self.unix]:
            while True:
                try:
                    conn, _ = listener.accept()
                except BlockingIOError:
                    break
                conn.close()
                conns += 1
        while True:
            try:
                self.udp.recv(4096)
            except BlockingIOError:
                break
            datagrams += 1
        return conns, datagrams

    def close(self) -> None:
        self.tcp.close()
        self.udp.close()
        for listener in self.unix:
            listener.close()
        for path in self.unix_paths:
            path.unlink(missing_ok=True)
        self.unix_dir.rmdir()


def _marked_processes(needle: str) -> list[str]:
    """Live processes started by a referee (marker in environ) whose cmdline has
    needle, and any whose arguments include needle itself (an escapee may drop the
    marker; the referee's own command line holds needle only inside a longer one)."""
    key = sandbox.MARKER_ENV.encode() + b"="
    found = []
    for pid, f in proc_files("environ", "cmdline"):
        args = f["cmdline"].split(b"\0")
        cmdline = f["cmdline"].replace(b"\0", b" ")
        if (key in f["environ"] and needle.encode() in cmdline) or needle.encode() in args:
            found.append(f"{pid} {cmdline.decode(errors='replace')}")
    return found


def _play(run: Run) -> None:
    env = dict(os.environ)
    env[SECRET_NAME] = "do-not-leak"  # the read_environ bot looks for it
    try:
        proc = subprocess.run(
            run.argv, capture_output=True, text=True, timeout=180, cwd=ROOT, env=env
        )
    except subprocess.TimeoutExpired as exc:
        run.error = f"the referee did not finish: {exc}"
        return
    run.stderr = proc.stderr[-3000:]
    try:
        run.result = json.loads(proc.stdout)
    except ValueError:
        run.error = f"exit status {proc.returncode}, no JSON on stdout"


def _selected(session: pytest.Session, who: str, layer_name: str) -> list[ZooBot]:
    names = set()
    for item in session.items:
        callspec = getattr(item, "callspec", None)
        if (
            callspec is not None
            and callspec.params.get("layer_name") == layer_name
            and callspec.params.get("who") == who
        ):
            bot = callspec.params.get("bot")
            if isinstance(bot, ZooBot):
                names.add(bot.name)
    return [bot for bot in ZOO if bot.name in names]


@pytest.fixture(scope="session")
def batches() -> Iterator[dict[str, dict[str, Run]]]:
    """Finished runs per referee and layer, filled on first use (see ``_batch``); the
    unprivileged referee's copies of the zoo and probes are removed at the end."""
    store: dict[str, dict[str, Run]] = {}
    yield store
    for workdir in _workdirs:
        shutil.rmtree(workdir, ignore_errors=True)


_workdirs: list[Path] = []


# The well-behaved opponent: the C sample bot that plays rock (make bots builds it),
# whose start-up costs next to nothing beside a Python bot's, 134 matches over; the
# zoo's Python rock where it is not built.
MINIMAL_C = ROOT / "sample_bots" / "bin" / "minimal_c"


def _opponent(places: dict[str, str]) -> list[str]:
    if MINIMAL_C.is_file() and os.access(MINIMAL_C, os.X_OK):
        return [str(MINIMAL_C)]
    return [part.format(**places) for part in catalog.BY_NAME["rock"].argv]


def _batch(
    store: dict[str, dict[str, Run]],
    referee: Referee,
    layer: sandbox.Layer,
    isolation: frozenset[str],
    session: pytest.Session,
    tmp_path_factory: pytest.TempPathFactory,
    c_bin: Path | None,
) -> dict[str, Run]:
    key = f"{referee.label}-{layer.name}"
    if key in store:
        return store[key]
    if referee is OWN:
        probe_dir = tmp_path_factory.mktemp(f"zoo-{layer.name}")
        probe_dir.chmod(0o755)  # as the tmp_path fixture of conftest.py
        probes = Probes(probe_dir)
        places = probes.places(referee.python, c_bin)
    else:
        # pytest's own directories are root's alone: the unprivileged user's zoo is a
        # copy of its own (its bots' directory is then the user's, as a real user's
        # checkout would be), with the probes beside it.
        workdir = Path(tempfile.mkdtemp(prefix=f"zoo-{referee.label}-{layer.name}-"))
        _workdirs.append(workdir)
        workdir.chmod(0o755)
        zoo = workdir / "zoo"
        shutil.copytree(catalog.ZOO_DIR, zoo, symlinks=True)
        for where, dirs, files in os.walk(zoo):
            for name in [where, *(os.path.join(where, n) for n in dirs + files)]:
                os.chown(name, referee.uid, referee.uid, follow_symlinks=False)
        (workdir / "probes").mkdir(mode=0o755)
        probes = Probes(workdir / "probes", owner=referee.uid)
        places = probes.places(referee.python, zoo / "bin" if c_bin else None)
        places["zoo"] = str(zoo)
    rock = _opponent(places)
    runs: dict[str, Run] = {}
    for bot in _selected(session, referee.label, layer.name):
        if isinstance(catalog.expectation(bot, isolation), Skip):
            continue
        if bot.needs == "c" and c_bin is None or bot.needs == "node" and not shutil.which("node"):
            continue
        command = [part.format(**places) for part in bot.argv]
        argv = [*referee.command, "-m", "referee", "match", shlex.join(command), shlex.join(rock)]
        argv += [*BASE_ARGS, "--sandbox", layer.name, *bot.referee_args]
        program = command[bot.program_index]
        runs[bot.name] = Run(bot, layer, isolation, referee, argv, places, program)
    # Probe bots run one at a time so that what the listeners see is theirs alone.
    probing = {"tcp_connect", "udp_send", "unix_connect"}
    # An unprivileged referee's bots all share its uid, whose task count RLIMIT_NPROC
    # caps: a bot that forks up to its limit makes the forks of bots in the matches
    # running beside it fail (a known gap, docs/security.md). Those bots run one at a
    # time, after the rest, so that each verdict is its own bot's.
    forking = {"fork_bomb", "fork_cap", "escapee_hog"} if referee.uid != 0 else set()
    with ThreadPoolExecutor(PARALLEL) as pool:
        list(pool.map(_play, [r for n, r in runs.items() if n not in probing | forking]))
    for name in sorted(forking & runs.keys()):
        _play(runs[name])
    for name in sorted(probing & runs.keys()):
        probes.drain()
        _play(runs[name])
        runs[name].tcp_connections, runs[name].udp_datagrams = probes.drain()
    probes.close()
    # Give SIGKILLed processes a moment to vanish, then look for anything left over.
    deadline = time.monotonic() + 5
    while True:
        for run in runs.values():
            run.leftovers = _marked_processes(run.program)
        if not any(r.leftovers for r in runs.values()) or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    store[key] = runs
    return runs


def _auto_layer() -> str:
    try:
        return sandbox.choose_layer("auto").name
    except sandbox.SandboxError:
        return sandbox.LAYERS[-1]


# The whole zoo as an unprivileged referee too, not only the bots whose verdict or
# containment a root referee changes (see the module docstring).
ALL_UNPRIVILEGED = IN_CI or os.environ.get("REFEREE_ZOO_UNPRIVILEGED") == "all"


def _params() -> list[Any]:
    auto = _auto_layer()
    # As root, the zoo is played by an unprivileged referee too; as another user, the
    # tests' own run is the unprivileged one.
    who = ["", "unprivileged"] if os.geteuid() == 0 else [""]
    params = []
    for label in who:
        for layer_name in sandbox.LAYERS:
            for bot in ZOO:
                if bot.name == "rock":
                    continue
                if bot.name in catalog.LAYER_INDEPENDENT and layer_name != auto:
                    continue
                if label and not (ALL_UNPRIVILEGED or catalog.depends_on_root(bot, layer_name)):
                    continue
                name = "-".join(part for part in (label, layer_name, bot.name) if part)
                params.append(pytest.param(label, layer_name, bot, id=name))
    return params


@pytest.mark.parametrize(("who", "layer_name", "bot"), _params())
def test_zoo_bot(
    who: str,
    layer_name: str,
    bot: ZooBot,
    batches: dict[str, dict[str, Run]],
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    c_bots: Path | None,
) -> None:
    referee = OWN
    if who:
        found = _unprivileged()
        if found is None:
            skip_or_fail(f"cannot run the referee as uid {UNPRIVILEGED_UID} here")
        referee = found
    layer, isolation = _layer_of(referee, layer_name)
    expect = catalog.expectation(bot, isolation)
    if isinstance(expect, Skip):
        pytest.skip(expect.reason)
    if bot.needs == "c" and c_bots is None:
        skip_or_fail("no C compiler or make")
    if bot.needs == "node" and shutil.which("node") is None:
        skip_or_fail("node is not installed")
    if bot.referee_args and not all(
        opt in CLI_HELP for opt in bot.referee_args if opt.startswith("--")
    ):
        skip_or_fail(f"the CLI lacks one of {bot.referee_args}")
    runs = _batch(batches, referee, layer, isolation, request.session, tmp_path_factory, c_bots)
    print(f"referee uid {referee.uid}; layer: {layer.name} ({layer.description})")
    print(f"isolation {sorted(isolation)}")
    run = runs[bot.name]
    _check(run, expect)


def _check(run: Run, expect: Expect) -> None:
    assert run.result is not None, f"{run.error}\nreferee stderr:\n{run.stderr}"
    result = run.result
    assert result["containment"]["layer"] == run.layer.name
    # The record names who the bots ran as, and that they held no capability.
    uids = result["containment"]["bot_uids"]
    assert result["containment"]["capabilities"] == []
    assert len(uids) == 2 and 0 not in uids, uids
    if run.referee.uid == 0:
        assert uids[0] != uids[1], uids  # a uid of its own per bot
    else:
        assert uids == [run.referee.uid] * 2, uids  # the referee's own
    seat = next(s for s in result["seats"] if s["seat"] == 0)
    verdict = seat["verdict"]
    context = f"verdict: {json.dumps(verdict, indent=1)[:3000]}"
    assert verdict.get("status", "ok") in expect.status, context
    assert bool(verdict.get("disqualified", False)) == expect.disqualified, context
    if expect.round is not None:
        rounds = [f["round"] for f in verdict.get("faults", [])]
        assert rounds and min(rounds) == expect.round, context
    if expect.exit_code is not None:
        assert verdict.get("exit_code") == expect.exit_code, context
    if expect.signal is not None:
        assert verdict.get("signal") == expect.signal, context
        assert verdict.get("exit_code") is None, context
    if expect.detail is not None:
        assert verdict["faults"][0]["detail"] == expect.detail, context
    kept = verdict.get("stderr_head", "") + verdict.get("stderr_tail", "")
    for text in expect.stderr:
        assert text.format(**run.places) in kept, context
    if expect.escaped:
        assert verdict.get("escaped_processes"), context
    # The opponent is never punished for the zoo bot's behaviour.
    other = next(s for s in result["seats"] if s["seat"] == 1)
    assert other["verdict"].get("status", "ok") == "ok", json.dumps(other["verdict"])[:2000]
    # Escapees carry their bot's marker, so they are charged to that bot alone.
    assert not other["verdict"].get("escaped_processes"), json.dumps(other["verdict"])[:2000]
    assert not run.leftovers, f"processes left behind: {run.leftovers}"
    # Whatever the bot sent or did, the referee's own memory stayed small.
    assert result["referee"]["peak_rss_kib"] < REFEREE_RSS_LIMIT_KIB, result["referee"]
    _check_probe_side_effects(run)


def _stderr_value(run: Run, label: str) -> str | None:
    """The value of the bot's "<label>: <value>" line on stderr, if any."""
    seat = next(s for s in (run.result or {}).get("seats", []) if s["seat"] == 0)
    kept = seat["verdict"].get("stderr_head", "") + seat["verdict"].get("stderr_tail", "")
    for line in kept.splitlines():
        if line.startswith(label + ": "):
            return line[len(label) + 2 :]
    return None


def _sysv_keys(kinds: tuple[str, ...]) -> set[int]:
    keys = set()
    for kind in kinds:
        with open(f"/proc/sysvipc/{kind}") as f:
            keys.update(int(line.split()[0]) for line in f.read().splitlines()[1:])
    return keys


_KEYCTL = {"x86_64": 250, "aarch64": 219, "riscv64": 219}
KEYCTL_SEARCH, KEYCTL_UNLINK, KEY_SPEC_USER_KEYRING = 10, 9, -4


def _user_key(uid: int, description: str, unlink: bool = False) -> bool:
    """Whether ``uid``'s user keyring holds a "user" key ``description`` (looked for
    by a child process that becomes ``uid``); ``unlink`` removes it."""
    import platform

    nr = _KEYCTL[platform.machine()]
    child = os.fork()
    if child == 0:
        found = 2
        try:
            if os.getuid() != uid:
                os.setresgid(uid, uid, uid)
                os.setresuid(uid, uid, uid)
            libc = ctypes.CDLL(None, use_errno=True)
            libc.syscall.restype = ctypes.c_long
            key = libc.syscall(
                nr, KEYCTL_SEARCH, KEY_SPEC_USER_KEYRING, b"user", description.encode(), 0
            )
            if key >= 0 and unlink:
                libc.syscall(nr, KEYCTL_UNLINK, key, KEY_SPEC_USER_KEYRING, 0, 0)
            found = 1 if key >= 0 else 0
        finally:
            os._exit(found)
    _, status = os.waitpid(child, 0)
    code = os.waitstatus_to_exitcode(status)
    assert code in (0, 1), code
    return code == 1


def _check_probe_side_effects(run: Run) -> None:
    isolation = set(run.layer.isolation)
    name = run.bot.name
    as_root = run.referee.uid == 0
    scratch = _stderr_value(run, "scratch")
    if scratch is not None:  # the bot's scratch directory went with the match
        assert not os.path.lexists(scratch), f"{scratch} was left behind"
    if name == "keyring_leftover":
        added = _stderr_value(run, "keyring")
        assert added is not None
        if added.startswith("added "):
            uid = run.result["containment"]["bot_uids"][0] if run.result else -1
            if as_root:  # a uid of the bot's own: its keyring must be empty
                assert not _user_key(uid, added[6:]), f"{added[6:]} left in uid {uid}'s keyring"
            else:  # the referee's own user's keyring: the test's own clean-up
                _user_key(uid, added[6:], unlink=True)
    if name == "ipc_leftovers":
        key = _stderr_value(run, "ipc")
        assert key is not None and key.startswith("key=")
        # An IPC namespace (bwrap, unshare; every layer as root), else removal by the
        # bot's own uid (root) or by the pids of its processes: a semaphore set
        # records none, so an unprivileged referee cannot tell a bot's from its
        # user's own without a namespace (docs/security.md).
        kinds = ("shm", "msg", "sem")
        if not as_root and "pid" not in isolation:
            kinds = ("shm", "msg")
            # (the test's own clean-up of the semaphore set it knows the key of)
            subprocess.run(["ipcrm", "-S", key[4:]], capture_output=True, check=False)
        assert int(key[4:], 16) not in _sysv_keys(kinds), f"System V objects of {key} left"
        shm = _stderr_value(run, "posix-shm")
        assert shm is not None
        if not as_root and not {"fs", "tmpfs"} & isolation:
            # basic as an unprivileged user: the bot is the referee's own user with
            # the host's /dev/shm, and its files cannot be told from the user's.
            Path("/dev/shm" + shm).unlink(missing_ok=True)
        else:
            assert not os.path.lexists("/dev/shm" + shm), shm
    if name == "tcp_connect":
        contained = bool({"net", "tcp", "sockets"} & isolation)
        assert (run.tcp_connections == 0) == contained, run.tcp_connections
    elif name == "unix_connect":
        # Every layer but basic keeps the host's Unix sockets out of reach
        # (docs/security.md); under basic all three listeners see the bot.
        if run.layer.name == "basic":
            assert run.tcp_connections == 3, run.tcp_connections
        else:
            assert run.tcp_connections == 0, run.tcp_connections
    elif name == "udp_send":
        contained = bool({"net", "sockets"} & isolation)
        assert (run.udp_datagrams == 0) == contained, run.udp_datagrams
    elif name == "write_outside":
        target = Path(run.places["target"])
        written = target.exists()
        target.unlink(missing_ok=True)
        for stray in Path(run.places["zoo"]).glob(".zoo-write-*"):
            stray.unlink()
        assert written == ("fs" not in isolation and "uid" not in isolation)
