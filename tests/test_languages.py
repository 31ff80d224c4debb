"""Full 10,000-round matches between bots in different languages, through the CLI.

Each replay is then checked independently of the referee's own bookkeeping:
scores recomputed from the recorded real moves equal the footer, and what each
bot was shown equals the opponent's real move except where a token was spent.
"""

from __future__ import annotations

import itertools

import pytest
from conftest import match_json

from referee.catalog import sample_bots
from referee.games.chaos import MOVES, PAYOFF
from referee.replay import read_replay


def pick(language: str) -> str:
    for bot in sample_bots():
        if bot.language.lower() == language and "chaos" in bot.games and bot.available():
            return bot.name
    pytest.fail(f"no built {language} sample bot in the catalog (run 'make bots')")


PAIRS = [("python", "c"), ("c", "javascript"), ("javascript", "python")]


@pytest.mark.parametrize(("lang0", "lang1"), PAIRS, ids=[f"{a}-vs-{b}" for a, b in PAIRS])
def test_full_match_between_languages(tmp_path, lang0, lang1):
    bot0, bot1 = pick(lang0), pick(lang1)
    replay_path = tmp_path / "match.jsonl"
    result = match_json(bot0, bot1, "--seed", "11", "--replay", str(replay_path), timeout=240)
    assert result["steps"] == 10_000 and result["reason"] == "complete"
    for seat in result["seats"]:
        assert seat["verdict"]["status"] == "ok", seat["verdict"]
    replay = read_replay(replay_path)
    assert len(replay.steps) == 10_000
    assert [s.n for s in replay.steps] == list(range(1, 10_001))
    assert replay.footer is not None
    points = [0, 0]
    tokens = [50, 50]
    for step, nxt in itertools.pairwise([*replay.steps, None]):
        real = [MOVES.index(step.act[seat]["real_move"]) for seat in (0, 1)]
        p0 = PAYOFF[real[0]][real[1]]
        points[0] += p0
        points[1] -= p0
        for seat in (0, 1):
            act = step.act[seat]
            spent = bool(act.get("shadow_request")) and tokens[seat] > 0
            tokens[seat] -= spent
            shown = act["shadow_move"] if spent else act["real_move"]
            assert step.out[3][seat] == tokens[seat]
            if nxt is not None:
                seen = nxt.obs[1 - seat]["opponent_last_visible"]
                assert seen == shown, (step.n, seat)
                if not spent:
                    assert seen == act["real_move"]
    footer_points = [s["stats"]["points"] for s in result["seats"]]
    assert footer_points == points
    stats = replay.footer.result.seats
    assert [s.stats["points"] for s in stats] == points
    assert [s.stats["tokens_spent"] for s in stats] == [50 - t for t in tokens]
