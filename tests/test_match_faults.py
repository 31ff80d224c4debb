"""Faulty bots through the real CLI: every match ends with a result, the fault is
recorded with its kind and round, and no bot process is left behind."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import msgspec
import pytest
from conftest import match_json, move_limit_s, processes_mentioning

from referee.replay import Step, read_replay

PY = sys.executable


def run(tmp_path, faulty_args, rounds=30, extra=()):
    faulty = tmp_path / "faulty.py"
    steady = tmp_path / "steady.py"
    replay = tmp_path / "match.jsonl"
    result = match_json(
        f"{PY} {faulty} {faulty_args}",
        f"{PY} {steady}",
        "--rounds",
        str(rounds),
        "--seed",
        "5",
        "--replay",
        str(replay),
        *extra,
    )
    assert processes_mentioning(str(tmp_path)) == [], "a bot process outlived the match"
    return result, read_replay(replay)


def _assert_verifies(replay) -> None:
    """``referee verify`` accepts the referee's own replay."""
    check = subprocess.run(
        [PY, "-m", "referee", "verify", str(replay)], capture_output=True, text=True
    )
    assert check.returncode == 0, check.stdout + check.stderr


def test_sleeping_past_the_timeout_loses_one_round_and_the_late_reply_is_dropped(
    tmp_path, bot_copy
):
    bot_copy("faulty.py"), bot_copy("steady.py")
    # Round 5 times out at T, the bot wakes at 1.5 T, answers round 5 (late) and then
    # round 6, which it was sent at T: 0.5 T of margin on both sides. T is 0.8 s or
    # more on a machine whose replies are slow just now.
    limit = move_limit_s(0.8)
    result, replay = run(
        tmp_path,
        f"sleep 5 {1.5 * limit}",
        extra=("--move-timeout", str(limit), "--time-bank", "0"),
    )
    v0 = result["seats"][0]["verdict"]
    assert [(f["round"], f["kind"]) for f in v0["faults"]] == [(5, "timeout")]
    assert not v0.get("disqualified", False)
    assert result["reason"] == "complete" and result["steps"] == 30
    step5, step6 = replay.steps[4], replay.steps[5]
    assert step5.fault[0].kind == "timeout" and step5.act[0] is None
    # The reply to round 5 arrived during round 6 and was not taken for round 6.
    assert step6.act[0]["round"] == 6
    assert step6.fault[0] is None


def test_exit_mid_match_is_a_crash_and_forfeits_the_rest(tmp_path, bot_copy):
    bot_copy("faulty.py"), bot_copy("steady.py")
    result, replay = run(tmp_path, "exit 5", rounds=100)
    v0 = result["seats"][0]["verdict"]
    assert v0["status"] == "crash" and v0["round"] == 5 and v0["disqualified"]
    assert v0["exit_code"] == 3
    assert result["winner"] == 1 and result["reason"] == "disqualification"
    stats0, stats1 = result["seats"][0]["stats"], result["seats"][1]["stats"]
    assert stats0["points"] + stats1["points"] == 0
    assert stats0["losses"] >= 96  # round 5 and every round after it
    assert replay.footer is not None
    assert [e.kind for e in replay.events] == ["disqualified"]


def test_garbage_is_a_protocol_error_for_that_round_only(tmp_path, bot_copy):
    bot_copy("faulty.py"), bot_copy("steady.py")
    result, replay = run(tmp_path, "garbage 5")
    v0 = result["seats"][0]["verdict"]
    assert [(f["round"], f["kind"]) for f in v0["faults"]] == [(5, "protocol_error")]
    assert "not json" in v0["faults"][0]["detail"]
    assert result["steps"] == 30 and result["reason"] == "complete"
    assert replay.steps[4].out is not None
    assert replay.steps[4].out[0] == [-1, 1]  # the faulting seat lost round 5


def test_unknown_move_is_a_protocol_error(tmp_path, bot_copy):
    bot_copy("faulty.py"), bot_copy("steady.py")
    result, _ = run(tmp_path, "badmove 7")
    faults = result["seats"][0]["verdict"]["faults"]
    assert [(f["round"], f["kind"]) for f in faults] == [(7, "protocol_error")]


def test_a_hung_bot_is_disqualified_after_max_faults(tmp_path, bot_copy):
    bot_copy("faulty.py"), bot_copy("steady.py")
    # 0.2 s or more: rounds 1-3 must not time out on a machine whose replies are slow.
    limit = move_limit_s(0.2)
    result, _ = run(
        tmp_path, "hang 4", rounds=50, extra=("--move-timeout", str(limit), "--time-bank", "0")
    )
    v0 = result["seats"][0]["verdict"]
    kinds = [(f["round"], f["kind"]) for f in v0["faults"]]
    assert kinds == [(4, "timeout"), (5, "timeout"), (6, "timeout"), (6, "too_many_faults")]
    assert v0["disqualified"] and v0["killed_by_referee"]
    assert result["winner"] == 1


def test_two_replies_for_one_turn_answer_the_next_turns_in_order(tmp_path, bot_copy):
    bot_copy("faulty.py"), bot_copy("steady.py")
    result, _ = run(tmp_path, "twice 3")
    v0 = result["seats"][0]["verdict"]
    # The second reply to round 3 answers round 4, whenever it arrived; the bot stays
    # one reply ahead, and its echoed "round" says so at every turn.
    kinds = [(f["round"], f["kind"]) for f in v0["faults"]]
    assert kinds == [(4, "protocol_error"), (5, "protocol_error"), (6, "protocol_error")] + [
        (6, "too_many_faults")
    ]
    assert "reply is for round 3, round 4 was asked" in v0["faults"][0]["detail"]
    assert v0["disqualified"]


def test_missing_bot_is_a_one_line_error(tmp_path):
    from conftest import run_cli

    proc = run_cli("match", str(tmp_path / "nope"), "rock")
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "not found" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_non_executable_bot_is_a_one_line_error(tmp_path):
    from conftest import run_cli

    bot = tmp_path / "bot.py"
    bot.write_text("print('hi')\n")
    proc = run_cli("match", str(bot), str(bot))
    assert proc.returncode == 2 and "not executable" in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.skipif(os.geteuid() != 0, reason="bots change uid only when the referee is root")
def test_a_bot_its_uid_cannot_reach_is_a_one_line_error_as_root(tmp_path):
    from conftest import ROOT, run_cli

    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    for name in ("rock.py", "chaosbot.py"):
        shutil.copy(ROOT / "sample_bots" / "python" / name, private / name)
    args = ["rock", "--rounds", "5", "--no-replay"]
    proc = run_cli("match", str(private / "rock.py"), *args)
    assert proc.returncode == 2, proc.stderr
    line = proc.stderr.strip()
    assert line.count("\n") == 0 and "Traceback" not in line
    assert f"cannot run {private / 'rock.py'}" in line and f"{private} is mode 0700" in line
    assert "chmod o+x" in line
    # Opened to others, the same bot plays.
    private.chmod(0o755)
    proc = run_cli("match", str(private / "rock.py"), *args)
    assert proc.returncode == 0, proc.stderr


def test_a_replay_or_tournament_directory_that_cannot_be_made_is_a_one_line_error(tmp_path):
    from conftest import run_cli

    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory\n")
    for command in (
        ("match", "rock", "rock", "--rounds", "5", "--replay", str(blocker / "r.jsonl")),
        ("tournament", "rock", "rock", "--rounds", "5", "--out", str(blocker / "league")),
    ):
        proc = run_cli(*command)
        assert proc.returncode == 2, proc.stderr
        assert "Traceback" not in proc.stderr
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and str(blocker) in lines[0], proc.stderr
        assert proc.stderr == lines[0] + "\n", repr(proc.stderr)  # nothing else, no blank line


def test_a_game_parameter_of_the_wrong_type_is_a_one_line_error():
    from conftest import run_cli

    for param, name in (("tokens=abc", "tokens"), ("rounds=2.5", "rounds")):
        proc = run_cli("match", "rock", "rock", "--param", param)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and f"chaos: {name} must be a whole number" in lines[0], lines


def test_bot_failing_the_handshake_exits_3_with_a_recorded_forfeit(tmp_path):
    from conftest import run_cli

    bot = tmp_path / "silent.py"
    bot.write_text("import sys\nsys.stdin.readline()\nprint('{\"nom\": 1}', flush=True)\n")
    steady = tmp_path / "steady.py"
    from conftest import TEST_BOTS

    steady.write_bytes((TEST_BOTS / "steady.py").read_bytes())
    replay = tmp_path / "r.jsonl"
    proc = run_cli(
        "match",
        f"{PY} {bot}",
        f"{PY} {steady}",
        "--rounds",
        "10",
        "--replay",
        str(replay),
        "--json",
    )
    assert proc.returncode == 3
    result = json.loads(proc.stdout)
    assert result["seats"][0]["verdict"]["status"] == "handshake"
    assert result["winner"] == 1
    recorded = read_replay(replay)
    assert not [s for s in recorded.steps if isinstance(s, Step)]
    # The forfeit is in the footer, not only in the printed result: every round lost
    # by the disqualified seat, won by the other, and the fault filed with its kind.
    assert recorded.footer is not None, "no footer: the forfeit was not recorded"
    footer = msgspec.to_builtins(recorded.footer)
    assert footer["result"]["winner"] == 1 and footer["result"]["steps"] == 0
    seat0, seat1 = footer["result"]["seats"]
    assert seat0["placement"] == 2 and seat0["stats"]["disqualified"] is True
    assert seat0["stats"]["points"] == -10 and seat1["stats"]["points"] == 10
    assert seat0["scores"]["standard"] == -1.0 and seat1["scores"]["standard"] == 1.0
    assert footer["verdicts"][0]["status"] == "handshake"
    assert footer["verdicts"][0]["disqualified"] is True
    assert footer["verdicts"][1]["status"] == "ok"
    assert [(f["round"], f["seat"], f["kind"]) for f in footer["faults"]] == [(0, 0, "handshake")]


@pytest.mark.parametrize("name", ["killed.jsonl", "killed.jsonl.gz"])
def test_referee_killed_mid_match_leaves_a_readable_prefix_and_no_bots(tmp_path, bot_copy, name):
    import os
    import signal
    import subprocess
    import time

    steady = bot_copy("steady.py")
    replay = tmp_path / name
    # Well under way: a few thousand rounds (gzip stores a round in a few dozen bytes).
    under_way = 20_000 if name.endswith(".gz") else 200_000
    # The killed referee's scratch directories stay behind until another referee
    # sweeps them: in the test's own directory, not the machine's /tmp.
    scratch_base = tmp_path / "tmp"
    scratch_base.mkdir(mode=0o755)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "referee",
            "match",
            f"{PY} {steady}",
            f"{PY} {steady}",
            "--rounds",
            "1000000",
            "--replay",
            str(replay),
            "--quiet",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "TMPDIR": str(scratch_base)},
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if replay.exists() and replay.stat().st_size > under_way:
                break
            assert proc.poll() is None, "the referee ended early"
            time.sleep(0.05)
        # the referee itself, launchers (bwrap) and the two bots
        assert len(set(processes_mentioning(str(steady))) - {proc.pid}) >= 2
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        left = processes_mentioning(str(steady))
        deadline = time.monotonic() + 60
        while left and time.monotonic() < deadline:
            time.sleep(0.05)
            left = processes_mentioning(str(steady))
        assert left == [], "bots outlived the killed referee"
    finally:
        if proc.poll() is None:
            proc.kill()
    prefix = read_replay(replay)
    assert prefix.footer is None
    assert len(prefix.steps) > 100
    assert [s.n for s in prefix.steps] == list(range(1, len(prefix.steps) + 1))
    # Every step read back in full: the turn messages the lean file leaves out too.
    assert all(o is not None for s in prefix.steps for o in s.obs)
    check = subprocess.run(
        [sys.executable, "-m", "referee", "verify", str(replay), "--allow-incomplete"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert check.returncode == 0 and check.stdout.startswith("INCOMPLETE: "), check.stdout


def test_the_referees_own_cpu_is_reported_apart_from_the_bots(tmp_path, bot_copy):
    bot_copy("faulty.py"), bot_copy("steady.py")
    # Burning 2 s of CPU takes far longer on the wall clock when other processes share
    # the CPUs; the move limit is never waited out (the bot answers once it has
    # burned), so it is set where no load reaches it.
    result, _ = run(tmp_path, "burn 2 2.0", rounds=5, extra=("--move-timeout", "120"))
    bot = result["seats"][0]["verdict"]
    assert bot.get("status", "ok") == "ok", bot
    assert bot["cpu_s"] >= 1.5, bot  # the watchdog samples every 100 ms
    own = result["referee"]
    assert own["user_s"] > 0, own
    # The referee's start-up costs about 0.4 s of CPU; had it counted its children,
    # the bot's 2 s would be in there too.
    assert own["user_s"] + own["system_s"] < bot["cpu_s"] - 0.5, (own, bot)


def test_a_bot_far_ahead_is_read_no_further_than_the_match_needs(tmp_path, bot_copy):
    ahead = bot_copy("ahead.py")
    # An opponent that thinks a little, so the referee waits (and could read) a while
    # every round.
    thinker = tmp_path / "thinker.py"
    thinker.write_text(
        "import json, sys, time\n"
        "sys.stdin.readline()\n"
        'print(\'{"name": "thinker"}\', flush=True)\n'
        "for line in sys.stdin:\n"
        "    msg = json.loads(line)\n"
        "    if msg['type'] != 'turn':\n"
        "        break\n"
        "    time.sleep(0.002)\n"
        "    print(json.dumps({'round': msg['round'], 'real_move': 'paper'}), flush=True)\n"
    )
    result = match_json(
        f"{PY} {ahead}", f"{PY} {thinker}", "--rounds", "100", "--seed", "1", "--no-replay"
    )
    assert processes_mentioning(str(tmp_path)) == [], "a bot process outlived the match"
    v0 = result["seats"][0]["verdict"]
    # Its lines answer the turns in order: rock, every round, no fault.
    assert result["steps"] == 100 and v0["status"] == "ok"
    assert result["seats"][0]["stats"]["losses"] == 100
    # The bot writes megabytes; the referee reads a bounded backlog of them.
    assert v0["bytes_out"] < 1 << 20, v0["bytes_out"]


def test_a_limit_a_reading_finds_while_the_reply_is_awaited_verifies(tmp_path):
    # The zoo's memhog touches memory at round 3 and never answers; without a cgroup
    # the watchdog's reading finds it over the limit while its reply is awaited. The
    # step used to record neither a reply nor a fault for it, and `referee verify`
    # failed the referee's own replay ("neither an action nor a fault recorded").
    zoo = os.path.join(os.path.dirname(__file__), "zoo")
    replay = tmp_path / "memhog.jsonl"
    result = match_json(
        f"{PY} {zoo}/memhog.py",
        f"{PY} {zoo}/rock.py",
        *("--rounds", "10", "--cgroups", "off", "--memory-mib", "100"),
        *("--move-timeout", "10", "--replay", str(replay)),
    )
    v0 = result["seats"][0]["verdict"]
    assert v0["status"] == "memory_limit" and v0["disqualified"], v0
    step = read_replay(replay).steps[v0["round"] - 1]
    assert step.fault[0].kind == "memory_limit" and step.act[0] is None
    _assert_verifies(replay)


def test_a_bot_over_a_limit_during_its_handshake_is_out_at_once_with_one_fault(tmp_path):
    # tests/bots/fork_hold.py forks before it answers the hello (up to 400 here,
    # where nothing refuses it); without a cgroup the readings during the handshake
    # find its tree over a limit. Before, each reading recorded the fault again (3
    # to 4 times) and the bot was put out only at round 1, with one more.
    hold = os.path.join(os.path.dirname(__file__), "bots", "fork_hold.py")
    replay = tmp_path / "hold.jsonl"
    result = match_json(
        f"{PY} {hold}",
        f"{PY} {os.path.dirname(hold)}/steady.py",
        *("--rounds", "5", "--cgroups", "off", "--sandbox", "basic"),
        *("--handshake-timeout", "20", "--replay", str(replay)),
    )
    v0 = result["seats"][0]["verdict"]
    assert v0["disqualified"] and v0["status"] in ("memory_limit", "process_limit"), v0
    assert [(f["round"], f["kind"]) for f in v0["faults"]] == [(0, v0["status"])], v0
    _assert_verifies(replay)


def test_a_limit_a_bot_breaks_after_answering_puts_it_out_at_that_round(tmp_path, bot_copy):
    # Seat 1 answers round 3 at once and then holds 300 MiB (limit 100, no cgroup:
    # sampled) while seat 0 sleeps over its own move. The readings taken while seat 0's
    # reply was awaited found seat 1 over the limit, but it had answered, so it was
    # left in: each later reading recorded the fault again and it went out only a
    # round later (a CPU-share fault, which decays, could be recorded and then lost).
    bot_copy("faulty.py")
    faulty = tmp_path / "faulty.py"
    replay = tmp_path / "memafter.jsonl"
    result = match_json(
        f"{PY} {faulty} sleep 3 1.5",
        f"{PY} {faulty} memafter 3 300",
        *("--rounds", "10", "--cgroups", "off", "--memory-mib", "100"),
        *("--move-timeout", "10", "--replay", str(replay)),
    )
    v1 = result["seats"][1]["verdict"]
    assert v1["status"] == "memory_limit" and v1["disqualified"], v1
    assert [(f["round"], f["kind"]) for f in v1["faults"]] == [(3, "memory_limit")], v1
    events = [(e.n, e.kind, e.seats) for e in read_replay(replay).events]
    assert (3, "disqualified", [1]) in events, events
    _assert_verifies(replay)
