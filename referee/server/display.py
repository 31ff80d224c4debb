"""How the pages show figures to people: ages instead of timestamps, scores rounded,
ratings of bots with few games marked provisional. Pure functions; the exact values
stay in the JSON API."""

from __future__ import annotations

import calendar
import time
from typing import Any

# A bot with fewer games than this is shown as provisional: its rating is printed
# with that word, its interval only when it has a width, and no rank range or order
# probability (after a game or two they say little beyond the prior).
PROVISIONAL_GAMES = 10
# Decimals of the scores on the pages.
SCORE_DECIMALS = 3
_ISO = "%Y-%m-%dT%H:%M:%SZ"


def age(iso: str | None, now: float | None = None) -> str:
    """ "just now", "12 min ago", "3 h ago", "5 d ago" for a UTC ISO time of the
    database (the time itself goes in the title attribute)."""
    if not iso:
        return ""
    try:
        then = calendar.timegm(time.strptime(iso, _ISO))
    except ValueError:
        return iso
    seconds = (time.time() if now is None else now) - then
    if seconds < 60:
        return "just now"
    if seconds < 3600:
        return f"{int(seconds // 60)} min ago"
    if seconds < 2 * 86400:
        return f"{int(seconds // 3600)} h ago"
    return f"{int(seconds // 86400)} d ago"


def score(value: Any) -> str:
    """A score for people: whole numbers as they are, others to SCORE_DECIMALS."""
    if value is None:
        return ""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    if isinstance(value, int) or float(value).is_integer():
        return f"{int(value)}"
    return f"{value:.{SCORE_DECIMALS}f}"


def provisional(entry: Any) -> bool:
    """Whether a leaderboard entry (a dict or an Entry) has too few games for its
    rank range to mean anything."""
    games = entry["games"] if isinstance(entry, dict) else entry.games
    return bool(games) and games < PROVISIONAL_GAMES


def has_interval(entry: Any) -> bool:
    """Whether the entry's rating interval has a width worth printing."""
    low, high = (
        (entry["low"], entry["high"]) if isinstance(entry, dict) else (entry.low, entry.high)
    )
    return bool(high - low >= 1)


def score_pair(values: list[Any]) -> str:
    """Two seats' scores, "a : b", in one form: whole numbers only if both are."""
    if all(isinstance(v, int | float) and float(v).is_integer() for v in values):
        return " : ".join(str(int(v)) for v in values)
    return " : ".join(
        f"{v:.{SCORE_DECIMALS}f}" if isinstance(v, int | float) else score(v) for v in values
    )


def signed(value: float) -> str:
    """A rating as "+12" or "-3"; one that rounds to zero is "+0", never "-0"."""
    return f"{round(value) + 0:+d}"


FILTERS = {"age": age, "score": score, "score_pair": score_pair, "signed": signed}
TESTS = {"provisional": provisional, "with_interval": has_interval}
