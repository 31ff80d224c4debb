"""The system calls a contained bot may not make, as a seccomp filter (classic BPF).

Namespaces and Landlock decide what a bot can see and reach; this deny-list closes
what they leave open. A few calls are allowed with some arguments only
(``CONDITIONAL``): priorities of the bot itself, and (for a layer without a network
namespace) local sockets. Each refused call fails with EPERM, so runtimes that probe for
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
    # The host's identity (refused by missing capabilities too; this keeps the
    # landlock layer, which has no UTS namespace, safe whatever the bot holds).
    "sethostname": "rename the host",
    "setdomainname": "rename the host's NIS domain",
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
    "sched_setscheduler": 144, "sched_setaffinity": 203, "sethostname": 170,
    "setdomainname": 171,
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
    "sethostname": 74, "setdomainname": 121,
    "umount": 22,  # i386 only: the old one-argument umount
    "nice": 34,  # i386 only: lowers the caller's nice value without setpriority
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
    "sched_setaffinity": 122, "sethostname": 161, "setdomainname": 162,
}  # fmt: skip

# Calls allowed only with some arguments (see _conditional_rules): a bot may renice
# and set the I/O priority of itself alone, never to a lower nice value than it
# started with; and under ``local_sockets`` it may create only AF_UNIX sockets.
# On i386, socketcall multiplexes every socket call with its arguments in memory,
# where a filter cannot read them: it is refused under ``local_sockets``.
CONDITIONAL: dict[str, str] = {
    "setpriority": "renice another process (its opponent, the referee) or run ahead of "
    "the opponent on a shared CPU",
    "ioprio_set": "change another process's I/O priority",
    "socket": "(landlock layer) raw and packet sockets, UDP and other non-local families",
}
_X86_64_CONDITIONAL = {"setpriority": 141, "ioprio_set": 251, "socket": 41}
_I386_CONDITIONAL = {"setpriority": 97, "ioprio_set": 289, "socket": 359, "socketcall": 102}
_GENERIC_CONDITIONAL = {"setpriority": 140, "ioprio_set": 30, "socket": 198}

# AUDIT_ARCH_* values (linux/audit.h): what seccomp_data.arch says.
AUDIT_ARCH_X86_64 = 0xC000003E
AUDIT_ARCH_I386 = 0x40000003
AUDIT_ARCH_AARCH64 = 0xC00000B7
AUDIT_ARCH_RISCV64 = 0xC00000F3

# machine -> (its own ABI, tables by arch); any other arch a process of that machine
# may call into (x32, 32-bit ARM) is refused outright.
_CONDITIONAL_BY_TABLE = {
    id(_X86_64): _X86_64_CONDITIONAL,
    id(_I386): _I386_CONDITIONAL,
    id(_GENERIC): _GENERIC_CONDITIONAL,
}
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

_PRIO_PROCESS = 0  # setpriority's "which" for one process (who = 0: the caller)
_IOPRIO_WHO_PROCESS = 1
_AF_UNIX = 1
_SIGN_BIT = 0x80000000


def _arg(i: int) -> int:
    """Offset of the low 32 bits of args[i] in struct seccomp_data. Every machine with
    a table here is little-endian, and each argument tested is a C int."""
    return 16 + 8 * i


# An instruction with symbolic jump targets: (code, k, jump if true, jump if false);
# a target is a label, or None for the next instruction.
_Op = tuple[int, int, str | None, str | None]


def _assemble(items: list[_Op | str]) -> list[bytes]:
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

        def offset(label: str | None, pc: int = pc) -> int:
            if label is None:
                return 0
            off = where[label] - (pc + 1)  # jumps count from the next instruction
            if not 0 <= off <= 255:
                raise AssertionError("seccomp filter jump out of range")
            return off

        out.append(struct.pack("=HBBI", code, offset(jt), offset(jf), k))
    return out


def _conditional_rules(
    table: dict[str, int], tag: str, start_nice: int, local_sockets: bool
) -> tuple[list[tuple[int, str]], list[_Op | str]]:
    """(call number, label) dispatch entries and the code that checks each call's
    arguments, ending at the block's "allow" or "deny" labels."""
    calls = _CONDITIONAL_BY_TABLE[id(table)]
    allow, deny = f"{tag}allow", f"{tag}deny"
    entries = [(calls["setpriority"], f"{tag}setpriority"), (calls["ioprio_set"], f"{tag}ioprio")]
    code: list[_Op | str] = [
        f"{tag}setpriority",
        (_LD_W_ABS, _arg(0), None, None),
        (_JEQ_K, _PRIO_PROCESS, None, deny),
        (_LD_W_ABS, _arg(1), None, None),
        (_JEQ_K, 0, None, deny),
        (_LD_W_ABS, _arg(2), None, None),
    ]
    # The new nice value, a signed int, may not be below the one the bot started with.
    if start_nice >= 0:
        code += [(_JGE_K, _SIGN_BIT, deny, None), (_JGE_K, start_nice, allow, deny)]
    else:
        code += [(_JGE_K, _SIGN_BIT, None, allow), (_JGE_K, start_nice & 0xFFFFFFFF, allow, deny)]
    code += [
        f"{tag}ioprio",
        (_LD_W_ABS, _arg(0), None, None),
        (_JEQ_K, _IOPRIO_WHO_PROCESS, None, deny),
        (_LD_W_ABS, _arg(1), None, None),
        (_JEQ_K, 0, allow, deny),
    ]
    if local_sockets:
        entries.append((calls["socket"], f"{tag}socket"))
        code += [
            f"{tag}socket",
            (_LD_W_ABS, _arg(0), None, None),
            (_JEQ_K, _AF_UNIX, allow, deny),
        ]
        if "socketcall" in calls:
            entries.append((calls["socketcall"], deny))
    return entries, code


def _table_block(
    table: dict[str, int], tag: str, refuse_x32: bool, start_nice: int, local_sockets: bool
) -> list[_Op | str]:
    """Load the call number; EPERM for each call of ``table`` (and x32 calls), the
    argument checks for the conditional calls, else allow."""
    allow, deny = f"{tag}allow", f"{tag}deny"
    entries, checks = _conditional_rules(table, tag, start_nice, local_sockets)
    block: list[_Op | str] = [(_LD_W_ABS, _OFFSET_NR, None, None)]
    if refuse_x32:
        block.append((_JGE_K, _X32_BIT, deny, None))
    block += [(_JEQ_K, n, deny, None) for n in sorted(set(table.values()))]
    block += [(_JEQ_K, n, label, None) for n, label in entries]
    block.append((_RET_K, RET_ALLOW, None, None))
    # BPF jumps only forward: the argument checks come before the returns they reach.
    block += checks
    block += [allow, (_RET_K, RET_ALLOW, None, None), deny, (_RET_K, RET_EPERM, None, None)]
    return block


def filter_program(
    machine: str | None = None, *, start_nice: int = 0, local_sockets: bool = False
) -> bytes | None:
    """The filter for ``machine`` (default: this one) as the kernel takes it (an array
    of struct sock_filter), or None for a machine without a table here.

    ``start_nice``: the nice value the bot starts with (it may not go below it).
    ``local_sockets``: refuse every socket but AF_UNIX (for a layer without a
    network namespace)."""
    entry = _MACHINES.get(machine or platform.machine())
    if entry is None:
        return None
    _native, tables = entry  # the native ABI's table comes first: most calls test once
    # The arch dispatch: one test per known ABI jumping to its block; any other ABI
    # gets EPERM for every call.
    items: list[_Op | str] = [(_LD_W_ABS, _OFFSET_ARCH, None, None)]
    items += [(_JEQ_K, arch, f"a{arch}:", None) for arch in tables]
    items.append((_RET_K, RET_EPERM, None, None))
    for arch, table in tables.items():
        tag = f"a{arch}:"
        items.append(tag)
        items += _table_block(table, tag, arch == AUDIT_ARCH_X86_64, start_nice, local_sockets)
    return b"".join(_assemble(items))


def refused_calls() -> list[str]:
    """The names refused on this machine (empty where there is no filter)."""
    entry = _MACHINES.get(platform.machine())
    if entry is None:
        return []
    return sorted(entry[1][entry[0]])


def conditional_calls() -> list[str]:
    """The names allowed only with some arguments on this machine (see CONDITIONAL)."""
    entry = _MACHINES.get(platform.machine())
    if entry is None:
        return []
    return sorted(_CONDITIONAL_BY_TABLE[id(entry[1][entry[0]])])
