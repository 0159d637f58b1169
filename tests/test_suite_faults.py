"""Suite faults: a killed entry process, hard limits on every backend, two writers, foreign files, retries.

The misbehaving runners live in suite_faults.py (entry processes import them by name).
"""

import json
import multiprocessing
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from hybrid.cli import main
from hybrid.suites.report import markdown
from hybrid.suites.results_log import (ResultsFileError, ResultsLog, current_rows, parse_results, read_results,
                                row_line)
from hybrid.suites.runner import execute, run_suite
from hybrid.suites.suite_file import Entry, parse_suite
from suite_faults import faulty


def _suite(*entries):
    return parse_suite({"name": "faults", "entry": list(entries)}, "faults")


def _row(id_, status="ok", index=None, ratio="2"):
    row = {"id": id_, "entry": {"id": id_, "mechanism": "trunc_geom", "params": {}, "reference": {}},
           "status": status, "result": {"eps_lower": 0.69, "ratio": ratio} if status == "ok" else None,
           "error": None if status == "ok" else "ValueError: boom", "worker": "h:1", "elapsed": 0.5}
    if index is not None:
        row["index"] = index
    return row


def test_a_killed_entry_process_is_an_error_row_and_the_run_goes_on(tmp_path):
    suite = _suite({"mechanism": "rr", "id": f"victim {tmp_path}"}, {"mechanism": "trunc_geom"})
    pid_file = tmp_path / "victim.pid"

    def kill_the_victim():
        deadline = time.time() + 60
        while time.time() < deadline and not pid_file.exists():
            time.sleep(0.02)
        os.kill(int(pid_file.read_text()), signal.SIGKILL)

    killer = threading.Thread(target=kill_the_victim)
    killer.start()
    out = tmp_path / "r.jsonl"
    rows = run_suite(suite, jobs=1, out=str(out), runner=faulty)  # one at a time: the second runs after the kill
    killer.join()
    assert [r["status"] for r in rows] == ["error", "ok"]
    assert "killed by SIGKILL" in rows[0]["error"]
    assert rows[0]["worker"].endswith(f":{pid_file.read_text()}")
    assert rows[1]["result"]["ratio"] == "2"
    assert len(read_results(out)) == 2


def _gone(pid, seconds):
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


@pytest.mark.slow
def test_killing_the_run_leaves_no_entry_running(tmp_path):
    coordinator = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        from hybrid.suites.runner import run_suite
        from hybrid.suites.suite_file import parse_suite
        from suite_faults import faulty
        suite = parse_suite({{"entry": [{{"mechanism": "rr", "id": "victim {tmp_path}"}}]}}, "s")
        run_suite(suite, runner=faulty)
        """)], cwd=os.path.dirname(__file__))
    pid_file = tmp_path / "victim.pid"
    try:
        deadline = time.time() + 60
        while time.time() < deadline and not pid_file.exists():
            time.sleep(0.02)
        victim = int(pid_file.read_text())
    finally:
        coordinator.kill()  # kill -9 of the run alone, not of its process group
        coordinator.wait()
    assert _gone(victim, 10), "the entry's process outlived its run"


def test_the_hard_limit_kills_an_entry_no_signal_stops():
    row = execute(Entry(id="stuck", mechanism="rr", time_limit=0.5), 0, 1, runner=faulty)
    assert row["status"] == "timeout" and "hard time limit of 0.5 s" in row["error"]


@pytest.mark.slow
def test_dask_enforces_the_hard_limit():
    pytest.importorskip("distributed")
    suite = _suite({"mechanism": "rr", "id": "stuck on dask", "time_limit": 1})
    rows = run_suite(suite, jobs=1, backend="dask", runner=faulty)
    assert rows[0]["status"] == "timeout" and "hard time limit of 1 s" in rows[0]["error"]


def _supervise_in_a_daemon(queue):
    for entry in (Entry(id="rr", mechanism="rr", params={"n": 2}), Entry(id="stuck", mechanism="rr", time_limit=4)):
        queue.put(execute(entry, 0, 1, runner=faulty))


@pytest.mark.slow
def test_a_daemonic_supervisor_starts_a_fresh_interpreter_and_still_kills_it():
    """Dask workers are daemonic by default: no multiprocessing children, so the entry runs via subprocess."""
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    p = ctx.Process(target=_supervise_in_a_daemon, args=(queue,), daemon=True)
    p.start()
    ok, stuck = queue.get(timeout=120), queue.get(timeout=120)
    p.join()
    assert ok["status"] == "ok" and ok["result"]["ratio"] == "3"
    assert stuck["status"] == "timeout"


def test_a_second_writer_is_refused(tmp_path):
    out = tmp_path / "r.jsonl"
    out.write_bytes(row_line(_row("trunc_geom")))
    before = out.read_bytes()
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import time
        from hybrid.suites.results_log import ResultsLog
        log = ResultsLog({str(out)!r}, resume=True)
        print("locked", flush=True)
        time.sleep(120)
        """)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(ResultsFileError, match="another dphybrid run"):
            ResultsLog(out, resume=True)
        suite = tmp_path / "s.toml"
        suite.write_text('[[entry]]\nmechanism = "trunc_geom"\n')
        assert main(["suite", str(suite), "--out", str(out), "--resume"]) == 2
        assert out.read_bytes() == before
    finally:
        holder.kill()
        holder.wait()
    with ResultsLog(out, resume=True) as log:  # a killed writer's lock dies with it
        assert [r["id"] for r in log.rows] == ["trunc_geom"]


FOREIGN = [
    b"important notes\n",
    b'{"a": 1}',  # one line of JSON without a newline
    b'{"id": "x"}',  # not compact: not ours
    b'{"id":"x"}',  # a whole document, not a cut row, and not a row
    b'{"id":"x"} trailing',
    b'{"id":"x","a":1}}',
    b'{"id":"x",\x01',
    b'{"id":"x","e":"\xff\xfe',  # not UTF-8
    row_line(_row("a")) + b"important notes",  # our row, then someone else's text
    row_line(_row("a")) + b"\n",  # an empty line we never write
    b'{"id":"x"}\n',
    b'{"id":["x"],"entry":{"mechanism":"rr"},"status":"ok","result":{},"elapsed":1}\n',
    b'{"id":"x","entry":{"mechanism":"rr"},"status":"ok","result":"a string","elapsed":1}\n',
    b'{"id":"x","entry":{"mechanism":"rr"},"status":"ok","result":{"eps_lower":NaN},"elapsed":1}\n',
    b"[" * 100_000 + b"]" * 100_000 + b"\n",
]


@pytest.mark.parametrize("content", FOREIGN, ids=range(len(FOREIGN)))
def test_resume_never_touches_a_file_that_is_not_ours(tmp_path, content):
    out = tmp_path / "notes.txt"
    out.write_bytes(content)
    with pytest.raises(ResultsFileError):
        ResultsLog(out, resume=True)
    with pytest.raises(ResultsFileError):
        read_results(out)
    assert out.read_bytes() == content


def test_resume_drops_only_our_own_cut_row(tmp_path):
    first = row_line(_row("trunc_geom", index=0))
    second = row_line({**_row("rr é", index=1), "error": "ü"})  # multi-byte characters can be cut too
    out = tmp_path / "r.jsonl"
    for cut in range(1, len(second) - 1):
        out.write_bytes(first + second[:cut])
        with ResultsLog(out, resume=True) as log:
            assert [r["id"] for r in log.rows] == ["trunc_geom"], cut
        assert out.read_bytes() == first
    out.write_bytes(first + second[:-1])  # a whole row that lost only its newline is kept
    with ResultsLog(out, resume=True) as log:
        assert [r["id"] for r in log.rows] == ["trunc_geom", "rr é"]
    assert out.read_bytes() == first + second


def test_rows_never_hold_nan_or_infinity():
    line = row_line({**_row("x"), "result": {"eps_lower": float("inf"), "stat_interval": [float("-inf"), float("inf")],
                                              "p": float("nan"), "curve": [[1.0, float("nan")]]}})
    row = json.loads(line, parse_constant=lambda c: pytest.fail(f"{c} written"))
    assert row["result"] == {"eps_lower": "inf", "stat_interval": ["-inf", "inf"], "p": None, "curve": [[1.0, None]]}
    assert parse_results(line, "x")[0] == [row]


def test_report_keeps_the_last_row_of_each_entry_in_suite_order():
    rows = [_row("c", index=2), _row("a", "error", index=0), _row("b", index=1), _row("a", index=0, ratio="3")]
    got = current_rows(rows)
    assert [(r["id"], r["status"]) for r in got] == [("a", "ok"), ("b", "ok"), ("c", "ok")]
    assert got[0]["result"]["ratio"] == "3"
    legacy = [_row("z"), _row("y"), _row("z", "error")]  # rows without an index keep their file order
    assert [(r["id"], r["status"]) for r in current_rows(legacy)] == [("z", "error"), ("y", "ok")]
    assert markdown(got).count("| trunc_geom |") == 3


def test_resume_skips_failures_and_retry_failed_runs_them_again(tmp_path):
    suite = _suite({"mechanism": "trunc_geom"}, {"mechanism": "rr", "params": {"n": 2}, "id": "rr"})
    out = tmp_path / "r.jsonl"
    out.write_bytes(row_line(_row("rr", "error", index=1)) + row_line(_row("trunc_geom", index=0)))
    before = out.read_bytes()
    rows = run_suite(suite, out=str(out), resume=True, runner=faulty)
    assert [r["status"] for r in rows] == ["ok", "error"] and out.read_bytes() == before  # nothing ran
    rows = run_suite(suite, out=str(out), resume=True, retry_failed=True, runner=faulty)
    assert [(r["id"], r["status"]) for r in rows] == [("trunc_geom", "ok"), ("rr", "ok")]
    assert rows[1]["result"]["ratio"] == "3"
    assert out.read_bytes().startswith(before) and len(read_results(out)) == 3  # appended, never rewritten
    assert [r["status"] for r in current_rows(read_results(out))] == ["ok", "ok"]


@pytest.mark.parametrize("result, words", [
    ({"eps_lower": 0.69, "ratio": "2", "eps_upper": 0.5}, "is below result.eps_lower"),
    ({"eps_lower": 0.69, "ratio": "1" + "0" * 3000}, "far above the level of result.eps_lower"),
    ({"eps_lower": 0.69, "ratio": "2", "params": {"a": [1]}}, "'result.params' value a=\\[1\\]"),
    ({"eps_lower": 0.69, "ratio": "2", "witness": {"x": [1], "x_prime": [0], "params": {"m": {"a": [1]}}}},
     "'result.witness.params' value m="),
])
def test_a_row_that_contradicts_itself_is_refused(result, words):
    """report once showed a proved upper below the certified lower, and 'm=2 (grown from {'a': [1]})'."""
    line = row_line({**_row("x"), "result": result})
    with pytest.raises(ResultsFileError, match=words):
        parse_results(line, "x")
