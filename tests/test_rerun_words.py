"""`referee rerun` says in words what differed between the record and the rerun."""

from __future__ import annotations

from referee.replay import Event
from referee.rerun import _compare_steps, _record_words
from referee.verify import decode_record


def step(line: str):
    return decode_record(line.encode())


RECORD = (
    '{"type":"step","n":11,"obs":[{"type":"turn","round":11},{"type":"turn","round":11}],'
    '"act":[{"real_move":"spock"},{"real_move":"%s"}],"us":[5,6],"fault":[null,%s],'
    '"out":[[1,-1]]}'
)


def test_a_different_move_is_said_in_words():
    a = step(RECORD % ("rock", "null"))
    b = step(RECORD % ("paper", "null"))
    found = _compare_steps(a, b)
    assert found is not None
    assert found.describe().startswith(
        "round 11: seat 1 played rock in the record, paper in the rerun"
    )


def test_a_fault_in_one_run_only_is_said_in_words():
    a = step(RECORD % ("rock", "null"))
    b = step(RECORD % ("rock", '{"kind":"timeout"}'))
    found = _compare_steps(a, b)
    assert found is not None
    assert found.describe().startswith(
        "round 11: seat 1 had no fault in the record, a timeout fault in the rerun"
    )


def test_records_of_different_kinds_are_named():
    assert _record_words(step(RECORD % ("rock", "null"))) == "round 11 was played"
    assert _record_words(Event(n=11, kind="disqualified", seats=[0])) == ("seat 0 was disqualified")
