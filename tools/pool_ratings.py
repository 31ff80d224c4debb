"""Rate the sample bots once, for ``referee gauntlet``'s fixed pool.

    python tools/pool_ratings.py [--game chaos] [--rounds 1000] [--repeats 6] [-j 2]

Plays ``--repeats`` double round robins of every sample bot of the game (each
pair of bots meets twice per repeat, seats swapped, through ``referee tournament``
with no finals; every repeat has its own seed), fits the pool's ratings with
``referee.stats.rating.fit_pool`` and writes ``referee/pools/<game>.json``: the
ratings, the games each bot played, the match length and how the file was made.
The tournaments are kept under ``--work`` (default out/pool-<game>), so an
interrupted run continues where it stopped.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from referee.catalog import sample_bots  # noqa: E402
from referee.stats.rating import PRIOR_SHARE, Game, fit_pool  # noqa: E402

SEED_BASE = 20261125


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--game", default="chaos")
    p.add_argument("--rounds", type=int, default=1000)
    p.add_argument("--repeats", type=int, default=6)
    p.add_argument("-j", type=int, default=2)
    p.add_argument("--work", type=Path, default=None)
    args = p.parse_args()
    work = args.work or ROOT / "out" / f"pool-{args.game}"
    bots = [b.name for b in sample_bots() if args.game in b.games and b.available()]
    games: list[Game] = []
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    for k in range(args.repeats):
        out = work / f"repeat-{k + 1}"
        results = out / "results.json"
        if not results.exists():
            cmd = [sys.executable, "-m", "referee", "tournament", "--quiet", "-j", str(args.j)]
            if (out / "tournament.sqlite").exists():
                cmd += ["--resume", str(out)]
            else:
                cmd += [*bots, "--game", args.game, "--rounds", str(args.rounds)]
                cmd += ["--legs", "2", "--finalists", "0", "--seed", str(SEED_BASE + k)]
                cmd += ["--out", str(out)]
            print(f"repeat {k + 1}/{args.repeats}: {' '.join(cmd[3:])}", file=sys.stderr)
            subprocess.run(cmd, cwd=ROOT, check=True)
        data = json.loads(results.read_text())
        index = {name: i for i, name in enumerate(bots)}
        for m in data["matches"]:
            a, b = (index[name] for name in m["bots"])
            winner = m["winner"]
            score = 0.5 if winner is None else float(winner == m["bots"][0])
            games.append(Game(a, b, score))
    ratings = fit_pool(len(bots), games)
    played = [sum(1 for g in games if i in (g.a, g.b)) for i in range(len(bots))]
    pool = {
        "game": args.game,
        "rounds": args.rounds,
        "scale": "logistic Elo; anchor: virtual drawn games against a bot rated 0",
        "prior_share": PRIOR_SHARE,
        "bots": {
            name: {"elo": round(r, 1), "games": n}
            for name, r, n in sorted(zip(bots, ratings, played, strict=True), key=lambda t: -t[1])
        },
        "produced": {
            "by": "python tools/pool_ratings.py "
            f"--game {args.game} --rounds {args.rounds} --repeats {args.repeats}",
            "started": started,
            "seeds": [SEED_BASE + k for k in range(args.repeats)],
            "matches": len(games),
        },
    }
    target = ROOT / "referee" / "pools" / f"{args.game}.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(pool, indent=1) + "\n")
    print(f"wrote {target}", file=sys.stderr)
    for name, row in pool["bots"].items():
        print(f"{name:>14} {row['elo']:+8.1f}  ({row['games']} games)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
