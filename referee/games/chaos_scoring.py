"""Chaos League scoring (placeholder until the full model lands): standard only."""

from __future__ import annotations

from typing import Any


def score_match(history: Any) -> list[dict[str, float]]:
    pts = history.points.sum(axis=0) if len(history.points) else [0, 0]
    out = []
    for seat in (0, 1):
        forfeits = 0
        standard = float(pts[seat]) / history.rounds_total
        out.append({"final": 0.7 * standard, "standard": standard,
                    "anti_exploitation": 0.0, "deception_efficiency": 0.0})
    return out
