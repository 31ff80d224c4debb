"""Fault kinds and the per-bot verdict a match records.

A *fault* is one thing a bot did wrong, with the round it happened in. A
*verdict* is the per-bot summary of a whole match: its final status (the worst
fault, or ``ok``) plus the measurements a judge needs to trust it.
"""

from __future__ import annotations

import enum
from typing import Any

import msgspec


class FaultKind(enum.StrEnum):
    """What a bot did wrong. The value is the name written in replays and results."""

    # Round faults: the bot loses the round and plays on (until too many).
    TIMEOUT = "timeout"
    PROTOCOL_ERROR = "protocol_error"  # not a valid message, or for another round
    ILLEGAL_MOVE = "illegal_move"  # a valid message the rules do not allow now

    # Fatal faults: the bot is disqualified at once.
    UNSOLICITED_OUTPUT = "unsolicited_output"
    LINE_TOO_LONG = "line_too_long"
    CLOSED_STDIN = "closed_stdin"
    CLOSED_STDOUT = "closed_stdout"
    CRASH = "crash"
    MEMORY_LIMIT = "memory_limit"
    CPU_LIMIT = "cpu_limit"
    OUTPUT_LIMIT = "output_limit"
    PROCESS_LIMIT = "process_limit"
    HANDSHAKE = "handshake"
    TOO_MANY_FAULTS = "too_many_faults"
    ESCAPED_PROCESS = "escaped_process"
    DISK_LIMIT = "disk_limit"  # wrote more than --disk-mib (or too many entries)
    CPU_SHARE = "cpu_share"  # computed beyond its share while its opponent thought

    # Not the bot's fault: the referee could not start or contain it, or could not
    # keep another bot from taking what it needed (a process cap shared by both
    # seats). Neither a round fault nor fatal: recorded, never counted against it.
    SANDBOX_ERROR = "sandbox_error"


TIMEOUT = FaultKind.TIMEOUT
PROTOCOL_ERROR = FaultKind.PROTOCOL_ERROR
ILLEGAL_MOVE = FaultKind.ILLEGAL_MOVE
UNSOLICITED_OUTPUT = FaultKind.UNSOLICITED_OUTPUT
LINE_TOO_LONG = FaultKind.LINE_TOO_LONG
CLOSED_STDIN = FaultKind.CLOSED_STDIN
CLOSED_STDOUT = FaultKind.CLOSED_STDOUT
CRASH = FaultKind.CRASH
MEMORY_LIMIT = FaultKind.MEMORY_LIMIT
CPU_LIMIT = FaultKind.CPU_LIMIT
OUTPUT_LIMIT = FaultKind.OUTPUT_LIMIT
PROCESS_LIMIT = FaultKind.PROCESS_LIMIT
HANDSHAKE = FaultKind.HANDSHAKE
TOO_MANY_FAULTS = FaultKind.TOO_MANY_FAULTS
ESCAPED_PROCESS = FaultKind.ESCAPED_PROCESS
DISK_LIMIT = FaultKind.DISK_LIMIT
CPU_SHARE = FaultKind.CPU_SHARE
SANDBOX_ERROR = FaultKind.SANDBOX_ERROR

ROUND_FAULTS = frozenset({TIMEOUT, PROTOCOL_ERROR, ILLEGAL_MOVE})
FATAL_FAULTS = frozenset(
    {
        UNSOLICITED_OUTPUT,
        LINE_TOO_LONG,
        CLOSED_STDIN,
        CLOSED_STDOUT,
        CRASH,
        MEMORY_LIMIT,
        CPU_LIMIT,
        OUTPUT_LIMIT,
        PROCESS_LIMIT,
        DISK_LIMIT,
        CPU_SHARE,
        HANDSHAKE,
        TOO_MANY_FAULTS,
    }
)


class Fault(msgspec.Struct, frozen=True, omit_defaults=True):
    """A seat's failure to give a valid action, or worse: what a game's ``check``
    returns for an action it refuses, and what a step records for a seat."""

    kind: FaultKind
    detail: str = ""


# When several faults happened, the verdict's status is the first of these found.
STATUS_PRIORITY = (
    SANDBOX_ERROR,
    MEMORY_LIMIT,
    CPU_LIMIT,
    OUTPUT_LIMIT,
    PROCESS_LIMIT,
    DISK_LIMIT,
    CPU_SHARE,
    LINE_TOO_LONG,
    UNSOLICITED_OUTPUT,
    CLOSED_STDIN,
    CLOSED_STDOUT,
    CRASH,
    HANDSHAKE,
    TIMEOUT,
    PROTOCOL_ERROR,
    ILLEGAL_MOVE,
    TOO_MANY_FAULTS,
    ESCAPED_PROCESS,
)


class FaultRecord(msgspec.Struct, frozen=True, omit_defaults=True):
    """One fault: where, what, and a human-readable detail."""

    round: int
    seat: int
    kind: FaultKind
    detail: str = ""


class Verdict(msgspec.Struct):
    """Everything the referee measured about one bot in one match."""

    status: str = "ok"
    round: int | None = None  # round of the fault that set ``status``
    disqualified: bool = False
    exit_code: int | None = None
    signal: str | None = None
    killed_by_referee: bool = False
    wall_s: float = 0.0
    cpu_s: float = 0.0
    peak_rss_kib: int = 0
    bytes_in: int = 0  # bytes the bot read (referee -> bot)
    bytes_out: int = 0  # bytes the bot wrote on stdout
    max_move_ms: float = 0.0
    stderr_head: str = ""
    stderr_tail: str = ""
    stderr_bytes: int = 0
    escaped_processes: list[str] = msgspec.field(default_factory=list)
    faults: list[FaultRecord] = msgspec.field(default_factory=list)
    extra: dict[str, Any] = msgspec.field(default_factory=dict)


def worst_status(kinds: list[FaultKind]) -> str:
    """The status a verdict shows for a set of fault kinds."""
    present = set(kinds)
    for kind in STATUS_PRIORITY:
        if kind in present:
            return kind
    return "ok"
