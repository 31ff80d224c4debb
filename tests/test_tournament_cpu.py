"""The league CPU split (referee/tournament/cpu.py): what each part adds up from."""

from __future__ import annotations

from referee.faults import Verdict
from referee.outcome import MatchOutcome, RefereeUsage, SeatOutcome
from referee.tournament.cpu import league_cpu


def _outcome(
    bot_cpu: tuple[float, float], startup: tuple[float, float], referee: tuple
) -> MatchOutcome:
    seats = [
        SeatOutcome(
            seat=i,
            label=None,
            name=None,
            version=None,
            command=["bot"],
            sha256=None,
            placement=1,
            scores={},
            stats={},
            verdict=Verdict(cpu_s=bot_cpu[i]),
        )
        for i in (0, 1)
    ]
    setup, play, finish = referee
    return MatchOutcome(
        game="chaos",
        params={},
        seed=1,
        winner=None,
        reason="complete",
        steps=10,
        wall_s=1.0,
        play_s=1.0,
        replay=None,
        replay_hash="",
        containment={},
        seats=seats,
        referee=RefereeUsage(
            setup_cpu_s=setup,
            play_cpu_s=play,
            finish_cpu_s=finish,
            bot_startup_cpu_s=list(startup),
        ),
    )


def test_league_cpu_split() -> None:
    outcomes = [
        _outcome((2.0, 3.0), (0.25, 0.5), (0.5, 2.0, 0.25)),
        _outcome((1.0, 1.0), (0.25, 0.25), (0.25, 1.0, 0.25)),
    ]
    cpu = league_cpu(outcomes, coordinator_s=0.5, children_s=12.0)
    assert cpu["matches"] == 2
    assert cpu["bots_startup_s"] == 1.25
    assert cpu["bots_thinking_s"] == 7.0 - 1.25
    assert (cpu["referee_setup_s"], cpu["referee_rounds_s"], cpu["referee_finish_s"]) == (
        0.75,
        3.0,
        0.5,
    )
    # The workers' own: what their children (bots) and matches do not account for.
    assert cpu["workers_other_s"] == 12.0 - 7.0 - 0.75 - 3.0 - 0.5
    assert cpu["total_s"] == 12.5
    assert cpu["bots_thinking_share"] == round(5.75 / 12.5, 4)


def test_league_cpu_on_a_cluster_leaves_the_workers_out() -> None:
    cpu = league_cpu([_outcome((1.0, 1.0), (0.5, 0.5), (0.0, 1.0, 0.0))], 0.5, None)
    assert cpu["workers_other_s"] is None
    assert cpu["total_s"] == 1.0 + 1.0 + 1.0 + 0.5
