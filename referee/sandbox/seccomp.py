"""The system calls a contained bot may not make, as a seccomp filter (classic BPF).

Namespaces and Landlock decide what a bot can see and reach; this deny-list closes
what they leave open. Each refused call fails with EPERM, so runtimes that probe for
a feature (libuv tries io_uring, a thread library tries to set its policy) fall
back as they would in any container, and a bot that insists gets nothing.

The filter is the same for every bot and every match. It is installed by the layer
that starts the bot: ``bwrap --seccomp FD``, or the launcher shim of the
``unshare`` and ``landlock`` layers (referee/sandbox/layers/). The ``basic`` layer has
none. Pure code: it builds bytes and never installs anything itself.
"""

from __future__ import annotations

import errno
import platform
import struct

# Why each call is refused (what a bot could otherwise do).
DENIED: dict[str, str] = {
    # Reaching into other processes.
    "ptrace": "inspect or steer another process",
    "process_vm_readv": "read another process's memory",
    "process_vm_writev": "write another process's memory",
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
    "syslog": "read the kernel's log",
    # Administration (refused by missing capabilities too; under the unshare layer a
    # bot holds capabilities inside its own user namespace).
    "mount": "mount file systems",
    "umount2": "unmount file systems",
    "pivot_root": "change the root file system",
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
    # Fairness: where and when the bot runs is the referee's to decide.
    "sched_setattr": "ask for a longer time slice, so as to run first on a shared CPU",
    "sched_setscheduler": "change its scheduling policy",
    "sched_setaffinity": "leave the CPUs the referee gave it (a league worker's share)",
}

# System call numbers from the kernel's tables (uapi asm/unistd_64.h, asm/unistd_32.h
# and asm-generic/unistd.h; tests/test_seccomp.py checks them against the headers).
_X86_64 = {
    "ptrace": 101, "process_vm_readv": 310, "process_vm_writev": 311, "bpf": 321,
    "perf_event_open": 298, "userfaultfd": 323, "keyctl": 250, "add_key": 248,
    "request_key": 249, "io_uring_setup": 425, "io_uring_enter": 426,
    "io_uring_register": 427, "syslog": 103, "mount": 165, "umount2": 166,
    "pivot_root": 155, "open_tree": 428, "move_mount": 429, "fsopen": 430,
    "fsconfig": 431, "fsmount": 432, "fspick": 433, "mount_setattr": 442, "swapon": 167,
    "swapoff": 168, "reboot": 169, "kexec_load": 246, "kexec_file_load": 320,
    "init_module": 175, "finit_module": 313, "delete_module": 176, "sched_setattr": 314,
    "sched_setscheduler": 144, "sched_setaffinity": 203,
}  # fmt: skip
_I386 = {
    "ptrace": 26, "process_vm_readv": 347, "process_vm_writev": 348, "bpf": 357,
    "perf_event_open": 336, "userfaultfd": 374, "keyctl": 288, "add_key": 286,
    "request_key": 287, "io_uring_setup": 425, "io_uring_enter": 426,
    "io_uring_register": 427, "syslog": 103, "mount": 21, "umount2": 52, "pivot_root": 217,
    "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432,
    "fspick": 433, "mount_setattr": 442, "swapon": 87, "swapoff": 115, "reboot": 88,
    "kexec_load": 283, "init_module": 128, "finit_module": 350, "delete_module": 129,
    "sched_setattr": 351, "sched_setscheduler": 156, "sched_setaffinity": 241,
    "umount": 22,  # i386 only: the old one-argument umount
}  # fmt: skip
_GENERIC = {  # aarch64, riscv64 and the other asm-generic architectures
    "ptrace": 117, "process_vm_readv": 270, "process_vm_writev": 271, "bpf": 280,
    "perf_event_open": 241, "userfaultfd": 282, "keyctl": 219, "add_key": 217,
    "request_key": 218, "io_uring_setup": 425, "io_uring_enter": 426,
    "io_uring_register": 427, "syslog": 116, "mount": 40, "umount2": 39, "pivot_root": 41,
    "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432,
    "fspick": 433, "mount_setattr": 442, "swapon": 224, "swapoff": 225, "reboot": 142,
    "kexec_load": 104, "kexec_file_load": 294, "init_module": 105, "finit_module": 273,
    "delete_module": 106, "sched_setattr": 274, "sched_setscheduler": 119,
    "sched_setaffinity": 122,
}  # fmt: skip

# AUDIT_ARCH_* values (linux/audit.h): what seccomp_data.arch says.
AUDIT_ARCH_X86_64 = 0xC000003E
AUDIT_ARCH_I386 = 0x40000003
AUDIT_ARCH_AARCH64 = 0xC00000B7
AUDIT_ARCH_RISCV64 = 0xC00000F3

# machine -> (its own ABI, tables by arch); any other arch a process of that machine
# may call into (x32, 32-bit ARM) is refused outright.
_MACHINES: dict[str, tuple[int, dict[int, dict[str, int]]]] = {
    "x86_64": (AUDIT_ARCH_X86_64, {AUDIT_ARCH_X86_64: _X86_64, AUDIT_ARCH_I386: _I386}),
    "aarch64": (AUDIT_ARCH_AARCH64, {AUDIT_ARCH_AARCH64: _GENERIC}),
    "riscv64": (AUDIT_ARCH_RISCV64, {AUDIT_ARCH_RISCV64: _GENERIC}),
}
_X32_BIT = 0x40000000  # x86_64 numbers with this bit set are the x32 ABI

# Classic BPF as seccomp runs it (linux/filter.h, linux/seccomp.h).
_LD_W_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ_K = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JGE_K = 0x35  # BPF_JMP | BPF_JGE | BPF_K
_RET_K = 0x06  # BPF_RET | BPF_K
_OFFSET_NR, _OFFSET_ARCH = 0, 4  # in struct seccomp_data
RET_ALLOW = 0x7FFF0000
RET_EPERM = 0x00050000 | errno.EPERM  # SECCOMP_RET_ERRNO | EPERM


def _insn(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)  # struct sock_filter, native order


def _table_block(numbers: list[int], refuse_x32: bool) -> list[bytes]:
    """Load the call number; EPERM for each of ``numbers`` (and x32 calls), else allow."""
    block = [_insn(_LD_W_ABS, _OFFSET_NR)]
    tests = [(_JGE_K, _X32_BIT)] if refuse_x32 else []
    tests += [(_JEQ_K, n) for n in numbers]
    for i, (code, k) in enumerate(tests):
        # Jump offsets count from the next instruction: skip the rest of the tests
        # and the allow to land on the EPERM that ends the block.
        block.append(_insn(code, k, jt=len(tests) - i))
    block += [_insn(_RET_K, RET_ALLOW), _insn(_RET_K, RET_EPERM)]
    return block


def filter_program(machine: str | None = None) -> bytes | None:
    """The filter for ``machine`` (default: this one) as the kernel takes it (an array
    of struct sock_filter), or None for a machine without a table here."""
    entry = _MACHINES.get(machine or platform.machine())
    if entry is None:
        return None
    _native, tables = entry  # the native ABI's table comes first: most calls test once
    blocks = {
        arch: _table_block(sorted(set(table.values())), arch == AUDIT_ARCH_X86_64)
        for arch, table in tables.items()
    }
    # The arch dispatch: one test per known ABI jumping to its block; any other ABI
    # gets EPERM for every call.
    dispatch_len = 1 + len(blocks) + 1
    program = [_insn(_LD_W_ABS, _OFFSET_ARCH)]
    start = dispatch_len  # where the next block begins
    for i, (arch, block) in enumerate(blocks.items()):
        here = 1 + i  # this test's index
        program.append(_insn(_JEQ_K, arch, jt=start - (here + 1)))
        start += len(block)
    program.append(_insn(_RET_K, RET_EPERM))
    for block in blocks.values():
        program += block
    if len(program) > 255:  # a jump offset is one byte
        raise AssertionError("seccomp filter too long for one-byte jumps")
    return b"".join(program)


def refused_calls() -> list[str]:
    """The names refused on this machine (empty where there is no filter)."""
    entry = _MACHINES.get(platform.machine())
    if entry is None:
        return []
    return sorted(entry[1][entry[0]])
