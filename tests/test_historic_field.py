"""The historic field (sample_bots/python/historic.py): the opponents of the strength
table's enlarged classic field. Every bot plays both games legally, the reported and
tuning sets hold the same kinds with different parameters, and a bot speaks the
protocol through the real CLI."""

from __future__ import annotations

import sys
from collections.abc import Iterable

import pytest
from conftest import ROOT, match_json

sys.path.insert(0, str(ROOT / "sample_bots" / "python"))

import chaosbot  # noqa: E402
import historic  # noqa: E402


def test_the_sets_hold_the_same_kinds_with_other_parameters() -> None:
    kinds = {name[2:] for name in historic.REPORT}
    assert kinds == {name[2:] for name in historic.TUNE}
    assert len(kinds) >= 20
    # A tuning bot is never the reported bot under another name.
    for kind in kinds:
        assert historic.REPORT[f"h-{kind}"].conf != historic.TUNE[f"t-{kind}"].conf, kind


@pytest.mark.parametrize("game", ["roshambo", "chaos"])
def test_every_bot_plays_every_game(game: str) -> None:
    for name, cls in historic.BOTS.items():
        result = chaosbot.play(cls, historic.BOTS["h-markov1"], game=game, rounds=60)
        assert len(result["real"]) == 60, name
        assert result["spent"][0] == 0, name  # no bot of the field spends tokens


def test_pi_digits() -> None:
    digits = historic.pi_digits(5010)
    assert digits.startswith("3141592653589793238462643383279502884197")
    # The Feynman point: six 9s from the 762nd decimal place.
    assert digits[762:768] == "999999" and digits[761] != "9"
    assert len(digits) == 5010 and digits.isdigit()


def test_a_field_bot_through_the_cli_plays_its_schedule() -> None:
    """The pi bot throws pi's digits (9s skipped, modulo 3 on rock, paper,
    scissors) whoever it meets: against rock its points follow from the digits."""
    rounds = 200
    result = match_json(
        f"python3 {ROOT / 'sample_bots' / 'python' / 'historic.py'} h-pi",
        "rock",
        "--classic",
        "--rounds",
        str(rounds),
        "--seed",
        "3",
        "--no-replay",
    )
    throws = [int(d) % 3 for d in historic.pi_digits(rounds + 100) if d != "9"][:rounds]
    # 0 rock (draw), 1 paper (beats rock), 2 scissors (loses to rock).
    expected = throws.count(1) - throws.count(2)
    seat = result["seats"][0]
    assert seat["stats"]["points"] == expected, result


def test_the_champion_plays_unproven_picks_randomly_in_classic_too() -> None:
    """Against an opponent nothing predicts (the digits of pi) the champion's meta
    layer often has no edge; in classic RoShamBo too it then plays its random
    move, not the unproven pick a reading opponent could take points off (it
    lost -15 points a match to the tuning ensemble over 30 seeds before)."""
    import champion

    log: list[tuple[bool, int, int]] = []

    class Logged(champion.Champion):
        def choose(self) -> int:
            picked = super().choose()
            log.append((self._proven(), picked, self.rand))
            return picked

    chaosbot.play(Logged, historic.BOTS["t-pi"], game="roshambo", rounds=600, seeds=(3, 4))
    unproven = [(picked, rand) for proven, picked, rand in log[1:] if not proven]
    assert len(unproven) > 50  # pi is unreadable: many rounds are unproven
    assert all(picked == rand for picked, rand in unproven)
    assert any(proven for proven, _, _ in log)  # and the guard does let proven picks through


def test_the_champions_self_model_foresees_a_decayed_ensemble() -> None:
    """The self-model simulates an ensemble of last-occurrence predictors of the
    champion's own moves. Given the tuning ensemble's own lengths and decay, the
    simulation names the move the ensemble actually plays in about half of the
    rounds where the simulated ensemble has a variant ahead (223 of 465 on this
    seed; the real one also has a random predictor, and random predictions for
    contexts not seen yet, which no simulation can follow), where a guess
    names a third: 0.42 is about four standard deviations above that."""
    import champion

    conf = historic.TUNE["t-ensemble"].conf
    names = ("SELF_LENGTHS", "SELF_DECAYS")
    saved = tuple(getattr(champion, name) for name in names)
    champion.SELF_LENGTHS, champion.SELF_DECAYS = tuple(conf["lengths"]), (conf["decay"],)
    foreseen: list[tuple[int, bool]] = []
    circle: list[str] = []

    class Logged(champion.Champion):
        def choose(self) -> int:
            picked = super().choose()
            circle[:] = self.cyc
            if self.me:
                # The self-model's slot: right after the history matches and plain predictors.
                slot = len(self.match_slots) + len(self.plain)
                scores = self.sim_scores.reshape(-1)
                ahead = scores.max() > 0 and self.sim_pred[scores.argmax() // self.n] < self.n
                foreseen.append((int(self._predictions()[slot]), bool(ahead)))
            return picked

    try:
        result = chaosbot.play(
            Logged, historic.TUNE["t-ensemble"], game="roshambo", rounds=500, seeds=(5, 6)
        )
    finally:
        champion.SELF_LENGTHS, champion.SELF_DECAYS = saved
    theirs = [circle.index(pair[1]) for pair in result["real"][1:]]
    ahead = [f == t for (f, was_ahead), t in zip(foreseen, theirs, strict=True) if was_ahead]
    assert len(ahead) > 200, len(ahead)
    assert sum(ahead) > 0.42 * len(ahead), (sum(ahead), len(ahead))


def test_the_champion_beats_a_decayed_ensemble_by_modelling_it() -> None:
    """The fast decayed ensemble took a few points a match off the champion's
    picks before the self-model (pick rounds -2.8 ± 0.7 over tuning seeds
    101-300); with it, the champion foresees the ensemble's move and beats it
    (about +180 a match over tuning seeds 101-120)."""
    points = _champion_points("t-ensemble", (101, 102, 103))
    assert min(points) > 60, points


def test_the_champion_reads_a_flat_player_from_its_least_played_move() -> None:
    """A flat player (the tuning set's: its least played throw 60% of the time)
    is read at once by the plain predictor of their least played move; the
    context models' counts alone gave about 113 points a match (tuning seeds
    101-110), the plain predictors about 207."""
    points = _champion_points("t-flat", range(101, 107))
    assert sum(points) / len(points) > 160, points


def _champion_points(opponent: str, seeds: Iterable[int]) -> list[int]:
    """The champion's points in 1,000-throw classic matches against a tuning-set bot,
    one per seed, seats alternating as tools/strength.py has them."""
    import champion

    points = []
    for seed in seeds:
        seat = (seed - 1) % 2
        pair = (champion.Champion, historic.TUNE[opponent])
        result = chaosbot.play(
            *(pair if seat == 0 else pair[::-1]),
            game="roshambo",
            rounds=1000,
            seeds=(2 * seed, 2 * seed + 1),
        )
        points.append(result["points"][seat])
    return points
