"""Strength tables of the sample bots: real matches through the CLI.

    python tools/strength.py [--part classic chaos gain timing] [-j 2]
        [--classic-seeds 10] [--chaos-seeds 2] [--gain-seeds 10] [--first-seed 1]

Prints markdown tables (used for docs/bots.md):

* classic: the champion and Iocaine against every sample bot that plays
  RoShamBo, 1000 throws a match (as the original competitions), seeds 1..N with
  the seats alternating; mean net points per match with a 95% interval;
* chaos: the same in Chaos League, 10,000 rounds, with Final scores;
* gain: the champion, Iocaine and the trickster against the prediction-based
  bots (markov, frequency, iocaine, pattern-rs, champion), each match played
  with 50 tokens and with --tokens 0 on the same seed: the Final-score gain the
  tokens bring (95% interval), the deception efficiency and the tokens spent;
* react: how the Python prediction-based bots react to the move they are
  shown, late in a champion match without tokens: a copy of the opponent is
  asked what it would play after each move the champion could have shown, and
  the whole-match reply table says what credit each such fake could have earned
  (the most any forecaster of their reply could get);
* historic (not run by default): the classic table's field enlarged by the
  historic bots (sample_bots/python/historic.py), mean ± standard error, losses
  (a mean more than 2 SE below 0) named; --tune plays the tuning set on seeds
  101.. instead of the reported set on seeds 1..;
* noloss (not run by default): against the opponents of docs/bots.md's pick-round
  table (random, and the historic bots whose matches came out near zero before the
  champion's self-model; h-ensemble no longer does), the points of the rounds it
  played its meta layer's pick (the random rounds score 0 in expectation), over
  --noloss-seeds matches;
* timing: the champion's per-move CPU time over a 20,000-round match in-process
  (median, p99), and its whole CPU time in a real 20,000-round match.

Every table ends with the conditions it was measured in: how many matches,
the date (UTC), the load average before and after and the parallel jobs, so a
table run separately (``--part``) or with fewer seeds on a busy machine says so.

Matches between two Python sample bots are played in-process with the helper's
``chaosbot.play`` (the same rules, no pipes; scored by the referee's own
scoring model) unless --cli is given; every other match runs through
``referee match``. On a busy two-CPU machine that is the difference between
minutes and hours: a pipe round trip waits for the scheduler, a function call
does not.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import statistics
import subprocess
import sys
import tomllib
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY_BOTS = ROOT / "sample_bots" / "python"
IN_PROCESS = True  # --cli turns it off
SUBJECTS = ("champion", "iocaine")
PREDICTORS = ("markov", "frequency", "iocaine", "pattern-rs", "champion")
DECEIVERS = ("champion", "iocaine", "trickster")
# Two-sided 95% quantiles of Student's t by degrees of freedom (normal beyond 30).
T95 = {1: 12.71, 2: 4.30, 3: 3.18, 4: 2.78, 5: 2.57, 6: 2.45, 7: 2.36, 8: 2.31, 9: 2.26}
T95 |= {10: 2.23, 12: 2.18, 15: 2.13, 20: 2.09, 25: 2.06, 30: 2.04}


def t95(df: int) -> float:
    if df <= 0:
        return math.inf
    known = [d for d in sorted(T95) if d <= df]
    return T95[known[-1]] if df <= 30 else 1.96


def interval(xs: list[float]) -> tuple[float, float]:
    """Mean and the half-width of its 95% interval (Student's t)."""
    mean = statistics.fmean(xs)
    if len(xs) < 2:
        return mean, math.inf
    return mean, t95(len(xs) - 1) * statistics.stdev(xs) / math.sqrt(len(xs))


def mean_se(xs: list[float]) -> tuple[float, float]:
    """Mean and its standard error."""
    mean = statistics.fmean(xs)
    return mean, (statistics.stdev(xs) / math.sqrt(len(xs)) if len(xs) > 1 else math.inf)


# A mean result is a loss only if it is significantly negative: more than
# LOSS_SE standard errors below zero (one-sided, about 2.3% by chance alone).
LOSS_SE = 2.0


def _load() -> str:
    return f"{os.getloadavg()[0]:.1f}"


def conditions(matches: int, jobs: int, load_before: str, started: datetime.datetime) -> None:
    """The line that says where a table's figures came from."""
    now = datetime.datetime.now(datetime.UTC)
    minutes = (now - started).total_seconds() / 60
    print(
        f"\n({matches} match{'' if matches == 1 else 'es'}, {started:%Y-%m-%d %H:%M} UTC, {minutes:.0f} min with -j {jobs}; "
        f"load average {load_before} before, {_load()} after; {os.cpu_count()} CPUs, "
        f"Python {sys.version.split()[0]})"
    )


def _catalog() -> list[dict]:
    text = (ROOT / "sample_bots" / "catalog.toml").read_text(encoding="utf-8")
    return list(tomllib.loads(text)["bot"])


def catalog(game: str) -> list[str]:
    return [b["name"] for b in _catalog() if game in b["games"]]


def historic_bots(which: str) -> dict[str, type]:
    """The historic field's bots (sample_bots/python/historic.py): ``report`` is the
    set the tables report, ``tune`` the set kept for tuning."""
    import importlib

    if str(PY_BOTS) not in sys.path:
        sys.path.insert(0, str(PY_BOTS))
    historic = importlib.import_module("historic")
    return dict(historic.REPORT if which == "report" else historic.TUNE)


def python_class(name: str) -> type | None:
    """The bot class of a Python sample bot (for in-process play), else None."""
    if name.startswith(("h-", "t-")):
        return historic_bots("report" if name.startswith("h-") else "tune").get(name)
    entry = next((b for b in _catalog() if b["name"] == name), None)
    if entry is None or entry["language"] != "python" or len(entry["command"]) != 2:
        return None
    import importlib

    if str(PY_BOTS) not in sys.path:
        sys.path.insert(0, str(PY_BOTS))
    chaosbot = importlib.import_module("chaosbot")
    module = importlib.import_module(Path(entry["command"][1]).stem)
    for value in vars(module).values():
        if (
            isinstance(value, type)
            and issubclass(value, chaosbot.Bot)
            and value.__module__ == module.__name__
            and getattr(value, "name", None) == name
        ):
            return value
    return None


def in_process(a: type, b: type, game: str, rounds: int, seed: int, tokens: int | None) -> dict:
    """A match played with chaosbot.play and scored by the referee's scoring model,
    in the shape of ``referee match --json`` (only the fields used here)."""
    import chaosbot

    from referee.games.chaos import MOVE_INDEX, ChaosHistory
    from referee.games.chaos_scoring import score_match

    r = chaosbot.play(a, b, game=game, rounds=rounds, seeds=(2 * seed, 2 * seed + 1), tokens=tokens)
    codes = bytes(MOVE_INDEX[x] * 6 + MOVE_INDEX[y] for x, y in r["real"])
    shadows = [
        (t, seat, MOVE_INDEX[shown[seat]])
        for t, (real, shown) in enumerate(zip(r["real"], r["shown"], strict=True))
        for seat in (0, 1)
        if shown[seat] != real[seat]  # the sample bots never "shadow" with the real move
    ]
    start = 50 if game == "chaos" and tokens is None else (tokens or 0)
    history = ChaosHistory(
        codes, shadows, start, rounds, (False, False), 5 if game == "chaos" else 3
    )
    scores = score_match(history)
    return {
        "seats": [
            {
                "scores": scores[seat],
                "stats": {"points": r["points"][seat], "tokens_spent": r["spent"][seat]},
            }
            for seat in (0, 1)
        ]
    }


def match(
    a: str, b: str, game: str, rounds: int, seed: int, tokens: int | None = None, cli: bool = False
) -> dict:
    if IN_PROCESS and not cli:
        ca, cb = python_class(a), python_class(b)
        if ca is not None and cb is not None:
            return in_process(ca, cb, game, rounds, seed, tokens)
    cmd = [sys.executable, "-m", "referee", "match", a, b, "--game", game]
    cmd += ["--rounds", str(rounds), "--seed", str(seed), "--json", "--no-replay"]
    if tokens is not None:
        cmd += ["--tokens", str(tokens)]
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, check=True)
    return dict(json.loads(out.stdout))


def seat_result(result: dict, seat: int) -> dict:
    s = result["seats"][seat]
    return {"points": s["stats"]["points"], "spent": s["stats"]["tokens_spent"], **s["scores"]}


def play(subject: str, opp: str, game: str, rounds: int, seed: int, tokens: int | None) -> dict:
    """The subject's seat result; seats alternate with the seed."""
    seat = (seed - 1) % 2
    pair = (subject, opp) if seat == 0 else (opp, subject)
    return seat_result(match(*pair, game, rounds, seed, tokens), seat)


def _play_job(job: tuple) -> dict:
    return play(*job)


def field_table(
    game: str,
    rounds: int,
    seeds: int,
    jobs: int,
    extra: list[str] | None = None,
    first_seed: int = 1,
    with_se: bool = False,
) -> None:
    """The subjects against every sample bot of ``game`` (and the ``extra`` bots)."""
    opponents = catalog(game) + list(extra or [])
    jobs_list = [(s, o, k) for s in SUBJECTS for o in opponents if o != s for k in range(seeds)]
    started, load_before = datetime.datetime.now(datetime.UTC), _load()
    with ProcessPoolExecutor(jobs) as pool:
        rows = list(
            pool.map(
                _play_job,
                [(s, o, game, rounds, first_seed + k, None) for s, o, k in jobs_list],
            )
        )
    res: dict[tuple[str, str], list[dict]] = {}
    for (s, o, _), r in zip(jobs_list, rows, strict=True):
        res.setdefault((s, o), []).append(r)
    name = "Chaos League" if game == "chaos" else "RoShamBo"
    print(
        f"\n{name}, {rounds:,} rounds a match, seeds {first_seed}..{first_seed + seeds - 1} "
        "(seats alternate): "
        + (
            "mean net points per match ± its standard error (SE); a loss is a mean "
            f"more than {LOSS_SE:g} SE below 0"
            if with_se
            else "mean net points per match, 95% interval"
        )
        + (", and mean Final" if game == "chaos" else "")
        + ":\n"
    )
    head = " | ".join(
        f"{s} points" + (f" | {s} Final" if game == "chaos" else "") for s in SUBJECTS
    )
    print(f"| opponent | {head} |")
    print("|---|" + "---:|" * (len(SUBJECTS) * (2 if game == "chaos" else 1)))
    means: dict[str, list[float]] = {s: [] for s in SUBJECTS}
    worst: dict[str, tuple[float, str]] = {}
    losses: dict[str, list[str]] = {s: [] for s in SUBJECTS}
    lowest_z: dict[str, tuple[float, str]] = {}
    for o in opponents:
        cells = []
        for s in SUBJECTS:
            if o == s:
                cells.append("—" + (" | —" if game == "chaos" else ""))
                continue
            pts = [float(r["points"]) for r in res[(s, o)]]
            mean, half = interval(pts)
            if o not in SUBJECTS:
                means[s].append(mean)
            if s not in worst or mean < worst[s][0]:
                worst[s] = (mean, o)
            cell = f"{mean:+.0f} ± {half:.0f}"
            if with_se:
                se = mean_se(pts)[1]
                z = mean / se if se > 0 else math.copysign(math.inf, mean)
                if s not in lowest_z or z < lowest_z[s][0]:
                    lowest_z[s] = (z, o)
                cell = f"{mean:+.0f} ± {se:.0f}"
                if mean < -LOSS_SE * se:
                    losses[s].append(o)
                    cell += " (loss)"
            if game == "chaos":
                cell += f" | {statistics.fmean(r['final'] for r in res[(s, o)]):+.3f}"
            cells.append(cell)
        print(f"| {o} | " + " | ".join(cells) + " |")
    field = len(opponents) - len(SUBJECTS)
    print(f"\nMean over the {field} other bots (neither subject):")
    for s in SUBJECTS:
        print(f"- {s}: {statistics.fmean(means[s]):+.1f} net points per match")
    a, b = (statistics.fmean(means[s]) for s in SUBJECTS)
    print(f"- ratio {SUBJECTS[0]} / {SUBJECTS[1]}: {a / b:.3f}")
    for s in SUBJECTS:
        print(f"- {s}'s worst opponent: {worst[s][1]} ({worst[s][0]:+.0f})")
    if with_se:
        for s in SUBJECTS:
            z, o = lowest_z[s]
            print(
                f"- {s}'s losses (mean < -{LOSS_SE:g} SE): {', '.join(losses[s]) or 'none'}; "
                f"its lowest mean / SE: {o} ({z:+.1f})"
            )
    conditions(len(jobs_list), jobs, load_before, started)


def gain_table(rounds: int, seeds: int, jobs: int) -> None:
    jobs_list = [
        (s, o, k, tok)
        for s in DECEIVERS
        for o in PREDICTORS
        for k in range(seeds)
        for tok in (50, 0)
    ]
    started, load_before = datetime.datetime.now(datetime.UTC), _load()
    with ProcessPoolExecutor(jobs) as pool:
        rows = list(
            pool.map(_play_job, [(s, o, "chaos", rounds, k + 1, tok) for s, o, k, tok in jobs_list])
        )
    res = {(s, o, k, tok): r for (s, o, k, tok), r in zip(jobs_list, rows, strict=True)}
    print(
        f"\nTokens against prediction-based bots: Chaos League, {rounds:,} rounds, seeds "
        f"1..{seeds} (seats alternate), each match played with 50 tokens and with "
        "--tokens 0 on the same seed. Gain = Final with tokens minus Final without, "
        "mean with a 95% interval; DE = deception efficiency with tokens:\n"
    )
    print("| bot | opponent | Final gain | points gain | DE | tokens spent |")
    print("|---|---|---:|---:|---:|---:|")
    summary = []
    for s in DECEIVERS:
        all_gain, all_de = [], []
        for o in PREDICTORS:
            on = [res[(s, o, k, 50)] for k in range(seeds)]
            off = [res[(s, o, k, 0)] for k in range(seeds)]
            gain = [a["final"] - b["final"] for a, b in zip(on, off, strict=True)]
            pts = [a["points"] - b["points"] for a, b in zip(on, off, strict=True)]
            de = [a["deception_efficiency"] for a in on]
            all_gain += gain
            all_de += de
            g, gh = interval(gain)
            print(
                f"| {s} | {o} | {g:+.4f} ± {gh:.4f} | {statistics.fmean(pts):+.0f} "
                f"| {statistics.fmean(de):+.4f} | {statistics.fmean(a['spent'] for a in on):.0f} |"
            )
        g, gh = interval(all_gain)
        summary.append((s, g, gh, statistics.fmean(all_de)))
    print(f"\nOver all {len(PREDICTORS)} opponents:\n")
    print("| bot | Final gain from tokens (95% interval) | mean deception efficiency |")
    print("|---|---:|---:|")
    for s, g, gh, de in summary:
        print(f"| {s} | {g:+.4f} ± {gh:.4f} | {de:+.4f} |")
    conditions(len(jobs_list), jobs, load_before, started)


REACT_EVERY = 2  # every other round of the last tenth is probed
REACT_BEST = 50  # a match has 50 tokens: the credit of the best 50 probes


def reaction(opp: str, seed: int, rounds: int) -> dict | None:
    """The champion against ``opp`` in-process without tokens (the --tokens 0
    twin). In the last tenth, every REACT_EVERY rounds, a deep copy of the
    opponent is asked what it would play next if it had been shown each move;
    the whole-match reply table (the scoring's own) turns each of those replies
    into the credit a fake could have earned, if forecast exactly and beaten."""
    import copy

    import chaosbot
    import numpy as np

    from referee.games.chaos_scoring import response_model

    subject, other = python_class("champion"), python_class(opp)
    if subject is None or other is None:
        return None
    seat = (seed - 1) % 2
    classes = (subject, other) if seat == 0 else (other, subject)
    bots = [
        c(chaosbot.hello_message("chaos", rounds, s, 2 * seed + s, 0))
        for s, c in enumerate(classes)
    ]
    moves = bots[0].moves
    index = {m: i for i, m in enumerate(moves)}
    last: list[str | None] = [None, None]
    ours: list[int] = []  # our real move by round index
    theirs: list[int] = []
    probes: dict[int, list[int]] = {}  # round index t: their reply to each move shown in t
    probe_from = rounds - rounds // 10
    for rnd in range(1, rounds + 1):
        msgs = [
            {
                "type": "turn",
                "round": rnd,
                "opponent_last_visible": last[1 - s],
                "self_last_real": last[s],
                "opponent_deception_bucket": "EMPTY",
            }
            for s in (0, 1)
        ]
        t = rnd - 2  # the round whose shown move the opponent reacts to now
        if t >= probe_from and t % REACT_EVERY == 0:
            alt = []
            for v in moves:
                twin = copy.deepcopy(bots[1 - seat])
                reply = twin.handle_turn(dict(msgs[1 - seat], opponent_last_visible=v), strict=True)
                alt.append(index[reply["real_move"]])
            probes[t] = alt
        last = [bots[s].handle_turn(msgs[s], strict=True)["real_move"] for s in (0, 1)]
        ours.append(index[last[seat]])  # type: ignore[index]
        theirs.append(index[last[1 - seat]])  # type: ignore[index]
    n = len(moves)
    counts = [[0] * n for _ in range(n)]
    for x, y in zip(ours[:-1], theirs[1:], strict=True):
        counts[x][y] += 1
    f = response_model(np.array(counts, dtype=np.int64))
    credits, reacting = [], 0
    for t, alt in probes.items():
        r = ours[t]
        reacting += len(set(alt)) > 1
        credits.append(max([0.0] + [f[v, o] - f[r, o] for v, o in enumerate(alt) if v != r]))
    credits.sort(reverse=True)
    return {
        "reacting": reacting / len(probes),
        "over_cost": sum(c > 0.1 for c in credits) / len(credits),
        "best": statistics.fmean(credits[:REACT_BEST]),
        "spread": float((f.max(axis=0) - f.min(axis=0)).max()),
    }


def _react_job(job: tuple) -> dict | None:
    return reaction(*job)


def react_table(rounds: int, seeds: int, jobs: int) -> None:
    from referee.games.chaos_scoring import DECEPTION_PRIOR, TOKEN_COST

    opponents = [o for o in PREDICTORS if python_class(o) is not None]
    jobs_list = [(o, k + 1, rounds) for o in opponents for k in range(seeds)]
    started, load_before = datetime.datetime.now(datetime.UTC), _load()
    with ProcessPoolExecutor(jobs) as pool:
        rows = list(pool.map(_react_job, jobs_list))
    print(
        f"\nHow the Python prediction-based bots react to the shown move: the champion "
        f"against each without tokens, {rounds:,} rounds, seeds 1..{seeds}; in every "
        f"{'other' if REACT_EVERY == 2 else str(REACT_EVERY) + 'th'} round of the last "
        "tenth, a copy of the opponent answers each move the champion could have shown. "
        "Reacting = share of those rounds where its reply depends on the shown move; "
        f"credit = the most a fake could earn there (reply forecast exactly and beaten), "
        f"as the whole-match reply table scores it; DE = the efficiency of "
        f"{REACT_BEST} tokens at the best {REACT_BEST} credits; spread = the largest "
        "gap between two rows of that table in one column:\n"
    )
    print("| opponent | reacting | credit > token cost | best 50 credits | DE at best | spread |")
    print("|---|---:|---:|---:|---:|---:|")
    for o in opponents:
        rs = [r for (oo, _, _), r in zip(jobs_list, rows, strict=True) if oo == o and r]
        best = statistics.fmean(r["best"] for r in rs)
        de = (REACT_BEST * (best - TOKEN_COST)) / (REACT_BEST + DECEPTION_PRIOR)
        print(
            f"| {o} | {statistics.fmean(r['reacting'] for r in rs):.0%} "
            f"| {statistics.fmean(r['over_cost'] for r in rs):.0%} | {best:.3f} | {de:+.3f} "
            f"| {statistics.fmean(r['spread'] for r in rs):.2f} |"
        )
    skipped = [o for o in PREDICTORS if o not in opponents]
    if skipped:
        print(f"\n(not probed, not Python bots: {', '.join(skipped)})")
    conditions(len(jobs_list), jobs, load_before, started)


def pick_split(opp: str, seed: int) -> tuple[int, int, int]:
    """The champion against ``opp`` in classic RoShamBo (1000 throws, in-process):
    (points, points in the rounds it played its meta layer's pick, those rounds)."""
    subject, other = python_class("champion"), python_class(opp)
    if subject is None or other is None:
        raise SystemExit(f"strength: {opp} is not a Python bot (noloss plays in-process)")
    import chaosbot  # importable once python_class has put the bots on the path

    played: list[bool] = []

    class Logged(subject):  # type: ignore[misc, valid-type]
        def choose(self) -> int:
            move = int(super().choose())
            played.append(bool(self.pick_played))
            return move

    seat = (seed - 1) % 2
    pair = (Logged, other) if seat == 0 else (other, Logged)
    r = chaosbot.play(*pair, game="roshambo", rounds=1000, seeds=(2 * seed, 2 * seed + 1))
    pts = [chaosbot.outcome(*(real if seat == 0 else real[::-1])) for real in r["real"]]
    picked = [p for p, was in zip(pts, played, strict=True) if was]
    return r["points"][seat], sum(picked), len(picked)


def _split_job(job: tuple) -> tuple[int, int, int]:
    return pick_split(*job)


def noloss_table(opponents: list[str], seeds: int, first_seed: int, jobs: int) -> None:
    """Where the champion's result is near zero: how much of it its picks made.

    A round in which the champion plays its random move scores 0 in expectation
    against any opponent (the move depends on nothing the opponent has seen), so
    the expected result of a match is the expected points of the rounds it plays
    its meta layer's pick; those are measured with a much smaller error than the
    whole match's points, most of whose variance is the random rounds'."""
    jobs_list = [(o, first_seed + k) for o in opponents for k in range(seeds)]
    started, load_before = datetime.datetime.now(datetime.UTC), _load()
    with ProcessPoolExecutor(jobs) as pool:
        rows = list(pool.map(_split_job, jobs_list))
    print(
        f"\nThe champion where its result is near zero: RoShamBo, 1,000 rounds, seeds "
        f"{first_seed}..{first_seed + seeds - 1} (seats alternate), in-process. Points = "
        "mean net points per match ± SE; pick rounds = the share of rounds it played its "
        "meta layer's pick (the others: its random move, 0 expected) and the mean points "
        f"per match those rounds scored ± SE; a loss is a mean more than {LOSS_SE:g} SE "
        "below 0:\n"
    )
    print("| opponent | points | pick rounds | points in pick rounds |")
    print("|---|---:|---:|---:|")
    for o in opponents:
        rs = [r for (oo, _), r in zip(jobs_list, rows, strict=True) if oo == o]
        m, se = mean_se([float(r[0]) for r in rs])
        pm, pse = mean_se([float(r[1]) for r in rs])
        share = sum(r[2] for r in rs) / (1000 * len(rs))
        flag = " (loss)" if pm < -LOSS_SE * pse else ""
        print(f"| {o} | {m:+.1f} ± {se:.1f} | {share:.0%} | {pm:+.1f} ± {pse:.1f}{flag} |")
    conditions(len(jobs_list), jobs, load_before, started)


def timing(rounds: int) -> None:
    started, load_before = datetime.datetime.now(datetime.UTC), _load()
    bot = ROOT / "sample_bots" / "python" / "champion.py"
    out = subprocess.run(
        [sys.executable, str(bot), "--selftest-timing", str(rounds)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    print(f"\nChampion per-move CPU time, in-process, {rounds:,} rounds:\n")
    print("```\n" + out.strip() + "\n```")
    r = match("champion", "iocaine", "chaos", rounds, 1, cli=True)
    cpu = {s["label"]: s["verdict"]["cpu_s"] for s in r["seats"]}
    print(
        f"\nA real {rounds:,}-round match (champion vs iocaine, seed 1): champion's CPU "
        f"{cpu['champion']:.2f} s (Iocaine's {cpu['iocaine']:.2f} s), wall {r['wall_s']:.1f} s."
    )
    conditions(1, 1, load_before, started)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--part", nargs="+", default=["classic", "chaos", "gain", "timing"])
    p.add_argument("--classic-seeds", type=int, default=10)
    p.add_argument("--chaos-seeds", type=int, default=2)
    p.add_argument("--gain-seeds", type=int, default=10)
    p.add_argument("--chaos-rounds", type=int, default=10_000)
    p.add_argument("--timing-rounds", type=int, default=20_000)
    p.add_argument("--react-seeds", type=int, default=2)
    p.add_argument("--noloss-seeds", type=int, default=100)
    p.add_argument(
        "--noloss-opponents",
        nargs="+",
        default=["random", "h-pi", "h-histtheirs", "h-ensemble", "h-ensemble-slow"],
    )
    p.add_argument(
        "--first-seed",
        type=int,
        help="classic, historic, noloss: start at this seed (default 1, or 101 with --tune)",
    )
    p.add_argument("-j", type=int, default=2)
    p.add_argument("--cli", action="store_true", help="every match through referee match")
    p.add_argument(
        "--tune", action="store_true", help="historic: the tuning set and seeds, not the reported"
    )
    args = p.parse_args()
    global IN_PROCESS
    IN_PROCESS = not args.cli
    first_seed = args.first_seed or (101 if args.tune else 1)
    if "classic" in args.part:
        field_table("roshambo", 1000, args.classic_seeds, args.j, first_seed=first_seed)
    if "historic" in args.part:
        # The classic field enlarged by the historic bots; --tune plays the tuning
        # set on seeds 101.. instead of the reported set on seeds 1.. .
        which = "tune" if args.tune else "report"
        field_table(
            "roshambo",
            1000,
            args.classic_seeds,
            args.j,
            extra=list(historic_bots(which)),
            first_seed=first_seed,
            with_se=True,
        )
    if "noloss" in args.part:
        noloss_table(
            args.noloss_opponents,
            args.noloss_seeds,
            first_seed,
            args.j,
        )
    if "chaos" in args.part:
        field_table("chaos", args.chaos_rounds, args.chaos_seeds, args.j)
    if "gain" in args.part:
        gain_table(args.chaos_rounds, args.gain_seeds, args.j)
    if "react" in args.part:
        react_table(args.chaos_rounds, args.react_seeds, args.j)
    if "timing" in args.part:
        timing(args.timing_rounds)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
