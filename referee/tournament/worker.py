"""A persistent match worker: ``python -m referee.tournament.worker``.

Reads one job per line on stdin (JSON: ``{"id", "bots": [{"command", "label"}],
"cfg": MatchConfig}``, optionally ``"cpus"``: the CPUs to play it on), plays it,
and writes one line per job on stdout:
``{"id", "ok": true, "outcome": <referee.outcome.MatchOutcome>}`` or
``{"id", "ok": false, "error": "..."}``. It exits at end of input. While a match
plays, the line ``{"spread":true}`` widens it to every CPU the worker may use.

The coordinator runs one worker per parallel match: each match's referee loop
is CPU-bound Python, so separate processes are what scale across cores.
If the coordinator goes away (its end of the pipe closes, e.g. it was killed)
while a match is being played, the match is cancelled, which kills its bots.
"""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import msgspec
import trio

from ..outcome import MatchOutcome


class Job(msgspec.Struct, omit_defaults=True):
    id: str
    bots: list[dict[str, Any]]
    cfg: dict[str, Any]
    # Whether the match may be confined to its worker's share of the CPUs (the
    # coordinator says so while every worker has a match): speed only.
    confine: bool = False
    # The CPUs the match, its referee and its bots run on (the executor fills it
    # in from ``confine`` and the worker's share); None: all the worker may use.
    cpus: list[int] | None = None


class Reply(msgspec.Struct, omit_defaults=True):
    id: str
    ok: bool
    outcome: MatchOutcome | None = None
    error: str | None = None


async def _serve(out_fd: int, nice_pending: bool = False) -> None:
    from ..bot_command import BotSpec
    from ..errors import SandboxFailure, UsageError
    from ..match import Match, MatchConfig
    from ..outcome import outcome_of
    from ..placement import pin_thread
    from ..sandbox import carry_nice, group_nice_to_carry

    decode_job = msgspec.json.Decoder(Job).decode
    encode = msgspec.json.Encoder().encode
    send, receive = trio.open_memory_channel[bytes](1)
    stdin = trio.lowlevel.FdStream(os.dup(0))
    all_cpus = os.sched_getaffinity(0)
    playing: list[Match] = []  # the match in progress, if any

    def spread() -> None:
        # Between matches there is nothing to widen: each job sets its own CPUs.
        for match in playing:
            match.spread(all_cpus)

    async def read_lines(cancel: trio.CancelScope) -> None:
        buf = b""
        async with send:
            while True:
                data = await stdin.receive_some(1 << 16)
                if not data:
                    # End of input: finish normally between jobs, or abandon the
                    # match in progress if the coordinator is gone mid-match.
                    cancel.cancel()
                    return
                buf += data
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    if line == SPREAD:
                        # Handled here, not queued: it concerns the match in progress.
                        spread()
                    elif line.strip():
                        await send.send(line)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(read_lines, nursery.cancel_scope)
        async with receive:
            async for line in receive:
                try:
                    job = decode_job(line)
                    specs = [msgspec.convert(b, BotSpec) for b in job.bots]
                    cfg = msgspec.convert(job.cfg, MatchConfig)
                except (msgspec.ValidationError, msgspec.DecodeError) as exc:
                    reply = Reply(id="?", ok=False, error=f"bad job: {exc}")
                else:
                    if nice_pending:  # the kernel asked to try again later
                        nice_pending = carry_nice(os.getpid(), group_nice_to_carry())
                    # The bots are started from this thread and inherit its CPUs.
                    pin_thread(set(job.cpus or ()) & all_cpus or all_cpus)
                    match = Match(specs, cfg)
                    playing.append(match)
                    try:
                        outcome = await match.run()
                        reply = Reply(id=job.id, ok=True, outcome=outcome_of(outcome))
                    except (UsageError, SandboxFailure) as exc:
                        # Retried, then the league stops with this message: neither is
                        # a bot's doing, so neither may be scored.
                        reply = Reply(id=job.id, ok=False, error=str(exc))
                    finally:
                        playing.clear()
                _write_all(out_fd, encode(reply) + b"\n")


WORKER_COMMAND = [sys.executable, "-m", "referee.tournament.worker"]


def worker_command(nice: int = 0) -> list[str]:
    """The command of a worker whose matches (its referee loop and the bots it starts,
    which inherit it) run ``nice`` steps below the caller's CPU priority."""
    return [*WORKER_COMMAND, "--nice", str(nice)] if nice else list(WORKER_COMMAND)


# A line the coordinator may send while a match plays: widen the match in progress
# (started confined to this worker's share of the CPUs) to every CPU the worker may
# use, because another worker has run out of matches.
SPREAD = b'{"spread":true}'


def worker_popen_args() -> dict[str, Any]:
    """Keyword arguments (besides the command and stderr) that start a worker, for
    subprocess.Popen and trio's open_process alike: pipes for jobs and replies, and
    a session of its own, so a terminal's Ctrl-C or a signal for the parent's
    process group never reaches the worker or its bots."""
    return {
        "stdin": subprocess.PIPE,
        "stdout": subprocess.PIPE,
        "start_new_session": True,
        "env": {**os.environ, "PYTHONUNBUFFERED": "1"},
    }


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    nice_pending = False
    if len(args) == 2 and args[0] == "--nice" and args[1].isdigit():
        # Before anything runs: the referee loop and every bot started from here play
        # at the lower priority, both seats alike (a bot cannot raise it again: see
        # sandbox.seccomp).
        os.nice(int(args[1]))
        # Where the kernel groups processes by session (autogroup), a nice value
        # counts only inside the session: our session's group (this worker was
        # started in one of its own) takes it too, as each bot's does (BotProcess).
        from ..sandbox import carry_nice, group_nice_to_carry

        nice_pending = carry_nice(os.getpid(), group_nice_to_carry())
    elif args:
        print(f"usage: {WORKER_COMMAND[-1]} [--nice N]", file=sys.stderr)
        return 2
    # Our stdout is the reply channel: keep a private copy of it and point fd 1 at
    # stderr, so a stray print anywhere cannot corrupt the protocol.
    out_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    # No signal handling of our own: the coordinator starts us in a session of our
    # own (Ctrl-C does not reach us or the bots) and stops us by closing our stdin.
    # An ignored signal would also be inherited by the bots.
    try:
        trio.run(_serve, out_fd, nice_pending)
    except BrokenPipeError:
        return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
