"""Game rules, pure and synchronous. ``GAMES`` maps a game's name to its class."""

from __future__ import annotations

from .base import Fault, Game, GameResult, SeatResult
from .chaos import ChaosLeague, RoShamBo
from .ctm import Ctm
from .liars_dice import LiarsDice
from .rps_stuff import RockPaperStuff

GAMES: dict[str, type[Game]] = {
    ChaosLeague.name: ChaosLeague,
    RoShamBo.name: RoShamBo,
    LiarsDice.name: LiarsDice,
    RockPaperStuff.name: RockPaperStuff,
    Ctm.name: Ctm,
}

__all__ = ["GAMES", "Fault", "Game", "GameResult", "SeatResult", "ChaosLeague", "RoShamBo"]
