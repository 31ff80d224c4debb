"""A finished match as the referee reports it: ``referee match --json`` prints it,
a tournament worker sends it to its coordinator, a tournament stores it.

``MatchOutcome`` is the one typed form of that report; its JSON encoding is the
contract (fields in this order, none left out). ``outcome_of`` builds it from what
the match driver returns.
"""

from __future__ import annotations

from typing import Any

import msgspec

from .faults import Verdict


class SeatOutcome(msgspec.Struct):
    """One seat: who played it, how it placed, and the referee's verdict on it."""

    seat: int
    label: str | None
    name: str | None
    version: str | None
    command: list[str]
    sha256: str | None
    placement: int
    # The game's score components (the ranking one first) and counts; values keep
    # the type the game gave them (an int stays an int).
    scores: dict[str, Any]
    stats: dict[str, Any]
    verdict: Verdict


class RefereeUsage(msgspec.Struct):
    """The referee's own peak memory and CPU (not its children's): hostile output must
    never make it grow, and organisers size machines by it."""

    peak_rss_kib: int = 0
    user_s: float = 0.0
    system_s: float = 0.0
    idle_poll: bool = False  # whether idle CPUs were kept polling (referee/wakeup.py)
    # This match's share of that CPU by phase, and each bot's start-up CPU (see
    # referee.match.PlayedMatch): a league adds them up to say where its CPU went.
    setup_cpu_s: float = 0.0
    play_cpu_s: float = 0.0
    finish_cpu_s: float = 0.0
    bot_startup_cpu_s: list[float] = msgspec.field(default_factory=list)


class MatchOutcome(msgspec.Struct):
    """The machine-readable result of one match."""

    game: str
    params: dict[str, Any]
    seed: int
    winner: int | None
    reason: str
    steps: int
    wall_s: float
    play_s: float
    replay: str | None
    replay_hash: str
    containment: dict[str, Any]
    seats: list[SeatOutcome]
    referee: RefereeUsage = msgspec.field(default_factory=RefereeUsage)


def outcome_of(played: Any) -> MatchOutcome:
    """The outcome of a match the driver played (``referee.match.PlayedMatch``),
    with this process's own resource use."""
    header = played.header
    result = played.result
    seats = [
        SeatOutcome(
            seat=bot.seat,
            label=bot.label,
            name=bot.name,
            version=bot.version,
            command=bot.command,
            sha256=bot.sha256,
            placement=seat.placement,
            scores=seat.scores,
            stats=seat.stats,
            verdict=verdict,
        )
        for bot, seat, verdict in zip(header.bots, result.seats, played.verdicts, strict=True)
    ]
    return MatchOutcome(
        game=header.game,
        params=header.params,
        seed=header.seed,
        winner=result.winner,
        reason=result.reason,
        steps=result.steps,
        wall_s=round(played.wall_s, 3),
        play_s=round(played.play_s, 6),
        replay=played.replay,
        replay_hash=played.replay_hash,
        containment=header.containment,
        seats=seats,
        referee=RefereeUsage(
            peak_rss_kib=own_peak_rss_kib(),
            **own_cpu_s(),
            idle_poll=played.idle_poll,
            setup_cpu_s=played.setup_cpu_s,
            play_cpu_s=played.play_cpu_s,
            finish_cpu_s=played.finish_cpu_s,
            bot_startup_cpu_s=played.bot_startup_cpu_s,
        ),
    )


def own_cpu_s() -> dict[str, float]:
    """User and system CPU seconds of this process alone (bots excluded)."""
    import resource

    ru = resource.getrusage(resource.RUSAGE_SELF)
    return {"user_s": round(ru.ru_utime, 3), "system_s": round(ru.ru_stime, 3)}


def own_peak_rss_kib() -> int:
    """VmHWM of this process. Not ru_maxrss: that one starts at the parent's RSS at
    fork and survives exec, so it would report the launcher's memory, not ours."""
    try:
        with open("/proc/self/status", "rb") as f:
            for line in f:
                if line.startswith(b"VmHWM:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    import resource

    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)


_decoder = msgspec.json.Decoder(MatchOutcome)


def decode_outcome(data: bytes | str) -> MatchOutcome:
    """An outcome from its JSON (as stored by a tournament, or sent by a worker)."""
    return _decoder.decode(data)
