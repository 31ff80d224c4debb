"""Tournament pieces without bot processes: schedule, bracket, standings, config."""

from __future__ import annotations

import io
import itertools
from collections.abc import Callable
from pathlib import Path

import pytest
from rich.console import Console

from referee.match import derive_seed
from referee.tournament.config import ConfigError, load_config, validate
from referee.tournament.dashboard import standings_table
from referee.tournament.schedule import (
    Played,
    bracket_size,
    build_bracket,
    circle_rounds,
    first_round,
    games_needed,
    pool_plan,
    seed_order,
)
from referee.tournament.standings import cross_table, meeting_of, rank_pool

# -- pool ----------------------------------------------------------------------


@pytest.mark.parametrize("n", range(2, 11))
def test_circle_rounds_cover_every_pair_once(n: int) -> None:
    rounds = circle_rounds(n)
    pairs = [p for r in rounds for p in r]
    assert sorted(pairs) == list(itertools.combinations(range(n), 2))
    for r in rounds:
        bots = [b for p in r for b in p]
        assert len(bots) == len(set(bots))  # nobody plays twice in a round


@pytest.mark.parametrize("legs", [1, 2])
def test_pool_plan(legs: int) -> None:
    plans = pool_plan(6, legs, 300, 42, derive_seed)
    assert len(plans) == 15 * legs
    assert len({p.id for p in plans}) == len(plans)
    assert len({p.seed for p in plans}) == len(plans)
    assert all(p.rounds == 300 for p in plans)
    if legs == 2:
        seatings = {p.seats for p in plans}
        for i, j in itertools.combinations(range(6), 2):
            assert (i, j) in seatings and (j, i) in seatings
    else:
        firsts = [sum(1 for p in plans if p.seats[0] == b) for b in range(6)]
        assert max(firsts) - min(firsts) <= 3  # seat 0 is shared out, not always the lower index
    # The seed depends only on the tournament seed and the match's identity.
    again = pool_plan(6, legs, 300, 42, derive_seed)
    assert [(p.id, p.seed) for p in again] == [(p.id, p.seed) for p in plans]
    other = pool_plan(6, legs, 300, 43, derive_seed)
    assert {p.seed for p in other}.isdisjoint({p.seed for p in plans})


# -- bracket seeding and byes -------------------------------------------------


def test_seed_order() -> None:
    assert seed_order(2) == [1, 2]
    assert seed_order(4) == [1, 4, 2, 3]
    assert seed_order(8) == [1, 8, 4, 5, 2, 7, 3, 6]


@pytest.mark.parametrize(
    ("q", "expected"),
    [
        (2, [(1, 2)]),
        (3, [(1, None), (2, 3)]),
        (4, [(1, 4), (2, 3)]),
        (5, [(1, None), (4, 5), (2, None), (3, None)]),
        (6, [(1, None), (4, 5), (2, None), (3, 6)]),
        (7, [(1, None), (4, 5), (2, 7), (3, 6)]),
        (8, [(1, 8), (4, 5), (2, 7), (3, 6)]),
    ],
)
def test_first_round_byes_go_to_top_seeds(q: int, expected: list[tuple[int, int | None]]) -> None:
    ties = first_round(q)
    assert ties == expected
    byes = sorted(a for a, b in ties if b is None)
    assert byes == list(range(1, bracket_size(q) - q + 1))
    seeds = sorted([a for a, _ in ties] + [b for _, b in ties if b is not None])
    assert seeds == list(range(1, q + 1))


def _simulate(
    q: int, n_bots: int, best_of: int, result: Callable[[int, int, int], tuple[float, float]]
) -> tuple[int | None, int, list[list[tuple[int, int | None, int | None, str]]]]:
    """Play a whole bracket with a result function (bot a, bot b, game) -> (final a, b).
    Returns the champion, the games played and each round's (a, b, winner, rule)."""
    ranking = list(range(n_bots))  # bot k is seed k + 1
    finished: dict[str, Played] = {}
    for _ in range(100):
        br = build_bracket(ranking, q, best_of, 100, 1, derive_seed, finished)
        if br.complete:
            rounds = [[(t.a, t.b, t.winner, t.decided_by) for t in r] for r in br.rounds]
            return br.champion, len(finished), rounds
        assert br.needed
        for plan in br.needed:
            assert plan.id not in finished
            a, b = plan.seats
            fa, fb = result(a, b, plan.game)
            winner = a if fa > fb else b if fb > fa else None
            finished[plan.id] = Played(
                id=plan.id, seats=(a, b), final=(fa, fb), standard=(fa, fb), winner=winner
            )
    raise AssertionError("bracket did not finish")


@pytest.mark.parametrize("finalists", [4, 8])
@pytest.mark.parametrize("bots", range(3, 9))
def test_bracket_favourites_win(finalists: int, bots: int) -> None:
    def better_seed_wins(a: int, b: int, game: int) -> tuple[float, float]:
        return (1.0, -1.0) if a < b else (-1.0, 1.0)

    q = min(finalists, bots)
    champ, games, rounds = _simulate(finalists, bots, 3, better_seed_wins)
    assert champ == 0
    real_ties = q - 1  # single elimination: each real tie removes one bot
    assert games == 2 * real_ties  # 2-0 in every best-of-3
    assert len(rounds) == (bracket_size(q)).bit_length() - 1
    assert sum(1 for r in rounds for t in r if t[1] is not None) == real_ties
    # Round one is seeded 1 v 8, 4 v 5, 2 v 7, 3 v 6 (bots are seed - 1) with byes on top.
    first = [(a, b) for a, b, _, _ in rounds[0]]
    assert first == [(a - 1, None if b is None else b - 1) for a, b in first_round(q)]
    if q >= 4:
        assert rounds[-1][0][:2] == (0, 1)  # the top two meet in the final


def test_bracket_alternates_seats_and_stops_early() -> None:
    seen: list[tuple[int, int, int]] = []

    def underdog_then_favourite(a: int, b: int, game: int) -> tuple[float, float]:
        seen.append((a, b, game))
        hi = min(a, b)
        winner = max(a, b) if game == 1 else hi
        return (1.0, 0.0) if winner == a else (0.0, 1.0)

    champ, games, rounds = _simulate(2, 2, 5, underdog_then_favourite)
    assert champ == 0
    assert [(a, b) for a, b, _ in seen] == [(0, 1), (1, 0), (0, 1), (1, 0)]  # alternating seats
    assert games == 4  # 1-3 after four games: the fifth is not played


def test_level_tie_rules() -> None:
    # Every game drawn on wins: the total Final across the tie decides...
    def draws_b_ahead(a: int, b: int, game: int) -> tuple[float, float]:
        return (0.0, 0.0) if game < 3 else ((0.1, 0.1) if a == 0 else (0.3, 0.3))

    finished: dict[str, Played] = {}
    for game in (1, 2, 3):
        seats = (0, 1) if game % 2 else (1, 0)
        fa = 0.0 if game < 3 else 0.1
        fb = 0.0 if game < 3 else 0.3
        final = (fa, fb) if seats[0] == 0 else (fb, fa)
        mid = f"final-r1-t1-g{game}"
        finished[mid] = Played(id=mid, seats=seats, final=final, standard=final, winner=None)
    br = build_bracket([0, 1], 2, 3, 100, 1, derive_seed, finished)
    tie = br.rounds[0][0]
    assert (tie.winner, tie.decided_by) == (1, "total final")
    # ...and when that is level too, the higher pool seed goes through.
    champ, _games, rounds = _simulate(2, 2, 3, lambda a, b, g: (0.0, 0.0))
    assert champ == 0 and rounds[0][0][3] == "seed"


def test_games_needed() -> None:
    assert games_needed(3, 0, 0) == 2
    assert games_needed(5, 0, 0) == 3
    assert games_needed(3, 2, 0) == 1
    assert games_needed(3, 2, 2) == 0
    assert games_needed(5, 3, 1) == 1
    assert games_needed(1, 0, 0) == 1


# -- standings -----------------------------------------------------------------


def _game(mid: str, a: int, b: int, fa: float, fb: float, sa: float = 0.0) -> Played:
    winner = a if fa > fb else b if fb > fa else None
    return Played(id=mid, seats=(a, b), final=(fa, fb), standard=(sa, -sa), winner=winner)


def test_ranking_criteria() -> None:
    names = ["delta", "alpha", "charlie", "bravo"]
    games = [
        # delta and alpha finish level on mean Final; alpha won their meeting.
        _game("1", 0, 1, -0.5, 0.5),
        _game("2", 0, 2, 1.0, -1.0),
        _game("3", 1, 2, 0.0, 0.0),
        # charlie and bravo: level on Final and head to head; standard decides.
        _game("4", 2, 3, 0.0, 0.0, sa=0.2),
        _game("5", 0, 3, 0.5, -0.5),
        _game("6", 1, 3, 0.5, 0.0),
    ]
    rows = rank_pool(names, games, samples=50)
    assert [r.name for r in rows][:2] == ["alpha", "delta"]
    assert rows[0].mean_final == rows[1].mean_final
    assert rows[0].head_to_head == 1.0 and rows[1].head_to_head == -1.0
    assert [r.rank for r in rows] == [1, 2, 3, 4]
    for r in rows:
        assert r.rating_low <= r.rating <= r.rating_high
    cells = cross_table(4, games)
    assert cells[1][0].wins == 1 and cells[0][1].losses == 1
    assert cells[1][0].final_diff == 1.0


def test_name_breaks_a_complete_tie() -> None:
    rows = rank_pool(["b", "a"], [_game("1", 0, 1, 0.0, 0.0)], samples=0)
    assert [r.name for r in rows] == ["a", "b"]


def test_ratings_order_and_intervals() -> None:
    names = ["strong", "middle", "weak"]
    games = []
    k = 0
    for _ in range(6):
        for a, b in ((0, 1), (1, 2), (0, 2)):
            k += 1
            games.append(_game(str(k), a, b, 1.0, -1.0))
    games.append(_game("x", 1, 0, 1.0, -1.0))  # one upset
    rows = rank_pool(names, games)
    by = {r.name: r for r in rows}
    assert by["strong"].rating > by["middle"].rating > by["weak"].rating
    assert abs(sum(r.rating for r in rows)) < 1.0  # centred on 0
    assert by["strong"].rating_low > by["weak"].rating_high
    again = rank_pool(names, games)
    assert [(r.rating_low, r.rating_high) for r in again] == [
        (r.rating_low, r.rating_high) for r in rows
    ]


def test_a_clean_sweep_gets_a_finite_wide_one_sided_rating_interval() -> None:
    """Eight bots in a double round robin, one winning all 14 of its matches and
    the rest splitting each meeting: its rating is finite, its 95% interval is
    finite, wide and longer above than below (the bootstrap over matches could
    only resample the sweep, and a +-interval hid the skew), its lower end is
    above the others' ratings, and the terminal table prints it as [low, high].
    The live standings (no draws) have no interval at all rather than a
    zero-width one."""
    games = []
    for a in range(8):
        for b in range(a + 1, 8):
            for leg, seats in enumerate(((a, b), (b, a)), start=1):
                winner = 0 if a == 0 else seats[0]  # bot 0 sweeps; the rest split
                fa, fb = (1.0, -1.0) if winner == seats[0] else (-1.0, 1.0)
                games.append(_game(f"pool-{a}-{b}-{leg}", *seats, fa, fb))
    names = [f"bot{i}" for i in range(8)]
    rows = rank_pool(names, games)
    top = rows[0]
    assert (top.name, top.wins, top.losses) == ("bot0", 14, 0)
    assert top.rating_low is not None and top.rating_high is not None
    assert top.rating_low < top.rating < top.rating_high < 4000.0
    assert top.rating_high - top.rating_low > 600.0
    assert top.rating_high - top.rating > 1.5 * (top.rating - top.rating_low)
    assert top.rating_low > max(r.rating for r in rows[1:])
    for r in rows[1:]:
        assert r.rating_low is not None and r.rating_high is not None
        assert r.rating_low < r.rating < r.rating_high
    out = io.StringIO()
    Console(file=out, width=250, force_terminal=False).print(standings_table(rows, "pool"))
    assert f"[{top.rating_low:+.0f}, {top.rating_high:+.0f}]" in out.getvalue()
    live = rank_pool(names, games, samples=0)
    assert all(r.rating_low is None and r.rating_high is None for r in live)
    assert [r.rating for r in live] == [r.rating for r in rows]


def test_rank_ranges_and_order_probabilities() -> None:
    """Two clear leaders that trade wins, then two clear laggards: the leaders'
    ranks range over 1-2 and their order is a coin flip; the gap between second
    and third is certain. Both legs of a meeting are resampled together."""
    names = ["a", "b", "c", "d"]
    games = []
    for rep in range(4):
        for x, y in ((0, 2), (0, 3), (1, 2), (1, 3), (2, 3)):
            for leg in (1, 2):
                seats = (x, y) if leg == 1 else (y, x)
                fx = 1.0 if leg == 1 else -1.0
                games.append(_game(f"r{rep}-{x}{y}-{leg}", *seats, fx, -fx))
        # a and b split each meeting; who wins it depends on the repeat.
        win = 0.5 if rep % 2 else -0.5
        games.append(_game(f"r{rep}-01-1", 0, 1, win + 1.0, -win - 1.0))
        games.append(_game(f"r{rep}-01-2", 1, 0, 1.0 - win, win - 1.0))
    rows = rank_pool(names, games)
    by = {r.name: r for r in rows}
    assert [r.name for r in rows[:2]] in (["a", "b"], ["b", "a"])
    assert (by["a"].rank_low, by["a"].rank_high) == (1, 2)
    assert (by["b"].rank_low, by["b"].rank_high) == (1, 2)
    assert rows[0].order_prob is not None and rows[0].order_prob < 0.9
    assert rows[1].order_prob > 0.99
    assert rows[3].order_prob is None
    assert meeting_of("pool-01-02-1") == meeting_of("pool-01-02-2") == "pool-01-02"


# -- config --------------------------------------------------------------------


def test_config_unknown_key_is_one_line(tmp_path: Path) -> None:
    p = tmp_path / "t.toml"
    p.write_text('[pool]\nlegs = 2\nlgs = 1\n[[bot]]\nname = "a"\ncommand = "rock"\n')
    with pytest.raises(ConfigError) as err:
        load_config(p)
    msg = str(err.value)
    assert "\n" not in msg and "lgs" in msg and "pool" in msg


def test_config_values_checked(tmp_path: Path) -> None:
    p = tmp_path / "t.toml"
    p.write_text(
        '[finals]\nfinalists = 6\n[[bot]]\nname = "a"\ncommand = "rock"\n'
        '[[bot]]\nname = "b"\ncommand = "rock"\n'
    )
    with pytest.raises(ConfigError, match="finalists"):
        validate(load_config(p))
    p.write_text('[[bot]]\nname = "a"\ncommand = "rock"\n')
    with pytest.raises(ConfigError, match="at least 2 bots"):
        validate(load_config(p))


def test_config_replay_format_checked(tmp_path: Path) -> None:
    bots = '[[bot]]\nname = "a"\ncommand = "rock"\n[[bot]]\nname = "b"\ncommand = "rock"\n'
    p = tmp_path / "t.toml"
    p.write_text(bots)
    assert load_config(p).replay_format == "gz"
    p.write_text('replay_format = "jsonl"\n' + bots)
    validate(load_config(p))
    p.write_text('replay_format = "zip"\n' + bots)
    with pytest.raises(ConfigError, match="replay_format must be one of gz, jsonl, not 'zip'"):
        validate(load_config(p))
    p.write_text("replay_format = 1\n" + bots)
    with pytest.raises(ConfigError, match="replay_format"):
        load_config(p)


def test_config_relative_paths_follow_the_file(tmp_path: Path) -> None:
    (tmp_path / "bots").mkdir()
    (tmp_path / "bots" / "mine.py").write_text("")
    p = tmp_path / "t.toml"
    p.write_text('[[bot]]\nname = "mine"\ncommand = "python bots/mine.py"\n')
    cfg = load_config(p)
    assert cfg.bot[0].command == ["python", str(tmp_path / "bots" / "mine.py")]


def test_example_league_config_is_valid() -> None:
    from referee.catalog import lookup_sample_bot

    cfg = load_config(Path(__file__).resolve().parent.parent / "examples" / "league.toml")
    validate(cfg)
    assert cfg.pool.legs == 2 and cfg.finals.finalists == 8 and len(cfg.bot) >= 8
    for bot in cfg.bot:
        assert isinstance(bot.command, str) and lookup_sample_bot(bot.command) is not None


def test_match_settings_carry_every_limit_of_the_config() -> None:
    # A league and the server's ladder build their matches from the same helper: a
    # limit the config sets (disk_mib among them) reaches every match.
    from referee.tournament.config import LimitsConfig, match_settings

    lim = LimitsConfig(memory_mib=300, cpu_s=40, disk_mib=64, move_timeout=0.5, max_faults=2)
    out = match_settings("chaos", 7, {"rounds": 100}, lim, idle_poll=False)
    assert out["limits"]["memory_mib"] == 300
    assert out["limits"]["cpu_s"] == 40
    assert out["limits"]["disk_mib"] == 64
    assert (out["move_timeout"], out["max_faults"], out["tokens"]) == (0.5, 2, 7)
    assert out["params"] == {"rounds": 100} and out["idle_poll"] is False
