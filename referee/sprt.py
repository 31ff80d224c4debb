"""``referee sprt NEW OLD``: is NEW stronger than OLD? A sequential probability
ratio test over pairs of matches with the seats swapped (docs/statistics.md).

Exit codes: 0 a verdict or the pair limit was reached (the verdict is in the
last line and in summary.json), 1 a match could not be played, 2 usage, 130
interrupted (``--resume DIR`` continues).
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec

from .errors import EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_OK, CliError
from .options import positive_int
from .pairs import (
    Pair,
    PairConfig,
    PairSession,
    RunError,
    Side,
    add_match_options,
    check_containment,
    default_out,
    distinct_labels,
    elapsed,
    match_settings,
    open_session,
    resolve_side,
    run_session,
)
from .replay import DEFAULT_LEAGUE_FORMAT
from .stats.elo import Penta, elo_estimate, los, normalized_elo, pair_sigma, pairing_ratio
from .stats.sequential import estimate_after_stop, expected_pairs
from .stats.sprt import ELO_MODELS, SprtParams, bounds, decision

# Normalised Elo [0, 20]: the same expected number of pairs in every game, whatever
# its draw rate (about 800 if NEW is 0 or 20 nElo better, 1,300 halfway between).
# In a game without draws (Chaos League) 1 nElo is about 1 logistic Elo near 0.
DEFAULTS = SprtParams()
# Worst case (halfway between the bounds) about 1,300 pairs; 6,000 leaves almost
# no test undecided (docs/statistics.md, simulated).
DEFAULT_MAX_PAIRS = 6000
# Match length of a test where the game's own default is long: a Chaos League
# match of 10,000 rounds takes about 9.5 s on this kind of machine, one of 1,000
# about 2 s a pair with two CPUs, so a test of 800-1,300 pairs fits in an hour.
SPRT_ROUNDS = {"chaos": 1000}
PLAN_AFTER = 10  # pairs measured before the expected length is printed


def _probability(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0.0 < value < 0.5:
        raise argparse.ArgumentTypeError(f"must be between 0 and 0.5: {text!r}")
    return value


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("bots", nargs="*", metavar="BOT", help="NEW and OLD: names, paths or commands")
    g = p.add_argument_group("test")
    g.add_argument(
        "--elo0",
        type=_number,
        help=f"difference of H0 in --elo-model units (default {DEFAULTS.elo0:g})",
    )
    g.add_argument(
        "--elo1",
        type=_number,
        help=f"difference of H1 in --elo-model units (default {DEFAULTS.elo1:g})",
    )
    g.add_argument(
        "--elo-model",
        choices=ELO_MODELS,
        help="the unit of --elo0/--elo1: normalized (nElo, fishtest's; default) or logistic",
    )
    g.add_argument("--alpha", type=_probability, help=f"false H1 rate (default {DEFAULTS.alpha:g})")
    g.add_argument("--beta", type=_probability, help=f"false H0 rate (default {DEFAULTS.beta:g})")
    g.add_argument(
        "--max-pairs",
        type=positive_int,
        metavar="N",
        help=f"stop undecided after N pairs (default {DEFAULT_MAX_PAIRS})",
    )
    add_match_options(p)


class SeatResults(msgspec.Struct):
    """NEW's wins, draws and losses in one seat."""

    wins: int = 0
    draws: int = 0
    losses: int = 0


class Summary(msgspec.Struct):
    """The test's state after its counted pairs (summary.json)."""

    new: str
    old: str
    elo0: float
    elo1: float
    elo_model: str  # the unit of elo0/elo1: "normalized" (nElo) or "logistic"
    alpha: float
    beta: float
    pairs: int
    pentanomial: list[int]
    wins: int
    draws: int
    losses: int
    draw_ratio: float
    seats: list[SeatResults]  # NEW's results in seat 0 and in seat 1
    llr: float
    llr_lower: float
    llr_upper: float
    llr_progress: float  # percent of the way to the bound the LLR heads for
    elo: float  # logistic Elo with its 95% interval (the prior of docs/statistics.md)
    elo_low: float
    elo_high: float
    elo_clipped: bool  # an end is the search's limit, not the data's
    nelo: float  # normalised Elo with its 95% interval
    nelo_low: float
    nelo_high: float
    los: float  # likelihood of superiority
    pairing_ratio: float | None
    verdict: str | None  # "H0", "H1" or None (undecided)
    # After a verdict: the estimate corrected for the stop (median unbiased), logistic Elo.
    elo_stopped: float | None
    elo_stopped_low: float | None
    elo_stopped_high: float | None
    elo_stopped_corrected: bool | None  # False: far outside the bounds, the plain estimate
    # The expected pairs to a verdict (if NEW is elo0, elo1 or halfway), from the
    # counts' spread; and the measured wall time per pair of this session.
    expected_pairs: dict[str, int] | None
    pair_s: float | None
    faults: dict[str, dict[str, int]]  # bot label -> fault kind -> count
    line: str
    complete: bool = False
    wall_s: float = 0.0


def _unit(params: SprtParams) -> str:
    return "nElo" if params.elo_model == "normalized" else "Elo"


def _interval(low: float, high: float) -> str:
    return f"[{low:+.1f}, {high:+.1f}]"


def summarize(
    prefix: Sequence[Pair], params: SprtParams, labels: tuple[str, str], max_pairs: int
) -> Summary:
    penta = Penta()
    seats = [SeatResults(), SeatResults()]
    faults: dict[str, Counter[str]] = {labels[0]: Counter(), labels[1]: Counter()}
    for a, b in prefix:
        penta.add_pair(a.test_score, b.test_score)
        for rec in (a, b):
            seat = seats[rec.test_seat]
            seat.wins += rec.test_score == 1.0
            seat.draws += rec.test_score == 0.5
            seat.losses += rec.test_score == 0.0
            for s, kinds in enumerate(rec.faults):
                faults[labels[0] if s == rec.test_seat else labels[1]].update(kinds)
    verdict, value = decision(penta.counts, params)
    lower, upper = bounds(params.alpha, params.beta)
    est = elo_estimate(penta.counts)
    sigma = pair_sigma(penta.counts)
    from .stats.elo import expected_score

    nelo = [normalized_elo(expected_score(x), sigma) for x in (est.elo, est.low, est.high)]
    stopped = estimate_after_stop(penta.counts, params) if verdict else None
    plan = expected_pairs(penta.counts, params) if penta.pairs >= PLAN_AFTER else None
    n = penta.pairs
    games = 2 * n
    new, old = labels
    unit = _unit(params)
    test = f"elo0 {params.elo0:g}, elo1 {params.elo1:g} {unit}"
    figures = f"{est.elo:+.1f} Elo, 95% {_interval(est.low, est.high)}"
    if est.clipped:
        figures += " (an end is the search's limit)"
    if stopped is not None and stopped.corrected:
        figures += (
            f"; corrected for the stop {stopped.elo:+.1f} {_interval(stopped.low, stopped.high)}"
        )
    figures += f"; LLR {value:.2f} in [{lower:.2f}, {upper:.2f}] for {test}; {n} pairs"
    if verdict == "H1":
        line = f"H1 accepted: {new} is stronger ({figures})"
    elif verdict == "H0":
        line = f"H0 accepted: {new} is not {params.elo1:g} {unit} stronger than {old} ({figures})"
    else:
        line = f"no decision yet ({figures})"
    heading = upper if value >= 0 else lower
    return Summary(
        new=new,
        old=old,
        elo0=params.elo0,
        elo1=params.elo1,
        elo_model=params.elo_model,
        alpha=params.alpha,
        beta=params.beta,
        pairs=n,
        pentanomial=list(penta.counts),
        wins=penta.wins,
        draws=penta.draws,
        losses=penta.losses,
        draw_ratio=round(penta.draws / games, 4) if games else 0.0,
        seats=seats,
        llr=round(value, 4),
        llr_lower=round(lower, 4),
        llr_upper=round(upper, 4),
        llr_progress=round(100.0 * value / heading, 1),
        elo=round(est.elo, 2),
        elo_low=round(est.low, 2),
        elo_high=round(est.high, 2),
        elo_clipped=est.clipped,
        nelo=round(nelo[0], 2),
        nelo_low=round(nelo[1], 2),
        nelo_high=round(nelo[2], 2),
        los=round(los(penta.counts), 4),
        pairing_ratio=None if (r := pairing_ratio(penta)) is None else round(r, 4),
        verdict=verdict,
        elo_stopped=None if stopped is None else round(stopped.elo, 2),
        elo_stopped_low=None if stopped is None else round(stopped.low, 2),
        elo_stopped_high=None if stopped is None else round(stopped.high, 2),
        elo_stopped_corrected=None if stopped is None else stopped.corrected,
        expected_pairs=None
        if plan is None
        else {
            "elo0": round(plan.pairs_at_elo0),
            "elo1": round(plan.pairs_at_elo1),
            "halfway": round(plan.pairs_worst),
        },
        pair_s=None,
        faults={k: dict(sorted(v.items())) for k, v in faults.items()},
        line=line,
        complete=verdict is not None or n >= max_pairs,
    )


def _params(args: argparse.Namespace) -> SprtParams:
    p = SprtParams(
        elo0=DEFAULTS.elo0 if args.elo0 is None else args.elo0,
        elo1=DEFAULTS.elo1 if args.elo1 is None else args.elo1,
        alpha=DEFAULTS.alpha if args.alpha is None else args.alpha,
        beta=DEFAULTS.beta if args.beta is None else args.beta,
        elo_model=DEFAULTS.elo_model if args.elo_model is None else args.elo_model,
    )
    if not p.elo1 > p.elo0:
        raise CliError(f"--elo1 must be above --elo0 (got {p.elo0:g} and {p.elo1:g})")
    return p


def _start(args: argparse.Namespace) -> PairSession:
    from .match import random_seed

    if len(args.bots) != 2:
        raise CliError("give two bots: NEW OLD")
    params = _params(args)
    (new_argv, new_label), (old_argv, old_label) = (resolve_side(t) for t in args.bots)
    new_label, old_label = distinct_labels([new_label, old_label], ["new", "old"])
    settings = match_settings(args)
    if settings.get("rounds") is None and settings["game"] in SPRT_ROUNDS:
        settings["rounds"] = SPRT_ROUNDS[settings["game"]]
    check_containment(settings.get("sandbox"), args.quiet or args.json)
    cfg = PairConfig(
        kind="sprt",
        replay_format=args.replay_format or DEFAULT_LEAGUE_FORMAT,
        seed=args.seed if args.seed is not None else random_seed(),
        test=Side(label=new_label, argv=new_argv),
        opponents=[Side(label=old_label, argv=old_argv)],
        match=settings,
        settings={
            **msgspec.to_builtins(params),
            "max_pairs": args.max_pairs or DEFAULT_MAX_PAIRS,
        },
    )
    try:
        return PairSession.create(Path(args.out) if args.out else default_out("sprt"), cfg)
    except RunError as exc:
        raise CliError(str(exc)) from None


def run(args: argparse.Namespace) -> int:
    session = open_session(
        args,
        "sprt",
        ("elo0", "elo1", "elo_model", "alpha", "beta", "max_pairs"),
        _start,
        "BOT arguments",
    )
    cfg = session.cfg
    # A run made before the option existed had logistic bounds.
    stored = {"elo_model": "logistic"} | {k: v for k, v in cfg.settings.items() if k != "max_pairs"}
    params = msgspec.convert(stored, SprtParams)
    max_pairs = int(cfg.settings["max_pairs"])
    labels = (cfg.test.label, cfg.opponents[0].label)

    def stop(prefix: Sequence[Pair]) -> bool:
        return decision(_counts(prefix), params)[0] is not None

    show = not args.quiet and not args.json
    from .terminal import output_console

    err = output_console(stderr=True)
    live = show and err.is_terminal
    if show:
        err.print(
            f"sprt: {labels[0]} (new) against {labels[1]} (old), H0 {params.elo0:g} "
            f"{_unit(params)}, H1 {params.elo1:g} {_unit(params)}, "
            f"{cfg.match.get('rounds') or 'default'} rounds, alpha {params.alpha:g}, beta {params.beta:g}, "
            f"seed {cfg.seed}, output {session.out_dir}",
            highlight=False,
        )

    planned = [False]

    def current() -> Summary:
        s = summarize(session.prefix, params, labels, max_pairs)
        played = len(session.prefix) - session.loaded_pairs
        if played > 0:
            s.pair_s = round(elapsed(session) / played, 2)
        return s

    def render() -> Any:
        return _panel(current(), session)

    last_shown = [0]

    def on_match(_rec: Any) -> None:
        n = len(session.prefix)
        if show and not planned[0] and n >= PLAN_AFTER:
            planned[0] = True
            err.print(_plan_line(current()), highlight=False)
        # Without a terminal: a progress line every few pairs.
        if show and not live and n >= last_shown[0] + 10:
            last_shown[0] = n
            err.print(current().line, highlight=False)

    try:
        run_session(session, args, stop, max_pairs, render if live else None, on_match)
    except KeyboardInterrupt:
        print(
            f"referee sprt: interrupted after {len(session.prefix)} pairs; "
            f"resume with: referee sprt --resume {session.out_dir}",
            file=sys.stderr,
        )
        _write_summary(session, params, labels, max_pairs)
        return EXIT_INTERRUPTED
    except RunError as exc:
        _write_summary(session, params, labels, max_pairs)
        raise CliError(
            f"{exc}; resume with: referee sprt --resume {session.out_dir}", EXIT_INTERNAL
        ) from None
    summary = _write_summary(session, params, labels, max_pairs)
    if args.json:
        sys.stdout.write(msgspec.json.encode(summary).decode() + "\n")
    else:
        if show:
            for label, kinds in summary.faults.items():
                if kinds:
                    err.print(f"faults: {label}: {kinds}", highlight=False)
            err.print(f"replays and summary.json in {session.out_dir}/", highlight=False)
        print(summary.line)
    return EXIT_OK


def _counts(prefix: Sequence[Pair]) -> list[int]:
    counts = [0] * 5
    for a, b in prefix:
        counts[round(2 * (a.test_score + b.test_score))] += 1
    return counts


def _plan_line(s: Summary) -> str:
    plan = s.expected_pairs
    if plan is None:
        return f"plan: no spread in the first {s.pairs} pairs yet; no estimate of the length"
    text = (
        f"plan: about {plan['elo1']} pairs expected if {s.new} is {s.elo1:g} "
        f"{'nElo' if s.elo_model == 'normalized' else 'Elo'} better, {plan['elo0']} if "
        f"{s.elo0:g}, {plan['halfway']} halfway (draw ratio {s.draw_ratio:.2f}, "
        f"from the first {s.pairs} pairs)"
    )
    if s.pair_s:
        text += (
            f"; at {s.pair_s:.1f} s a pair about {plan['elo1'] * s.pair_s / 60:.0f}, "
            f"{plan['elo0'] * s.pair_s / 60:.0f} and {plan['halfway'] * s.pair_s / 60:.0f} min"
        )
    return text


def _write_summary(
    session: PairSession, params: SprtParams, labels: tuple[str, str], max_pairs: int
) -> Summary:
    summary = summarize(session.prefix, params, labels, max_pairs)
    summary.wall_s = round(session.earlier_wall_s + elapsed(session), 1)
    played = len(session.prefix) - session.loaded_pairs
    if played > 0:
        summary.pair_s = round(elapsed(session) / played, 2)
    path = session.out_dir / "summary.json"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_bytes(msgspec.json.format(msgspec.json.encode(summary)) + b"\n")
    tmp.replace(path)
    return summary


def _panel(s: Summary, session: PairSession) -> Any:
    from rich.table import Table

    unit = "nElo" if s.elo_model == "normalized" else "Elo"
    t = Table(
        title=f"SPRT {s.new} against {s.old}: elo0 {s.elo0:g}, elo1 {s.elo1:g} {unit}",
        show_header=False,
    )
    t.add_column()
    t.add_column()
    t.add_row("pairs", f"{s.pairs} ({len(session.playing)} matches playing)")
    t.add_row("pentanomial 0..2", " ".join(str(c) for c in s.pentanomial))
    t.add_row("matches W/D/L", f"{s.wins}/{s.draws}/{s.losses}  draw ratio {s.draw_ratio:.2f}")
    for seat, r in enumerate(s.seats):
        t.add_row(f"  in seat {seat}", f"{r.wins}/{r.draws}/{r.losses}")
    t.add_row(
        "LLR",
        f"{s.llr:+.2f}  in [{s.llr_lower:.2f}, {s.llr_upper:.2f}]  ({s.llr_progress:.0f}%)",
    )
    t.add_row("Elo (95%)", f"{s.elo:+.1f}  {_interval(s.elo_low, s.elo_high)}")
    t.add_row("nElo (95%)", f"{s.nelo:+.1f}  {_interval(s.nelo_low, s.nelo_high)}")
    t.add_row("LOS", f"{100 * s.los:.1f}%")
    if s.elo_stopped is not None:
        assert s.elo_stopped_low is not None and s.elo_stopped_high is not None
        t.add_row(
            "Elo after the stop",
            f"{s.elo_stopped:+.1f}  {_interval(s.elo_stopped_low, s.elo_stopped_high)}",
        )
    if s.expected_pairs is not None:
        plan = s.expected_pairs
        t.add_row(
            "expected pairs",
            f"{plan['elo1']} at elo1, {plan['elo0']} at elo0, {plan['halfway']} halfway",
        )
    ratio = "n/a" if s.pairing_ratio is None else f"{s.pairing_ratio:.3f}"
    t.add_row("pair var / unpaired", ratio)
    return t
