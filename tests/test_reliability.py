"""Issue 24: no hang, no traceback, no silent nonsense.

Budgets are honoured (a command stopped by its time budget says so and exits with the one
no-result status 3; how far past the budget it ends is measured by ``python -m bench.budgets``,
not asserted here: no test depends on the machine's speed), sweeps keep their memory flat, every long command
reports progress, and the answers to odd but valid input are right.  The bad inputs
of the issue live in the parametrised tests of tests/test_bad_input.py and
tests/test_suite_bad_input.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from hybrid.cli import main
from hybrid.cli.common import NO_RESULT
from samplers import catalogue
from verifiers import base
from verifiers.backends import get_backend
from verifiers.bdd import backend as bdd_backend
from verifiers.continuous import backend as continuous_backend
from verifiers.verify import restricted, verify


def _no_result(err: str) -> bool:
    lines = err.strip().splitlines()
    return len(lines) == 1 and lines[0].startswith("dphybrid: ") and "; no result (" in lines[0]


# -- items 1, 3, 4: budgets are honoured and say so --------------------------------------

def test_a_continuous_sweep_stops_at_its_time_budget(capsys):
    budget = 4.0  # the sweep takes ~19 s on an idle 2-core machine: the budget must end it
    code = main(["verify", "svt1", "-p", "n=8", "--input-range", "0..1", "--time-budget", str(budget)])
    out, err = capsys.readouterr()
    assert code == NO_RESULT and _no_result(err) and "time budget of 4 s reached" in err, err


def test_bit_blasting_stops_at_its_time_budget_and_says_no_result(capsys):
    budget = 5.0
    code = main(["search", "noisy_max_geom", "-p", "m=30", "--time-budget", str(budget)])
    out, err = capsys.readouterr()
    assert code == NO_RESULT and _no_result(err), err
    assert "eps >=" not in out  # no "eps >= 0 (not certified)" beside "no bound"


def test_growing_pufferfish_lengths_stop_at_the_time_budget(capsys):
    budget = 4.0
    code = main(["pufferfish", "geometric_dp", "--c", "2", "--k", "100000", "--time-budget", str(budget)])
    assert code == NO_RESULT and _no_result(capsys.readouterr().err)


def test_a_node_budget_stop_is_no_result(capsys):
    assert main(["verify", "noisy_max_geom", "--backend", "bdd", "--node-budget", "40"]) == NO_RESULT
    out, err = capsys.readouterr()
    assert _no_result(err) and "--node-budget" in err and "certified" not in out


def test_an_exact_sweep_stops_at_its_time_budget_with_its_best_pair(capsys):
    budget = 5.0
    code = main(["verify", "rr", "-p", "n=12", "--backend", "enumerate", "--time-budget", str(budget), "--json"])
    d = json.loads(capsys.readouterr().out)
    assert code == 0 and d["status"] == "time_limit" and d["eps_upper"] is None and d["ratio"] == "3"


@pytest.mark.parametrize("name, params, backend", [
    ("rr", {"n": 6}, "enumerate"), ("rr", {"n": 6}, "bdd"), ("noisy_max_geom", {"m": 3}, "bdd"),
])
def test_sweeps_that_forget_their_caches_give_the_same_level(monkeypatch, name, params, backend):
    program = catalogue.get(name).trace(**params)
    full = get_backend(program, backend).global_epsilon()
    monkeypatch.setattr(base, "MAX_CACHED_INPUTS", 3)
    monkeypatch.setattr(bdd_backend, "MAX_CACHED_INPUTS", 3)
    monkeypatch.setattr(bdd_backend, "MAX_WDD_ENTRIES", 50)
    monkeypatch.setattr("verifiers.enumerate.MAX_CACHED_INPUTS", 3)
    be = get_backend(program, backend)
    trimmed = be.global_epsilon()
    assert (trimmed.ratio, trimmed.x, trimmed.x_prime, trimmed.pairs) == (full.ratio, full.x, full.x_prime, full.pairs)
    cached = be._cache if backend == "enumerate" else be._laws
    assert len(cached) <= 3 + 2  # at most the cap and the pair weighed after the last trim


def test_a_continuous_sweep_that_forgets_its_caches_gives_the_same_enclosure(monkeypatch):
    program = restricted(catalogue.get("report_noisy_max1").trace(n=3), 0, 1)
    full = verify(program).result
    monkeypatch.setattr(continuous_backend, "MAX_CACHED_INPUTS", 2)
    trimmed = verify(program).result
    assert (trimmed.ratio, trimmed.x, trimmed.x_prime, trimmed.pairs) == (full.ratio, full.x, full.x_prime, full.pairs)


def test_counts_too_long_to_print_are_described():
    from samplers.memory import human_bytes
    from samplers.numerals import count_text

    assert count_text(2**100000) == "about 10^30102" and count_text(12345) == "12,345"
    assert human_bytes(300 * 2**100000) == "about 10^30105 B"


# -- item 13: an impossible event certifies nothing ----------------------------------------

def test_an_event_impossible_under_x_certifies_nothing(tmp_path, capsys):
    path = tmp_path / "w.json"
    for event in ([], [7]):
        path.write_text(json.dumps({"mechanism": "trunc_geom", "x": [0], "x_prime": [1], "event": event}))
        assert main(["certify", str(path)]) == NO_RESULT
        out, err = capsys.readouterr()
        assert "certifies nothing" in out and _no_result(err) and "eps >=" not in out


# -- items 8, 14: reports read only rows the suite wrote, and print huge values whole -------

def test_report_prints_huge_values_of_valid_rows(tmp_path, capsys):
    row = {"id": "x", "entry": {"mechanism": "rr", "params": {"n": 2}}, "status": "ok",
           "result": {"eps_lower": 1e30, "certified": True, "stat_interval": [1e300, "inf"],
                      "limits_hit": ["time budget of 5 s reached"]}, "elapsed": 1e8}
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps(row, separators=(",", ":")) + "\n")
    assert main(["report", str(path)]) == 0
    out = capsys.readouterr().out
    assert "1000000000000000019884624838656.0000" in out and "certified bound (time budget reached)" in out


# -- item 15: progress ------------------------------------------------------------------------

def test_a_sweep_reports_its_progress():
    said: list[str] = []
    verify(catalogue.get("rr").trace(n=8), backend="bdd", progress=said.append)  # 8 * 2^8 pairs
    assert said == [f"global sweep: {k:,} neighbour pairs" for k in (512, 1024, 1536, 2048)]


# -- item 16: negative inputs as written ------------------------------------------------------

def test_a_negative_input_is_read_as_written(capsys):
    assert main(["sample", "laplace", "--input", "-3", "-n", "100", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["x"] == [-3]


# -- item 17: install hints ---------------------------------------------------------------------

@pytest.mark.skipif(__import__("importlib").util.find_spec("opendp") is not None, reason="opendp is installed")
def test_a_missing_extra_names_both_install_commands(capsys):
    assert main(["estimate", "opendp:laplace"]) == 2
    err = capsys.readouterr().err
    assert "pip install 'dphybrid[opendp]'" in err and "pip install '.[opendp]'" in err


# -- item 18: no temporary file left behind ------------------------------------------------------

def test_answer_files_of_dead_supervisors_are_swept(tmp_path, monkeypatch):
    from hybrid.suites.entry_process import ANSWER_PREFIX, sweep_stale_answers

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale = tmp_path / f"{ANSWER_PREFIX}{dead.pid}-abc.json"
    mine = tmp_path / f"{ANSWER_PREFIX}{os.getpid()}-def.json"
    foreign = tmp_path / "dphybrid-entry-notapid.json"
    for p in (stale, mine, foreign):
        p.write_text("")
    sweep_stale_answers()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([mine.name, foreign.name])


# -- item 19: a bad name is reported before the heavy imports ------------------------------------

@pytest.mark.parametrize("argv", [["search", "nope"], ["test", "nope", "--eps", "1"], ["estimate", "nope"],
                                  ["sample", "nope", "--input", "1"]])
def test_an_unknown_mechanism_is_reported_before_heavy_imports(argv):
    code = ("import sys; from hybrid.cli import main; code = main(sys.argv[1:]); "
            "heavy = [m for m in ('numba', 'scipy.stats', 'sklearn', 'hybrid.searcher.search') if m in sys.modules]; "
            "print(code, heavy)")
    res = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)})
    assert res.stdout.strip() == "2 []", res.stdout + res.stderr
    assert "unknown mechanism 'nope'" in res.stderr
