"""Table leagues: ``referee tournament`` for games of more than two players."""

from __future__ import annotations

import json
from collections import Counter
from math import comb
from pathlib import Path

import pytest
from test_tournament import _done, _ok, kill_after, referee, without_timing

from referee.match import derive_seed
from referee.tournament.schedule import (
    MAX_TABLE_GAMES,
    TablePlayed,
    table_plan,
    table_seatings,
)
from referee.tournament.standings import rank_tables

LD = ["--game", "liars_dice", "--param", "dice=2", "--move-timeout", "2"]
LD_BOTS = ["ld-odds", "ld-odds", "ld-expect", "ld-expect"]


def _seat_counts(plans: list[tuple[int, ...]], n: int, size: int) -> list[list[int]]:
    counts = [[0] * size for _ in range(n)]
    for seats in plans:
        for pos, bot in enumerate(seats):
            counts[bot][pos] += 1
    return counts


# -- schedule -----------------------------------------------------------------


@pytest.mark.parametrize(("n", "size"), [(4, 3), (5, 3), (6, 4), (4, 4), (3, 2)])
def test_every_combination_in_every_rotation(n: int, size: int) -> None:
    tables = [s for _b, s in table_seatings(n, size, 1, 7, derive_seed)]
    assert len(tables) == comb(n, size) * size
    assert len(set(tables)) == len(tables)
    per_seat = comb(n - 1, size - 1)
    assert _seat_counts(tables, n, size) == [[per_seat] * size for _ in range(n)]
    # Each pair of bots shares the same number of tables.
    pairs = Counter((a, b) for t in tables for a in t for b in t if a < b)
    assert len(set(pairs.values())) == 1
    # Rotation by rotation: after each pass over the combinations all bots are level.
    for k in range(1, size + 1):
        played = Counter(b for t in tables[: k * comb(n, size)] for b in t)
        assert set(played.values()) == {k * per_seat}


def test_many_bots_use_seeded_cyclic_blocks() -> None:
    n, size = 30, 4
    assert comb(n, size) * size > MAX_TABLE_GAMES
    seatings = table_seatings(n, size, 1, 99, derive_seed)
    tables = [s for _b, s in seatings]
    blocks = max(1, MAX_TABLE_GAMES // n)
    assert len(tables) == blocks * n
    assert all(len(set(t)) == size for t in tables)
    assert _seat_counts(tables, n, size) == [[blocks] * size for _ in range(n)]
    assert seatings == table_seatings(n, size, 1, 99, derive_seed)  # deterministic
    assert seatings != table_seatings(n, size, 1, 100, derive_seed)  # seeded


def test_table_plan_ids_and_seeds() -> None:
    plans = table_plan(4, 3, 2, 50, 11, derive_seed)
    assert len(plans) == 2 * 12
    assert len({p.id for p in plans}) == len(plans)
    assert len({p.seed for p in plans}) == len(plans)
    assert {p.stage for p in plans} == {"table"}
    assert plans == table_plan(4, 3, 2, 50, 11, derive_seed)
    assert [p.seed for p in plans] != [p.seed for p in table_plan(4, 3, 2, 50, 12, derive_seed)]
    with pytest.raises(ValueError):
        table_seatings(3, 4, 1, 0, derive_seed)


def test_rank_tables_by_placement_then_tiebreak() -> None:
    def t(seats: tuple[int, ...], places: tuple[int, ...], dev: tuple[float, ...]) -> TablePlayed:
        k = len(seats)
        return TablePlayed(
            id="x", seats=seats, placement=places, tiebreak=dev,
            faults=(0,) * k, disqualified=(False,) * k,
        )  # fmt: skip

    games = [
        t((0, 1, 2), (1, 2, 3), (0.1, 0.5, 0.9)),
        t((1, 2, 0), (1, 2, 3), (0.2, 0.3, 0.4)),
        t((2, 0, 1), (2, 1, 3), (0.6, 0.2, 0.1)),
    ]
    rows = rank_tables(["a", "b", "c"], games, 3, "deviance", True)
    # a: 1, 3, 1 -> 5/3; b: 2, 1, 3 -> 2; c: 3, 2, 2 -> 7/3
    assert [r.name for r in rows] == ["a", "b", "c"]
    assert [r.seat_counts for r in rows] == [[1, 1, 1]] * 3
    # Level on placement: lower deviance first (or higher score if higher is better).
    level = [t((0, 1), (1, 1), (0.5, 0.2))]
    assert [r.name for r in rank_tables(["a", "b"], level, 2, "deviance", True)] == ["b", "a"]
    assert [r.name for r in rank_tables(["a", "b"], level, 2, "score", False)] == ["a", "b"]


# -- end to end ---------------------------------------------------------------


# A Liar's Dice league of four at tables of three: checked as it is, and the
# uninterrupted run the resume test compares its killed and resumed one with.
LD_LEAGUE = [*LD, *LD_BOTS, "--table-size", "3", "--legs", "1", "--seed", "3"]


@pytest.fixture(scope="module")
def ld_league(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The league's output directory and what it printed with --json."""
    out = tmp_path_factory.mktemp("tables") / "ld"
    proc = referee(*LD_LEAGUE, "-j", "4", "--out", str(out), "--json")
    _ok(proc)
    return out, proc.stdout


def test_liars_dice_league_of_four_at_tables_of_three(ld_league: tuple[Path, str]) -> None:
    out, stdout = ld_league
    brief = json.loads(stdout)
    assert brief["complete"] and brief["bracket"] is None
    assert brief["config"]["finals"]["finalists"] == 0
    results = json.loads((out / "results.json").read_text())
    matches = results["matches"]
    assert len(matches) == 12
    names = ["ld-odds#1", "ld-odds#2", "ld-expect#1", "ld-expect#2"]
    seat: dict[str, Counter[int]] = {name: Counter() for name in names}
    for m in matches:
        assert m["stage"] == "table" and len(m["bots"]) == 3
        assert sorted(s["placement"] for s in m["seats"])[0] == 1
        for pos, bot in enumerate(m["bots"]):
            seat[bot][pos] += 1
    assert all(seat[b] == {0: 3, 1: 3, 2: 3} for b in names)
    rows = results["standings"]
    assert sorted(r["name"] for r in rows) == sorted(names)
    means = [r["mean_placement"] for r in rows]
    assert means == sorted(means)
    assert [r["seat_counts"] for r in rows] == [[3, 3, 3]] * 4
    assert results["champion"] == rows[0]["name"]
    # Mean placement recomputed from the matches.
    for r in rows:
        places = [s["placement"] for m in matches for s in m["seats"] if s["bot"] == r["name"]]
        assert r["mean_placement"] == round(sum(places) / len(places), 6)
    header = (out / "standings.csv").read_text().splitlines()[0]
    assert header.startswith("rank,name,played,wins,mean_placement")
    assert len((out / "results.csv").read_text().splitlines()) == 13


def test_rock_paper_stuff_league_of_four_at_one_table(tmp_path: Path) -> None:
    out = tmp_path / "rps"
    bots = ["rps-balance", "rps-abundant", "rps-balance", "rps-abundant"]
    proc = referee("--game", "rps_stuff", *bots, "--table-size", "4", "--legs", "1",
                   "--rounds", "20", "--seed", "5", "-j", "4", "--out", str(out),
                   "--json")  # fmt: skip
    _ok(proc)
    results = json.loads((out / "results.json").read_text())
    assert results["complete"]
    assert len(results["matches"]) == 4  # one table, four rotations
    rows = results["standings"]
    assert all(r["tiebreak"] == "deviance" and r["seat_counts"] == [1, 1, 1, 1] for r in rows)
    keys = [(r["mean_placement"], r["mean_tiebreak"]) for r in rows]
    assert keys == sorted(keys)


def test_without_rounds_each_table_plays_the_games_own_length(tmp_path: Path) -> None:
    # Rock Paper Stuff's own length is 100 n(n-1)/2 trades: 300 at a table of three
    # (not the 10,000 rounds of a Chaos League match).
    out = tmp_path / "rps-default"
    proc = referee("--game", "rps_stuff", "rps-balance", "rps-abundant", "rps-balance",
                   "--table-size", "3", "--legs", "1", "--seed", "5", "-j", "2",
                   "--out", str(out), "--quiet")  # fmt: skip
    _ok(proc)
    results = json.loads((out / "results.json").read_text())
    assert results["config"]["pool"]["rounds"] is None
    assert [(m["rounds"], m["steps"]) for m in results["matches"]] == [(None, 300)] * 3


def test_two_player_game_refuses_nothing_but_ignores_table_size(tmp_path: Path) -> None:
    out = tmp_path / "chaos"
    proc = referee("rock", "cycler", "random", "--table-size", "3", "--rounds", "20",
                   "--legs", "1", "--finalists", "0", "--quiet", "--out", str(out))  # fmt: skip
    _ok(proc)
    results = json.loads((out / "results.json").read_text())
    assert all(len(m["bots"]) == 2 for m in results["matches"])
    assert results["config"]["pool"]["table_size"] is None


def test_table_league_resumes_after_sigkill(ld_league: tuple[Path, str], tmp_path: Path) -> None:
    args = [*LD_LEAGUE, "--quiet"]
    whole, _stdout = ld_league

    part = tmp_path / "part"
    kill_after([*args, "-j", "1", "--out", str(part)], part, 4)
    total = len(json.loads((whole / "results.json").read_text())["matches"])
    assert total == 12
    assert _done(part / "tournament.sqlite") < total
    _ok(referee("--resume", str(part), "-j", "4", "--quiet"))
    a = without_timing(json.loads((whole / "results.json").read_text()))
    b = without_timing(json.loads((part / "results.json").read_text()))
    assert a["matches"] == b["matches"]
    assert a == b
