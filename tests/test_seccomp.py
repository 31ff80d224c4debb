"""referee.seccomp: the allow-list's system call numbers against the kernel's own
headers, the filter program run through a small classic-BPF interpreter for every
machine it covers, and which layers on this machine install it. (The filter at work
in real bots: tests/test_runtimes.py, and the zoo's refused_syscalls and
kernel_surface.)"""

from __future__ import annotations

import errno
import re
import struct
from pathlib import Path

import pytest

from referee import sandbox
from referee.sandbox import base, seccomp

# Where Debian-like and Fedora-like systems keep the uapi tables.
HEADERS = {
    "x86_64": ["/usr/include/x86_64-linux-gnu/asm/unistd_64.h", "/usr/include/asm/unistd_64.h"],
    "generic": ["/usr/include/asm-generic/unistd.h"],
}
TABLES = {"x86_64": seccomp._X86_64, "generic": seccomp._GENERIC}
# Calls newer than the headers of an older distribution: one numbering on every
# machine since Linux 5.1 (uretprobe is x86_64's own).
NEWER = {
    "memfd_secret": 447, "futex_waitv": 449, "set_mempolicy_home_node": 450,
    "cachestat": 451, "fchmodat2": 452, "map_shadow_stack": 453, "futex_wake": 454,
    "futex_wait": 455, "futex_requeue": 456, "mseal": 462, "uretprobe": 335,
}  # fmt: skip
MACHINES = [
    ("x86_64", seccomp.AUDIT_ARCH_X86_64, "x86_64"),
    ("aarch64", seccomp.AUDIT_ARCH_AARCH64, "generic"),
    ("riscv64", seccomp.AUDIT_ARCH_RISCV64, "generic"),
]
EPERM = 0x00050000 | errno.EPERM
ENOSYS = 0x00050000 | errno.ENOSYS
ALLOW = 0x7FFF0000


def _header_numbers(kind: str) -> dict[str, int]:
    for path in HEADERS[kind]:
        if Path(path).exists():
            text = Path(path).read_text()
            found = {
                m.group(1): int(m.group(2))
                for m in re.finditer(r"#define __NR(?:3264)?_(\w+)\s+(\d+)\b", text)
            }
            if kind == "generic":  # the 64-bit name of __NR3264_fstatat
                found["newfstatat"] = found.pop("fstatat")
            return found
    pytest.skip(f"no {kind} syscall header here (linux-libc-dev)")


@pytest.mark.parametrize("kind", sorted(TABLES))
def test_numbers_match_the_kernel_headers(kind: str) -> None:
    numbers = _header_numbers(kind)
    table = TABLES[kind]
    for name, nr in table.items():
        assert numbers.get(name, NEWER.get(name)) == nr, name
    # Every call named by the filter has its number where the machine has the call.
    named = seccomp.ALLOWED | set(seccomp.REFUSED) | set(seccomp.CONDITIONAL)
    assert {n for n in named if n in numbers or n in NEWER} - set(table) <= {"uretprobe"}


def run_filter(program: bytes, nr: int, arch: int, args: tuple[int, ...] = ()) -> int:
    """What the kernel would return for a call: a classic-BPF interpreter for the
    instructions the filter uses, over struct seccomp_data (nr, arch, ip, args)."""
    padded = [a & 0xFFFFFFFFFFFFFFFF for a in args] + [0] * (6 - len(args))
    data = struct.pack("=IIQ6Q", nr & 0xFFFFFFFF, arch, 0, *padded)
    insns = [struct.unpack_from("=HBBI", program, i) for i in range(0, len(program), 8)]
    acc, pc = 0, 0
    while True:
        code, jt, jf, k = insns[pc]
        pc += 1
        if code == 0x20:  # ld [k]
            acc = struct.unpack_from("=I", data, k)[0]
        elif code == 0x05:  # ja k
            pc += k
        elif code == 0x15:  # jeq #k
            pc += jt if acc == k else jf
        elif code == 0x35:  # jge #k
            pc += jt if acc >= k else jf
        elif code == 0x45:  # jset #k
            pc += jt if acc & k else jf
        elif code == 0x06:  # ret #k
            return k
        else:
            raise AssertionError(f"unexpected instruction {code:#x}")


def _program(machine: str, **kwargs: object) -> bytes:
    program = seccomp.filter_program(machine, **kwargs)  # type: ignore[arg-type]
    assert program is not None
    assert len(program) // 8 <= 4096  # the kernel's BPF_MAXINSNS
    return program


@pytest.mark.parametrize(("machine", "arch", "kind"), MACHINES)
def test_the_allow_list_allows_exactly_its_calls(machine: str, arch: int, kind: str) -> None:
    program = _program(machine)
    table = seccomp._MACHINES[machine][1]
    allowed = {table[n] for n in seccomp.ALLOWED if n in table}
    allowed |= {table[n] for n in seccomp._ARCH_ALLOWED.get(machine, ())}
    for name in seccomp.ALLOWED & table.keys():
        assert run_filter(program, table[name], arch) == ALLOW, name
    for name in seccomp.REFUSED.keys() & table.keys():
        want = ENOSYS if name == "clone3" else EPERM  # libc falls back on ENOSYS
        assert run_filter(program, table[name], arch) == want, name
    # Walk the whole number space of the ABI: nothing else passes without argument
    # checks (the conditional calls are checked below); unlisted calls get ENOSYS.
    conditional = {table[n] for n in seccomp.CONDITIONAL}
    refused = {table[n] for n in seccomp.REFUSED if n in table}
    for nr in range(1024):
        got = run_filter(program, nr, arch)
        if nr in allowed:
            assert got == ALLOW, nr
        elif nr not in conditional and nr not in refused:
            assert got == ENOSYS, nr
    for nr in (0x7FFFFFFF, 0xFFFFFFFF):  # numbers past every table
        assert run_filter(program, nr, arch) == ENOSYS


@pytest.mark.parametrize(("machine", "arch", "kind"), MACHINES)
def test_the_deny_list_fallback_refuses_only_its_calls(machine: str, arch: int, kind: str) -> None:
    program = _program(machine, policy="deny-list")
    table = seccomp._MACHINES[machine][1]
    refused = {table[n] for n in seccomp.REFUSED if n in table}
    conditional = {table[n] for n in seccomp.CONDITIONAL}
    for nr in range(1024):
        got = run_filter(program, nr, arch)
        if nr in refused:
            assert got in (EPERM, ENOSYS), nr
        elif nr not in conditional:
            assert got == ALLOW, nr
    # The argument checks are the same as the allow-list's.
    assert run_filter(program, table["unshare"], arch, (0x10000000,)) == EPERM


@pytest.mark.parametrize(("machine", "arch", "kind"), MACHINES)
def test_no_new_namespace_and_no_personality_flags(machine: str, arch: int, kind: str) -> None:
    program = _program(machine)
    table = TABLES[kind]
    clone, unshare, personality = table["clone"], table["unshare"], table["personality"]
    thread_flags = 0x003D0F00  # glibc's pthread_create: VM|FS|FILES|SIGHAND|THREAD|...
    assert run_filter(program, clone, arch, (thread_flags,)) == ALLOW
    assert run_filter(program, clone, arch, (0x01200011,)) == ALLOW  # fork()
    assert run_filter(program, unshare, arch, (0x00000400,)) == ALLOW  # CLONE_FILES
    newuser, newnet = 0x10000000, 0x40000000
    for flag in (0x80, 0x20000, 0x2000000, 0x4000000, 0x8000000, newuser, 0x20000000, newnet):
        assert run_filter(program, clone, arch, (thread_flags | flag,)) == EPERM, hex(flag)
        assert run_filter(program, unshare, arch, (flag,)) == EPERM, hex(flag)
    assert run_filter(program, unshare, arch, (newuser | newnet,)) == EPERM
    assert run_filter(program, personality, arch, (0,)) == ALLOW  # PER_LINUX
    assert run_filter(program, personality, arch, (0xFFFFFFFF,)) == ALLOW  # the query
    for flags in (0x0040000, 0x0400000, 0x0008, 0x0800000):  # ADDR_NO_RANDOMIZE, ...
        assert run_filter(program, personality, arch, (flags,)) == EPERM, hex(flags)
    # Scheduling policy: SCHED_OTHER (which it has) succeeds without effect; any
    # other policy, or SCHED_RESET_ON_FORK, is refused.
    sched = table["sched_setscheduler"]
    assert run_filter(program, sched, arch, (0, 0, 0)) == seccomp.RET_NO_EFFECT == 0x00050000
    assert run_filter(program, sched, arch, (4242, 0, 0)) == seccomp.RET_NO_EFFECT
    for policy in (1, 2, 3, 5, 6, 0x40000000):
        assert run_filter(program, sched, arch, (0, policy, 0)) == EPERM, policy
    # Resource limits: its own only.
    prlimit = table["prlimit64"]
    assert run_filter(program, prlimit, arch, (0, 7, 0, 0)) == ALLOW
    assert run_filter(program, prlimit, arch, (4242, 7, 0, 0)) == EPERM
    assert run_filter(program, prlimit, arch, (1 << 32, 7, 0, 0)) == EPERM


@pytest.mark.parametrize(("machine", "arch", "kind"), MACHINES)
@pytest.mark.parametrize("start_nice", [0, 5, -3])
def test_priorities_are_the_bots_own_and_never_raised(
    machine: str, arch: int, kind: str, start_nice: int
) -> None:
    program = _program(machine, start_nice=start_nice)
    prio, ioprio = TABLES[kind]["setpriority"], TABLES[kind]["ioprio_set"]
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


AF_UNIX, AF_INET, AF_INET6, AF_NETLINK, AF_PACKET, AF_VSOCK, AF_ALG = 1, 2, 10, 16, 17, 40, 38
NETLINK_ROUTE, NETLINK_NETFILTER, NETLINK_AUDIT = 0, 12, 9


@pytest.mark.parametrize(("machine", "arch", "kind"), MACHINES)
def test_socket_families_are_the_layers(machine: str, arch: int, kind: str) -> None:
    socket_nr, pair_nr = TABLES[kind]["socket"], TABLES[kind]["socketpair"]
    wanted = {
        "host": {AF_UNIX, AF_INET, AF_INET6, AF_NETLINK},
        "netns": {AF_INET, AF_INET6, AF_NETLINK},
        "none": set(),
    }
    assert set(seccomp.SOCKET_POLICIES) == set(wanted)
    for policy, families in wanted.items():
        program = _program(machine, sockets=policy)
        for family in (AF_UNIX, AF_INET, AF_INET6, AF_PACKET, AF_VSOCK, AF_ALG, 0, 45, 255):
            want = ALLOW if family in families else EPERM
            assert run_filter(program, socket_nr, arch, (family, 1, 0)) == want, (policy, family)
        # Netlink: routing only (glibc and Go ask it for addresses), never netfilter.
        route = ALLOW if AF_NETLINK in families else EPERM
        assert run_filter(program, socket_nr, arch, (AF_NETLINK, 3, NETLINK_ROUTE)) == route
        for protocol in (NETLINK_NETFILTER, NETLINK_AUDIT):
            assert run_filter(program, socket_nr, arch, (AF_NETLINK, 3, protocol)) == EPERM
        # A connected pair reaches nothing: every layer keeps it.
        assert run_filter(program, pair_nr, arch, (AF_UNIX, 1, 0)) == ALLOW
        assert run_filter(program, pair_nr, arch, (AF_INET, 1, 0)) == EPERM
    with pytest.raises(ValueError, match="socket policy"):
        seccomp.filter_program(machine, sockets="everything")


def test_other_abis_are_refused_outright() -> None:
    program = _program("x86_64")
    # x32 calls (the 0x40000000 bit) would dodge the x86_64 table: refused.
    assert run_filter(program, 0x40000000 | 0, seccomp.AUDIT_ARCH_X86_64) == ENOSYS
    assert run_filter(program, 0x40000000 | 101, seccomp.AUDIT_ARCH_X86_64) == ENOSYS
    # i386 on x86_64 (int 0x80), 32-bit ARM on arm64: nothing at all.
    for nr in (0, 1, 3, 4, 11, 120):
        assert run_filter(program, nr, seccomp.AUDIT_ARCH_I386) == ENOSYS
    arm64 = _program("aarch64")
    assert run_filter(arm64, 3, 0x40000028) == ENOSYS
    assert run_filter(program, 0, 0x40000028) == ENOSYS


def test_unknown_machines_get_no_filter() -> None:
    assert seccomp.filter_program("sparc64") is None


def test_the_policy_is_named_or_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(base.SECCOMP_POLICY_ENV, raising=False)
    assert base.seccomp_policy() == "allow-list"
    monkeypatch.setenv(base.SECCOMP_POLICY_ENV, "deny-list")
    assert base.seccomp_policy() == "deny-list"
    monkeypatch.setenv(base.SECCOMP_POLICY_ENV, "none")
    with pytest.raises(sandbox.SandboxError, match="allow-list, deny-list"):
        base.seccomp_policy()


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
        want = expected
        assert list(layer.seccomp) == want, name
        assert ("syscalls" in layer.isolation) == bool(want), name
        if want:
            assert f"seccomp allows {len(seccomp.allowed_calls())}" in layer.description
        record = sandbox.containment_record(layer, sandbox.Limits())
        assert record["seccomp"] == want
