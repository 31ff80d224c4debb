"""referee.seccomp: the deny-list's system call numbers against the kernel's own
headers, the filter program run through a small classic-BPF interpreter for every
architecture it covers, and which layers on this machine install it. (The filter
at work in real bots: tests/test_sandbox.py and the zoo's refused_syscalls.)"""

from __future__ import annotations

import errno
import re
import struct
from pathlib import Path

import pytest

from referee import sandbox
from referee.sandbox import seccomp

# Where Debian-like and Fedora-like systems keep the uapi tables.
HEADERS = {
    "x86_64": ["/usr/include/x86_64-linux-gnu/asm/unistd_64.h", "/usr/include/asm/unistd_64.h"],
    "i386": ["/usr/include/x86_64-linux-gnu/asm/unistd_32.h", "/usr/include/asm/unistd_32.h"],
    "generic": ["/usr/include/asm-generic/unistd.h"],
}
TABLES = {"x86_64": seccomp._X86_64, "i386": seccomp._I386, "generic": seccomp._GENERIC}
CONDITIONAL = {
    "x86_64": seccomp._X86_64_CONDITIONAL,
    "i386": seccomp._I386_CONDITIONAL,
    "generic": seccomp._GENERIC_CONDITIONAL,
}


def _header_numbers(kind: str) -> dict[str, int]:
    for path in HEADERS[kind]:
        if Path(path).exists():
            text = Path(path).read_text()
            return {
                m.group(1): int(m.group(2))
                for m in re.finditer(r"#define __NR(?:3264)?_(\w+)\s+(\d+)\b", text)
            }
    pytest.skip(f"no {kind} syscall header here (linux-libc-dev)")


@pytest.mark.parametrize("kind", sorted(TABLES))
def test_numbers_match_the_kernel_headers(kind: str) -> None:
    numbers = _header_numbers(kind)
    table = TABLES[kind]
    assert {name: numbers.get(name) for name in table} == table
    conditional = CONDITIONAL[kind]
    assert {name: numbers.get(name) for name in conditional} == conditional
    # Every call of the deny-list is in every table its architecture has.
    missing = set(seccomp.DENIED) - set(table)
    assert missing == ({"kexec_file_load"} if kind == "i386" else set())  # i386 has none


def run_filter(program: bytes, nr: int, arch: int, args: tuple[int, ...] = ()) -> int:
    """What the kernel would return for a call: a classic-BPF interpreter for the
    instructions the filter uses, over struct seccomp_data (nr, arch, ip, args)."""
    padded = [a & 0xFFFFFFFFFFFFFFFF for a in args] + [0] * (6 - len(args))
    data = struct.pack("=iIQ6Q", nr, arch, 0, *padded)
    insns = [struct.unpack_from("=HBBI", program, i) for i in range(0, len(program), 8)]
    acc, pc = 0, 0
    while True:
        code, jt, jf, k = insns[pc]
        pc += 1
        if code == 0x20:  # ld [k]
            acc = struct.unpack_from("=I", data, k)[0]
        elif code == 0x15:  # jeq #k
            pc += jt if acc == k else jf
        elif code == 0x35:  # jge #k
            pc += jt if acc >= k else jf
        elif code == 0x06:  # ret #k
            return k
        else:
            raise AssertionError(f"unexpected instruction {code:#x}")


EPERM = 0x00050000 | errno.EPERM
ALLOW = 0x7FFF0000
# Calls every bot makes (read, write, execve, exit_group, clone, mmap, ...).
EVERYDAY = {
    "x86_64": [0, 1, 9, 56, 59, 60, 61, 110, 202, 204, 231, 435],
    "i386": [3, 4, 11, 120, 192, 240, 252, 242],
    "generic": [63, 64, 93, 94, 98, 123, 172, 220, 221, 222, 435],
}


@pytest.mark.parametrize(
    ("machine", "arch", "kind"),
    [
        ("x86_64", seccomp.AUDIT_ARCH_X86_64, "x86_64"),
        ("x86_64", seccomp.AUDIT_ARCH_I386, "i386"),
        ("aarch64", seccomp.AUDIT_ARCH_AARCH64, "generic"),
        ("riscv64", seccomp.AUDIT_ARCH_RISCV64, "generic"),
    ],
)
def test_the_filter_refuses_exactly_the_deny_list(machine: str, arch: int, kind: str) -> None:
    program = seccomp.filter_program(machine)
    assert program is not None
    for name, nr in TABLES[kind].items():
        assert run_filter(program, nr, arch) == EPERM, name
    for nr in EVERYDAY[kind]:
        assert run_filter(program, nr, arch) == ALLOW, nr
    # Everything not listed passes: walk the whole number space of the ABI (the calls
    # allowed with some arguments only are called on the caller itself).
    calls = CONDITIONAL[kind]
    self_args = {calls["setpriority"]: (0, 0, 0), calls["ioprio_set"]: (1, 0, 0)}
    refused = {
        nr for nr in range(1024) if run_filter(program, nr, arch, self_args.get(nr, ())) != ALLOW
    }
    assert refused == set(TABLES[kind].values())


@pytest.mark.parametrize(
    ("machine", "arch", "kind"),
    [
        ("x86_64", seccomp.AUDIT_ARCH_X86_64, "x86_64"),
        ("x86_64", seccomp.AUDIT_ARCH_I386, "i386"),
        ("aarch64", seccomp.AUDIT_ARCH_AARCH64, "generic"),
    ],
)
@pytest.mark.parametrize("start_nice", [0, 5, -3])
def test_priorities_are_the_bots_own_and_never_raised(
    machine: str, arch: int, kind: str, start_nice: int
) -> None:
    program = seccomp.filter_program(machine, start_nice=start_nice)
    assert program is not None
    calls = CONDITIONAL[kind]
    prio, ioprio = calls["setpriority"], calls["ioprio_set"]
    prio_process, prio_pgrp, prio_user = 0, 1, 2
    # Its own nice value: never below the one it started with; up to 19 is fine.
    for nice in range(-20, 20):
        want = ALLOW if nice >= start_nice else EPERM
        assert run_filter(program, prio, arch, (prio_process, 0, nice)) == want, nice
    # Anything but itself: another pid (the opponent, the referee), its group, its user.
    for which, who in ((prio_process, 1), (prio_process, 4242), (prio_pgrp, 0), (prio_user, 0)):
        assert run_filter(program, prio, arch, (which, who, 19)) == EPERM, (which, who)
    # I/O priority: its own process only.
    assert run_filter(program, ioprio, arch, (1, 0, 4)) == ALLOW
    for which, who in ((1, 4242), (2, 0), (3, 0)):
        assert run_filter(program, ioprio, arch, (which, who, 4)) == EPERM, (which, who)


@pytest.mark.parametrize(
    ("machine", "arch", "kind"),
    [
        ("x86_64", seccomp.AUDIT_ARCH_X86_64, "x86_64"),
        ("x86_64", seccomp.AUDIT_ARCH_I386, "i386"),
        ("riscv64", seccomp.AUDIT_ARCH_RISCV64, "generic"),
    ],
)
def test_local_sockets_only_where_asked(machine: str, arch: int, kind: str) -> None:
    af_unix, af_inet, af_inet6, af_packet, af_netlink = 1, 2, 10, 17, 16
    socket_nr = CONDITIONAL[kind]["socket"]
    strict = seccomp.filter_program(machine, local_sockets=True)
    loose = seccomp.filter_program(machine)
    assert strict is not None and loose is not None
    assert run_filter(strict, socket_nr, arch, (af_unix, 1, 0)) == ALLOW
    for family in (af_inet, af_inet6, af_packet, af_netlink):
        assert run_filter(strict, socket_nr, arch, (family, 2, 0)) == EPERM, family
        assert run_filter(loose, socket_nr, arch, (family, 2, 0)) == ALLOW, family
    if "socketcall" in CONDITIONAL[kind]:  # i386: arguments in memory, out of reach
        assert run_filter(strict, CONDITIONAL[kind]["socketcall"], arch, (1,)) == EPERM
        assert run_filter(loose, CONDITIONAL[kind]["socketcall"], arch, (1,)) == ALLOW


def test_other_abis_are_refused_outright() -> None:
    program = seccomp.filter_program("x86_64")
    assert program is not None
    # x32 calls (the 0x40000000 bit) would dodge the x86_64 table: refused.
    assert run_filter(program, 0x40000000 | 0, seccomp.AUDIT_ARCH_X86_64) == EPERM
    assert run_filter(program, 0x40000000 | 101, seccomp.AUDIT_ARCH_X86_64) == EPERM
    # 32-bit ARM on an arm64 machine, any unknown ABI: refused.
    arm64 = seccomp.filter_program("aarch64")
    assert arm64 is not None
    assert run_filter(arm64, 3, 0x40000028) == EPERM
    assert run_filter(program, 0, 0x40000028) == EPERM


def test_unknown_machines_get_no_filter() -> None:
    assert seccomp.filter_program("sparc64") is None


def test_layers_here_install_it_where_the_kernel_can() -> None:
    actions = Path("/proc/sys/kernel/seccomp/actions_avail")
    expected = (
        seccomp.refused_calls()
        if seccomp.filter_program() is not None
        and actions.exists()
        and "errno" in actions.read_text().split()
        else []
    )
    for name in sandbox.LAYERS:
        try:
            layer = sandbox.choose_layer(name)
        except sandbox.SandboxError:
            continue  # a layer this machine lacks
        want = [] if name == "basic" else expected
        assert list(layer.seccomp) == want, name
        assert ("syscalls" in layer.isolation) == bool(want), name
        record = sandbox.containment_record(layer, sandbox.Limits())
        assert record["seccomp"] == want
