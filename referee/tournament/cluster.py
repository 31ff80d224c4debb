"""Matches on a Dask cluster: ``referee tournament --cluster tcp://HOST:PORT``.

:class:`DaskExecutor` is a drop-in for :class:`~.executor.ProcessExecutor`: the
runner hands it the same :class:`~.worker.Job` and gets back the same outcome, so
the SQLite state, ``--resume``, the exports and the standings do not know where a
match was played (docs/cluster.md).

Coordinator side, each bot's directory (``referee.bot_command.bot_dir_of``) is packed
once into a reproducible tar.gz named by its sha256, and the bot's argv is made
portable: paths inside that directory become relative to it, and an interpreter
outside it (python3, node) is kept by name only. The archives travel with each
task, so no shared filesystem is needed.

Worker side, :func:`play_on_worker` verifies every archive against its hash,
unpacks it into a cache keyed by that hash (checked again before each match),
rewrites the argv to the unpacked paths and the worker's own interpreters, and
plays the match in a ``python -m referee.tournament.worker`` process of its own,
as a local run does: the same code, limits and containment layers, with the bots'
subreaper and parent-death signals tied to that process rather than to a thread of
the Dask worker. The replay and the bots' stderr logs come back as bytes.

Dask is an optional dependency (``pip install referee[cluster]``): this module
imports it only when an executor is made or a match is played.
"""

from __future__ import annotations

import fcntl
import gzip
import hashlib
import io
import os
import re
import shutil
import stat
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec
import trio

from ..outcome import MatchOutcome
from .executor import MAX_ATTEMPTS, MatchFailed, WorkerInfo
from .worker import WORKER_COMMAND, Job, Reply, worker_popen_args

CACHE_ENV = "REFEREE_CLUSTER_CACHE"  # where workers unpack bots (default: a dir in TMPDIR)
EVENT_TOPIC = "referee-match"  # workers announce each match they start on it
MAX_BOT_BYTES = 64 << 20  # a bot directory bigger than this is a mistake (e.g. $HOME)
MAX_BOT_FILES = 5000
MAX_LOG_BYTES = 1 << 20  # per stderr log sent back (the tail is what matters)
# Never packed: version control and byte-code caches are not the bot, and Python
# would happily regenerate the latter.
SKIP_DIRS = frozenset({".git", ".hg", ".svn", "__pycache__"})
# argv entries are tagged with a NUL, which cannot occur in a real argument.
_BOT = "\0bot/"  # a path inside the bot's directory, relative to it
_PROGRAM = "\0program/"  # an interpreter the worker finds for itself
_PYTHON = "python3"


class ClusterError(Exception):
    """The cluster cannot be used as asked (one line for the user)."""


class ArchiveError(Exception):
    """A bot archive failed verification: the bot is never run."""


class BotPackage(msgspec.Struct, frozen=True):
    """A bot as a worker gets it: an argv relative to its unpacked archive."""

    label: str
    argv: list[str]
    archive: str | None  # sha256 of the tar.gz, None when the bot has no files of its own


# -- packing (coordinator) -----------------------------------------------------


def _system_dirs() -> set[str]:
    dirs = {"/bin", "/sbin", "/usr/bin", "/usr/sbin", "/usr/local/bin"}
    dirs.add(str(Path(sys.executable).parent))
    dirs.add(str(Path(sys.executable).resolve().parent))  # bot_dir_of resolves links
    return dirs


def pack_dir(directory: Path) -> tuple[str, bytes]:
    """A reproducible tar.gz of ``directory`` and its sha256: the same files give
    the same bytes on any machine and at any time (sorted names, no owners or
    times), so the hash names the content."""
    entries: list[tuple[str, Path]] = []
    total = 0
    for root, dirs, files in os.walk(directory):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
        rel_root = os.path.relpath(root, directory)
        for name in [*dirs, *sorted(files)]:
            path = Path(root) / name
            rel = name if rel_root == "." else f"{rel_root}/{name}"
            entries.append((rel, path))
            if path.is_file():
                total += path.stat().st_size
        if len(entries) > MAX_BOT_FILES or total > MAX_BOT_BYTES:
            raise ClusterError(
                f"bot directory {directory} holds more than {MAX_BOT_FILES} files or "
                f"{MAX_BOT_BYTES >> 20} MiB: give the bot a directory of its own"
            )
    buf = io.BytesIO()
    # mtime=0 in the gzip header too, or the bytes would change with the clock.
    with (
        gzip.GzipFile(fileobj=buf, mode="wb", mtime=0) as gz,
        tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar,
    ):
        for rel, path in sorted(entries):
            info = tarfile.TarInfo(rel)
            info.mtime = 0
            if path.is_dir():
                info.type = tarfile.DIRTYPE
                info.mode = 0o755
                tar.addfile(info)
            elif path.is_file():  # follows symlinks: the worker gets the content
                data = path.read_bytes()
                info.size = len(data)
                info.mode = 0o755 if os.access(path, os.X_OK) else 0o644
                tar.addfile(info, io.BytesIO(data))
            # Sockets, fifos and dangling links are not part of a bot.
    data = buf.getvalue()
    return hashlib.sha256(data).hexdigest(), data


def package_bot(label: str, argv: Sequence[str]) -> tuple[BotPackage, bytes | None]:
    """The portable form of a resolved argv, and its archive (None: no files)."""
    from ..bot_command import bot_dir_of

    bot_dir = bot_dir_of(argv)
    if bot_dir is not None and str(bot_dir) in _system_dirs():
        bot_dir = None  # a program on PATH (``cat``): nothing of the bot's own to send
    out: list[str] = []
    for i, arg in enumerate(argv):
        path = Path(arg).resolve() if arg and ("/" in arg or i == 0) else None
        if path is not None and bot_dir is not None and path.is_relative_to(bot_dir):
            if path.exists():
                out.append(_BOT + path.relative_to(bot_dir).as_posix())
                continue
        if i == 0:
            # An interpreter: the worker uses its own. Our Python, whatever it is
            # called here (a venv's python3.12), is "the worker's Python" there.
            name = Path(arg).name
            is_python = arg == sys.executable or name.startswith("python")
            out.append(_PROGRAM + (_PYTHON if is_python else name))
        elif "/" in arg and os.path.exists(arg):
            raise ClusterError(
                f"bot {label!r}: {arg} is outside the bot's directory {bot_dir}; "
                "a cluster worker would not have it"
            )
        else:
            out.append(arg)
    if bot_dir is None:
        return BotPackage(label=label, argv=out, archive=None), None
    digest, data = pack_dir(bot_dir)
    return BotPackage(label=label, argv=out, archive=digest), data


def code_version() -> str:
    """What a worker must share with the coordinator: the referee release and the
    replay format. (Not a hash of the source: a development checkout edited while
    a league runs would refuse every worker; keep those in sync by hand.)"""
    from .. import __version__
    from ..replay import FORMAT_NAME, FORMAT_VERSION

    return f"referee {__version__}, {FORMAT_NAME} {FORMAT_VERSION}"


# -- unpacking (worker) --------------------------------------------------------


class _Member(msgspec.Struct, frozen=True):
    is_dir: bool
    executable: bool
    sha256: str


_members_cache: dict[str, dict[str, _Member]] = {}
_members_lock = threading.Lock()


def _members(digest: str, data: bytes) -> dict[str, _Member]:
    """What the archive holds, after checking it is the archive its hash names."""
    if hashlib.sha256(data).hexdigest() != digest:
        raise ArchiveError(f"bot archive {digest[:12]} does not match its sha256: refused")
    with _members_lock:
        cached = _members_cache.get(digest)
    if cached is not None:
        return cached
    found: dict[str, _Member] = {}
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
            for info in tar:
                name = info.name
                parts = name.split("/")
                if name.startswith("/") or ".." in parts or "" in parts or "\0" in name:
                    raise ArchiveError(f"bot archive {digest[:12]}: unsafe path {name!r}")
                if info.isdir():
                    found[name] = _Member(True, True, "")
                elif info.isfile():
                    f = tar.extractfile(info)
                    assert f is not None
                    sha = hashlib.sha256(f.read()).hexdigest()
                    found[name] = _Member(False, bool(info.mode & 0o100), sha)
                else:
                    raise ArchiveError(f"bot archive {digest[:12]}: {name!r} is not a file")
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise ArchiveError(f"bot archive {digest[:12]} is unreadable: {exc}") from None
    with _members_lock:
        _members_cache[digest] = found
    return found


def _tree_matches(root: Path, members: dict[str, _Member]) -> bool:
    """Whether the unpacked tree holds exactly the archive's files, unchanged."""
    seen: set[str] = set()
    for dirpath, dirs, files in os.walk(root):
        for name in [*dirs, *files]:
            path = Path(dirpath) / name
            rel = path.relative_to(root).as_posix()
            m = members.get(rel)
            st = path.lstat()
            if m is None or stat.S_ISLNK(st.st_mode):
                return False
            if m.is_dir != stat.S_ISDIR(st.st_mode):
                return False
            if not m.is_dir:
                if not stat.S_ISREG(st.st_mode) or bool(st.st_mode & 0o100) != m.executable:
                    return False
                if hashlib.sha256(path.read_bytes()).hexdigest() != m.sha256:
                    return False
            seen.add(rel)
    return seen == set(members)


def _make_writable(root: Path) -> None:
    for dirpath, _dirs, _files in os.walk(root):
        os.chmod(dirpath, 0o700)


def cache_root() -> Path:
    root = os.environ.get(CACHE_ENV) or os.path.join(
        tempfile.gettempdir(), f"referee-bots-{os.getuid()}"
    )
    path = Path(root)
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    return path


def unpack_bot(digest: str, data: bytes, root: Path) -> Path:
    """The bot's files under ``root/<sha256>``, verified: the archive against its
    hash (ArchiveError, and nothing is written, if it does not match), and a cached
    tree against the archive's contents (a changed tree is unpacked again)."""
    members = _members(digest, data)
    target = root / digest
    # Two Dask workers on one machine share the cache: one unpacks at a time.
    with open(root / f"{digest}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if target.is_dir() and _tree_matches(target, members):
            return target
        if target.exists():
            _make_writable(target)
            shutil.rmtree(target)
        staging = Path(tempfile.mkdtemp(prefix=f".{digest[:12]}-", dir=root))
        try:
            with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
                # The "data" filter refuses links, devices and paths leaving the
                # directory (already excluded by _members, checked twice on purpose);
                # Pythons before 3.11.4 lack it and rely on _members alone.
                if hasattr(tarfile, "data_filter"):
                    tar.extractall(staging, filter="data")
                else:
                    tar.extractall(staging)
            # Read-only: the tree is shared by every match using this bot.
            for dirpath, _dirs, files in os.walk(staging, topdown=False):
                for name in files:
                    p = os.path.join(dirpath, name)
                    os.chmod(p, 0o555 if os.stat(p).st_mode & 0o100 else 0o444)
                os.chmod(dirpath, 0o555)
            os.rename(staging, target)
        except BaseException:
            _make_writable(staging)
            shutil.rmtree(staging, ignore_errors=True)
            raise
        if not _tree_matches(target, members):
            raise ArchiveError(f"bot archive {digest[:12]}: unpacked files do not verify")
        return target


def localize(pkg: BotPackage, unpacked: Path | None) -> list[str]:
    """The package's argv with this machine's paths and interpreters."""
    out = []
    for arg in pkg.argv:
        if arg.startswith(_BOT):
            if unpacked is None:
                raise ArchiveError(f"bot {pkg.label!r} names its files but has no archive")
            out.append(str(unpacked / arg[len(_BOT) :]))
        elif arg.startswith(_PROGRAM):
            name = arg[len(_PROGRAM) :]
            found = sys.executable if name == _PYTHON else shutil.which(name)
            if found is None:
                raise RuntimeError(f"bot {pkg.label!r} needs {name!r}, not installed here")
            out.append(found)
        else:
            out.append(arg)
    return out


# -- playing (worker) ----------------------------------------------------------


def _this_worker() -> Any:
    try:
        from distributed import get_worker

        return get_worker()
    except (ImportError, ValueError):
        return None  # called outside a Dask worker (tests)


def _announce(key: str, match: str) -> None:
    """Tell the coordinator which worker plays the match (its dashboard)."""
    worker = _this_worker()
    if worker is None:
        return
    worker.log_event(
        EVENT_TOPIC, {"key": key, "match": match, "worker": worker.address, "pid": os.getpid()}
    )


def _cancelled(key: str) -> bool:
    """Whether the coordinator no longer wants this task (it was cancelled)."""
    try:
        from distributed import get_worker

        ts = get_worker().state.tasks.get(key)
    except Exception:  # noqa: BLE001 - no worker, or internals changed: keep playing
        return False
    return ts is None or ts.state in ("cancelled", "released", "forgotten")


def _read_capped(path: Path) -> bytes:
    with open(path, "rb") as f:
        f.seek(0, os.SEEK_END)
        size = f.tell()
        f.seek(max(0, size - MAX_LOG_BYTES))
        return f.read()


def play_on_worker(
    key: str,
    job: dict[str, Any],
    bots: list[dict[str, Any]],
    archives: dict[str, bytes],
    version: str,
) -> dict[str, Any]:
    """The Dask task: play one match, return ``{"outcome", "replay", "logs"}``.

    Raises ArchiveError (never retried) if a bot's archive does not verify or the
    worker's referee is not the coordinator's, any other exception if the match
    could not be played here (the coordinator tries again)."""
    if code_version() != version:
        worker = _this_worker()
        where = f"worker {worker.address}" if worker is not None else "this worker"
        raise ArchiveError(
            f"{where} runs {code_version()}, the coordinator {version}: install the "
            "same referee on every worker and restart the workers after an upgrade"
        )
    root = cache_root()
    dirs = {sha: unpack_bot(sha, data, root) for sha, data in archives.items()}
    specs = []
    for b in bots:
        pkg = msgspec.convert(b, BotPackage)
        specs.append(
            {
                "command": localize(pkg, dirs.get(pkg.archive) if pkg.archive else None),
                "label": pkg.label,
            }
        )
    match_id = job["id"]
    with tempfile.TemporaryDirectory(prefix="referee-match-") as tmp:
        cfg = dict(job["cfg"])
        wants_replay = bool(cfg.get("replay"))
        # Compressed (or not) as the coordinator's replay name asks: the bytes go
        # back to it as written.
        suffix = ".jsonl.gz" if str(cfg.get("replay") or "").endswith(".gz") else ".jsonl"
        replay = Path(tmp) / "replays" / f"{match_id}{suffix}"
        log_dir = Path(tmp) / "logs"
        # Same stem as the coordinator's replay name, so the logs keep their names.
        cfg["replay"] = str(replay) if wants_replay else None
        cfg["log_dir"] = str(log_dir)
        line = msgspec.json.encode(Job(id=match_id, bots=specs, cfg=cfg)) + b"\n"
        _announce(key, match_id)
        raw, stderr = _run_match_process(line, key)
        try:
            reply = msgspec.json.decode(raw, type=Reply)
        except (msgspec.ValidationError, msgspec.DecodeError):
            reply = None
        if reply is None or not reply.ok or reply.outcome is None or reply.id != match_id:
            why = reply.error if reply is not None and reply.error else "no result"
            raise RuntimeError(f"match {match_id} on this worker: {why}; stderr: {stderr}")
        logs = {}
        if log_dir.is_dir():
            logs = {p.name: _read_capped(p) for p in sorted(log_dir.iterdir()) if p.is_file()}
        worker = _this_worker()
        return {
            "worker": worker.address if worker is not None else None,
            "outcome": reply.outcome,
            "replay": replay.read_bytes() if wants_replay and replay.exists() else None,
            "logs": logs,
        }


class _MatchProcess:
    """A ``referee.tournament.worker`` serving one Dask worker thread, one job at a
    time, exactly as ProcessExecutor's workers serve a local run.

    It is a process of its own, so the bots' subreaper and parent-death signals
    belong to it (not to a thread of the Dask worker, whose threads come and go),
    and a match that crashes it cannot take the Dask worker down. It is kept for
    the thread's next match because starting Python and importing the referee
    costs more than a short match (see docs/cluster.md); one that died, or whose
    match was abandoned, is replaced."""

    def __init__(self, log_dir: Path) -> None:
        self.log = log_dir / f"referee-worker-{os.getpid()}-{threading.get_ident()}.log"
        with open(self.log, "ab") as err:
            # Its own session, as locally: signals for the Dask worker's process
            # group (a terminal's Ctrl-C) must not reach the bots.
            self.proc = subprocess.Popen(WORKER_COMMAND, stderr=err, **worker_popen_args())

    def alive(self) -> bool:
        return self.proc.poll() is None

    def close(self) -> None:
        """End of input: it exits, abandoning (and killing the bots of) any match."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc.stdout.close()

    def tail(self) -> str:
        try:
            return _read_capped(self.log)[-2000:].decode(errors="replace").strip()
        except OSError:
            return ""


_local = threading.local()  # each Dask worker thread's _MatchProcess


def _match_process() -> _MatchProcess:
    mp: _MatchProcess | None = getattr(_local, "process", None)
    if mp is not None and mp.alive():
        return mp
    if mp is not None:
        mp.close()
    worker = _this_worker()
    log_dir = Path(worker.local_directory) if worker is not None else Path(tempfile.gettempdir())
    mp = _local.process = _MatchProcess(log_dir)
    return mp


def _run_match_process(line: bytes, key: str) -> tuple[bytes, str]:
    """Play one job line; the reply line (empty if there is none) and the tail of
    the match process's stderr."""
    mp = _match_process()
    assert mp.proc.stdin is not None and mp.proc.stdout is not None
    buf = b""
    try:
        mp.proc.stdin.write(line)
        mp.proc.stdin.flush()
        out_fd = mp.proc.stdout.fileno()
        while b"\n" not in buf:
            # Wake once a second to notice a cancelled task (Ctrl-C on the
            # coordinator): the match is abandoned instead of played for nobody.
            if not _wait_readable(out_fd, 1.0):
                if _cancelled(key):
                    break
                continue
            data = os.read(out_fd, 1 << 16)
            if not data:
                break
            buf += data
    except OSError:
        pass  # it died: reported below as no reply
    if b"\n" not in buf:
        mp.close()
        _local.process = None
        return b"", mp.tail()
    return buf.split(b"\n", 1)[0], ""


def _wait_readable(fd: int, timeout: float) -> bool:
    import select

    readable, _w, _x = select.select([fd], [], [], timeout)
    return bool(readable)


# -- the executor (coordinator) ------------------------------------------------


def _import_dask() -> Any:
    try:
        import distributed
    except ImportError:
        raise ClusterError(
            "--cluster needs Dask, which is not installed: pip install 'referee[cluster]'"
        ) from None
    return distributed


class _Running(msgspec.Struct):
    key: str
    worker: str | None = None
    since: float | None = None


class DaskExecutor:
    """Plays matches on the workers of a Dask scheduler.

    Why a synchronous Client: Dask's asynchronous API needs an asyncio (tornado)
    event loop, which cannot run inside trio. ``Client(asynchronous=False)`` runs
    its own loop in a thread of its own, and trio never drives it: waiting for a
    match is a done-callback that wakes trio through its token (no thread is
    parked per match in flight, and a cancelled wait returns at once), and the
    few blocking calls (connect, submit, fetching a result, close) run in
    ``trio.to_thread``. Blocking ``future.result()`` threads would work too, but
    each in-flight match would hold one of trio's limited threads and a
    cancelled wait could not interrupt it.
    """

    def __init__(self, address: str, jobs: int | None = None, timeout: float = 30.0) -> None:
        distributed = _import_dask()
        self.address = address
        self._distributed = distributed
        if not re.fullmatch(r"[a-z]+://\S+:\d+", address):
            raise ClusterError(f"bad scheduler address {address!r}: expected tcp://HOST:PORT")
        try:
            # Dask retries a refused connection until the timeout: a typo should not
            # cost half a minute.
            self._client = distributed.Client(
                address, timeout=min(timeout, 10.0), set_as_default=False, asynchronous=False
            )
        except (OSError, TimeoutError, ValueError) as exc:
            raise ClusterError(f"cannot reach the Dask scheduler at {address}: {exc}") from None
        try:
            if jobs is None:
                self._client.wait_for_workers(1, timeout=timeout)
        except (OSError, TimeoutError):
            self._client.close()
            raise ClusterError(
                f"no Dask workers joined the scheduler at {address} within {timeout:.0f} s"
            ) from None
        self._lock = threading.Lock()
        self._alive: dict[str, int] = {}  # worker address -> threads
        self._refresh()
        self._size = jobs or max(1, sum(self._alive.values()))
        self._version = code_version()
        self._packages: dict[tuple[str, ...], tuple[BotPackage, bytes | None]] = {}
        self._running: dict[str, _Running] = {}  # match id -> where it plays
        self._order: dict[str, int] = {}  # worker address -> index, in order seen
        self._pids: dict[str, int] = {}
        self._done: dict[str, int] = {}
        self._lost: dict[str, int] = {}  # matches re-run because the worker vanished
        self._client.subscribe_topic(EVENT_TOPIC, self._on_event)

    @property
    def size(self) -> int:
        return self._size

    # -- bookkeeping for the dashboard ----------------------------------------

    def _refresh(self) -> None:
        try:
            info = self._client.scheduler_info(n_workers=-1)
        except TypeError:  # Dask before n_workers= existed returned every worker
            info = self._client.scheduler_info()
        alive = {addr: int(w.get("nthreads", 1)) for addr, w in info.get("workers", {}).items()}
        with self._lock:
            self._alive = alive

    def _index(self, worker: str) -> int:
        return self._order.setdefault(worker, len(self._order))

    def _on_event(self, event: tuple[float, dict[str, Any]]) -> None:
        # Called on the Client's loop thread.
        _ts, msg = event
        if not isinstance(msg, dict):
            return
        with self._lock:
            run = self._running.get(str(msg.get("match")))
            if run is None or run.key != msg.get("key"):
                return  # a stale attempt's announcement
            worker = str(msg.get("worker"))
            if run.worker is not None and run.worker != worker:
                # Dask moved the task: the first worker died (or left) mid-match.
                self._lost[run.worker] = self._lost.get(run.worker, 0) + 1
            run.worker, run.since = worker, time.monotonic()
            self._index(worker)
            if isinstance(msg.get("pid"), int):
                self._pids[worker] = msg["pid"]

    def workers(self) -> list[WorkerInfo]:
        """One row per match slot of each live worker: its match, or idle."""
        with self._lock:
            alive = dict(self._alive)
            by_worker: dict[str, list[tuple[str, float | None]]] = {}
            for mid, run in self._running.items():
                if run.worker is not None and run.worker in alive:
                    by_worker.setdefault(run.worker, []).append((mid, run.since))
            for addr in alive:
                self._index(addr)
            rows = []
            for addr in sorted(alive, key=lambda a: self._order[a]):
                busy = sorted(by_worker.get(addr, []))
                slots: list[tuple[str | None, float | None]] = [*busy]
                slots += [(None, None)] * max(0, alive[addr] - len(busy))
                for job_id, since in slots:
                    rows.append(
                        WorkerInfo(
                            index=self._order[addr],
                            pid=self._pids.get(addr),
                            job=job_id,
                            since=since,
                            done=self._done.get(addr, 0),
                            restarts=self._lost.get(addr, 0),
                        )
                    )
            return rows

    # -- playing ---------------------------------------------------------------

    def _prepare(self, job: Job) -> tuple[list[dict[str, Any]], dict[str, bytes]]:
        bots = []
        archives: dict[str, bytes] = {}
        for b in job.bots:
            argv = tuple(b["command"])
            with self._lock:
                packed = self._packages.get(argv)
            if packed is None:
                packed = package_bot(str(b.get("label") or argv[-1]), argv)
                with self._lock:
                    self._packages[argv] = packed
            pkg, data = packed
            pkg = msgspec.structs.replace(pkg, label=str(b.get("label") or pkg.label))
            bots.append(msgspec.to_builtins(pkg))
            if pkg.archive is not None and data is not None:
                archives[pkg.archive] = data
        return bots, archives

    async def _attempt(
        self, job: Job, bots: list[dict[str, Any]], archives: dict[str, bytes]
    ) -> dict[str, Any]:
        key = f"referee-{job.id}-{uuid.uuid4().hex[:8]}"
        with self._lock:
            self._running[job.id] = _Running(key=key)
        token = trio.lowlevel.current_trio_token()
        done = trio.Event()

        def wake(_future: Any) -> None:
            try:
                token.run_sync_soon(done.set)
            except trio.RunFinishedError:
                pass

        payload = msgspec.to_builtins(job)
        # The archives go with each task rather than through client.scatter: a
        # scattered copy lives only on workers, and losing them would lose the bot;
        # task arguments stay with the scheduler for as long as the task exists.
        future = await trio.to_thread.run_sync(
            lambda: self._client.submit(
                play_on_worker, key, payload, bots, archives, self._version, key=key, pure=False
            )
        )
        try:
            future.add_done_callback(wake)
            await done.wait()
            result: dict[str, Any] = await trio.to_thread.run_sync(future.result)
            return result
        except BaseException:
            if not future.done():
                with trio.CancelScope(shield=True), trio.move_on_after(5):
                    await trio.to_thread.run_sync(future.cancel, abandon_on_cancel=True)
            raise

    async def submit(self, job: Job) -> MatchOutcome:
        try:
            bots, archives = await trio.to_thread.run_sync(self._prepare, job)
        except ClusterError as exc:
            raise MatchFailed(f"match {job.id}: {exc}") from None
        errors: list[str] = []
        try:
            for _attempt in range(MAX_ATTEMPTS):
                try:
                    result = await self._attempt(job, bots, archives)
                except ArchiveError as exc:
                    # Not retried: the same bytes would fail the same way anywhere.
                    raise MatchFailed(f"match {job.id} refused: {exc}") from None
                except self._distributed.KilledWorker as exc:
                    errors.append(f"its workers kept dying ({exc})")
                    continue
                except Exception as exc:  # noqa: BLE001 - CommError, a lost worker, ...
                    errors.append(f"{type(exc).__name__}: {exc}")
                    continue
                worker = str(result.get("worker"))
                with self._lock:
                    self._done[worker] = self._done.get(worker, 0) + 1
                await trio.to_thread.run_sync(self._refresh)
                return await trio.to_thread.run_sync(self._store, job, result)
            raise MatchFailed(
                f"match {job.id} failed {MAX_ATTEMPTS} times on the cluster: {errors[-1]}"
            )
        finally:
            with self._lock:
                self._running.pop(job.id, None)

    def _store(self, job: Job, result: dict[str, Any]) -> MatchOutcome:
        """Write what the worker sent where a local worker would have written it."""
        outcome: MatchOutcome = result["outcome"]
        replay = job.cfg.get("replay")
        if replay and result.get("replay") is not None:
            Path(replay).parent.mkdir(parents=True, exist_ok=True)
            Path(replay).write_bytes(result["replay"])
            outcome.replay = replay
        else:
            outcome.replay = None
        log_dir = job.cfg.get("log_dir")
        if log_dir:
            Path(log_dir).mkdir(parents=True, exist_ok=True)
            for name, data in result.get("logs", {}).items():
                if "/" not in name and not name.startswith("."):
                    (Path(log_dir) / name).write_bytes(data)
        return outcome

    async def spread(self) -> None:
        """Nothing to widen: a cluster's matches are never confined."""

    async def aclose(self) -> None:
        with trio.CancelScope(shield=True):
            await trio.to_thread.run_sync(self._client.close)

    def close(self) -> None:
        """For a caller outside trio (the executor was made but never used)."""
        self._client.close()
