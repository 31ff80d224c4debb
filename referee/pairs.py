"""Paired matches, the shell shared by ``referee sprt`` and ``referee gauntlet``.

A *pair* is two matches between the bot under test and one opponent with the
seats swapped (leg "a": the bot under test in seat 0; leg "b": in seat 1). Both
legs share the pair's match seed, so a game with randomness of its own (the dice
of Liar's Dice) deals the same luck to both; the bots' seeds are drawn afresh for
each leg, because in a symmetric game the same seeds would only replay the first
match mirrored. Pair k plays opponent ``k % len(opponents)``.

Every finished match is appended to ``matches.jsonl`` in the output directory (the
run's configuration is in ``run.json``, replays in ``replays/``). Pairs are fed
to the stopping rule strictly in order of their index, whatever order they
finish in, so a run that is interrupted and resumed (``--resume``) stops at the
same pair with the same result as one that was not. Pairs beyond the stopping
point that happened to finish are kept in the file but never counted.
"""

from __future__ import annotations

import gzip
import math
import os
import shutil
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import msgspec
import trio

from .outcome import MatchOutcome
from .replay import replay_suffix

RUN_FILE = "run.json"
MATCHES_FILE = "matches.jsonl"
LEGS = ("a", "b")


class RunError(Exception):
    """The output directory cannot hold (or does not hold) a run."""


class Side(msgspec.Struct, frozen=True):
    label: str
    argv: list[str]


class PairConfig(msgspec.Struct, frozen=True):
    kind: str  # "sprt" or "gauntlet"
    seed: int
    test: Side
    opponents: list[Side]
    match: dict[str, Any]  # MatchConfig fields (without seed, bot seeds and replay)
    settings: dict[str, Any] = msgspec.field(default_factory=dict)  # the command's own
    replay_format: str = "gz"  # "gz" (.jsonl.gz) or "jsonl": how replays are stored


class MatchRecord(msgspec.Struct, frozen=True):
    pair: int
    leg: str
    opponent: int
    test_seat: int
    winner: int | None  # seat, None for a draw
    test_score: float  # 1 win, 0.5 draw, 0 loss for the bot under test
    scores: list[float]  # the game's ranking score per seat
    faults: list[list[str]]  # fault kinds per seat
    disqualified: list[bool]
    replay: str | None
    wall_s: float


def match_seed(seed: int, pair: int) -> int:
    from .match import derive_seed

    return derive_seed(seed, "pair", pair)


def bot_seeds(seed: int, pair: int, leg: str) -> list[int]:
    from .match import derive_seed

    game = match_seed(seed, pair)
    return [derive_seed(game, "bots", leg, seat) for seat in (0, 1)]


def _ranking_score(scores: dict[str, Any]) -> float:
    if "final" in scores:  # Chaos League's ranking score
        return float(scores["final"])
    return float(next(iter(scores.values()), 0.0))


def record_of(
    pair: int, leg: str, opponent: int, outcome: MatchOutcome, replay: str | None
) -> MatchRecord:
    """What the statistics need from a finished match."""
    test_seat = 0 if leg == "a" else 1
    winner = outcome.winner
    seats = outcome.seats
    return MatchRecord(
        pair=pair,
        leg=leg,
        opponent=opponent,
        test_seat=test_seat,
        winner=winner,
        test_score=0.5 if winner is None else float(winner == test_seat),
        scores=[_ranking_score(s.scores) for s in seats],
        faults=[[f.kind for f in s.verdict.faults] for s in seats],
        disqualified=[bool(s.stats.get("disqualified")) for s in seats],
        replay=replay,
        wall_s=float(outcome.wall_s),
    )


Pair = tuple[MatchRecord, MatchRecord]


class PairSession:
    def __init__(self, out_dir: Path, cfg: PairConfig) -> None:
        self.out_dir = out_dir
        self.cfg = cfg
        self.records: dict[tuple[int, str], MatchRecord] = {}
        # Written under a name unique to this session, renamed once recorded: a
        # worker of a killed run cannot write into a file this run writes.
        self.session = f"{os.getpid()}-{os.urandom(3).hex()}"
        self.prefix: list[Pair] = []  # complete pairs 0..k-1, in order
        self.stopped = False  # the stopping rule said stop at len(prefix)
        self.playing: set[tuple[int, str]] = set()
        self.started = time.monotonic()
        self.replay_suffix = replay_suffix(cfg.replay_format)
        self.loaded_pairs = 0  # pairs a previous session had completed
        self.earlier_wall_s = 0.0  # wall time of the previous sessions (summary.json)

    # -- the directory -----------------------------------------------------------

    @classmethod
    def create(cls, out_dir: Path, cfg: PairConfig) -> PairSession:
        path = out_dir / RUN_FILE
        if path.exists():
            raise RunError(
                f"{path} already exists: use --resume {out_dir} to continue that run, "
                "or choose another --out"
            )
        try:
            (out_dir / "replays").mkdir(parents=True, exist_ok=True)
            path.write_bytes(msgspec.json.format(msgspec.json.encode(cfg)) + b"\n")
            (out_dir / MATCHES_FILE).touch()
        except OSError as exc:
            raise RunError(f"cannot write to {out_dir}: {exc.strerror or exc}") from None
        return cls(out_dir, cfg)

    @classmethod
    def open(cls, out_dir: Path, kind: str) -> PairSession:
        path = out_dir / RUN_FILE
        try:
            cfg = msgspec.json.decode(path.read_bytes(), type=PairConfig)
        except FileNotFoundError:
            raise RunError(f"nothing to resume: {path} does not exist") from None
        except (OSError, msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise RunError(f"{path} is not a run's configuration: {exc}") from None
        if cfg.kind != kind:
            raise RunError(f"{out_dir} holds a {cfg.kind} run, not a {kind} run")
        session = cls(out_dir, cfg)
        try:
            earlier = msgspec.json.decode((out_dir / "summary.json").read_bytes())
            session.earlier_wall_s = float(earlier.get("wall_s", 0.0))
        except (OSError, msgspec.DecodeError, AttributeError, TypeError, ValueError):
            pass  # no summary yet (killed before one was written): counted from here
        decode = msgspec.json.Decoder(MatchRecord).decode
        try:
            with open(out_dir / MATCHES_FILE, "rb") as f:
                for line in f:
                    try:
                        rec = decode(line)
                    except (msgspec.DecodeError, msgspec.ValidationError):
                        continue  # a line cut off by a killed run: that match is replayed
                    session.records[(rec.pair, rec.leg)] = rec
        except FileNotFoundError:
            pass
        return session

    def _append(self, rec: MatchRecord) -> None:
        with open(self.out_dir / MATCHES_FILE, "ab") as f:
            f.write(msgspec.json.encode(rec) + b"\n")
            f.flush()
            os.fsync(f.fileno())

    # -- planning ---------------------------------------------------------------

    def opponent_of(self, pair: int) -> int:
        return pair % len(self.cfg.opponents)

    def job(self, pair: int, leg: str, confine: bool) -> Any:
        from .tournament.worker import Job

        opp = self.cfg.opponents[self.opponent_of(pair)]
        test = {"command": self.cfg.test.argv, "label": self.cfg.test.label}
        other = {"command": opp.argv, "label": opp.label}
        cfg = dict(self.cfg.match)
        cfg["seed"] = match_seed(self.cfg.seed, pair)
        cfg["bot_seeds"] = bot_seeds(self.cfg.seed, pair, leg)
        cfg["replay"] = str(self._replay(pair, leg, part=True))
        cfg["log_dir"] = str(self.out_dir / "logs")
        bots = [test, other] if leg == "a" else [other, test]
        return Job(id=f"pair-{pair + 1:05d}-{leg}", bots=bots, cfg=cfg, confine=confine)

    def _replay(self, pair: int, leg: str, part: bool = False) -> Path:
        stem = f"pair-{pair + 1:05d}-{leg}"
        suffix = self.replay_suffix
        name = f"{stem}.{self.session}.part{suffix}" if part else f"{stem}{suffix}"
        return self.out_dir / "replays" / name

    def _finish_replay(self, outcome: MatchOutcome, pair: int, leg: str) -> str | None:
        produced = outcome.replay
        if not produced or not os.path.exists(produced):
            return None
        final = self._replay(pair, leg)
        with open(produced, "rb") as f:
            compressed = f.read(2) == b"\x1f\x8b"
        if compressed or self.cfg.replay_format != "gz":
            os.replace(produced, final)
        else:  # a cluster worker of an older referee sends its replay back uncompressed
            with open(produced, "rb") as src, gzip.open(final, "wb") as dst:
                shutil.copyfileobj(src, dst)
            os.unlink(produced)
        return os.path.relpath(final, self.out_dir)

    # -- running ----------------------------------------------------------------

    def _advance(self, stop: Callable[[Sequence[Pair]], bool], max_pairs: int) -> None:
        """Feed newly complete pairs to the stopping rule, in order."""
        while not self.stopped:
            k = len(self.prefix)
            if k >= max_pairs:
                self.stopped = True
                return
            a, b = self.records.get((k, "a")), self.records.get((k, "b"))
            if a is None or b is None:
                return
            self.prefix.append((a, b))
            if stop(self.prefix):
                self.stopped = True

    def load(self, stop: Callable[[Sequence[Pair]], bool], max_pairs: int) -> None:
        """Count what a previous session finished (before ``run``)."""
        self.prefix = []
        self.stopped = False
        self._advance(stop, max_pairs)
        self.loaded_pairs = len(self.prefix)

    def remove_parts(self) -> None:
        """Delete replays of matches that never finished (cancelled at the stop,
        or left by a killed run)."""
        for stale in (self.out_dir / "replays").glob("*.part.jsonl*"):
            stale.unlink(missing_ok=True)

    async def run(
        self,
        executor: Any,
        stop: Callable[[Sequence[Pair]], bool],
        max_pairs: int,
        on_match: Callable[[MatchRecord], None] | None = None,
    ) -> None:
        """Play pairs until ``stop(prefix)`` says so or ``max_pairs`` are complete."""
        self.load(stop, max_pairs)
        if self.stopped:
            return
        self.remove_parts()
        (self.out_dir / "logs").mkdir(parents=True, exist_ok=True)
        # Pairs in flight: enough to keep every worker busy while a pair's second
        # leg waits, few enough that little is played past the stopping point.
        limiter = trio.Semaphore(max(1, executor.size))

        async def play(pair: int, leg: str) -> None:
            confine = len(self.playing) >= executor.size
            try:
                outcome = await executor.submit(self.job(pair, leg, confine))
            finally:
                self.playing.discard((pair, leg))
            replay = self._finish_replay(outcome, pair, leg)
            rec = record_of(pair, leg, self.opponent_of(pair), outcome, replay)
            self._append(rec)
            self.records[(pair, leg)] = rec
            if on_match is not None:
                on_match(rec)
            self._advance(stop, max_pairs)
            if self.stopped:
                nursery.cancel_scope.cancel()
            elif len(self.playing) < executor.size:
                await executor.spread()

        async def play_pair(pair: int) -> None:
            try:
                async with trio.open_nursery() as legs:
                    for leg in LEGS:
                        if (pair, leg) not in self.records:
                            self.playing.add((pair, leg))
                            legs.start_soon(play, pair, leg)
            finally:
                limiter.release()

        async with trio.open_nursery() as nursery:
            for pair in range(len(self.prefix), max_pairs):
                if self.stopped:
                    break
                if all((pair, leg) in self.records for leg in LEGS):
                    continue
                await limiter.acquire()
                if self.stopped:
                    break
                nursery.start_soon(play_pair, pair)
        self._advance(stop, max_pairs)


def label_of(text: str, argv: Sequence[str]) -> str:
    """A short name for a bot given as a name, a path or a command line: the name,
    else the last path-like word without its suffix (``python3 x/iocaine.py
    --noise 0.1`` is ``iocaine``)."""
    if "/" not in text and " " not in text:
        return text
    for word in reversed(argv):
        if "/" in word or "." in Path(word).name:
            name = Path(word).name
            for suffix in (".py", ".js", ".rs", ".c"):
                name = name.removesuffix(suffix)
            if name and not name.replace(".", "").isdigit():
                return name
    return Path(argv[-1]).name


def distinct_labels(labels: Sequence[str], tags: Sequence[str]) -> list[str]:
    """The labels, each with its tag appended if two are equal."""
    if len(set(labels)) == len(labels):
        return list(labels)
    return [f"{lab}-{tag}" for lab, tag in zip(labels, tags, strict=True)]


def make_executor(jobs: int, out_dir: Path, cluster: str | None, pin_cpus: bool) -> Any:
    """The tournament's worker pool (or its Dask executor for ``--cluster``)."""
    if cluster:
        from .tournament.cluster import ClusterError, DaskExecutor

        try:
            return DaskExecutor(cluster, jobs)
        except ClusterError as exc:
            raise RunError(str(exc)) from None
    from .tournament.executor import ProcessExecutor

    return ProcessExecutor(jobs, out_dir / "logs", share_cpus=pin_cpus)


def elapsed(session: PairSession) -> float:
    return time.monotonic() - session.started


def finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


# -- command-line pieces shared by sprt and gauntlet ---------------------------

# Options that change results: refused with --resume, which always continues the
# run exactly as it was configured.
RESULT_OPTIONS = (
    "game",
    "classic",
    "rounds",
    "tokens",
    "param",
    "seed",
    "out",
    "move_timeout",
    "handshake_timeout",
    "time_bank",
    "max_faults",
    "sandbox",
    "memory_mib",
    "cpu_s",
)


def add_match_options(p: Any) -> None:
    """The options of ``referee match`` that make sense for many matches."""
    from .options import (
        add_limit_arguments,
        add_replay_format_argument,
        nonneg_int,
        positive_int,
    )

    p.add_argument("--game", default=None, help="chaos (default), roshambo, or another game")
    p.add_argument("--classic", action="store_true", help="same as --game roshambo")
    p.add_argument(
        "--rounds",
        type=positive_int,
        metavar="N",
        help="rounds per match (default: the game's; sprt: 1000 in Chaos League)",
    )
    p.add_argument("--tokens", type=nonneg_int, metavar="N", help="deception tokens per bot")
    p.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a game parameter (repeatable)",
    )
    p.add_argument(
        "--seed",
        type=nonneg_int,
        metavar="S",
        help="the run's seed; every match seed derives from it (default random)",
    )
    p.add_argument(
        "-j",
        "--jobs",
        type=positive_int,
        metavar="N",
        help="matches in parallel (default: the CPUs this process may use)",
    )
    p.add_argument(
        "--cluster",
        metavar="tcp://HOST:PORT",
        help="play the matches on this Dask scheduler's workers (docs/cluster.md)",
    )
    p.add_argument(
        "--no-pin-cpus",
        action="store_true",
        help="let the kernel place every match's processes (speed only)",
    )
    p.add_argument("--out", metavar="DIR", help="output directory (default <command>/<time>)")
    p.add_argument("--resume", metavar="DIR", help="continue the interrupted run in DIR")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.add_argument("--quiet", "-q", action="store_true", help="no live display")
    add_limit_arguments(p)
    add_replay_format_argument(p)


def refuse_with_resume(args: Any, extra: Sequence[str] = ()) -> None:
    from .errors import CliError

    given = [
        o for o in (*RESULT_OPTIONS, *extra) if getattr(args, o, None) not in (None, False, [])
    ]
    if given:
        opts = ", ".join("--" + o.replace("_", "-") for o in given)
        raise CliError(f"--resume continues the run as configured; drop {opts}")


def match_settings(args: Any) -> dict[str, Any]:
    """The MatchConfig fields every match of the run shares, checked by building
    the game once (a bad game or parameter is a usage error before anything runs)."""
    from .errors import CliError, UsageError
    from .match import MatchConfig, make_game
    from .options import limit_overrides, parse_params, sandbox_limits
    from .tournament.command import idle_poll_for

    game = "roshambo" if args.classic else (args.game or "chaos")
    jobs = args.jobs or len(os.sched_getaffinity(0)) or 1
    cfg = MatchConfig(
        game=game,
        params=parse_params(args.param),
        rounds=args.rounds,
        tokens=args.tokens,
        limits=sandbox_limits(args),
        idle_poll=idle_poll_for(jobs, bool(args.cluster)),
        **limit_overrides(args),
    )
    try:
        g = make_game(cfg, 2)
    except UsageError as exc:
        raise CliError(str(exc)) from None
    if getattr(g, "seats", 2) != 2:
        raise CliError(f"paired matches are for two-player games; {game} is not")
    out: dict[str, Any] = msgspec.to_builtins(cfg)
    for key in ("seed", "bot_seeds", "replay", "log_dir"):
        out.pop(key, None)
    return out


def resolve_side(text: str) -> tuple[list[str], str]:
    from .bot_command import resolve_command
    from .errors import CliError, UsageError

    try:
        argv = resolve_command(text)
    except UsageError as exc:
        raise CliError(str(exc)) from None
    return argv, label_of(text, argv)


def check_containment(sandbox: str | None, quiet: bool) -> None:
    import sys

    from . import sandbox as sbx
    from .errors import CliError

    try:
        layer = sbx.choose_layer(sandbox or "auto")
    except (sbx.SandboxError, ValueError) as exc:
        raise CliError(f"containment: {exc}") from None
    if layer.warning and not quiet:
        print(f"referee: warning: {layer.warning}", file=sys.stderr)


def open_session(
    args: Any,
    kind: str,
    settings: Sequence[str],
    start: Callable[[Any], PairSession],
    bots_word: str,
) -> PairSession:
    """The run ``--resume`` names (refusing the options that would change it, and
    checking its containment is still to be had), or a new one from ``start``."""
    from .errors import CliError

    if not args.resume:
        return start(args)
    if args.bots:
        raise CliError(f"--resume continues the run as configured; drop the {bots_word}")
    refuse_with_resume(args, settings)
    try:
        session = PairSession.open(Path(args.resume), kind)
    except RunError as exc:
        raise CliError(str(exc)) from None
    if args.replay_format:  # how the rest is stored; results do not depend on it
        session.replay_suffix = replay_suffix(args.replay_format)
    check_containment(session.cfg.match.get("sandbox"), args.quiet or args.json)
    return session


def default_out(kind: str) -> Path:
    return Path(kind) / time.strftime("%Y%m%d-%H%M%S")


def run_session(
    session: PairSession,
    args: Any,
    stop: Callable[[Sequence[Pair]], bool],
    max_pairs: int,
    render: Callable[[], Any] | None,
    on_match: Callable[[MatchRecord], None] | None = None,
) -> None:
    """Play the session with the tournament's executor, drawing ``render()`` live
    (on a terminal, unless quiet). Raises KeyboardInterrupt or RunError."""
    from .tournament.executor import MatchFailed

    jobs = args.jobs or len(os.sched_getaffinity(0)) or 1
    executor = make_executor(jobs, session.out_dir, args.cluster, not args.no_pin_cpus)

    async def main() -> None:
        try:
            async with trio.open_nursery() as nursery:
                if render is not None:
                    nursery.start_soon(_live, render)
                await session.run(executor, stop, max_pairs, on_match)
                nursery.cancel_scope.cancel()
        finally:
            await executor.aclose()
            session.remove_parts()  # the matches cancelled at the stop

    try:
        trio.run(main)
    except BaseException as exc:
        found = _flatten(exc)
        if any(isinstance(e, KeyboardInterrupt) for e in found):
            raise KeyboardInterrupt from None
        failed = [e for e in found if isinstance(e, MatchFailed)]
        if failed:
            raise RunError(str(failed[0])) from None
        raise


async def _live(render: Callable[[], Any]) -> None:
    from rich.live import Live

    from .terminal import output_console

    console = output_console(stderr=True)
    with Live(render(), console=console, refresh_per_second=4, transient=False) as live:
        while True:
            await trio.sleep(0.25)
            live.update(render())


def _flatten(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        return [e for sub in exc.exceptions for e in _flatten(sub)]
    return [exc]
