"""Where a league's CPU went: the bots' own thinking, the bots' start-up, the
referee's phases of each match, and the processes that run the league.

Pure: it adds up what the matches report (``referee.outcome.RefereeUsage`` and each
seat's verdict) and the two totals the coordinator reads from the kernel.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..outcome import MatchOutcome


def league_cpu(
    outcomes: Iterable[MatchOutcome], coordinator_s: float, children_s: float | None
) -> dict[str, float | int | None]:
    """The split of one run's CPU seconds, with each part's share of the total.

    ``coordinator_s``: the coordinator's own CPU. ``children_s``: the CPU of every
    process it started and reaped (workers, and through them referees' bots and
    sandboxes); None where the workers ran elsewhere (a cluster): then only the
    matches' own figures are known, and the share of the workers is not.
    """
    matches = 0
    bots = startup = setup = rounds = finish = 0.0
    for outcome in outcomes:
        matches += 1
        bots += sum(seat.verdict.cpu_s for seat in outcome.seats)
        usage = outcome.referee
        startup += sum(usage.bot_startup_cpu_s)
        setup += usage.setup_cpu_s
        rounds += usage.play_cpu_s
        finish += usage.finish_cpu_s
    parts: dict[str, float | None] = {
        "bots_thinking_s": bots - startup,
        "bots_startup_s": startup,
        "referee_rounds_s": rounds,
        "referee_setup_s": setup,
        "referee_finish_s": finish,
        # Workers: importing the referee, reading jobs and writing outcomes,
        # everything between matches.
        "workers_other_s": None
        if children_s is None
        else children_s - bots - rounds - setup - finish,
        "coordinator_s": coordinator_s,
    }
    total = sum(v for v in parts.values() if v is not None)
    out: dict[str, float | int | None] = {"matches": matches, "total_s": round(total, 3)}
    for key, value in parts.items():
        out[key] = None if value is None else round(value, 3)
    if total > 0:
        out["bots_thinking_share"] = round((bots - startup) / total, 4)
    return out
