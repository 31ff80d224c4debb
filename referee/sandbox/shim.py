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

    def enter_namespaces() -> None:
        """New user, pid, net, mount, ipc and uts namespaces; fork the bot as pid 1.

        The parent stays outside as a monitor (a PID namespace needs a forked pid 1):
        it lets go of stdin and stdout so the bot alone holds the pipes, waits, and
        exits as the bot did. The bot dies with the monitor (parent-death signal).
        """
        uid, gid = os.getuid(), os.getgid()
        flags = 0x10000000 | 0x20000000 | 0x40000000 | 0x00020000 | 0x08000000 | 0x04000000
        check(libc.unshare(flags), "unshare(user, pid, net, mount, ipc, uts)")
        for name, text in (
            ("setgroups", "deny"),
            ("uid_map", f"0 {uid} 1"),
            ("gid_map", f"0 {gid} 1"),
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
            return
        devnull = os.open("/dev/null", os.O_RDWR)
        os.dup2(devnull, 0)
        os.dup2(devnull, 1)
        os.closerange(3, 65536)
        while True:
            try:
                _, status = os.waitpid(child, 0)
                break
            except InterruptedError:
                continue
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
        if spec.get("namespaces"):
            enter_namespaces()  # returns in the new PID namespace's pid 1 only
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
