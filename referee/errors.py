"""Errors a user can act on, and the exit codes every command shares.

Any module may import this one; it imports nothing from the referee. A command
raises ``CliError`` (or one of the errors below, which the command turns into
one) and ``referee.cli.main`` prints it as one line and exits with its code.

Exit codes (all subcommands):
  0  done (for ``match``: the match completed, whoever won)
  1  the referee itself failed (a bug: please report it)
  2  bad command line, missing or non-executable bot, bad config
  3  ``match``: a bot failed to start or failed the handshake (result recorded)
  4  ``verify``/``rerun``: the replay does not check out, or is corrupt
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_INTERNAL = 1
EXIT_USAGE = 2
EXIT_BOT_FAILED = 3
EXIT_BAD_REPLAY = 4
EXIT_INTERRUPTED = 130


class CliError(Exception):
    """A user error: printed as one line, exit code attached."""

    def __init__(self, message: str, code: int = EXIT_USAGE) -> None:
        super().__init__(message)
        self.code = code


class UsageError(Exception):
    """A problem with what the user asked for (bad command, bad parameter)."""


class SandboxFailure(Exception):
    """The containment layer could not start a bot: not charged to the bot.

    Recognised by what the launch wrote on the bot's stderr: a launch that got as
    far as starting the bot says so before the bot runs (``sandbox.LAUNCH_TOKEN``),
    so a bot that prints a launcher's error and exits has still crashed."""


class ReplayError(Exception):
    """A replay that cannot be read at all (missing, not a replay, bad header)."""
