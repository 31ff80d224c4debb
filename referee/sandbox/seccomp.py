"""The system calls a contained bot may make, as a seccomp filter (classic BPF).

An allow-list: a bot may make the calls that real runtimes need (CPython, node, a
JVM, Go, Rust, C and C++ were each run under it: tests/test_runtimes.py) and no
other. A call of ``REFUSED`` fails with EPERM; ``clone3`` and every call the list does
not name fail with ENOSYS, which runtimes take for "not in this kernel" and fall back
from (glibc's pthread_create falls back from ``clone3`` to ``clone``, whose flags the
filter can read). A few calls are allowed with some arguments only (``CONDITIONAL``):
``clone`` and ``unshare`` without a new namespace, ``socket`` of the families the
layer allows, ``socketpair`` of ``AF_UNIX``, ``personality`` to the default only,
priorities and resource limits of the bot itself.

``deny-list`` is the named fallback (``REFEREE_SECCOMP=deny-list``, docs/security.md):
every call but those of ``REFUSED`` and the argument checks, for a runtime that needs
a call the allow-list lacks.

The filter is installed by the layer that starts the bot: ``bwrap --seccomp FD``, or
the launcher shim of the ``unshare``, ``landlock`` and ``basic`` layers
(referee/sandbox/layers/). Only the machine's own ABI is allowed: 32-bit (i386, x32,
32-bit ARM) calls fail with ENOSYS. Pure code: it builds bytes and never installs
anything itself.
"""

from __future__ import annotations

import errno
import functools
import platform
import struct
from typing import Literal

Policy = Literal["allow-list", "deny-list"]
POLICIES: tuple[Policy, ...] = ("allow-list", "deny-list")

# What a bot may call, by purpose (x86_64 names; a machine without one of them lacks
# the call, as aarch64 has no open(2) but openat(2)).
ALLOWED: frozenset[str] = frozenset(
    """
    read write readv writev pread64 pwrite64 preadv pwritev preadv2 pwritev2 lseek
    sendfile splice tee vmsplice copy_file_range
    open openat openat2 creat close close_range dup dup2 dup3 fcntl flock ioctl pipe pipe2
    stat fstat lstat newfstatat statx statfs fstatfs access faccessat faccessat2 readlink
    readlinkat getdents getdents64 getcwd chdir fchdir mkdir mkdirat rmdir unlink unlinkat
    rename renameat renameat2 link linkat symlink symlinkat mknod mknodat
    chmod fchmod fchmodat fchmodat2 chown fchown lchown fchownat umask utime utimes
    futimesat utimensat truncate ftruncate fallocate fsync fdatasync sync_file_range
    fadvise64 readahead
    getxattr lgetxattr fgetxattr listxattr llistxattr flistxattr setxattr lsetxattr
    fsetxattr removexattr lremovexattr fremovexattr
    inotify_init inotify_init1 inotify_add_watch inotify_rm_watch
    poll ppoll select pselect6 epoll_create epoll_create1 epoll_ctl epoll_wait epoll_pwait
    epoll_pwait2 eventfd eventfd2 signalfd signalfd4 timerfd_create timerfd_settime
    timerfd_gettime
    brk mmap munmap mremap mprotect madvise msync mincore mlock mlock2 munlock mlockall
    munlockall memfd_create membarrier pkey_mprotect pkey_alloc pkey_free mbind
    get_mempolicy set_mempolicy set_mempolicy_home_node map_shadow_stack mseal cachestat
    shmget shmat shmdt shmctl semget semop semtimedop semctl msgget msgsnd msgrcv msgctl
    fork vfork execve execveat exit exit_group wait4 waitid kill tkill tgkill
    rt_sigqueueinfo rt_tgsigqueueinfo pidfd_open pidfd_send_signal
    rt_sigaction rt_sigprocmask rt_sigreturn rt_sigpending rt_sigtimedwait rt_sigsuspend
    sigaltstack pause restart_syscall
    arch_prctl set_tid_address set_robust_list get_robust_list rseq futex futex_waitv
    futex_wake futex_wait futex_requeue prctl
    getpid getppid gettid getpgid getpgrp setpgid getsid setsid getuid geteuid getgid
    getegid getgroups getresuid getresgid capget
    setuid setgid setreuid setregid setresuid setresgid setfsuid setfsgid setgroups capset
    uname sysinfo getrandom getcpu getrlimit setrlimit getrusage times
    getpriority ioprio_get sched_yield sched_getparam sched_getscheduler sched_getattr
    sched_getaffinity sched_get_priority_max sched_get_priority_min sched_rr_get_interval
    time gettimeofday clock_gettime clock_getres clock_nanosleep nanosleep alarm getitimer
    setitimer timer_create timer_settime timer_gettime timer_getoverrun timer_delete
    connect accept accept4 bind listen shutdown getsockname getpeername getsockopt
    setsockopt sendto recvfrom sendmsg recvmsg sendmmsg recvmmsg
    seccomp landlock_create_ruleset landlock_add_rule landlock_restrict_self uretprobe
    """.split()
)
# (setuid and the like: without a capability, which no bot holds, they only drop
# what the process has; setpriv, run by bwrap after the filter is in place, needs them.
# seccomp and landlock_*: a bot may confine itself further.)

# Refused by name with EPERM, and why (what a bot could otherwise do). Every other call
# the allow-list lacks fails too, with ENOSYS.
REFUSED: dict[str, str] = {
    # Reaching into other processes.
    "ptrace": "inspect or steer another process",
    "process_vm_readv": "read another process's memory",
    "process_vm_writev": "write another process's memory",
    "pidfd_getfd": "take a file descriptor out of another process",
    "kcmp": "compare kernel objects of other processes (an ASLR and fd oracle)",
    "process_madvise": "advise on another process's memory",
    "move_pages": "move another process's pages",
    "migrate_pages": "move another process's pages",
    # Kernel attack surface that no bot needs.
    "bpf": "load programs into the kernel",
    "perf_event_open": "performance counters: a side channel onto the opponent and the host",
    "userfaultfd": "a common kernel-exploit primitive",
    "keyctl": "the kernel keyrings, which no namespace separates",
    "add_key": "the kernel keyrings, which no namespace separates",
    "request_key": "the kernel keyrings, which no namespace separates",
    "io_uring_setup": "io_uring, a large kernel attack surface",
    "io_uring_enter": "io_uring, a large kernel attack surface",
    "io_uring_register": "io_uring, a large kernel attack surface",
    "io_setup": "Linux AIO, kernel attack surface no runtime needs",
    "io_submit": "Linux AIO, kernel attack surface no runtime needs",
    "io_getevents": "Linux AIO, kernel attack surface no runtime needs",
    "io_pgetevents": "Linux AIO, kernel attack surface no runtime needs",
    "io_destroy": "Linux AIO, kernel attack surface no runtime needs",
    "io_cancel": "Linux AIO, kernel attack surface no runtime needs",
    "modify_ldt": "16-bit segments: old kernel-exploit ground",
    "memfd_secret": "memory the kernel itself cannot read (hides what a bot holds)",
    "name_to_handle_at": "open files by handle, past the paths a layer hides",
    "open_by_handle_at": "open files by handle, past the paths a layer hides",
    "fanotify_init": "watch the host's file accesses",
    "syslog": "read the kernel's log",
    "clone3": "flags in memory, where the filter cannot check them (ENOSYS: libc "
    "falls back to clone)",
    "setns": "enter another namespace",
    # Administration (refused by missing capabilities too; under the unshare layer a
    # bot holds capabilities inside its own user namespace).
    "mount": "mount file systems",
    "umount2": "unmount file systems",
    "pivot_root": "change the root file system",
    "chroot": "change the root directory",
    "open_tree": "the new mount API",
    "move_mount": "the new mount API",
    "fsopen": "the new mount API",
    "fsconfig": "the new mount API",
    "fsmount": "the new mount API",
    "fspick": "the new mount API",
    "mount_setattr": "the new mount API",
    "swapon": "swap administration",
    "swapoff": "swap administration",
    "reboot": "reboot the machine",
    "kexec_load": "load a new kernel",
    "kexec_file_load": "load a new kernel",
    "init_module": "load kernel modules",
    "finit_module": "load kernel modules",
    "delete_module": "unload kernel modules",
    "iopl": "raw I/O ports",
    "ioperm": "raw I/O ports",
    "acct": "process accounting",
    "quotactl": "disk quotas",
    "vhangup": "hang up the terminal",
    "settimeofday": "set the clock",
    "clock_settime": "set the clock",
    "clock_adjtime": "set the clock",
    "adjtimex": "set the clock",
    # The host's identity (refused by missing capabilities too; this keeps the
    # landlock layer, which has no UTS namespace, safe whatever the bot holds).
    "sethostname": "rename the host",
    "setdomainname": "rename the host's NIS domain",
    # Fairness: where and when the bot runs is the referee's to decide.
    "sched_setattr": "ask for a longer time slice, so as to run first on a shared CPU",
    "sched_setaffinity": "leave the CPUs the referee gave it (a league worker's share)",
}

# Allowed with some arguments only (see _conditional_code); refused (EPERM) otherwise.
CONDITIONAL: dict[str, str] = {
    "clone": "a new namespace (a user namespace is the door to CAP_NET_ADMIN-only "
    "kernel code such as nf_tables): allowed without CLONE_NEW* flags",
    "unshare": "a new namespace, as clone: allowed without CLONE_NEW* flags",
    "socket": "families outside the layer's own: only those of SOCKET_POLICIES",
    "socketpair": "only AF_UNIX (a pair of connected sockets reaches nothing)",
    "personality": "execution domains and flags (READ_IMPLIES_EXEC, ADDR_NO_RANDOMIZE): "
    "only the query and the default",
    "setpriority": "renice another process (its opponent, the referee) or run ahead of "
    "the opponent on a shared CPU",
    "ioprio_set": "change another process's I/O priority",
    "prlimit64": "change another process's resource limits (the referee's, where it "
    "shares the uid): only its own (pid 0)",
    "sched_setscheduler": "change its scheduling policy: refused, but SCHED_OTHER, which "
    "a bot's threads have already, succeeds without effect (doing it would reset the "
    "time slice the referee set; Mono asks it of each thread and prints a warning on "
    "stdout when refused)",
}

# The socket families each layer allows ((family, protocol) with protocol None for
# any). ``netns``: a network namespace of its own, where the internet families reach
# nothing outside, and the netlink routing family (glibc and Go ask it for the
# addresses of the interfaces); no socket(AF_UNIX): a host's pathname Unix sockets
# (dbus, a database, X11) may be visible to a layer in places it does not hide, and
# an abstract one is per network namespace anyway. ``none``: no network namespace,
# no socket at all. ``host`` (basic, which isolates nothing): the families of an
# ordinary program. Never AF_PACKET, AF_VSOCK, AF_ALG, nor any netlink family but
# routing (netfilter, audit, ...); socketpair(AF_UNIX) everywhere (runtimes use it,
# and a connected pair reaches nothing).
AF_UNIX, AF_INET, AF_INET6, AF_NETLINK = 1, 2, 10, 16
NETLINK_ROUTE = 0
SOCKET_POLICIES: dict[str, tuple[tuple[int, int | None], ...]] = {
    "host": ((AF_UNIX, None), (AF_INET, None), (AF_INET6, None), (AF_NETLINK, NETLINK_ROUTE)),
    "netns": ((AF_INET, None), (AF_INET6, None), (AF_NETLINK, NETLINK_ROUTE)),
    "none": (),
}

# The CLONE_NEW* flags: NEWTIME, NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET.
CLONE_NEW_MASK = 0x00000080 | 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000
CLONE_NEW_MASK |= 0x10000000 | 0x20000000 | 0x40000000
PER_LINUX, PER_QUERY = 0, 0xFFFFFFFF

# System call numbers from the kernel's tables (uapi asm/unistd_64.h and
# asm-generic/unistd.h; tests/test_seccomp.py checks them against the headers, and the
# calls newer than the headers against their fixed numbers: since 5.1 every machine
# shares one numbering for new calls).
_X86_64 = {
    "read": 0, "write": 1, "open": 2, "close": 3, "stat": 4, "fstat": 5, "lstat": 6,
    "poll": 7, "lseek": 8, "mmap": 9, "mprotect": 10, "munmap": 11, "brk": 12,
    "rt_sigaction": 13, "rt_sigprocmask": 14, "rt_sigreturn": 15, "ioctl": 16,
    "pread64": 17, "pwrite64": 18, "readv": 19, "writev": 20, "access": 21, "pipe": 22,
    "select": 23, "sched_yield": 24, "mremap": 25, "msync": 26, "mincore": 27,
    "madvise": 28, "shmget": 29, "shmat": 30, "shmctl": 31, "dup": 32, "dup2": 33,
    "pause": 34, "nanosleep": 35, "getitimer": 36, "alarm": 37, "setitimer": 38,
    "getpid": 39, "sendfile": 40, "socket": 41, "connect": 42, "accept": 43, "sendto": 44,
    "recvfrom": 45, "sendmsg": 46, "recvmsg": 47, "shutdown": 48, "bind": 49, "listen": 50,
    "getsockname": 51, "getpeername": 52, "socketpair": 53, "setsockopt": 54,
    "getsockopt": 55, "clone": 56, "fork": 57, "vfork": 58, "execve": 59, "exit": 60,
    "wait4": 61, "kill": 62, "uname": 63, "semget": 64, "semop": 65, "semctl": 66,
    "shmdt": 67, "msgget": 68, "msgsnd": 69, "msgrcv": 70, "msgctl": 71, "fcntl": 72,
    "flock": 73, "fsync": 74, "fdatasync": 75, "truncate": 76, "ftruncate": 77,
    "getdents": 78, "getcwd": 79, "chdir": 80, "fchdir": 81, "rename": 82, "mkdir": 83,
    "rmdir": 84, "creat": 85, "link": 86, "unlink": 87, "symlink": 88, "readlink": 89,
    "chmod": 90, "fchmod": 91, "chown": 92, "fchown": 93, "lchown": 94, "umask": 95,
    "gettimeofday": 96, "getrlimit": 97, "getrusage": 98, "sysinfo": 99, "times": 100,
    "ptrace": 101, "getuid": 102, "syslog": 103, "getgid": 104, "setuid": 105,
    "setgid": 106, "geteuid": 107, "getegid": 108, "setpgid": 109, "getppid": 110,
    "getpgrp": 111, "setsid": 112, "setreuid": 113, "setregid": 114, "getgroups": 115,
    "setgroups": 116, "setresuid": 117, "getresuid": 118, "setresgid": 119,
    "getresgid": 120, "getpgid": 121, "setfsuid": 122, "setfsgid": 123, "getsid": 124,
    "capget": 125, "capset": 126, "rt_sigpending": 127, "rt_sigtimedwait": 128,
    "rt_sigqueueinfo": 129, "rt_sigsuspend": 130, "sigaltstack": 131, "utime": 132,
    "mknod": 133, "personality": 135, "statfs": 137, "fstatfs": 138, "getpriority": 140,
    "setpriority": 141, "sched_getparam": 143, "sched_setscheduler": 144,
    "sched_getscheduler": 145, "sched_get_priority_max": 146, "sched_get_priority_min": 147,
    "sched_rr_get_interval": 148, "mlock": 149, "munlock": 150, "mlockall": 151,
    "munlockall": 152, "vhangup": 153, "modify_ldt": 154, "pivot_root": 155, "prctl": 157,
    "arch_prctl": 158, "adjtimex": 159, "setrlimit": 160, "chroot": 161, "acct": 163,
    "settimeofday": 164, "mount": 165, "umount2": 166, "swapon": 167, "swapoff": 168,
    "reboot": 169, "sethostname": 170, "setdomainname": 171, "iopl": 172, "ioperm": 173,
    "init_module": 175, "delete_module": 176, "quotactl": 179, "gettid": 186,
    "readahead": 187, "setxattr": 188, "lsetxattr": 189, "fsetxattr": 190, "getxattr": 191,
    "lgetxattr": 192, "fgetxattr": 193, "listxattr": 194, "llistxattr": 195,
    "flistxattr": 196, "removexattr": 197, "lremovexattr": 198, "fremovexattr": 199,
    "tkill": 200, "time": 201, "futex": 202, "sched_setaffinity": 203,
    "sched_getaffinity": 204, "io_setup": 206, "io_destroy": 207, "io_getevents": 208,
    "io_submit": 209, "io_cancel": 210, "epoll_create": 213, "getdents64": 217,
    "set_tid_address": 218, "restart_syscall": 219, "semtimedop": 220, "fadvise64": 221,
    "timer_create": 222, "timer_settime": 223, "timer_gettime": 224,
    "timer_getoverrun": 225, "timer_delete": 226, "clock_settime": 227,
    "clock_gettime": 228, "clock_getres": 229, "clock_nanosleep": 230, "exit_group": 231,
    "epoll_wait": 232, "epoll_ctl": 233, "tgkill": 234, "utimes": 235, "mbind": 237,
    "set_mempolicy": 238, "get_mempolicy": 239, "kexec_load": 246, "waitid": 247,
    "add_key": 248, "request_key": 249, "keyctl": 250, "ioprio_set": 251, "ioprio_get": 252,
    "inotify_init": 253, "inotify_add_watch": 254, "inotify_rm_watch": 255,
    "migrate_pages": 256, "openat": 257, "mkdirat": 258, "mknodat": 259, "fchownat": 260,
    "futimesat": 261, "newfstatat": 262, "unlinkat": 263, "renameat": 264, "linkat": 265,
    "symlinkat": 266, "readlinkat": 267, "fchmodat": 268, "faccessat": 269, "pselect6": 270,
    "ppoll": 271, "unshare": 272, "set_robust_list": 273, "get_robust_list": 274,
    "splice": 275, "tee": 276, "sync_file_range": 277, "vmsplice": 278, "move_pages": 279,
    "utimensat": 280, "epoll_pwait": 281, "signalfd": 282, "timerfd_create": 283,
    "eventfd": 284, "fallocate": 285, "timerfd_settime": 286, "timerfd_gettime": 287,
    "accept4": 288, "signalfd4": 289, "eventfd2": 290, "epoll_create1": 291, "dup3": 292,
    "pipe2": 293, "inotify_init1": 294, "preadv": 295, "pwritev": 296,
    "rt_tgsigqueueinfo": 297, "perf_event_open": 298, "recvmmsg": 299, "fanotify_init": 300,
    "prlimit64": 302, "name_to_handle_at": 303, "open_by_handle_at": 304,
    "clock_adjtime": 305, "sendmmsg": 307, "setns": 308, "getcpu": 309,
    "process_vm_readv": 310, "process_vm_writev": 311, "kcmp": 312, "finit_module": 313,
    "sched_setattr": 314, "sched_getattr": 315, "renameat2": 316, "seccomp": 317,
    "getrandom": 318, "memfd_create": 319, "kexec_file_load": 320, "bpf": 321,
    "execveat": 322, "userfaultfd": 323, "membarrier": 324, "mlock2": 325,
    "copy_file_range": 326, "preadv2": 327, "pwritev2": 328, "pkey_mprotect": 329,
    "pkey_alloc": 330, "pkey_free": 331, "statx": 332, "io_pgetevents": 333, "rseq": 334,
    "uretprobe": 335, "pidfd_send_signal": 424, "io_uring_setup": 425,
    "io_uring_enter": 426, "io_uring_register": 427, "open_tree": 428, "move_mount": 429,
    "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433, "pidfd_open": 434,
    "clone3": 435, "close_range": 436, "openat2": 437, "pidfd_getfd": 438,
    "faccessat2": 439, "process_madvise": 440, "epoll_pwait2": 441, "mount_setattr": 442,
    "landlock_create_ruleset": 444, "landlock_add_rule": 445, "landlock_restrict_self": 446,
    "memfd_secret": 447, "futex_waitv": 449, "set_mempolicy_home_node": 450,
    "cachestat": 451, "fchmodat2": 452, "map_shadow_stack": 453, "futex_wake": 454,
    "futex_wait": 455, "futex_requeue": 456, "mseal": 462,
}  # fmt: skip
_GENERIC = {
    "io_setup": 0, "io_destroy": 1, "io_submit": 2, "io_cancel": 3, "io_getevents": 4,
    "setxattr": 5, "lsetxattr": 6, "fsetxattr": 7, "getxattr": 8, "lgetxattr": 9,
    "fgetxattr": 10, "listxattr": 11, "llistxattr": 12, "flistxattr": 13, "removexattr": 14,
    "lremovexattr": 15, "fremovexattr": 16, "getcwd": 17, "eventfd2": 19,
    "epoll_create1": 20, "epoll_ctl": 21, "epoll_pwait": 22, "dup": 23, "dup3": 24,
    "fcntl": 25, "inotify_init1": 26, "inotify_add_watch": 27, "inotify_rm_watch": 28,
    "ioctl": 29, "ioprio_set": 30, "ioprio_get": 31, "flock": 32, "mknodat": 33,
    "mkdirat": 34, "unlinkat": 35, "symlinkat": 36, "linkat": 37, "renameat": 38,
    "umount2": 39, "mount": 40, "pivot_root": 41, "statfs": 43, "fstatfs": 44,
    "truncate": 45, "ftruncate": 46, "fallocate": 47, "faccessat": 48, "chdir": 49,
    "fchdir": 50, "chroot": 51, "fchmod": 52, "fchmodat": 53, "fchownat": 54, "fchown": 55,
    "openat": 56, "close": 57, "vhangup": 58, "pipe2": 59, "quotactl": 60, "getdents64": 61,
    "lseek": 62, "read": 63, "write": 64, "readv": 65, "writev": 66, "pread64": 67,
    "pwrite64": 68, "preadv": 69, "pwritev": 70, "sendfile": 71, "pselect6": 72,
    "ppoll": 73, "signalfd4": 74, "vmsplice": 75, "splice": 76, "tee": 77, "readlinkat": 78,
    "newfstatat": 79, "fstat": 80, "fsync": 82, "fdatasync": 83, "sync_file_range": 84,
    "timerfd_create": 85, "timerfd_settime": 86, "timerfd_gettime": 87, "utimensat": 88,
    "acct": 89, "capget": 90, "capset": 91, "personality": 92, "exit": 93, "exit_group": 94,
    "waitid": 95, "set_tid_address": 96, "unshare": 97, "futex": 98, "set_robust_list": 99,
    "get_robust_list": 100, "nanosleep": 101, "getitimer": 102, "setitimer": 103,
    "kexec_load": 104, "init_module": 105, "delete_module": 106, "timer_create": 107,
    "timer_gettime": 108, "timer_getoverrun": 109, "timer_settime": 110,
    "timer_delete": 111, "clock_settime": 112, "clock_gettime": 113, "clock_getres": 114,
    "clock_nanosleep": 115, "syslog": 116, "ptrace": 117, "sched_setscheduler": 119,
    "sched_getscheduler": 120, "sched_getparam": 121, "sched_setaffinity": 122,
    "sched_getaffinity": 123, "sched_yield": 124, "sched_get_priority_max": 125,
    "sched_get_priority_min": 126, "sched_rr_get_interval": 127, "restart_syscall": 128,
    "kill": 129, "tkill": 130, "tgkill": 131, "sigaltstack": 132, "rt_sigsuspend": 133,
    "rt_sigaction": 134, "rt_sigprocmask": 135, "rt_sigpending": 136,
    "rt_sigtimedwait": 137, "rt_sigqueueinfo": 138, "rt_sigreturn": 139, "setpriority": 140,
    "getpriority": 141, "reboot": 142, "setregid": 143, "setgid": 144, "setreuid": 145,
    "setuid": 146, "setresuid": 147, "getresuid": 148, "setresgid": 149, "getresgid": 150,
    "setfsuid": 151, "setfsgid": 152, "times": 153, "setpgid": 154, "getpgid": 155,
    "getsid": 156, "setsid": 157, "getgroups": 158, "setgroups": 159, "uname": 160,
    "sethostname": 161, "setdomainname": 162, "getrlimit": 163, "setrlimit": 164,
    "getrusage": 165, "umask": 166, "prctl": 167, "getcpu": 168, "gettimeofday": 169,
    "settimeofday": 170, "adjtimex": 171, "getpid": 172, "getppid": 173, "getuid": 174,
    "geteuid": 175, "getgid": 176, "getegid": 177, "gettid": 178, "sysinfo": 179,
    "msgget": 186, "msgctl": 187, "msgrcv": 188, "msgsnd": 189, "semget": 190,
    "semctl": 191, "semtimedop": 192, "semop": 193, "shmget": 194, "shmctl": 195,
    "shmat": 196, "shmdt": 197, "socket": 198, "socketpair": 199, "bind": 200,
    "listen": 201, "accept": 202, "connect": 203, "getsockname": 204, "getpeername": 205,
    "sendto": 206, "recvfrom": 207, "setsockopt": 208, "getsockopt": 209, "shutdown": 210,
    "sendmsg": 211, "recvmsg": 212, "readahead": 213, "brk": 214, "munmap": 215,
    "mremap": 216, "add_key": 217, "request_key": 218, "keyctl": 219, "clone": 220,
    "execve": 221, "mmap": 222, "fadvise64": 223, "swapon": 224, "swapoff": 225,
    "mprotect": 226, "msync": 227, "mlock": 228, "munlock": 229, "mlockall": 230,
    "munlockall": 231, "mincore": 232, "madvise": 233, "mbind": 235, "get_mempolicy": 236,
    "set_mempolicy": 237, "migrate_pages": 238, "move_pages": 239, "rt_tgsigqueueinfo": 240,
    "perf_event_open": 241, "accept4": 242, "recvmmsg": 243, "wait4": 260, "prlimit64": 261,
    "fanotify_init": 262, "name_to_handle_at": 264, "open_by_handle_at": 265,
    "clock_adjtime": 266, "setns": 268, "sendmmsg": 269, "process_vm_readv": 270,
    "process_vm_writev": 271, "kcmp": 272, "finit_module": 273, "sched_setattr": 274,
    "sched_getattr": 275, "renameat2": 276, "seccomp": 277, "getrandom": 278,
    "memfd_create": 279, "bpf": 280, "execveat": 281, "userfaultfd": 282, "membarrier": 283,
    "mlock2": 284, "copy_file_range": 285, "preadv2": 286, "pwritev2": 287,
    "pkey_mprotect": 288, "pkey_alloc": 289, "pkey_free": 290, "statx": 291,
    "io_pgetevents": 292, "rseq": 293, "kexec_file_load": 294, "pidfd_send_signal": 424,
    "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
    "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432,
    "fspick": 433, "pidfd_open": 434, "clone3": 435, "close_range": 436, "openat2": 437,
    "pidfd_getfd": 438, "faccessat2": 439, "process_madvise": 440, "epoll_pwait2": 441,
    "mount_setattr": 442, "landlock_create_ruleset": 444, "landlock_add_rule": 445,
    "landlock_restrict_self": 446, "memfd_secret": 447, "futex_waitv": 449,
    "set_mempolicy_home_node": 450, "cachestat": 451, "fchmodat2": 452,
    "map_shadow_stack": 453, "futex_wake": 454, "futex_wait": 455, "futex_requeue": 456,
    "mseal": 462,
}  # fmt: skip
_GENERIC_EXTRA = {"riscv64": {"riscv_hwprobe": 258, "riscv_flush_icache": 259}}

# AUDIT_ARCH_* values (linux/audit.h): what seccomp_data.arch says.
AUDIT_ARCH_X86_64 = 0xC000003E
AUDIT_ARCH_I386 = 0x40000003
AUDIT_ARCH_AARCH64 = 0xC00000B7
AUDIT_ARCH_RISCV64 = 0xC00000F3

# machine -> (its ABI, its table). Any other ABI a process of that machine may call
# into (i386 and x32 on x86_64, 32-bit ARM) is refused outright.
_MACHINES: dict[str, tuple[int, dict[str, int]]] = {
    "x86_64": (AUDIT_ARCH_X86_64, _X86_64),
    "aarch64": (AUDIT_ARCH_AARCH64, _GENERIC),
    "riscv64": (AUDIT_ARCH_RISCV64, {**_GENERIC, **_GENERIC_EXTRA["riscv64"]}),
}
_ARCH_ALLOWED = {"riscv64": frozenset({"riscv_hwprobe", "riscv_flush_icache"})}

# Classic BPF as seccomp runs it (linux/filter.h, linux/seccomp.h).
_LD_W_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JA = 0x05  # BPF_JMP | BPF_JA (32-bit offset in k)
_JEQ_K = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JGE_K = 0x35  # BPF_JMP | BPF_JGE | BPF_K
_JSET_K = 0x45  # BPF_JMP | BPF_JSET | BPF_K
_RET_K = 0x06  # BPF_RET | BPF_K
_OFFSET_NR, _OFFSET_ARCH = 0, 4  # in struct seccomp_data
RET_ALLOW = 0x7FFF0000
RET_EPERM = 0x00050000 | errno.EPERM  # SECCOMP_RET_ERRNO | EPERM
RET_ENOSYS = 0x00050000 | errno.ENOSYS
RET_NO_EFFECT = 0x00050000  # SECCOMP_RET_ERRNO with 0: the call returns 0, not made
_SCHED_OTHER = 0

_PRIO_PROCESS = 0  # setpriority's "which" for one process (who = 0: the caller)
_IOPRIO_WHO_PROCESS = 1
_SIGN_BIT = 0x80000000


def _arg(i: int) -> int:
    """Offset of the low 32 bits of args[i] in struct seccomp_data. Every machine with
    a table here is little-endian; each argument tested is a C int or its low half
    (flags above bit 31 are not namespaces)."""
    return 16 + 8 * i


def _arg_high(i: int) -> int:
    return 20 + 8 * i


# An instruction with symbolic jump targets: (code, k, jump if true, jump if false);
# a target is a label, or None for the next instruction. _JA takes its label as k.
_Op = tuple[int, int | str, str | None, str | None]


def _assemble(items: list[_Op | str]) -> bytes:
    """Instructions and labels (strings) to sock_filter records, jumps resolved."""
    where: dict[str, int] = {}
    ops: list[_Op] = []
    for item in items:
        if isinstance(item, str):
            where[item] = len(ops)
        else:
            ops.append(item)
    out = []
    for pc, (code, k, jt, jf) in enumerate(ops):

        def offset(label: str | None, pc: int = pc, short: bool = True) -> int:
            if label is None:
                return 0
            off = where[label] - (pc + 1)  # jumps count from the next instruction
            if off < 0 or (short and off > 255):
                raise AssertionError("seccomp filter jump out of range")
            return off

        if code == _JA:
            assert isinstance(k, str)
            out.append(struct.pack("=HBBI", code, 0, 0, offset(k, short=False)))
        else:
            assert isinstance(k, int)
            out.append(struct.pack("=HBBI", code, offset(jt), offset(jf), k))
    return b"".join(out)


def _conditional_code(
    table: dict[str, int], start_nice: int, sockets: str
) -> tuple[dict[int, str], list[_Op | str]]:
    """{call number: label} of the calls checked by argument, and the code that
    checks each one (every path ends in a return)."""
    allow, deny = (_RET_K, RET_ALLOW, None, None), (_RET_K, RET_EPERM, None, None)
    labels = {table[name]: f"c:{name}" for name in CONDITIONAL if name in table}
    code: list[_Op | str] = []

    def ld(i: int) -> _Op:
        return (_LD_W_ABS, _arg(i), None, None)

    # clone and unshare: no CLONE_NEW* flag.
    for name in ("clone", "unshare"):
        code += [f"c:{name}", ld(0), (_JSET_K, CLONE_NEW_MASK, f"c:{name}:no", None), allow]
        code += [f"c:{name}:no", deny]
    # personality: the query (0xffffffff) or PER_LINUX (0).
    code += ["c:personality", ld(0), (_JEQ_K, PER_LINUX, "c:personality:ok", None)]
    code += [(_JEQ_K, PER_QUERY, "c:personality:ok", None), deny, "c:personality:ok", allow]
    # setpriority(PRIO_PROCESS, 0, nice): the new nice value, a signed int, may not be
    # below the one the bot started with.
    code += ["c:setpriority", ld(0), (_JEQ_K, _PRIO_PROCESS, None, "c:setpriority:no")]
    code += [ld(1), (_JEQ_K, 0, None, "c:setpriority:no"), ld(2)]
    if start_nice >= 0:
        code += [(_JGE_K, _SIGN_BIT, "c:setpriority:no", None)]
        code += [(_JGE_K, start_nice, "c:setpriority:ok", "c:setpriority:no")]
    else:
        code += [(_JGE_K, _SIGN_BIT, None, "c:setpriority:ok")]
        code += [(_JGE_K, start_nice & 0xFFFFFFFF, "c:setpriority:ok", "c:setpriority:no")]
    code += ["c:setpriority:ok", allow, "c:setpriority:no", deny]
    # ioprio_set(IOPRIO_WHO_PROCESS, 0, ...).
    code += ["c:ioprio_set", ld(0), (_JEQ_K, _IOPRIO_WHO_PROCESS, None, "c:ioprio_set:no")]
    code += [ld(1), (_JEQ_K, 0, None, "c:ioprio_set:no"), allow, "c:ioprio_set:no", deny]
    # prlimit64(0, ...): its own limits (getrlimit and setrlimit of glibc come here).
    code += ["c:prlimit64", ld(0), (_JEQ_K, 0, None, "c:prlimit64:no")]
    code += [(_LD_W_ABS, _arg_high(0), None, None), (_JEQ_K, 0, None, "c:prlimit64:no")]
    code += [allow, "c:prlimit64:no", deny]
    # sched_setscheduler(pid, SCHED_OTHER, ...): success without effect.
    code += ["c:sched_setscheduler", ld(1), (_JEQ_K, _SCHED_OTHER, None, "c:sched:no")]
    code += [(_RET_K, RET_NO_EFFECT, None, None), "c:sched:no", deny]
    # socketpair(AF_UNIX, ...).
    code += ["c:socketpair", ld(0), (_JEQ_K, AF_UNIX, None, "c:socketpair:no"), allow]
    code += ["c:socketpair:no", deny]
    # socket(family, type, protocol): the layer's families.
    code += ["c:socket", ld(0)]
    for i, (family, protocol) in enumerate(SOCKET_POLICIES[sockets]):
        if protocol is None:
            code += [(_JEQ_K, family, "c:socket:ok", None)]
        else:
            code += [(_JEQ_K, family, None, f"c:socket:{i}"), ld(2)]
            code += [(_JEQ_K, protocol, "c:socket:ok", "c:socket:no"), f"c:socket:{i}"]
    code += ["c:socket:no", deny, "c:socket:ok", allow]
    return labels, code


def _verdicts(machine: str, table: dict[str, int], policy: Policy) -> dict[int, int | str]:
    """Call number -> a return value, or the label of its argument checks."""
    allowed = ALLOWED | _ARCH_ALLOWED.get(machine, frozenset())
    verdicts: dict[int, int | str] = {}
    for name, nr in table.items():
        if name in CONDITIONAL:
            verdicts[nr] = f"c:{name}"
        elif name == "clone3":
            verdicts[nr] = RET_ENOSYS
        elif name in REFUSED:
            verdicts[nr] = RET_EPERM
        elif name in allowed:
            verdicts[nr] = RET_ALLOW
    return verdicts


def _dispatch(verdicts: dict[int, int | str], default: int) -> list[_Op | str]:
    """A binary search on the call number over runs of numbers with one verdict: a few
    comparisons per call rather than one per listed call."""
    top = max(verdicts) + 1
    runs: list[tuple[int, int | str]] = []  # (first number, verdict), in order
    for nr in range(top + 1):
        verdict = verdicts.get(nr, default) if nr < top else default
        if not runs or runs[-1][1] != verdict or isinstance(verdict, str):
            runs.append((nr, verdict))
    code: list[_Op | str] = []
    count = 0

    def leaf(verdict: int | str) -> _Op:
        if isinstance(verdict, str):
            return (_JA, verdict, None, None)
        return (_RET_K, verdict, None, None)

    def tree(lo: int, hi: int) -> None:  # runs[lo:hi], the number already loaded
        nonlocal count
        if hi - lo == 1:
            code.append(leaf(runs[lo][1]))
            return
        mid = (lo + hi) // 2
        count += 1
        right, left = f"t:{count}:ge", f"t:{count}:lt"
        # A long jump to the upper half: a subtree may be longer than a short jump.
        code.extend([(_JGE_K, runs[mid][0], None, left), (_JA, right, None, None), left])
        tree(lo, mid)
        code.append(right)
        tree(mid, hi)

    tree(0, len(runs))
    return code


@functools.lru_cache(maxsize=32)  # built once per layer and nice value, not per launch
def filter_program(
    machine: str | None = None,
    *,
    start_nice: int = 0,
    sockets: str = "netns",
    policy: Policy = "allow-list",
) -> bytes | None:
    """The filter for ``machine`` (default: this one) as the kernel takes it (an array
    of struct sock_filter), or None for a machine without a table here.

    ``start_nice``: the nice value the bot starts with (it may not go below it).
    ``sockets``: the layer's socket families, a key of SOCKET_POLICIES.
    ``policy``: "allow-list", or the "deny-list" fallback (every call not refused)."""
    machine = machine or platform.machine()
    entry = _MACHINES.get(machine)
    if entry is None:
        return None
    arch, table = entry
    if sockets not in SOCKET_POLICIES:
        raise ValueError(f"unknown socket policy {sockets!r}")
    verdicts = _verdicts(machine, table, policy)
    default = RET_ENOSYS if policy == "allow-list" else RET_ALLOW
    labels, checks = _conditional_code(table, start_nice, sockets)
    assert set(labels.values()) <= {v for v in verdicts.values() if isinstance(v, str)}
    items: list[_Op | str] = [
        (_LD_W_ABS, _OFFSET_ARCH, None, None),
        (_JEQ_K, arch, "abi", None),
        (_RET_K, RET_ENOSYS, None, None),
        "abi",
        (_LD_W_ABS, _OFFSET_NR, None, None),
    ]
    if machine == "x86_64":
        # x32 numbers carry bit 30 and would dodge every test below.
        items += [(_JGE_K, 0x40000000, None, "x32"), (_RET_K, RET_ENOSYS, None, None), "x32"]
    items += _dispatch(verdicts, default)
    items += checks
    return _assemble(items)


def refused_calls() -> list[str]:
    """The names refused by name (EPERM, or ENOSYS for clone3) on this machine (empty
    where there is no filter); under the allow-list every unlisted call is refused too."""
    entry = _MACHINES.get(platform.machine())
    if entry is None:
        return []
    return sorted(name for name in REFUSED if name in entry[1])


def allowed_calls() -> list[str]:
    """The names the allow-list lets through on this machine (the conditional ones
    with some arguments only)."""
    machine = platform.machine()
    entry = _MACHINES.get(machine)
    if entry is None:
        return []
    allowed = ALLOWED | _ARCH_ALLOWED.get(machine, frozenset()) | set(CONDITIONAL)
    return sorted(name for name in entry[1] if name in allowed)


def conditional_calls() -> list[str]:
    """The names allowed only with some arguments on this machine (see CONDITIONAL)."""
    entry = _MACHINES.get(platform.machine())
    if entry is None:
        return []
    return sorted(name for name in CONDITIONAL if name in entry[1])
