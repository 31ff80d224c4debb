"""Words for what went wrong with a seat, shared by ``referee match``, ``referee
replay`` and the HTML report: the tail of its stderr, where its full log is, and
the notes its verdict carries. Plain text, no I/O."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from .faults import Verdict
from .termtext import printable, quoted

TAIL_LINES = 5  # lines of a seat's stderr shown under a result
TAIL_WIDTH = 160  # characters of each such line


def stderr_log_path(replay: str | Path, seat: int) -> Path:
    """Where a match with this replay keeps seat ``seat``'s stderr (next to it)."""
    path = Path(replay)
    stem = path.name.split(".")[0]
    return path.parent / f"{stem}.seat{seat}.stderr.log"


def tail_lines(text: str, count: int = TAIL_LINES) -> list[str]:
    """The last ``count`` non-blank lines of ``text``, each cut to TAIL_WIDTH and
    made printable (termtext: a bot's control characters are shown escaped)."""
    lines = [printable(line.rstrip()) for line in text.splitlines() if line.strip()]
    return [
        line if len(line) <= TAIL_WIDTH else line[: TAIL_WIDTH - 3] + "..."
        for line in lines[-count:]
    ]


def seat_notes(
    labels: Sequence[str], verdicts: Sequence[Verdict], logs: Sequence[str | None]
) -> list[str]:
    """Lines to print under a result: for every seat that faulted or wrote to stderr,
    the last lines of its stderr and the path of its full log; for every seat the
    referee had to kill after ``end``, that note."""
    out: list[str] = []
    for seat, (label, verdict) in enumerate(zip(labels, verdicts, strict=True)):
        label = printable(label)
        log = logs[seat] if seat < len(logs) else None
        note = verdict.extra.get("after_end")
        if note:
            out.append(f"seat {seat} ({label}): {note}")
        if verdict.status == "ok" and not verdict.stderr_bytes:
            continue
        tail = tail_lines(verdict.stderr_tail or verdict.stderr_head)
        if tail:
            out.append(f"seat {seat} ({label}) stderr, last {len(tail)} lines:")
            out.extend(quoted(tail))  # (tail_lines made them printable already)
        elif verdict.status != "ok":
            out.append(f"seat {seat} ({label}) wrote nothing on stderr")
        if log is not None and verdict.stderr_bytes:
            out.append(f"  full stderr log: {log}")
    return out
