"""Record a fixed set of matches, or compare two such recordings.

A refactoring of the referee must not change what a match records. This script
plays the same matches (every game, and the faults: timeouts, protocol errors,
illegal moves, disqualifications, crashes, a failed handshake) with fixed seeds:

    python tools/replay_compare.py record DIR      # replays and --json results in DIR
    python tools/replay_compare.py compare OLD NEW [KEY...] # line by line, timing
        fields aside (and the fields named KEY, e.g. containment after a change to it)
    python tools/replay_compare.py fixtures DIR OUT [NAME...] # small replays for tests/fixtures

Timing fields (latencies, clocks, durations, CPU and memory measurements, the hash
chain that covers them, and the seconds quoted in a timeout's detail) are left out
of the comparison; everything else must be equal.

Run it from the repository root after ``make venv bots`` and ``make -C tests/zoo``.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
ZOO = ROOT / "tests" / "zoo"
FAULTY = ROOT / "tests" / "bots" / "faulty.py"

# Short limits make the fault matches quick; generous enough that a loaded machine
# does not turn a normal reply into a timeout.
FAST = ["--move-timeout", "0.5", "--time-bank", "0.5"]

# name: (bots, options)
MATCHES: dict[str, tuple[list[str], list[str]]] = {
    "chaos-py": (["random", "frequency"], ["--rounds", "300", "--seed", "11"]),
    "chaos-tricks": (["trickster", "sceptic"], ["--rounds", "300", "--seed", "12"]),
    "chaos-c": (["markov-c", "cycler-c"], ["--rounds", "3000", "--seed", "13"]),
    "chaos-rs-js": (["pattern-rs", "random-js"], ["--rounds", "500", "--seed", "14"]),
    "chaos-tokens": (["iocaine", "markov"], ["--rounds", "200", "--tokens", "5", "--seed", "15"]),
    "roshambo": (["iocaine", "frequency-js"], ["--game", "roshambo", "--seed", "16"]),
    "liars-dice": (["ld-odds", "ld-expect"], ["--game", "liars_dice", "--seed", "17"]),
    "liars-dice-3": (
        ["ld-odds", "ld-expect", "ld-odds"],
        ["--game", "liars_dice", "--param", "dice=3", "--seed", "18"],
    ),
    "rps-stuff": (["rps-balance", "rps-abundant"], ["--game", "rps_stuff", "--seed", "19"]),
    "ctm": (["ctm-minimax", "ctm-counter"], ["--game", "ctm", "--seed", "20"]),
    # Faults.
    "timeout-dq": ([f"{PY} {ZOO}/hang.py", "random"], ["--rounds", "50", "--seed", "21", *FAST]),
    "timeout-late": (
        [f"{PY} {FAULTY} sleep 4 2.5", "rock"],
        ["--rounds", "10", "--seed", "22", *FAST],
    ),
    "protocol-round": (
        ["random", f"{PY} {ZOO}/wrong_round.py"],
        ["--rounds", "40", "--seed", "23"],
    ),
    "protocol-garbage": (
        [f"{PY} {FAULTY} garbage 4", "cycler"],
        ["--rounds", "40", "--seed", "24"],
    ),
    "unknown-move": ([f"{PY} {FAULTY} badmove 6", "cycler"], ["--rounds", "40", "--seed", "25"]),
    "illegal-move": ([f"{PY} {FAULTY} noshadow 6", "cycler"], ["--rounds", "40", "--seed", "34"]),
    "too-many-illegal": (
        [f"{PY} {FAULTY} badmove 6", f"{PY} {FAULTY} garbage 7"],
        ["--rounds", "40", "--seed", "26", "--max-faults", "1"],
    ),
    "unsolicited": ([f"{PY} {FAULTY} twice 5", "random"], ["--rounds", "40", "--seed", "27"]),
    "crash-exit": ([f"{PY} {FAULTY} exit 8", "random"], ["--rounds", "40", "--seed", "28"]),
    "crash-segv": (["random", f"{PY} {ZOO}/segv.py"], ["--rounds", "40", "--seed", "29"]),
    "crash-c-abort": ([f"{ZOO}/bin/abort", "markov-c"], ["--rounds", "40", "--seed", "30"]),
    "closed-stdout": ([f"{PY} {ZOO}/close_stdout.py", "rock"], ["--rounds", "40", "--seed", "31"]),
    "handshake": ([f"{PY} -c print(1)", "rock"], ["--rounds", "40", "--seed", "32"]),
    "roshambo-fault": (
        [f"{PY} {FAULTY} garbage 9", "random"],
        ["--game", "roshambo", "--rounds", "60", "--seed", "33"],
    ),
}

TIMING_KEYS = {
    "h",
    "us",
    "started",
    "ended",
    "wall_s",
    "play_s",
    "cpu_s",
    "peak_rss_kib",
    "max_move_ms",
    "replay",
    "replay_hash",
    "referee",
    "idle_poll",
}
_SECONDS = re.compile(r"\d+\.\d+ s\b")


def record(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for name, (bots, options) in MATCHES.items():
        replay = out / f"{name}.jsonl"
        argv = [PY, "-m", "referee", "match", *bots, *options, "--json", "--replay", str(replay)]
        done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, check=False)
        (out / f"{name}.result.json").write_text(done.stdout)
        (out / f"{name}.exit").write_text(f"{done.returncode}\n")
        print(f"{name}: exit {done.returncode}", file=sys.stderr)


IGNORED: set[str] = set()


def _strip(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k not in TIMING_KEYS | IGNORED}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    if isinstance(value, str):
        return _SECONDS.sub("<t> s", value)
    return value


def _lines(path: Path) -> list[Any]:
    if not path.exists():
        return []
    if path.name.endswith(".jsonl"):
        # A replay as the referee reads it back: a lean replay's steps in full, so a
        # recording compares with one made before the replay format became lean.
        from referee.replay import iter_lines

        return [_strip(json.loads(line)) for line in iter_lines(path)]
    return [_strip(json.loads(line)) for line in path.read_text().splitlines() if line.strip()]


def first_difference(a: Any, b: Any, path: str = "") -> str:
    """Where two JSON values first differ, with both values there."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in list(a) + [k for k in b if k not in a]:
            if a.get(key) != b.get(key):
                return first_difference(a.get(key), b.get(key), f"{path}.{key}")
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            if x != y:
                return first_difference(x, y, f"{path}[{i}]")
    return f"{path or '(top)'}: before {a!r:.300}, after {b!r:.300}"


def compare(old: Path, new: Path) -> int:
    bad = 0
    names = sorted(p.name for p in old.iterdir() if p.name.endswith((".jsonl", ".json", ".exit")))
    for name in names:
        a, b = _lines(old / name), _lines(new / name)
        if name.endswith(".exit"):
            a, b = (old / name).read_text(), (new / name).read_text()
        if a == b:
            continue
        bad += 1
        if isinstance(a, list) and isinstance(b, list):
            if len(a) != len(b):
                print(f"{name}: {len(a)} lines before, {len(b)} after")
            for i, (x, y) in enumerate(zip(a, b, strict=False), start=1):
                if x != y:
                    print(f"{name}: line {i}: {first_difference(x, y)}")
                    break
        else:
            print(f"{name}: {a!r} before, {b!r} after")
    print(f"{len(names) - bad} of {len(names)} files identical apart from timing fields")
    return 1 if bad else 0


# The short recordings kept as test fixtures (tests/test_replay_fixtures.py): old
# replays must keep verifying. Paths of this checkout are replaced by neutral ones
# and the hash chain re-sealed, so the files name no machine.
FIXTURES = (
    "ctm",
    "liars-dice",
    "illegal-move",
    "timeout-dq",
    "too-many-illegal",
    "crash-segv",
    "handshake",
    "unsolicited",
)


def fixtures(src: Path, out: Path, names: tuple[str, ...] = FIXTURES) -> None:
    from referee.replay import chain_line, sealed_lines, unseal

    out.mkdir(parents=True, exist_ok=True)
    swaps = [(PY.encode(), b"/usr/bin/python3"), (str(ROOT).encode() + b"/", b"/opt/referee/")]

    def neutral(line: bytes) -> bytes:
        sealed = unseal(line)
        assert sealed is not None, f"{name}: unsealed line"
        body = sealed[0]
        for old, new in swaps:
            body = body.replace(old, new)
        return body

    for name in names:
        prev = b""
        lines = []
        stored = (src / f"{name}.jsonl").read_bytes().splitlines(keepends=True)
        for line, (whole, seals) in zip(stored, sealed_lines(stored), strict=True):
            body = neutral(line)
            if seals is None:
                # The line itself, or (format 1.1) the step in full as read back.
                _, prev = chain_line(prev, neutral(whole))
            else:
                # Format 1.2: the stored line, then the turn lines the rules give.
                turns = seals[len(unseal(line)[0]) :]  # type: ignore[index]
                _, prev = chain_line(prev, body + turns)
            lines.append(body[:-1] + b',"h":"' + prev + b'"}\n')
        (out / f"{name}.jsonl").write_bytes(b"".join(lines))


def main() -> int:
    if len(sys.argv) >= 4 and sys.argv[1] == "fixtures":
        fixtures(Path(sys.argv[2]), Path(sys.argv[3]), tuple(sys.argv[4:]) or FIXTURES)
        return 0
    if len(sys.argv) == 3 and sys.argv[1] == "record":
        record(Path(sys.argv[2]))
        return 0
    if len(sys.argv) >= 4 and sys.argv[1] == "compare":
        IGNORED.update(sys.argv[4:])
        return compare(Path(sys.argv[2]), Path(sys.argv[3]))
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
