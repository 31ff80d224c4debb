"""Time Kaggle's ``rps`` environment (kaggle-environments) with five signs.

Runs inside bench/.kaggle-venv, never in the project's venv: the peer's
dependencies must not leak into the referee's. Two trivial agents play ``STEPS``
steps; prints one JSON line. AGENTS ``rock`` (the default): both always sign 0,
the counterpart of bench/cbot.c and bench/pybot.py; ``cycler-random``: one plays
the signs in turn, the other at random, as the sample bots ``cycler`` and
``random`` do.

    python kaggle_rps.py STEPS [AGENTS]
"""

import json
import random
import sys
import time

_rng = random.Random(1)


def rock(observation, configuration):  # noqa: ARG001 (the signature Kaggle calls)
    return 0


def cycler(observation, configuration):
    return observation.step % configuration.signs


def random_sign(observation, configuration):  # noqa: ARG001
    return _rng.randrange(configuration.signs)


AGENTS = {"rock": [rock, rock], "cycler-random": [cycler, random_sign]}


def main() -> None:
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    agents = AGENTS[sys.argv[2] if len(sys.argv) > 2 else "rock"]
    t_import = time.perf_counter()
    from importlib.metadata import version

    from kaggle_environments import make

    t_make = time.perf_counter()
    # episodeSteps counts the initial (empty) step too, hence + 1.
    env = make("rps", configuration={"episodeSteps": steps + 1, "signs": 5}, debug=False)
    t_run = time.perf_counter()
    env.run(agents)
    t_end = time.perf_counter()
    played = len(env.steps) - 1
    statuses = sorted({agent.status for agent in env.steps[-1]})
    print(
        json.dumps(
            {
                "version": version("kaggle-environments"),
                "steps": played,
                "signs": env.configuration.signs,
                "statuses": statuses,
                "import_s": t_make - t_import,
                "make_s": t_run - t_make,
                "run_s": t_end - t_run,
                "rounds_per_s": played / (t_end - t_run),
            }
        )
    )


if __name__ == "__main__":
    main()
