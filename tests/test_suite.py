"""Suite runs: parallel, resumable after kill -9, errors as rows, dask for real, reports.

The fault cases (killed entries, hard limits, locks, foreign files) are in test_suite_faults.py.
"""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from hybrid.cli import main
from hybrid.suites.report import table, verdict
from hybrid.suites.results_log import ResultsFileError, ResultsLog, read_results
from hybrid.suites.runner import run_suite
from hybrid.suites.suite_file import SuiteError, load_suite

SUITE = """
name = "small"
[defaults]
budget = 60
[[entry]]
mechanism = "trunc_geom"
reference = { exact_ratio = "2" }
[[entry]]
mechanism = "rr"
params = { n = 2, lam = "1/5" }
reference = { exact_ratio = "4" }
[[entry]]
mechanism = "noisy_max_geom"
params = { m = 3 }
claimed_eps = 1.0
reference = { refuted = true }
[[entry]]
mechanism = "kary_rr"
params = { k = 4, p = "7/10" }
reference = { exact_ratio = "7" }
[[entry]]
mechanism = "histogram_geom"
params = { m = 2 }
[[entry]]
mechanism = "geo_sample"
params = { eps = -1.0 }
"""


TINY = """
name = "tiny"
[defaults]
samples = 200000
[[entry]]
mechanism = "trunc_geom"
reference = { exact_ratio = "2" }
[[entry]]
mechanism = "rr"
params = { n = 2, lam = "1/5" }
claimed_eps = 1.0
reference = { exact_ratio = "4", refuted = true }
[[entry]]
mechanism = "geo_sample"
params = { eps = -1.0 }
[[entry]]
mechanism = "rr"
params = { n = 2, lam = "1/3" }
reference = { exact_ratio = "2" }
"""


@pytest.fixture
def suite_file(tmp_path):
    p = tmp_path / "small.toml"
    p.write_text(SUITE)
    return p


@pytest.fixture
def tiny_file(tmp_path):
    p = tmp_path / "tiny.toml"
    p.write_text(TINY)
    return p


def _stable(rows):
    """The deterministic part of rows: everything but timings and worker details."""
    out = {}
    for r in rows:
        res = r["result"] or {}
        out[r["id"]] = (r["status"], res.get("ratio"), res.get("eps_lower"), json.dumps(res.get("witness")))
    return out


def test_builtin_suites_load():
    assert len(load_suite("discrete").entries) >= 20
    assert len(load_suite("dpsniper").entries) == 20
    assert len(load_suite("statdp").entries) == 33
    assert [e.mechanism for e in load_suite("checkdp").entries] == ["partialsum", "badpartialsum", "smartsum",
                                                                     "badsmartsum"]
    scale = load_suite("continuous60").entries
    assert len(scale) == 60
    assert {(e.params["eps"], e.params["n"]) for e in scale} == {(0.1, 5), (1, 5), (0.1, 20), (1, 20)}


def test_report_has_a_proved_upper_column():
    """The proved upper: a proof's exact eps where it is short (7/40 as 0.175), else rounded up; blank without one."""
    def row(result):
        return {"id": "r", "entry": {"mechanism": "m", "params": {}}, "status": "ok", "result": result, "elapsed": 1.0}

    by_proof = "proof (alignment rule)"
    cols, cells = table([row({"eps_lower": 0.1746, "eps_upper": 0.17500000000000002, "certified": True,
                              "proof": {"eps": "7/40"}, "upper_source": by_proof}),
                         row({"eps_lower": 1.0986, "eps_upper": 1.09861228866811, "certified": True,
                              "proof": {"eps": 1.09861228866811}, "upper_source": by_proof}),
                         row({"eps_lower": 0.5, "certified": True}),
                         # a global verification's smaller upper end, the proof riding along: not the proof's eps
                         row({"eps_lower": 0.1, "eps_upper": 0.12345678, "certified": True,
                              "proof": {"eps": "7/40"}, "upper_source": "global verification"})])
    assert "proved upper" in cols
    assert [c["proved upper"] for c in cells] == ["0.175", "1.0987", "", "0.1235"]


@pytest.mark.parametrize("text, message", [
    ("name = 'x'", "no entries"),
    ("[[entry]]\nparams = {}", "missing 'mechanism'"),
    ("[[entry]]\nmechanism = 'nope'", "unknown mechanism"),
    ("[[entry]]\nmechanism = 'rr'\nparams = { zz = 1 }", "unknown parameter"),
    ("[[entry]]\nmechanism = 'rr'\ncolour = 'red'", "unknown field"),
    ("[[entry]]\nmechanism = 'rr'\n[[entry]]\nmechanism = 'rr'", "same id|the id"),
])
def test_bad_suite_files(tmp_path, text, message):
    p = tmp_path / "bad.toml"
    p.write_text(text)
    with pytest.raises(Exception, match=message):
        load_suite(str(p))


def test_unknown_suite_name():
    with pytest.raises(SuiteError, match="no suite named"):
        load_suite("nonexistent-suite")


def test_run_parallel_with_error_row(tiny_file, tmp_path):
    out = tmp_path / "r.jsonl"
    rows = run_suite(load_suite(str(tiny_file)), jobs=2, out=str(out))
    assert [r["status"] for r in rows] == ["ok", "ok", "error", "ok"]
    assert "eps must be positive" in rows[2]["error"]
    assert [r["index"] for r in rows] == [0, 1, 2, 3]
    assert len(read_results(out)) == 4
    cols, cells = table(rows)
    assert [c.get("exact", "") for c in cells] == ["2 ✓", "4 ✓", "", "2 ✓"]
    assert verdict(rows[1]) == "refuted (certified)" and cells[1]["expected"] == "refuted ✓"
    before = out.read_bytes()
    with pytest.raises(ResultsFileError, match="--resume"):
        run_suite(load_suite(str(tiny_file)), out=str(out))
    assert out.read_bytes() == before


def _kill_then_resume(suite_path, tmp_path, entries):
    out = tmp_path / "killed.jsonl"
    cmd = [sys.executable, "-m", "hybrid.cli", "suite", str(suite_path), "--jobs", "1", "--out", str(out), "--json"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.time() + 120
    while time.time() < deadline and (not out.exists() or out.read_text().count("\n") < 2):
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    before = read_results(out)
    assert 2 <= len(before) < entries, "the run was not killed halfway"
    with open(out, "a") as f:  # as if the kill had interrupted a write
        f.write('{"id":"half a li')
    resumed = subprocess.run(cmd + ["--resume"], capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    after = read_results(out)
    ids = [r["id"] for r in after]
    assert len(ids) == len(set(ids)) == entries
    assert after[: len(before)] == before  # finished rows kept as they were
    return after


@pytest.mark.slow
def test_kill_minus_nine_then_resume_loses_nothing(tiny_file, tmp_path):
    after = _kill_then_resume(tiny_file, tmp_path, 4)
    got = {r["id"]: (r["status"], (r["result"] or {}).get("ratio")) for r in after}
    assert got == {"trunc_geom": ("ok", "2"), "rr lam=1/5 n=2 claim=1": ("ok", "4"),
                   "geo_sample eps=-1.0": ("error", None), "rr lam=1/3 n=2": ("ok", "2")}


@pytest.mark.slow
def test_kill_minus_nine_then_resume_equals_a_clean_run(suite_file, tmp_path):
    after = _kill_then_resume(suite_file, tmp_path, 6)
    clean = run_suite(load_suite(str(suite_file)), jobs=1)
    assert _stable(after) == _stable(clean)


@pytest.mark.slow
def test_dask_local_cluster_gives_the_same_table(suite_file):
    s = load_suite(str(suite_file))
    local = run_suite(s, jobs=2)
    dask = run_suite(s, jobs=2, backend="dask")
    assert _stable(dask) == _stable(local)
    assert all(r["worker"] for r in dask)


def test_results_file_repair(tmp_path):
    p = tmp_path / "r.jsonl"
    good = '{"id":"a","entry":{"mechanism":"rr"},"status":"error","result":null,"error":"x","elapsed":1}\n'
    p.write_text(good + '{"id":"b","sta')
    with ResultsLog(p, resume=True) as log:
        assert [r["id"] for r in log.rows] == ["a"]
    assert p.read_text() == good
    p.write_text(good + "not json\n" + good)
    with pytest.raises(ResultsFileError, match="line 2"):
        read_results(p)


def test_suite_and_report_cli(tiny_file, tmp_path, capsys):
    out = tmp_path / "cli.jsonl"
    assert main(["suite", str(tiny_file), "--out", str(out), "--time-budget", "60", "--jobs", "2"]) == 0
    text = capsys.readouterr().out
    assert "refuted (certified)" in text and "| trunc_geom |" in text
    png = tmp_path / "bars.png"
    assert main(["report", str(out), "--format", "html", "--plot", str(png)]) == 0
    assert "<table>" in capsys.readouterr().out and png.stat().st_size > 1000
    assert main(["report", str(out), "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert [r["mechanism"] for r in rows] == ["trunc_geom", "rr", "geo_sample", "rr"]  # suite order
    assert main(["report", str(tmp_path / "missing.jsonl")]) == 2
    garbage = tmp_path / "garbage.jsonl"
    garbage.write_text("garbage\n")
    assert main(["report", str(garbage)]) == 2  # not ours: an error, not an empty table
    assert main(["report", str(out), "--plot", str(tmp_path / "no" / "bars.png")]) == 2
    assert main(["suite", "nonexistent-suite"]) == 2
    assert main(["suite", str(tiny_file), "--resume"]) == 2
    assert main(["suite", str(tiny_file), "--jobs", "0"]) == 2
    assert main(["suite", str(tiny_file), "--scheduler", "tcp://127.0.0.1:1"]) == 2  # needs --backend dask


def test_report_summary_counts_reference_matches():
    """Each reference kind: entries matching it out of those declaring it; an error row is a miss;
    a row the time budget cut short says so."""
    from hybrid.suites.report import reference_checks, summary

    def row(status, ref, result):
        return {"id": str(len(ref)), "entry": {"mechanism": "m", "params": {}, "reference": ref},
                "status": status, "result": result, "elapsed": 1.0}

    rows = [row("ok", {"dpsniper": 0.1}, {"eps_lower": 0.2, "certified": True}),
            row("ok", {"dpsniper": 0.1, "exact_ratio": "2"}, {"eps_lower": 0.05, "ratio": "2", "certified": True}),
            row("error", {"dpsniper": 0.1}, None),
            row("ok", {}, {"eps_lower": 1.0, "certified": False, "limits_hit": ["time budget of 9 s reached"]})]
    assert reference_checks(rows) == {"DP-Sniper": (1, 3), "exact": (1, 1)}
    s = summary(rows)
    assert "at least DP-Sniper's bound on 1 of 3" in s and "the exact ratio on 1 of 1" in s and "4.0 s" in s
    assert "1 cut short by the time budget" in s
    assert [c["verdict"] for c in table(rows)[1]][-1] == "statistical only (time budget reached)"
    assert "time budget" not in summary(rows[:3])


def test_the_costliest_entries_start_first_and_rows_keep_suite_order(tmp_path):
    """``cost`` orders the work only: with one job the entries run costliest first, and the rows (and
    the report) stay in suite order with the same results."""
    path = tmp_path / "costs.toml"
    path.write_text('[[entry]]\nid = "cheap"\nmechanism = "trunc_geom"\n'
                    '[[entry]]\nid = "dear"\nmechanism = "trunc_geom"\nparams = { m = 3 }\ncost = 9\n'
                    '[[entry]]\nid = "middle"\nmechanism = "trunc_geom"\nparams = { m = 4 }\ncost = 2\n')
    started: list[str] = []
    rows = run_suite(load_suite(str(path)), jobs=1, on_row=lambda row: started.append(row["id"]))
    assert started == ["dear", "middle", "cheap"]
    assert [r["id"] for r in rows] == ["cheap", "dear", "middle"] and [r["index"] for r in rows] == [0, 1, 2]
    assert rows[1]["entry"]["cost"] == 9 and "cost" not in rows[0]["entry"]
