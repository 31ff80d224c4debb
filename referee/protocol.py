"""The wire protocol between the referee and a bot: version 1.

Every message is one UTF-8 JSON object on one ``\\n``-terminated line. The
referee's messages carry a ``type`` tag; the bot's replies are untagged, since a
bot only ever sends one kind of message at each point of the conversation.

Conversation::

    referee -> bot   {"type": "hello", ...}            once
    bot -> referee   {"name": "...", "version": "..."}  within the handshake timeout
    referee -> bot   {"type": "turn", ...}              each step the bot must act in
    bot -> referee   a game's action object             within the move deadline
    referee -> bot   {"type": "end", ...}               once; the bot must then exit

This module holds the game-independent envelope. Each game defines its own
turn observation and action Structs (see ``referee.games``); the JSON Schemas
in ``protocol/schemas`` are generated from all of them (``referee schemas``).
"""

from __future__ import annotations

from typing import Any

import msgspec

PROTOCOL_VERSION = 1

# A bot's reply line may not exceed this many bytes (newline excluded) unless the
# organiser raises it. Chaos League replies are under 100 bytes.
DEFAULT_MAX_LINE = 64 * 1024


class TimeLimits(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Time limits as the bot is told them, in milliseconds."""

    handshake_ms: int
    move_ms: int
    bank_ms: int


class Hello(msgspec.Struct, tag="hello", tag_field="type", frozen=True):
    """First message to a bot: who it is and what it plays."""

    protocol: int
    game: str
    params: dict[str, Any]
    seat: int
    seats: int
    seed: int
    time: TimeLimits


class Ready(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The bot's answer to ``hello``."""

    name: str
    version: str | None = None


class End(msgspec.Struct, tag="end", tag_field="type", frozen=True):
    """Last message to a bot. After it the bot must exit; its stdin is then closed.
    ``result`` is the match's result as the replay's footer has it (winner, reason,
    steps, each seat's placement, scores and stats); null if the match was aborted."""

    reason: str
    rounds: int
    result: dict[str, Any] | None = None


# Names are free text but are shown in tables and file names; keep them sane.
MAX_NAME_LENGTH = 64

encoder = msgspec.json.Encoder()
ready_decoder = msgspec.json.Decoder(Ready)


def encode_line(message: msgspec.Struct) -> bytes:
    """Encode one message as a wire line, newline included."""
    return encoder.encode(message) + b"\n"
