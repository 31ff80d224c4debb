"""``referee gauntlet BOT``: a rating on the fixed scale of a reference pool.

BOT plays paired matches (seats swapped) against every bot of the pool in turn;
the pool's ratings were computed once and are stored with the project
(``referee/pools/<game>.json``, made by ``tools/pool_ratings.py``), so the
rating of one competitor's bot is comparable with another's. The rating and its
95% interval come from ``referee.stats.rating.rate_against_pool``
(docs/statistics.md). A gauntlet plays whole rounds (one pair against every
opponent) so that every opponent weighs the same; with ``--precision E`` it stops
after the first round whose interval is narrower than E Elo.

Exit codes: 0 done, 1 a match could not be played, 2 usage, 130 interrupted.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec

from .errors import EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_OK, CliError
from .options import positive_float, positive_int
from .pairs import (
    Pair,
    PairConfig,
    PairSession,
    RunError,
    Side,
    add_match_options,
    check_containment,
    default_out,
    match_settings,
    open_session,
    resolve_side,
    run_session,
)
from .replay import DEFAULT_LEAGUE_FORMAT
from .stats.rating import rate_against_pool

POOLS_DIR = Path(__file__).resolve().parent / "pools"
DEFAULT_ROUNDS = 2  # pairs against each opponent without --precision
MAX_ROUNDS = 20  # with --precision, unless --max-rounds says otherwise


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("bots", nargs="*", metavar="BOT", help="the bot to rate")
    g = p.add_argument_group("gauntlet")
    g.add_argument(
        "--pool",
        nargs="+",
        metavar="NAME",
        help="play only these bots of the stored pool (default: all of them)",
    )
    g.add_argument(
        "--pool-file",
        metavar="JSON",
        help="a pool's stored ratings (default referee/pools/<game>.json; "
        "tools/pool_ratings.py makes one)",
    )
    g.add_argument(
        "--precision",
        type=positive_float,
        metavar="ELO",
        help="stop after the first round whose 95%% interval is narrower than ELO",
    )
    g.add_argument(
        "--max-rounds",
        type=positive_int,
        metavar="N",
        help=f"pairs against each opponent at most (default {DEFAULT_ROUNDS}; "
        f"{MAX_ROUNDS} with --precision)",
    )
    add_match_options(p)


class PoolBot(msgspec.Struct):
    elo: float
    games: int = 0


class Pool(msgspec.Struct):
    game: str
    rounds: int
    bots: dict[str, PoolBot]
    prior_share: float = 0.0
    scale: str = ""
    produced: dict[str, Any] = msgspec.field(default_factory=dict)


def load_pool(path: Path) -> Pool:
    try:
        return msgspec.json.decode(path.read_bytes(), type=Pool)
    except FileNotFoundError:
        raise CliError(f"no stored pool ratings: {path} does not exist") from None
    except (OSError, msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise CliError(f"{path} is not a pool ratings file: {exc}") from None


class OpponentRow(msgspec.Struct):
    name: str
    pool_elo: float
    pairs: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0
    score: float = 0.0  # mean score of BOT (1 win, 0.5 draw)
    mean_diff: float = 0.0  # mean ranking-score difference, BOT minus opponent


class Summary(msgspec.Struct):
    bot: str
    game: str
    pool: str
    elo: float | None
    elo_low: float | None
    elo_high: float | None
    games: int
    rounds: int  # complete rounds (pairs against every opponent)
    opponents: list[OpponentRow]
    faults: dict[str, int]  # BOT's faults by kind
    line: str
    complete: bool = False
    wall_s: float = 0.0


def summarize(
    prefix: Sequence[Pair], cfg: PairConfig, precision: float | None, max_rounds: int
) -> Summary:
    ratings = cfg.settings["ratings"]
    rows = [
        OpponentRow(name=o.label, pool_elo=r) for o, r in zip(cfg.opponents, ratings, strict=True)
    ]
    diffs = [0.0] * len(rows)
    opps: list[float] = []
    scores: list[float] = []
    faults: Counter[str] = Counter()
    for pair in prefix:
        row = rows[pair[0].opponent]
        row.pairs += 1
        for rec in pair:
            opps.append(row.pool_elo)
            scores.append(rec.test_score)
            row.wins += rec.test_score == 1.0
            row.losses += rec.test_score == 0.0
            row.draws += rec.test_score == 0.5
            diffs[rec.opponent] += rec.scores[rec.test_seat] - rec.scores[1 - rec.test_seat]
            faults.update(rec.faults[rec.test_seat])
    for k, row in enumerate(rows):
        if row.pairs:
            row.score = round((row.wins + 0.5 * row.draws) / (2 * row.pairs), 4)
            row.mean_diff = round(diffs[k] / (2 * row.pairs), 6)
    rounds = len(prefix) // len(rows)
    bot, pool = cfg.test.label, cfg.settings["pool"]
    elo: float | None = None
    low: float | None = None
    high: float | None = None
    line = f"{bot}: no matches played yet"
    if scores:
        est = rate_against_pool(opps, scores)
        elo, low, high = round(est.elo, 1), round(est.low, 1), round(est.high, 1)
        line = (
            f"{bot}: {elo:+.1f} Elo (95% {low:+.1f} to {high:+.1f}) on the {pool} pool's "
            f"scale, {len(scores)} matches"
        )
    done = rounds >= max_rounds or (
        precision is not None and low is not None and high is not None and high - low < precision
    )
    return Summary(
        bot=bot,
        game=str(cfg.match.get("game")),
        pool=pool,
        elo=elo,
        elo_low=low,
        elo_high=high,
        games=len(scores),
        rounds=rounds,
        opponents=rows,
        faults=dict(sorted(faults.items())),
        line=line,
        complete=done and len(prefix) % len(rows) == 0,
    )


def _start(args: argparse.Namespace) -> PairSession:
    from .catalog import lookup_sample_bot
    from .match import random_seed

    if len(args.bots) != 1:
        raise CliError("give one bot to rate")
    argv, label = resolve_side(args.bots[0])
    settings = match_settings(args)
    game = settings["game"]
    pool_path = Path(args.pool_file) if args.pool_file else POOLS_DIR / f"{game}.json"
    pool = load_pool(pool_path)
    if pool.game != game:
        raise CliError(f"{pool_path} rates {pool.game} bots, not {game}")
    if settings.get("rounds") is None:
        settings["rounds"] = pool.rounds
    elif settings["rounds"] != pool.rounds and not args.quiet:
        print(
            f"referee gauntlet: warning: the pool was rated with {pool.rounds}-round matches; "
            f"a rating from {settings['rounds']}-round matches is not on its scale",
            file=sys.stderr,
        )
    names = args.pool or list(pool.bots)
    unknown = [n for n in names if n not in pool.bots]
    if unknown:
        raise CliError(f"not in the pool ({pool_path}): {', '.join(unknown)}")
    opponents, ratings = [], []
    for name in names:
        opp_argv = lookup_sample_bot(name)
        if opp_argv is None:
            raise CliError(f"pool bot {name!r} is not a sample bot here")
        if opp_argv == argv:
            continue  # a pool bot is not rated against itself
        opponents.append(Side(label=name, argv=opp_argv))
        ratings.append(pool.bots[name].elo)
    if not opponents:
        raise CliError("no opponents left in the pool")
    if label in {o.label for o in opponents}:
        label = f"{label}-test"
    check_containment(settings.get("sandbox"), args.quiet or args.json)
    cfg = PairConfig(
        kind="gauntlet",
        replay_format=args.replay_format or DEFAULT_LEAGUE_FORMAT,
        seed=args.seed if args.seed is not None else random_seed(),
        test=Side(label=label, argv=argv),
        opponents=opponents,
        match=settings,
        settings={
            "pool": game if not args.pool_file else pool_path.stem,
            "ratings": ratings,
            "precision": args.precision,
            "max_rounds": args.max_rounds or (MAX_ROUNDS if args.precision else DEFAULT_ROUNDS),
        },
    )
    try:
        return PairSession.create(Path(args.out) if args.out else default_out("gauntlet"), cfg)
    except RunError as exc:
        raise CliError(str(exc)) from None


def run(args: argparse.Namespace) -> int:
    session = open_session(
        args, "gauntlet", ("pool", "pool_file", "precision", "max_rounds"), _start, "BOT argument"
    )
    cfg = session.cfg
    precision = cfg.settings.get("precision")
    max_rounds = int(cfg.settings["max_rounds"])
    n_opp = len(cfg.opponents)

    def stop(prefix: Sequence[Pair]) -> bool:
        if len(prefix) % n_opp or precision is None:
            return False  # only whole rounds; without --precision, max_rounds decides
        return summarize(prefix, cfg, precision, max_rounds).complete

    show = not args.quiet and not args.json
    from .terminal import output_console

    err = output_console(stderr=True)
    live = show and err.is_terminal
    if show:
        err.print(
            f"gauntlet: {cfg.test.label} against {n_opp} bots of the {cfg.settings['pool']} "
            f"pool, up to {max_rounds} pairs each"
            + (f", until the interval is narrower than {precision:g} Elo" if precision else "")
            + f", seed {cfg.seed}, output {session.out_dir}",
            highlight=False,
        )

    def render() -> Any:
        return _table(summarize(session.prefix, cfg, precision, max_rounds), session)

    try:
        run_session(session, args, stop, max_rounds * n_opp, render if live else None)
    except KeyboardInterrupt:
        print(
            f"referee gauntlet: interrupted after {len(session.prefix)} pairs; "
            f"resume with: referee gauntlet --resume {session.out_dir}",
            file=sys.stderr,
        )
        _write_summary(session, precision, max_rounds)
        return EXIT_INTERRUPTED
    except RunError as exc:
        _write_summary(session, precision, max_rounds)
        raise CliError(
            f"{exc}; resume with: referee gauntlet --resume {session.out_dir}", EXIT_INTERNAL
        ) from None
    summary = _write_summary(session, precision, max_rounds)
    if args.json:
        sys.stdout.write(msgspec.json.encode(summary).decode() + "\n")
        return EXIT_OK
    if show:
        from .terminal import output_console

        output_console().print(_table(summary, session))
        if summary.faults:
            err.print(f"faults of {summary.bot}: {summary.faults}", highlight=False)
        err.print(f"replays and summary.json in {session.out_dir}/", highlight=False)
    print(summary.line)
    return EXIT_OK


def _write_summary(session: PairSession, precision: float | None, max_rounds: int) -> Summary:
    from .pairs import elapsed

    summary = summarize(session.prefix, session.cfg, precision, max_rounds)
    summary.wall_s = round(session.earlier_wall_s + elapsed(session), 1)
    path = session.out_dir / "summary.json"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(msgspec.to_builtins(summary), indent=1) + "\n")
    tmp.replace(path)
    return summary


def _table(s: Summary, session: PairSession) -> Any:
    from rich.table import Table

    t = Table(title=s.line)
    for col in ("opponent", "pool Elo", "pairs", "W-D-L", "score", "mean diff"):
        t.add_column(col, justify="left" if col == "opponent" else "right")
    for row in s.opponents:
        t.add_row(
            row.name,
            f"{row.pool_elo:+.1f}",
            str(row.pairs),
            f"{row.wins}-{row.draws}-{row.losses}",
            f"{row.score:.3f}" if row.pairs else "",
            f"{row.mean_diff:+.4f}" if row.pairs else "",
        )
    return t
