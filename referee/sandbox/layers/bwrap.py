"""``bwrap``: bubblewrap's user, pid, net, ipc, uts and mount namespaces; a read-only
view of ``/usr``, the bot's own files and its interpreter; sized tmpfs for ``/tmp``
and ``/dev/shm``, and a tmpfs of ``Limits.disk_mib`` as its scratch directory (its
cwd and HOME): a write past it fails with ENOSPC and there is nothing to walk
("disk"); bwrap cannot cap a tmpfs's inodes, so the watchdog reads their count with
statvfs (sandbox/disk.py). Then the seccomp filter, which bwrap installs on the bot's
side only, after its own setup (``--seccomp FD``, the read end of a pipe in
``Launch.pass_fds``)."""

from __future__ import annotations

import os
import shutil

from ..base import (
    MIB,
    SH_ANNOUNCE,
    LaunchPlan,
    Layer,
    Prefix,
    SandboxError,
    common_tools,
    limits_by,
    limits_prefix,
    require_userns,
    run_quiet,
    seccomp_pipe,
    with_seccomp,
)
from ..paths import TOP_LEVEL_SYSTEM, etc_paths

# bwrap's monitor and its pid 1 keep fds 0-2 for the whole match, so a bot closing
# stdin or stdout would go unnoticed. The pipes are handed over as fds 3 and 4 instead
# (bwrap closes those in its own processes) and moved back to 0 and 1 just before the
# bot starts; that last step also announces the bot.
_SH_STASH_STDIO = 'exec 3<&0 4>&1 0</dev/null 1>/dev/null && exec "$@"'
_SH_RESTORE_STDIO = "exec 0<&3 1>&4 3<&- 4<&- || exit 126; " + SH_ANNOUNCE
# As root, bwrap makes the scratch tmpfs root's: still root inside the sandbox, the
# launch gives its cwd (that tmpfs) to the seat's uid "$1" before it drops to it, so
# the bot owns its scratch directory as in every other layer (it may chmod it; git
# and ssh do not find it another user's).
_SH_GIVE_SCRATCH = (
    'chown -- "$1" . || { printf "referee-sandbox: cannot give the scratch directory '
    'to %s\n" "$1" >&2; exit 126; }; shift; exec "$@"'
)


class Bwrap:
    name = "bwrap"
    rank = 10
    private_tmp = True
    # bwrap's pid 1 exits with 128 + N when the bot dies of signal N.
    signal_as_exit_code = True

    def probe(self) -> Layer:
        tools = common_tools()
        path = shutil.which("bwrap")
        if path is None:
            raise SandboxError("bwrap not found on PATH (Debian/Ubuntu package 'bubblewrap')")
        require_userns()
        version = run_quiet([path, "--version"]).strip() or "bwrap (unknown version)"
        help_text = run_quiet([path, "--help"])
        if "--disable-userns" not in help_text:
            raise SandboxError(f"{version} is too old (needs --disable-userns, bwrap >= 0.8)")
        isolation = ["net", "pid", "fs", "signals", "proc", "unix"]
        if "--size" in help_text:
            isolation += ["tmpfs", "disk"]
        tools["bwrap"] = path
        chown = shutil.which("chown")
        if chown is not None:
            tools["chown"] = chown
        layer = Layer(
            "bwrap", f"{version}; {limits_by(tools)}", None, tuple(isolation), tools=tools
        )
        return with_seccomp(layer) if "--seccomp" in help_text else layer

    def launch_prefix(self, plan: LaunchPlan) -> Prefix:
        sh = plan.layer.tools["sh"]
        # bwrap starts as the referee's user; as root it drops to the seat's uid at
        # the end, inside the sandbox (see _bwrap_args).
        limits = limits_prefix(plan._replace(identity=None), {}, by_shim=False)
        prefix = [sh, "-c", _SH_STASH_STDIO, "sh", *limits]
        prefix += _bwrap_args(plan)
        pass_fds: tuple[int, ...] = ()
        if plan.layer.seccomp:
            # Its own network namespace: internet sockets reach nothing; no
            # socket(AF_UNIX), so not even a socket the host left in a bound path.
            pass_fds = (seccomp_pipe(sockets="netns"),)
            prefix[-1:-1] = ["--seccomp", str(pass_fds[0])]  # before bwrap's "--"
        if plan.identity is not None:
            if "setpriv" not in plan.layer.tools:
                raise SandboxError("bwrap as root needs util-linux setpriv to drop privileges")
            uid, gid = plan.identity
            if "disk" in plan.layer.isolation:
                if "chown" not in plan.layer.tools:
                    raise SandboxError("bwrap as root needs chown (coreutils) for the scratch")
                prefix += [sh, "-c", _SH_GIVE_SCRATCH, "sh", f"{uid}:{gid}"]
            prefix += [
                plan.layer.tools["setpriv"],
                f"--reuid={uid}",
                f"--regid={gid}",
                "--clear-groups",
                "--inh-caps=-all",
                "--ambient-caps=-all",
                "--bounding-set=-all",
                "--",
            ]
        prefix += [sh, "-c", _SH_RESTORE_STDIO, "sh"]
        return Prefix(prefix, pass_fds)


# Directories the sandbox already has, with permissions of their own.
_MADE = ("/", "/tmp", "/usr", "/dev", "/proc")


def _parents(paths: list[str]) -> list[str]:
    """The directories above ``paths`` that bwrap would make, parents first."""
    found: set[str] = set()
    for path in paths:
        parts = path.strip("/").split("/")
        for i in range(1, len(parts)):
            found.add("/" + "/".join(parts[:i]))
    return sorted(
        (p for p in found if p not in _MADE and not p.startswith("/usr/")),
        key=lambda p: (p.count("/"), p),
    )


def _bwrap_args(plan: LaunchPlan) -> list[str]:
    layer = plan.layer
    if plan.identity is None:
        # The bot keeps the referee's (unprivileged) uid, in a user namespace of its own
        # where it may not make another.
        unshare = ["--unshare-all", "--unshare-user", "--disable-userns"]
    else:
        # As root, bwrap makes the namespaces without a user namespace (one would map
        # the bot to root), binds what the bot needs while it still can read it, and
        # setpriv drops to the seat's uid last; the directories bwrap makes on the way
        # to a bound path are open to that uid.
        unshare = ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts"]
        unshare += ["--unshare-cgroup-try"]
    args = [
        layer.tools["bwrap"],
        *unshare,
        "--die-with-parent",
        # No --new-session: the referee already made the bot a session leader, and a
        # new session would put the sandbox's pid 1 out of reach of killpg.
        "--proc",
        "/proc",
        "--dev",
        "/dev",
    ]
    size = str(plan.limits.tmpfs_mib * MIB)
    sized = ["--size", size] if "tmpfs" in layer.isolation else []
    # --dev gives an unsized /dev/shm (whose pages a bot could fill outside its RSS),
    # so both writable tmpfs get their own size.
    # Open to every uid like the host's (the bot's own uid differs from bwrap's as root).
    perms = ["--perms", "1777"]
    args += [*perms, *sized, "--tmpfs", "/dev/shm", *perms, *sized, "--tmpfs", "/tmp"]
    args += ["--ro-bind", "/usr", "/usr"]
    for top in TOP_LEVEL_SYSTEM:
        if os.path.islink(top):
            args += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            args += ["--ro-bind", top, top]
    if plan.identity is not None:
        # bwrap makes the directories on the way to a bound path closed to others:
        # make them first, open to the seat's uid.
        for path in _parents([*etc_paths(), *plan.ro_paths, str(plan.scratch)]):
            args += ["--perms", "0755", "--dir", path]
    for etc in etc_paths():
        args += ["--ro-bind", etc, etc]
    scratch_s = str(plan.scratch)
    mounts = [(p, ["--ro-bind", p, p]) for p in plan.ro_paths if p != scratch_s]
    if "disk" in layer.isolation:
        # The scratch directory is a tmpfs of the disk limit over the host's (empty)
        # one: the kernel refuses a write past it, and it is gone with the sandbox.
        # (As root bwrap makes it root's: the launch gives it to the seat's uid.)
        disk = str(plan.limits.disk_mib * MIB)
        mounts.append((scratch_s, ["--perms", "0700", "--size", disk, "--tmpfs", scratch_s]))
    else:
        mounts.append((scratch_s, ["--bind", scratch_s, scratch_s]))
    # Parents before children, so a deeper mount is not hidden by a later shallower one.
    for _path, mount in sorted(mounts, key=lambda m: m[0].count("/")):
        args += mount
    args += ["--chdir", scratch_s, "--clearenv"]
    for key, value in plan.env.items():
        args += ["--setenv", key, value]
    args.append("--")
    return args


KIND = Bwrap()
