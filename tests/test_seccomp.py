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
    # Every call of the deny-list is in every table its architecture has.
    missing = set(seccomp.DENIED) - set(table)
    assert missing == ({"kexec_file_load"} if kind == "i386" else set())  # i386 has none


def run_filter(program: bytes, nr: int, arch: int) -> int:
    """What the kernel would return for a call: a classic-BPF interpreter for the
    instructions the filter uses, over struct seccomp_data (nr, arch, ...)."""
    data = struct.pack("=iI", nr, arch) + bytes(56)
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
    # Everything not listed passes: walk the whole number space of the ABI.
    refused = {nr for nr in range(1024) if run_filter(program, nr, arch) != ALLOW}
    assert refused == set(TABLES[kind].values())


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
