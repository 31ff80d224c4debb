"""The deception sample bots' claims, checked through the real CLI on 2,000-round matches.

1. The trickster's tokens pay: with tokens (50) its net points against the
   ``markov`` and ``frequency`` sample bots are higher than in the same matches
   (same seeds) with ``--tokens 0``.
2. The ``sceptic`` loses less to the trickster than ``markov`` does.

The trickster draws its random choices per round, so a match with tokens is the
same as its tokens-off twin until the first shadow (in the last 200 rounds) and
the difference is the tokens' doing, not the noise of two unrelated matches
(about +-100 points over 10,000 rounds). A trickster that never spent a token,
or whose tokens bought nothing, would show a difference near 0.
"""

from __future__ import annotations

import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest
from conftest import ROOT

# The trickster spends its tokens near the end, so a short match shows what a long
# one does (10,000 rounds gave +218 and +151 below).
ROUNDS = 2_000
SEEDS = (1, 2)
# Tokens-on minus tokens-off, summed over SEEDS; 0 means no effect. Measured:
# +199 against markov and +168 against frequency (1.5 to 2 points a token).
MIN_TOKEN_GAIN = 100
# The sceptic must lose at least this much less (summed over SEEDS) than markov.
# Measured: the sceptic -58, markov -551.
MIN_SCEPTIC_MARGIN = 250


def _match(a: str, b: str, seed: int, tokens: int | None = None) -> dict:
    cmd = [sys.executable, "-m", "referee", "match", a, b]
    cmd += ["--rounds", str(ROUNDS), "--seed", str(seed), "--json", "--no-replay"]
    if tokens is not None:
        cmd += ["--tokens", str(tokens)]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.fixture(scope="module")
def results() -> dict[tuple[str, int, int], dict]:
    """(opponent, seed, tokens) -> the trickster's (seat 0) and the opponent's stats."""
    jobs = [
        (opp, seed, tok) for opp in ("markov", "frequency") for seed in SEEDS for tok in (50, 0)
    ]
    jobs += [("sceptic", seed, 50) for seed in SEEDS]

    def run(job: tuple[str, int, int]) -> dict:
        opp, seed, tokens = job
        result = _match("trickster", opp, seed, tokens)
        assert result["reason"] == "complete"
        return {"trickster": result["seats"][0]["stats"], "opponent": result["seats"][1]["stats"]}

    with ThreadPoolExecutor(2) as pool:
        return dict(zip(jobs, pool.map(run, jobs), strict=True))


@pytest.mark.parametrize("opponent", ["markov", "frequency"])
def test_trickster_tokens_raise_its_score(results, opponent: str) -> None:
    gain = 0
    for seed in SEEDS:
        on = results[(opponent, seed, 50)]["trickster"]
        off = results[(opponent, seed, 0)]["trickster"]
        assert 0 < on["tokens_spent"] <= 50 and off["tokens_spent"] == 0
        assert not on["disqualified"] and on["faulted_rounds"] == 0
        gain += on["points"] - off["points"]
    assert gain > MIN_TOKEN_GAIN, f"trickster vs {opponent}: tokens gained {gain:+d} over {SEEDS}"


def test_sceptic_loses_less_than_markov(results) -> None:
    sceptic = sum(results[("sceptic", seed, 50)]["opponent"]["points"] for seed in SEEDS)
    markov = sum(results[("markov", seed, 50)]["opponent"]["points"] for seed in SEEDS)
    assert markov < 0, f"markov should lose to the trickster, got {markov:+d}"
    assert sceptic - markov > MIN_SCEPTIC_MARGIN, f"sceptic {sceptic:+d}, markov {markov:+d}"
