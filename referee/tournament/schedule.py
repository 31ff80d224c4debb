"""Which matches a tournament plays: the round-robin pool, then the bracket.

Everything here is a pure function of the config and of the results so far, so
a resumed run plans exactly what an uninterrupted one would have, and match
seeds depend only on the tournament seed and the match's identity (never on
timing or on how many matches ran at once).
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Mapping, Sequence

import msgspec

SeedFn = Callable[..., int]


class MatchPlan(msgspec.Struct, frozen=True):
    """One match to play. ``seats`` are bot indices, seat 0 first."""

    id: str
    stage: str  # "pool" or "final"
    round: int  # pool: the circle-method round (1-based); finals: bracket round
    tie: int  # finals: the tie's index in its round (0-based); pool: 0
    game: int  # pool: the leg (1 or 2); finals: the game in the tie (1-based)
    seats: tuple[int, ...]  # two bots, or a table's bots (stage "table")
    seed: int
    rounds: int  # the game's "rounds" parameter; 0: the game's own default


class Played(msgspec.Struct, frozen=True):
    """What the schedule needs to know about a finished match."""

    id: str
    seats: tuple[int, int]
    final: tuple[float, float]
    standard: tuple[float, float]
    winner: int | None  # bot index, None for a draw
    faults: tuple[int, int] = (0, 0)  # fault records per seat
    disqualified: tuple[bool, bool] = (False, False)


# -- pool ---------------------------------------------------------------------


def circle_rounds(n: int) -> list[list[tuple[int, int]]]:
    """The circle method: n-1 rounds (n rounds for odd n) in which every bot plays
    at most once, so the live standings are fair at any moment. Pairs are (low, high)."""
    players: list[int | None] = list(range(n))
    if n % 2:
        players.append(None)
    m = len(players)
    rounds = []
    for _ in range(m - 1):
        pairs = []
        for k in range(m // 2):
            a, b = players[k], players[m - 1 - k]
            if a is not None and b is not None:
                pairs.append((min(a, b), max(a, b)))
        rounds.append(pairs)
        players = [players[0], players[-1], *players[1:-1]]
    return rounds


def pool_plan(n_bots: int, legs: int, rounds: int, tseed: int, seed_fn: SeedFn) -> list[MatchPlan]:
    """Every pool match in playing order: leg 1's circle rounds, then leg 2's.

    With one leg, the lower-indexed bot takes seat 0 when i + j is even, so no bot
    sits in the same seat in every match; leg 2 swaps the seats of leg 1.
    """
    out = []
    for leg in range(1, legs + 1):
        for r, pairs in enumerate(circle_rounds(n_bots), start=1):
            for i, j in pairs:
                first = (i, j) if (i + j) % 2 == 0 else (j, i)
                seats = first if leg == 1 else (first[1], first[0])
                out.append(
                    MatchPlan(
                        id=f"pool-{i + 1:02d}-{j + 1:02d}-{leg}",
                        stage="pool",
                        round=r,
                        tie=0,
                        game=leg,
                        seats=seats,
                        seed=seed_fn(tseed, "pool", i, j, leg),
                        rounds=rounds,
                    )
                )
    return out


# -- tables (games of more than two players) ---------------------------------

# Above this many games per leg, tables are drawn in seeded cyclic blocks
# instead of every combination of bots in every rotation.
MAX_TABLE_GAMES = 1000


class TablePlayed(msgspec.Struct, frozen=True):
    """What the standings need to know about a finished table."""

    id: str
    seats: tuple[int, ...]
    placement: tuple[int, ...]  # per seat, 1 = best
    tiebreak: tuple[float, ...]  # per seat: the game's tie-break score
    faults: tuple[int, ...]
    disqualified: tuple[bool, ...]


def table_seatings(
    n_bots: int, size: int, leg: int, tseed: int, seed_fn: SeedFn
) -> list[tuple[int, tuple[int, ...]]]:
    """One leg's tables as (block, seats), in playing order.

    Every combination of ``size`` bots, in each of its ``size`` rotations, so each
    bot sits in each seat position equally often (and meets each other bot as
    often as any other). Rotation 1 of every combination comes first, then
    rotation 2..., so the standings stay fair while the leg is played.

    When that is more than MAX_TABLE_GAMES games, seeded cyclic blocks instead:
    block b draws distinct offsets 0 = d0, d1, ... (seeded by the tournament seed,
    the leg and b) and seats bot (i + dj) mod n in seat j of table i, for each i;
    every bot then sits in every seat exactly once per block.
    """
    if not 2 <= size <= n_bots:
        raise ValueError(f"table size must be between 2 and {n_bots}, not {size}")
    combos = list(itertools.combinations(range(n_bots), size))
    if len(combos) * size <= MAX_TABLE_GAMES:
        return [
            (0, tuple(c[(j + r) % size] for j in range(size))) for r in range(size) for c in combos
        ]
    out = []
    for block in range(1, max(1, MAX_TABLE_GAMES // n_bots) + 1):
        rng = random.Random(seed_fn(tseed, "table-block", leg, block))
        offsets = [0, *rng.sample(range(1, n_bots), size - 1)]
        for i in range(n_bots):
            out.append((block, tuple((i + d) % n_bots for d in offsets)))
    return out


def table_plan(
    n_bots: int, size: int, legs: int, rounds: int, tseed: int, seed_fn: SeedFn
) -> list[MatchPlan]:
    """Every table of a league of a game of more than two players, leg by leg.
    A table's seed derives from the tournament seed, its leg, block and seating."""
    out = []
    for leg in range(1, legs + 1):
        for k, (block, seats) in enumerate(
            table_seatings(n_bots, size, leg, tseed, seed_fn), start=1
        ):
            out.append(
                MatchPlan(
                    id=f"table-{leg}-{k:04d}-" + "-".join(f"{b + 1:02d}" for b in seats),
                    stage="table",
                    round=k,
                    tie=block,
                    game=leg,
                    seats=seats,
                    seed=seed_fn(tseed, "table", leg, block, *seats),
                    rounds=rounds,
                )
            )
    return out


# -- bracket ------------------------------------------------------------------


def bracket_size(qualifiers: int) -> int:
    """Slots in the first round: the smallest power of two holding every qualifier."""
    size = 1
    while size < qualifiers:
        size *= 2
    return size


def seed_order(size: int) -> list[int]:
    """Seeds (1-based) by bracket position: 1 v 8, 4 v 5, 2 v 7, 3 v 6 for eight.
    Built by doubling: each seed s is paired with its complement size + 1 - s, so
    the top two seeds can meet only in the final, the top four only in the semis."""
    order = [1]
    while len(order) < size:
        m = 2 * len(order)
        order = [x for s in order for x in (s, m + 1 - s)]
    return order


def first_round(qualifiers: int) -> list[tuple[int, int | None]]:
    """The first-round ties as (seed, seed or None for a bye). Seeds above the
    number of qualifiers are empty slots, so the top seeds get the byes."""
    if qualifiers < 2:
        return []
    order = seed_order(bracket_size(qualifiers))
    ties: list[tuple[int, int | None]] = []
    for k in range(0, len(order), 2):
        a, b = order[k], order[k + 1]
        ties.append((a, b if b <= qualifiers else None))
    return ties


class Tie(msgspec.Struct):
    """One pairing of the bracket: ``a`` is the higher seed (bot indices)."""

    round: int
    index: int
    a: int
    b: int | None  # None: a bye for a
    seed_a: int
    seed_b: int | None
    games: list[Played] = msgspec.field(default_factory=list)
    wins_a: int = 0
    wins_b: int = 0
    final_a: float = 0.0  # total Final across the tie's games
    final_b: float = 0.0
    winner: int | None = None
    decided_by: str = ""  # "wins", "total final", "seed", "bye"


def tie_progress(best_of: int, games: Sequence[Played], a: int) -> tuple[int, int, bool]:
    """(wins of a, wins of b, decided) after the finished games of a tie.

    A tie stops as soon as one bot's lead in won games is larger than the games
    left, or after ``best_of`` games.
    """
    wa = sum(1 for g in games if g.winner == a)
    wb = sum(1 for g in games if g.winner is not None and g.winner != a)
    left = best_of - len(games)
    return wa, wb, abs(wa - wb) > left or left <= 0


def games_needed(best_of: int, played: int, lead: int) -> int:
    """Games certain to be played from now on: one more game changes the lead by
    at most one and the games left by one, so the tie cannot end before
    ``lead + m > left - m``. These can all run at once."""
    left = best_of - played
    if lead > left or left <= 0:
        return 0
    return (left - lead) // 2 + 1


def _tie_seats(t: Tie, game: int) -> tuple[int, int]:
    # Seats alternate: the higher seed sits first in odd games.
    assert t.b is not None
    return (t.a, t.b) if game % 2 == 1 else (t.b, t.a)


class Bracket(msgspec.Struct):
    rounds: list[list[Tie]]
    needed: list[MatchPlan]  # games to schedule now (some may already be)
    champion: int | None
    complete: bool

    @property
    def total_rounds(self) -> int:
        """Rounds of the whole bracket, played or not: its first-round ties are
        half its (power of two) size."""
        return bracket_rounds(2 * len(self.rounds[0])) if self.rounds else 0


def build_bracket(
    ranking: Sequence[int],
    finalists: int,
    best_of: int,
    rounds: int,
    tseed: int,
    seed_fn: SeedFn,
    finished: Mapping[str, Played],
) -> Bracket:
    """The bracket as far as the finished finals games decide it.

    ``ranking`` is the pool order (bot indices, best first). A round's ties are
    drawn only once every tie of the previous round is decided.
    """
    qualifiers = list(ranking[: min(finalists, len(ranking))])
    if len(qualifiers) < 2:
        champ = qualifiers[0] if qualifiers else None
        return Bracket(rounds=[], needed=[], champion=champ, complete=True)
    seed_of = {bot: k + 1 for k, bot in enumerate(qualifiers)}
    current: list[Tie] = []
    for index, (sa, sb) in enumerate(first_round(len(qualifiers))):
        a = qualifiers[sa - 1]
        b = qualifiers[sb - 1] if sb is not None else None
        current.append(Tie(round=1, index=index, a=a, b=b, seed_a=sa, seed_b=sb))
    all_rounds: list[list[Tie]] = []
    needed: list[MatchPlan] = []
    rnd = 1
    while True:
        all_rounds.append(current)
        for t in current:
            _settle(t, best_of, rounds, tseed, seed_fn, finished, needed)
        if any(t.winner is None for t in current):
            return Bracket(rounds=all_rounds, needed=needed, champion=None, complete=False)
        if len(current) == 1:
            return Bracket(rounds=all_rounds, needed=[], champion=current[0].winner, complete=True)
        rnd += 1
        nxt = []
        for k in range(0, len(current), 2):
            x = current[k].winner
            y = current[k + 1].winner
            assert x is not None and y is not None
            # The better pool seed is "a" (first seat in game 1, wins a level tie).
            if seed_of[y] < seed_of[x]:
                x, y = y, x
            nxt.append(Tie(round=rnd, index=k // 2, a=x, b=y, seed_a=seed_of[x], seed_b=seed_of[y]))
        current = nxt


def _settle(
    t: Tie,
    best_of: int,
    rounds: int,
    tseed: int,
    seed_fn: SeedFn,
    finished: Mapping[str, Played],
    needed: list[MatchPlan],
) -> None:
    if t.b is None:
        t.winner, t.decided_by = t.a, "bye"
        return
    plans = []
    game = 1
    # Collect the finished games in game order (whatever order they finished in),
    # so the sums below add up in the same order on every run.
    while game <= best_of:
        mid = match_id(t.round, t.index, game)
        g = finished.get(mid)
        if g is not None:
            t.games.append(g)
        game += 1
    for g in t.games:
        if g.seats[0] == t.a:
            t.final_a += g.final[0]
            t.final_b += g.final[1]
        else:
            t.final_a += g.final[1]
            t.final_b += g.final[0]
    wa, wb, decided = tie_progress(best_of, t.games, t.a)
    t.wins_a, t.wins_b = wa, wb
    if decided:
        if wa != wb:
            t.winner, t.decided_by = (t.a if wa > wb else t.b), "wins"
        elif round(t.final_a, 6) != round(t.final_b, 6):
            t.winner, t.decided_by = (t.a if t.final_a > t.final_b else t.b), "total final"
        else:
            t.winner, t.decided_by = t.a, "seed"
        return
    target = len(t.games) + games_needed(best_of, len(t.games), abs(wa - wb))
    for game in range(1, target + 1):
        plans.append(
            MatchPlan(
                id=match_id(t.round, t.index, game),
                stage="final",
                round=t.round,
                tie=t.index,
                game=game,
                seats=_tie_seats(t, game),
                seed=seed_fn(tseed, "final", t.round, t.index, game),
                rounds=rounds,
            )
        )
    needed.extend(p for p in plans if p.id not in finished)


def match_id(rnd: int, tie: int, game: int) -> str:
    return f"final-r{rnd}-t{tie + 1}-g{game}"


def round_name(rnd: int, n_rounds: int) -> str:
    """Final, Semi-finals, Quarter-finals, else Round N."""
    from_end = n_rounds - rnd
    return {0: "Final", 1: "Semi-finals", 2: "Quarter-finals"}.get(from_end, f"Round {rnd}")


def bracket_rounds(qualifiers: int) -> int:
    """How many rounds a bracket of this many qualifiers has."""
    size = bracket_size(qualifiers)
    return max(size.bit_length() - 1, 0)
