"""Building one bot's launch: its command resolved, the paths it may see, its
environment, and the prefix its layer puts before it."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec

from . import registry
from .base import (
    DEFAULT_PATH,
    MARKER_ENV,
    Launch,
    LaunchPlan,
    Layer,
    LayerKind,
    Limits,
)
from .identity import BotUnreachable, lease_uid, release_uid, unreachable
from .paths import bot_paths, resolve_command


def prepare_launch(
    command: Sequence[str | os.PathLike[str]],
    *,
    bot_dir: Path | None,
    scratch: Path,
    limits: Limits,
    layer: Layer,
    marker: str = "",
    cgroup_procs: Sequence[str] = (),
) -> Launch:
    """Build the argv, environment and cwd that start ``command`` contained in ``layer``.

    Relative paths in ``command`` are resolved against the referee's current directory
    (the bot's cwd becomes ``scratch``); ``command[0]`` is looked up on the referee's
    PATH. Inside bwrap every path keeps its host name, so nothing else is rewritten.

    Files visible to the bot under bwrap and Landlock: ``bot_dir`` (if given), the
    directory of the first argument that names an existing file or directory (the
    script, jar or class dir), the program itself and the install prefix of every link
    on its symlink chain (a venv, pyenv, nvm), ``/usr`` and a few ``/etc`` entries.
    """
    kind = registry.kind(layer.name)
    argv, program, script = resolve_command(command)
    scratch = scratch.resolve()
    scratch.mkdir(mode=0o700, parents=True, exist_ok=True)
    ro_paths = bot_paths(program, script, bot_dir)
    identity = lease_uid(limits)
    try:
        if identity is not None:
            _check_reach(identity, program, script)
            os.chown(scratch, *identity)
        launch = _launch(kind, argv, program, scratch, ro_paths, limits, layer, marker, identity)
    except BaseException:
        release_uid(identity[0] if identity else None)
        raise
    if cgroup_procs:
        # The first process joins the bot's cgroup (writing "0" to a cgroup.procs
        # file moves the writer) and only then execs the launch: nothing of the bot
        # can run, or fork, outside it.
        join = [layer.tools["sh"], "-c", SH_JOIN_CGROUP, "sh", *cgroup_procs, "--"]
        launch = msgspec.structs.replace(launch, argv=join + launch.argv)
    return launch


SH_JOIN_CGROUP = (
    'while [ "$1" != -- ]; do echo 0 > "$1" || { '
    'printf "referee-sandbox: cannot join the bot\'s cgroup (%s)\\n" "$1" >&2; exit 126; }; '
    'shift; done; shift; exec "$@"'
)


def _check_reach(identity: tuple[int, int], program: str, script: str | None) -> None:
    """Refuse, with the fix, a bot whose own files its uid cannot open (the referee
    as root, the bot in a directory only root may enter). Only the bot's own
    directory and file count: every layer makes the directories above them
    reachable (bwrap builds the tree, the shim mounts over closed ones)."""
    wanted = [(program, os.X_OK)]
    if script is not None:
        wanted.append((script, os.R_OK))
    for path, need in wanted:
        why = unreachable(path, *identity, need)
        if why is not None:
            raise BotUnreachable(
                f"the bot runs as uid {identity[0]}, which cannot "
                f"{'run' if need == os.X_OK else 'read'} {path} ({why}): let other users "
                "in (chmod o+x on its directories, o+r on its files) or keep it elsewhere"
            )


def _launch(
    kind: LayerKind,
    argv: list[str],
    program: str,
    scratch: Path,
    ro_paths: list[str],
    limits: Limits,
    layer: Layer,
    marker: str,
    identity: tuple[int, int] | None,
) -> Launch:

    path_dirs = DEFAULT_PATH.split(":")
    program_dir = str(Path(program).parent)
    if program_dir not in path_dirs:
        path_dirs.insert(0, program_dir)
    env = {
        "PATH": ":".join(path_dirs),
        "HOME": str(scratch),
        "LANG": "C.UTF-8",
        "TMPDIR": "/tmp" if kind.private_tmp else str(scratch),
    }
    if marker:
        env[MARKER_ENV] = marker
    reach = (*ro_paths, program, str(scratch))
    plan = LaunchPlan(layer, limits, ro_paths, scratch, env, identity, reach)
    prefix = kind.launch_prefix(plan)
    return Launch(
        argv=prefix.argv + argv,
        env=env,
        cwd=str(scratch),
        layer=layer.name,
        pass_fds=prefix.pass_fds,
        uid=identity[0] if identity else os.getuid(),
        leased=identity is not None,
        signal_as_exit_code=getattr(kind, "signal_as_exit_code", False),
    )


def containment_record(layer: Layer, limits: Limits, uids: Sequence[int] = ()) -> dict[str, Any]:
    """The ``containment`` section of a match record: ``uids`` are the ones the bots
    ran as, seat by seat; their capability sets were empty (the layer's self-test
    checks that a bot holds none)."""
    return {
        "layer": layer.name,
        "description": layer.description,
        "isolation": list(layer.isolation),
        "seccomp": list(layer.seccomp),
        "warning": layer.warning,
        "limits": msgspec.to_builtins(limits),
        "bot_uids": list(uids),
        "capabilities": [],
    }
