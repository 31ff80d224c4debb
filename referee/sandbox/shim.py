"""The launcher shim: ``python -I -S -c <this file's source> SPEC -- ARGV``.

It applies SPEC (a marshalled dict, hex-encoded: rlimits, no-new-privs, parent-death
signal, oom_score_adj, namespaces, Landlock policy, seccomp filter) to itself, then
execs ARGV. It runs without ``site`` so that it starts quickly, hence it is
self-contained: standard library only, nothing from the referee. Any failure
exits with status 126 (base.SHIM_FAILURE_EXIT) and a ``referee-sandbox:`` line on
stderr; the bot is never started half-contained.
"""

from __future__ import annotations

import ctypes
import marshal
import os
import resource
import signal
import stat
import sys


def main(args: list[str]) -> None:
    """Apply SPEC (``args[0]``) to this process, then exec the bot (after ``--``)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long

    def check(result: int, what: str) -> int:
        if result < 0:
            err = ctypes.get_errno()
            raise OSError(err, f"{what}: {os.strerror(err)}")
        return result

    def apply_landlock(policy: dict) -> None:  # a dict from paths.landlock_policy
        abi = int(policy["abi"])
        handled = (1 << 13) - 1  # ABI 1: execute .. make_sym
        if abi >= 2:
            handled |= 1 << 13  # refer
        if abi >= 3:
            handled |= 1 << 14  # truncate
        if abi >= 5:
            handled |= 1 << 15  # ioctl_dev
        execute, write_file, read_file, read_dir = 1, 2, 4, 8
        file_rights = execute | write_file | read_file | (1 << 14) | (1 << 15)

        class RulesetAttr(ctypes.Structure):
            _fields_ = [
                ("handled_access_fs", ctypes.c_uint64),
                ("handled_access_net", ctypes.c_uint64),  # ABI 4: TCP bind and connect
                ("scoped", ctypes.c_uint64),  # ABI 6: abstract unix sockets and signals
            ]

        class PathBeneathAttr(ctypes.Structure):
            _pack_ = 1
            _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]

        attr = RulesetAttr(handled, 3 if abi >= 4 else 0, 3 if abi >= 6 else 0)
        size = 8 if abi < 4 else 16 if abi < 6 else 24  # the struct grew with the ABI
        ruleset = check(
            libc.syscall(
                ctypes.c_long(444), ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0)
            ),
            "landlock_create_ruleset",
        )
        rules = [(p, execute | read_file | read_dir) for p in policy["ro"]]
        rules += [(p, handled) for p in policy["rw"]]
        rules += [(p, read_file | write_file | (1 << 15)) for p in policy["dev"]]
        for path, rights in rules:
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue  # absent on this machine: nothing to allow
            try:
                # Rules on a file may only carry file rights (EINVAL otherwise).
                if not stat.S_ISDIR(os.fstat(fd).st_mode):
                    rights &= file_rights
                rule = PathBeneathAttr(rights & handled, fd)
                check(
                    libc.syscall(
                        ctypes.c_long(445),
                        ctypes.c_int(ruleset),
                        ctypes.c_int(1),  # LANDLOCK_RULE_PATH_BENEATH
                        ctypes.byref(rule),
                        ctypes.c_uint32(0),
                    ),
                    f"landlock_add_rule({path})",
                )
            finally:
                os.close(fd)
        check(libc.prctl(38, 1, 0, 0, 0), "prctl(PR_SET_NO_NEW_PRIVS)")
        check(
            libc.syscall(ctypes.c_long(446), ctypes.c_int(ruleset), ctypes.c_uint32(0)),
            "landlock_restrict_self",
        )
        os.close(ruleset)

    def install_seccomp(program: bytes) -> None:  # from seccomp.py
        class SockFprog(ctypes.Structure):
            _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

        buf = ctypes.create_string_buffer(program, len(program))
        prog = SockFprog(len(program) // 8, ctypes.addressof(buf))
        check(libc.prctl(38, 1, 0, 0, 0), "prctl(PR_SET_NO_NEW_PRIVS)")
        # PR_SET_SECCOMP, SECCOMP_MODE_FILTER
        check(libc.prctl(22, 2, ctypes.byref(prog), 0, 0), "prctl(PR_SET_SECCOMP)")

    def reachable_by(path: str, uid: int, gid: int) -> bool:
        st = os.stat(path)
        if st.st_uid == uid:
            return bool(st.st_mode & 0o100)
        if st.st_gid == gid:
            return bool(st.st_mode & 0o010)
        return bool(st.st_mode & 0o001)

    def make_reachable(paths: list[str], uid: int, gid: int) -> None:
        """Let ``uid`` reach each of ``paths`` (private mount namespace, as root).

        Where a directory on the way is closed to it (a 0700 /root holding the
        interpreter), a small tmpfs is mounted over the topmost such directory and
        only the paths below it are bind-mounted back: the rest stays hidden."""
        blocked: dict[str, list[str]] = {}
        for path in paths:
            parts = path.strip("/").split("/")
            for i in range(len(parts)):
                ancestor = "/" + "/".join(parts[:i])
                if not reachable_by(ancestor, uid, gid):
                    blocked.setdefault(ancestor, []).append(path)
                    break
        nosuid_nodev, ms_bind, ms_rec = 2 | 4, 1 << 12, 1 << 14
        for top, below in sorted(blocked.items()):
            fds = [(p, os.open(p, os.O_PATH | os.O_CLOEXEC)) for p in below]
            check(
                libc.mount(b"tmpfs", top.encode(), b"tmpfs", nosuid_nodev, b"mode=0755,size=1m"),
                f"mount tmpfs on {top}",
            )
            for path, fd in sorted(fds):
                parent = os.path.dirname(path)
                os.makedirs(parent, mode=0o755, exist_ok=True)
                if stat.S_ISDIR(os.fstat(fd).st_mode):
                    os.makedirs(path, mode=0o755, exist_ok=True)
                elif not os.path.exists(path):
                    os.close(os.open(path, os.O_CREAT | os.O_WRONLY | os.O_CLOEXEC, 0o644))
                source = f"/proc/self/fd/{fd}".encode()
                check(
                    libc.mount(source, path.encode(), None, ms_bind | ms_rec, None),
                    f"bind {path}",
                )
                os.close(fd)

    def private_mounts(spec: dict, owner: tuple[int, int]) -> None:
        """Fresh tmpfs over the host's shared writable places (their sockets and files
        out of sight) and over the scratch directory, each capped by the kernel
        (ENOSPC past its size). Paths the bot needs below one of them (its own files
        in /tmp) are bound back first."""
        nosuid_nodev, ms_bind, ms_rec = 2 | 4, 1 << 12, 1 << 14
        ms_rdonly, ms_remount = 1, 1 << 5
        uid, gid = owner
        places = [(p, f"size={n},nr_inodes={i},mode=1777") for p, n, i in spec["sized"]]
        places += [(p, "size=64k,nr_inodes=64,mode=0755") for p in spec["empty"]]
        scratch, scratch_bytes, scratch_inodes = spec["scratch"]
        for top, options in places:
            if os.path.islink(top) or not os.path.isdir(top):
                continue  # /var/run -> /run: hidden with its target
            inside = [p for p in [*spec["keep"], scratch] if p == top or p.startswith(top + "/")]
            fds = [(p, os.open(p, os.O_PATH | os.O_CLOEXEC)) for p in inside if p != scratch]
            check(
                libc.mount(b"tmpfs", top.encode(), b"tmpfs", nosuid_nodev, options.encode()),
                f"mount tmpfs on {top}",
            )
            if scratch in inside:
                os.makedirs(scratch, mode=0o755, exist_ok=True)
            for path, fd in sorted(fds):
                os.makedirs(os.path.dirname(path), mode=0o755, exist_ok=True)
                if stat.S_ISDIR(os.fstat(fd).st_mode):
                    os.makedirs(path, mode=0o755, exist_ok=True)
                elif not os.path.exists(path):
                    os.close(os.open(path, os.O_CREAT | os.O_WRONLY | os.O_CLOEXEC, 0o644))
                source = f"/proc/self/fd/{fd}".encode()
                check(
                    libc.mount(source, path.encode(), None, ms_bind | ms_rec, None), f"bind {path}"
                )
                os.close(fd)
            if options.startswith("size=64k"):  # nothing for the bot to write there
                flags = ms_remount | ms_rdonly | nosuid_nodev
                check(libc.mount(None, top.encode(), None, flags, None), f"read-only {top}")
        options = f"size={scratch_bytes},nr_inodes={scratch_inodes},mode=0700,uid={uid},gid={gid}"
        check(
            libc.mount(b"tmpfs", scratch.encode(), b"tmpfs", nosuid_nodev, options.encode()),
            "mount tmpfs on the scratch directory",
        )
        os.chdir(scratch)  # the bot's cwd: the new tmpfs, not the host directory under it

    def drop_privileges(identity: tuple[int, int] | None) -> None:
        """Become ``identity`` (uid, gid) if given, with the bounding, ambient,
        inheritable, permitted and effective capability sets all empty."""
        try:
            with open("/proc/sys/kernel/cap_last_cap") as f:
                last_cap = int(f.read())
        except OSError:
            last_cap = 63
        has_setpcap = libc.prctl(23, 8, 0, 0, 0) == 1  # PR_CAPBSET_READ(CAP_SETPCAP)
        if os.geteuid() == 0 or has_setpcap:
            for cap in range(last_cap + 1):
                libc.prctl(24, cap, 0, 0, 0)  # PR_CAPBSET_DROP (needs CAP_SETPCAP)
        libc.prctl(47, 4, 0, 0, 0)  # PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL
        if identity:
            uid, gid = identity
            os.setresgid(gid, gid, gid)
            os.setresuid(uid, uid, uid)

        class CapHeader(ctypes.Structure):
            _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

        header = CapHeader(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3
        data = (ctypes.c_uint32 * 6)()  # two {effective, permitted, inheritable}, all 0
        check(libc.capset(ctypes.byref(header), data), "capset(none)")

    def enter_namespaces(
        identity: tuple[int, int] | None, reach: list[str], mounts: dict | None
    ) -> None:
        """New user, pid, net, mount, ipc and uts namespaces; fork the bot as pid 1.

        The parent stays outside as a monitor (a PID namespace needs a forked pid 1):
        it lets go of stdin and stdout so the bot alone holds the pipes, waits, and
        exits as the bot did. The bot dies with the monitor (parent-death signal).
        """
        flags = 0x20000000 | 0x40000000 | 0x00020000 | 0x08000000 | 0x04000000
        if identity:
            # Root needs no user namespace (one would map the bot to root): the
            # child drops to the seat's uid once it has mounted.
            check(libc.unshare(flags), "unshare(pid, net, mount, ipc, uts)")
        else:
            # The bot keeps the referee's uid inside too (never root there).
            uid, gid = os.getuid(), os.getgid()
            check(libc.unshare(flags | 0x10000000), "unshare(user, pid, net, mount, ipc, uts)")
            for name, text in (
                ("setgroups", "deny"),
                ("uid_map", f"{uid} {uid} 1"),
                ("gid_map", f"{gid} {gid} 1"),
            ):
                with open(f"/proc/self/{name}", "w") as f:
                    f.write(text)
        child = os.fork()
        if child == 0:
            check(libc.prctl(1, 9, 0, 0, 0), "prctl(PR_SET_PDEATHSIG)")
            ms_rec, ms_private = 1 << 14, 1 << 18
            check(libc.mount(b"none", b"/", None, ms_rec | ms_private, None), "mount(private /)")
            # A /proc of the new namespace: the referee and other bots are not in it.
            nosuid_nodev_noexec = 2 | 4 | 8
            check(libc.mount(b"proc", b"/proc", b"proc", nosuid_nodev_noexec, None), "mount /proc")
            if mounts:
                private_mounts(mounts, identity or (os.getuid(), os.getgid()))
            if identity:
                make_reachable(reach, *identity)  # still root: it may reach them all
            drop_privileges(identity)
            check(libc.prctl(1, 9, 0, 0, 0), "prctl(PR_SET_PDEATHSIG)")  # a new uid clears it
            return
        devnull = os.open("/dev/null", os.O_RDWR)
        os.dup2(devnull, 0)
        os.dup2(devnull, 1)
        os.closerange(3, 65536)
        while True:
            try:
                _, status = os.waitpid(child, 0)
            except InterruptedError:
                continue
            if os.WIFEXITED(status) or os.WIFSIGNALED(status):
                break
            # A stop: the bot made this monitor its tracer (PTRACE_TRACEME). Let it
            # go (PTRACE_DETACH) with the signal it stopped with, but a SIGTRAP.
            sig = os.WSTOPSIG(status) if os.WIFSTOPPED(status) else 0
            libc.ptrace(17, child, None, 0 if sig == signal.SIGTRAP else sig)
        if os.WIFSIGNALED(status):
            sig = os.WTERMSIG(status)
            if sig not in (signal.SIGKILL, signal.SIGSTOP):
                signal.signal(sig, signal.SIG_DFL)  # (those two cannot be handled)
            os.kill(os.getpid(), sig)  # die the same way, as util-linux unshare does
            os._exit(128 + sig)
        os._exit(os.waitstatus_to_exitcode(status))

    try:
        spec = marshal.loads(bytes.fromhex(args[0]))
        if len(args) < 3 or args[1] != "--":
            raise ValueError("usage: SPEC -- ARGV")
        argv = args[2:]
        for name, (soft, hard) in spec.get("rlimits", {}).items():
            resource.setrlimit(getattr(resource, name), (soft, hard))
        if spec.get("nnp"):
            check(libc.prctl(38, 1, 0, 0, 0), "prctl(PR_SET_NO_NEW_PRIVS)")
        if spec.get("pdeathsig"):
            check(libc.prctl(1, int(spec["pdeathsig"]), 0, 0, 0), "prctl(PR_SET_PDEATHSIG)")
            if os.getppid() != spec.get("parent", os.getppid()):
                raise RuntimeError("the referee exited during start-up")
        if spec.get("oom_score_adj") is not None:
            try:
                with open("/proc/self/oom_score_adj", "w") as f:
                    f.write(str(spec["oom_score_adj"]))
            except OSError:
                pass  # best effort: a host OOM then picks by size alone
        identity = spec.get("identity")  # (uid, gid) of the seat when the referee is root
        if spec.get("namespaces"):
            if identity:
                os.setgroups([])  # (a user namespace with setgroups denied cannot)
            # returns in the new PID namespace's pid 1 only, privileges dropped
            enter_namespaces(identity, spec.get("reach", []), spec.get("mounts"))
        else:
            if identity:
                # A private mount namespace (root needs no user namespace for it), so
                # that what the seat's uid must reach can be made reachable; and an
                # IPC namespace, so that no System V object outlives the bot.
                check(libc.unshare(0x00020000 | 0x08000000), "unshare(mount, ipc)")
                ms_rec, ms_private = 1 << 14, 1 << 18
                check(libc.mount(b"none", b"/", None, ms_rec | ms_private, None), "private /")
                make_reachable(spec.get("reach", []), *identity)
                os.setgroups([])
            drop_privileges(identity)
            if spec.get("pdeathsig"):  # a change of uid clears it
                check(libc.prctl(1, int(spec["pdeathsig"]), 0, 0, 0), "prctl(PR_SET_PDEATHSIG)")
                if os.getppid() != spec.get("parent", os.getppid()):
                    raise RuntimeError("the referee exited during start-up")
        if spec.get("landlock"):
            apply_landlock(spec["landlock"])
        if spec.get("seccomp"):
            install_seccomp(spec["seccomp"])
        os.execv(argv[0], argv)
    except Exception as exc:  # every setup failure alike: never run the bot half-contained
        sys.stderr.write(f"referee-sandbox: {type(exc).__name__}: {exc}\n")
        sys.stderr.flush()
        os._exit(126)


if __name__ == "__main__":
    main(sys.argv[1:])
