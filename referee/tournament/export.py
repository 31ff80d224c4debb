"""standings.csv, results.csv and results.json in the output directory.

Everything in results.json outside the ``timing`` objects is a function of the
config and the bots alone: two runs of one tournament (whatever ``-j``, however
often resumed) give the same file once the ``timing`` keys are removed.
"""

from __future__ import annotations

import csv
import time
from pathlib import Path
from typing import Any

import msgspec

from ..outcome import MatchOutcome
from .config import Resolved
from .schedule import Bracket, MatchPlan, round_name
from .standings import FIGURES, Standing, TableStanding, cross_table

# Verdict fields that are measurements of one particular run. Escaped-process
# reports carry pids, so they vary too (they stay in the file, under ``timing``).
_MEASURED = (
    "wall_s",
    "cpu_s",
    "peak_rss_kib",
    "max_move_ms",
    "killed_by_referee",
    "escaped_processes",
    "extra",
)
# Verdict fields that belong to the logs, not the results.
_DROPPED = ("stderr_head", "stderr_tail")


def finish_of(bracket: Bracket | None, bot: int) -> str:
    """How far a bot went in the finals: champion, runner-up, semi-finals..."""
    if bracket is None or not bracket.rounds:
        return ""
    n = bracket.total_rounds
    if bracket.champion == bot:
        return "champion"
    for rnd in reversed(bracket.rounds):
        for t in rnd:
            if bot in (t.a, t.b) and t.b is not None and t.winner is not None and t.winner != bot:
                if t.round == n:
                    return "runner-up"
                return round_name(t.round, n).lower()
    return ""


def match_record(plan: MatchPlan, outcome: MatchOutcome, names: list[str]) -> dict[str, Any]:
    """One match for results.json: the result, with run-dependent measurements
    gathered under ``timing``."""
    seats = []
    seat_timing = []
    for seat, bot in zip(outcome.seats, plan.seats, strict=True):
        verdict = msgspec.to_builtins(seat.verdict)
        measured = {k: verdict.pop(k) for k in _MEASURED if k in verdict}
        for k in ("exit_code", "signal"):
            # A bot that outlives the end-of-match grace period is killed: whether it
            # was is a race, so how it exited is a measurement too (crashes are faults).
            if k in verdict:
                measured[k] = verdict.pop(k)
        for k in _DROPPED:
            verdict.pop(k, None)
        seats.append(
            {
                "bot": names[bot],
                "name": seat.name,
                "placement": seat.placement,
                "scores": seat.scores,
                "stats": seat.stats,
                "verdict": verdict,
            }
        )
        seat_timing.append(measured)
    winner = outcome.winner
    return {
        "id": plan.id,
        "stage": plan.stage,
        "round": plan.round,
        "tie": plan.tie,
        "game": plan.game,
        "bots": [names[b] for b in plan.seats],
        "seed": plan.seed,
        "rounds": plan.rounds or None,  # None: the game's default
        "winner": names[plan.seats[winner]] if isinstance(winner, int) else None,
        "reason": outcome.reason,
        "steps": outcome.steps,
        "seats": seats,
        "replay": outcome.replay,
        "timing": {"wall_s": outcome.wall_s, "seats": seat_timing},
    }


def bracket_record(bracket: Bracket | None, names: list[str]) -> dict[str, Any] | None:
    if bracket is None:
        return None
    n = bracket.total_rounds
    rounds = []
    for k, rnd in enumerate(bracket.rounds, start=1):
        ties = []
        for t in rnd:
            ties.append(
                {
                    "a": names[t.a],
                    "b": names[t.b] if t.b is not None else None,
                    "seed_a": t.seed_a,
                    "seed_b": t.seed_b,
                    "wins_a": t.wins_a,
                    "wins_b": t.wins_b,
                    "final_a": round(t.final_a, 6),
                    "final_b": round(t.final_b, 6),
                    "winner": names[t.winner] if t.winner is not None else None,
                    "decided_by": t.decided_by,
                    "games": [g.id for g in t.games],
                }
            )
        rounds.append({"name": round_name(k, n), "ties": ties})
    champ = bracket.champion
    return {"rounds": rounds, "champion": names[champ] if champ is not None else None}


def write_exports(
    out_dir: Path,
    cfg: Resolved,
    standings: list[Standing],
    bracket: Bracket | None,
    finished: list[tuple[MatchPlan, MatchOutcome]],
    pool_games: list[Any],
    wall_s: float,
) -> dict[str, Any]:
    """Write the three files; returns the results.json content."""
    names = [b.name for b in cfg.bots]
    cross = cross_table(len(names), pool_games)
    matches = [match_record(p, o, names) for p, o in finished]
    champion = None
    if bracket is not None and bracket.champion is not None:
        champion = names[bracket.champion]
    elif cfg.finals.finalists < 2 and standings:
        champion = standings[0].name  # pool only: the pool winner
    rows = []
    for s in standings:
        row = msgspec.to_builtins(s)
        row.pop("bot")
        row["finish"] = finish_of(bracket, s.bot)
        if champion is not None and bracket is None and s.name == champion:
            row["finish"] = "champion"
        rows.append(row)
    summary: dict[str, Any] = {
        "tournament": cfg.name,
        "config": msgspec.to_builtins(cfg),
        "complete": champion is not None,
        "champion": champion,
        "standings": rows,
        "figures": dict(FIGURES) if standings else {},
        "cross_table": {
            "bots": [s.name for s in standings],
            "final_diff": [[cross[a.bot][b.bot].final_diff for b in standings] for a in standings],
            "wdl": [
                [
                    f"{cross[a.bot][b.bot].wins}-{cross[a.bot][b.bot].draws}-"
                    f"{cross[a.bot][b.bot].losses}"
                    for b in standings
                ]
                for a in standings
            ],
        },
        "bracket": bracket_record(bracket, names),
        "matches": matches,
    }
    _write_results_json(out_dir, summary, wall_s)
    _write_standings_csv(out_dir / "standings.csv", rows)
    _write_results_csv(out_dir / "results.csv", matches)
    return summary


def _write_results_json(out_dir: Path, summary: dict[str, Any], wall_s: float) -> None:
    """results.json: the summary with when it was written and the wall time."""
    summary["timing"] = {
        "written": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "wall_s": round(wall_s, 3),
    }
    (out_dir / "results.json").write_text(
        msgspec.json.format(msgspec.json.encode(summary).decode(), indent=1) + "\n",
        encoding="utf-8",
    )


def _write_standings_csv(path: Path, rows: list[dict[str, Any]]) -> None:
    cols = [
        "rank",
        "name",
        "played",
        "wins",
        "draws",
        "losses",
        "mean_final",
        "balanced_final",
        "mean_standard",
        "head_to_head",
        "rating",
        "rating_low",
        "rating_high",
        "rank_low",
        "rank_high",
        "order_prob",
        "faults",
        "disqualified",
        "finish",
    ]
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(cols)
        for r in rows:
            w.writerow(["" if r.get(c) is None else r.get(c) for c in cols])


def _write_results_csv(path: Path, matches: list[dict[str, Any]]) -> None:
    cols = [
        "id",
        "stage",
        "round",
        "game",
        "bot0",
        "bot1",
        "seed",
        "rounds",
        "final0",
        "final1",
        "standard0",
        "standard1",
        "winner",
        "reason",
        "faults",
        "replay",
    ]
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(cols)
        for m in matches:
            s0, s1 = m["seats"]
            faults = []
            for s in m["seats"]:
                for fr in s["verdict"].get("faults", []):
                    faults.append(f"{s['bot']}:{fr['kind']}@{fr['round']}")
            w.writerow(
                [
                    m["id"],
                    m["stage"],
                    m["round"],
                    m["game"],
                    m["bots"][0],
                    m["bots"][1],
                    m["seed"],
                    m["rounds"],
                    (s0["scores"] or {}).get("final"),
                    (s1["scores"] or {}).get("final"),
                    (s0["scores"] or {}).get("standard"),
                    (s1["scores"] or {}).get("standard"),
                    m["winner"] or "",
                    m["reason"],
                    "; ".join(faults),
                    m["replay"] or "",
                ]
            )


# -- tables (games of more than two players) ----------------------------------


def write_table_exports(
    out_dir: Path,
    cfg: Resolved,
    standings: list[TableStanding],
    finished: list[tuple[MatchPlan, MatchOutcome]],
    wall_s: float,
) -> dict[str, Any]:
    """The same three files for a table league: no cross-table and no bracket; the
    champion is the top of the standings."""
    names = [b.name for b in cfg.bots]
    matches = [match_record(p, o, names) for p, o in finished]
    complete = len(matches) > 0 and all(s.played for s in standings)
    champion = standings[0].name if complete and standings else None
    rows = []
    for s in standings:
        row = msgspec.to_builtins(s)
        row.pop("bot")
        row["finish"] = "champion" if s.name == champion else ""
        rows.append(row)
    summary: dict[str, Any] = {
        "tournament": cfg.name,
        "config": msgspec.to_builtins(cfg),
        "complete": champion is not None,
        "champion": champion,
        "table_size": cfg.pool.table_size,
        "standings": rows,
        "bracket": None,
        "matches": matches,
    }
    _write_results_json(out_dir, summary, wall_s)
    cols = [
        "rank",
        "name",
        "played",
        "wins",
        "mean_placement",
        "tiebreak",
        "mean_tiebreak",
        "seat_counts",
        "faults",
        "disqualified",
        "finish",
    ]
    with open(out_dir / "standings.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(cols)
        for r in rows:
            r = {**r, "seat_counts": " ".join(map(str, r["seat_counts"]))}
            w.writerow(["" if r.get(c) is None else r.get(c) for c in cols])
    with open(out_dir / "results.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(
            ["id", "round", "game", "bots", "placements", "seed", "rounds", "winner", "reason"]
            + ["scores", "faults", "replay"]
        )
        for m in matches:
            faults = [
                f"{s['bot']}:{fr['kind']}@{fr['round']}"
                for s in m["seats"]
                for fr in s["verdict"].get("faults", [])
            ]
            w.writerow(
                [
                    m["id"],
                    m["round"],
                    m["game"],
                    " ".join(m["bots"]),
                    " ".join(str(s["placement"]) for s in m["seats"]),
                    m["seed"],
                    m["rounds"],
                    m["winner"] or "",
                    m["reason"],
                    "; ".join(
                        " ".join(f"{k}={v}" for k, v in (s["scores"] or {}).items())
                        for s in m["seats"]
                    ),
                    "; ".join(faults),
                    m["replay"] or "",
                ]
            )
    return summary
