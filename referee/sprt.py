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
    match_settings,
    open_session,
    resolve_side,
    run_session,
)
from .replay import DEFAULT_LEAGUE_FORMAT
from .stats.elo import Penta, elo_estimate, pairing_ratio
from .stats.sprt import SprtParams, bounds, decision

DEFAULTS = SprtParams()
DEFAULT_MAX_PAIRS = 20000


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
    g.add_argument("--elo0", type=_number, help=f"Elo difference of H0 (default {DEFAULTS.elo0:g})")
    g.add_argument("--elo1", type=_number, help=f"Elo difference of H1 (default {DEFAULTS.elo1:g})")
    g.add_argument("--alpha", type=_probability, help=f"false H1 rate (default {DEFAULTS.alpha:g})")
    g.add_argument("--beta", type=_probability, help=f"false H0 rate (default {DEFAULTS.beta:g})")
    g.add_argument(
        "--max-pairs",
        type=positive_int,
        metavar="N",
        help=f"stop undecided after N pairs (default {DEFAULT_MAX_PAIRS})",
    )
    add_match_options(p)


class Summary(msgspec.Struct):
    """The test's state after its counted pairs (summary.json)."""

    new: str
    old: str
    elo0: float
    elo1: float
    alpha: float
    beta: float
    pairs: int
    pentanomial: list[int]
    wins: int
    draws: int
    losses: int
    llr: float
    llr_lower: float
    llr_upper: float
    elo: float
    elo_low: float
    elo_high: float
    pairing_ratio: float | None
    verdict: str | None  # "H0", "H1" or None (undecided)
    faults: dict[str, dict[str, int]]  # bot label -> fault kind -> count
    line: str
    complete: bool = False
    wall_s: float = 0.0


def summarize(
    prefix: Sequence[Pair], params: SprtParams, labels: tuple[str, str], max_pairs: int
) -> Summary:
    penta = Penta()
    faults: dict[str, Counter[str]] = {labels[0]: Counter(), labels[1]: Counter()}
    for a, b in prefix:
        penta.add_pair(a.test_score, b.test_score)
        for rec in (a, b):
            for seat, kinds in enumerate(rec.faults):
                faults[labels[0] if seat == rec.test_seat else labels[1]].update(kinds)
    verdict, value = decision(penta.counts, params)
    lower, upper = bounds(params.alpha, params.beta)
    est = elo_estimate(penta.counts)
    n = penta.pairs
    figures = f"{est.elo:+.1f} ± {est.half_width:.1f} Elo, LLR {value:.2f}, {n} pairs"
    new, old = labels
    if verdict == "H1":
        line = f"H1 accepted: {new} is stronger ({figures})"
    elif verdict == "H0":
        line = f"H0 accepted: {new} is not {params.elo1:g} Elo stronger than {old} ({figures})"
    else:
        line = f"no decision after {n} pairs: {figures}"
    return Summary(
        new=new,
        old=old,
        elo0=params.elo0,
        elo1=params.elo1,
        alpha=params.alpha,
        beta=params.beta,
        pairs=n,
        pentanomial=list(penta.counts),
        wins=penta.wins,
        draws=penta.draws,
        losses=penta.losses,
        llr=round(value, 4),
        llr_lower=round(lower, 4),
        llr_upper=round(upper, 4),
        elo=round(est.elo, 2),
        elo_low=round(est.low, 2),
        elo_high=round(est.high, 2),
        pairing_ratio=None if (r := pairing_ratio(penta)) is None else round(r, 4),
        verdict=verdict,
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
        args, "sprt", ("elo0", "elo1", "alpha", "beta", "max_pairs"), _start, "BOT arguments"
    )
    cfg = session.cfg
    params = msgspec.convert(
        {k: v for k, v in cfg.settings.items() if k != "max_pairs"}, SprtParams
    )
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
            f"sprt: {labels[0]} (new) against {labels[1]} (old), H0 {params.elo0:g} Elo, "
            f"H1 {params.elo1:g} Elo, alpha {params.alpha:g}, beta {params.beta:g}, "
            f"seed {cfg.seed}, output {session.out_dir}",
            highlight=False,
        )

    def render() -> Any:
        return _panel(summarize(session.prefix, params, labels, max_pairs), session)

    last_shown = [0]

    def on_match(_rec: Any) -> None:
        # Without a terminal: a progress line every few pairs.
        n = len(session.prefix)
        if show and not live and n >= last_shown[0] + 10:
            last_shown[0] = n
            err.print(summarize(session.prefix, params, labels, max_pairs).line, highlight=False)

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


def _write_summary(
    session: PairSession, params: SprtParams, labels: tuple[str, str], max_pairs: int
) -> Summary:
    from .pairs import elapsed

    summary = summarize(session.prefix, params, labels, max_pairs)
    summary.wall_s = round(elapsed(session), 1)
    path = session.out_dir / "summary.json"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_bytes(msgspec.json.format(msgspec.json.encode(summary)) + b"\n")
    tmp.replace(path)
    return summary


def _panel(s: Summary, session: PairSession) -> Any:
    from rich.table import Table

    t = Table(title=f"SPRT {s.new} against {s.old}", show_header=False)
    t.add_column()
    t.add_column()
    t.add_row("pairs", f"{s.pairs} ({len(session.playing)} matches playing)")
    t.add_row("pentanomial 0..2", " ".join(str(c) for c in s.pentanomial))
    t.add_row("matches W/D/L", f"{s.wins}/{s.draws}/{s.losses}")
    t.add_row("LLR", f"{s.llr:+.2f}  in [{s.llr_lower:.2f}, {s.llr_upper:.2f}]")
    t.add_row("Elo (95%)", f"{s.elo:+.1f}  [{s.elo_low:+.1f}, {s.elo_high:+.1f}]")
    ratio = "n/a" if s.pairing_ratio is None else f"{s.pairing_ratio:.3f}"
    t.add_row("pair var / unpaired", ratio)
    return t
