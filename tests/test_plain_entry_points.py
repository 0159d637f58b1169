"""Plain functions through the CLI (file.py:alg, module:alg) and suite files."""

from __future__ import annotations

import json
import os
import textwrap

import pytest

from hybrid.cli import main
from hybrid.suites.suite_file import SuiteError, load_suite

ALGORITHMS = textwrap.dedent('''
    import numpy as np

    def rr(prng, queries, epsilon, p=0.75):
        return [q if prng.random() < p else 1 - q for q in queries]

    def sorted_noise(prng, queries, epsilon):
        return np.sort(np.asarray(queries) + prng.laplace(scale=1 / epsilon, size=len(queries)))

    def boom(prng, queries, epsilon):
        raise RuntimeError("a bug of the user's")

    from samplers.lang import clamp, flip, ints, mechanism, one_differ

    @mechanism(domain=ints(lo=0, hi=2, size=2), neighbours=one_differ)
    def clipped_coin(x):
        return clamp(x[0] + x[1], 0, 3) * flip("1/4")

    not_a_function = 3
''')


@pytest.fixture
def folder(tmp_path):
    (tmp_path / "algorithms.py").write_text(ALGORITHMS)
    (tmp_path / "exits.py").write_text("raise SystemExit(4)\n")
    return tmp_path


def snapshot(folder):
    return {p: os.stat(folder / p).st_mtime_ns for p in os.listdir(folder)}


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_dist_of_a_file_function(capsys, folder):
    before = snapshot(folder)
    code, out, err = run(capsys, "dist", f"{folder}/algorithms.py:rr", "--size", "2", "--domain", "0..1",
                         "--neighbours", "replace_one", "--input", "1,0", "--json")
    assert code == 0, err
    law = {tuple(row["output"]) if isinstance(row["output"], list) else row["output"]: row["probability"]
           for row in json.loads(out)["distribution"]}
    assert law[(1, 0)] == "9/16" and law[(0, 1)] == "1/16"
    assert snapshot(folder) == before  # the user's file is only read: no __pycache__, no rewrite


def test_a_mechanism_in_a_file_runs_like_a_catalogue_one(capsys, folder):
    code, out, err = run(capsys, "dist", f"{folder}/algorithms.py:clipped_coin", "--input", "2,1", "--json")
    assert code == 0, err
    law = {row["output"]: row["probability"] for row in json.loads(out)["distribution"]}
    assert law == {0: "3/4", 3: "1/4"}
    (folder / "suite.toml").write_text('[[entry]]\nmechanism = "algorithms.py:clipped_coin"\n')
    (entry,) = load_suite(str(folder / "suite.toml")).entries
    assert entry.resolve().trace().arity == 1


def test_module_function_and_negative_domain(capsys):
    code, out, err = run(capsys, "dist", "samplers.plain.examples:isvt1", "--size", "2", "--domain", "-10..10",
                         "-p", "epsilon=0.5", "--input=-3,2", "--backend", "continuous")
    assert code == 0, err
    assert "-10" not in err


@pytest.mark.parametrize("argv, words", [
    (["dist", "{f}:sorted_noise", "--input", "1,1,1,1,1"], "algorithms.py:8: np.sort"),
    (["dist", "{f}:missing", "--input", "1"], "no function 'missing'"),
    (["dist", "{d}/nope.py:rr", "--input", "1"], "no such file"),
    (["dist", "rr", "--size", "3", "--input", "1"], "--size applies to a file.py:alg"),
    (["dist", "{f}:rr", "--domain", "3..1", "--input", "1"], "exceeds"),
    (["dist", "{f}:rr", "-p", "q=1", "--input", "1"], "unknown parameter 'q'"),
    (["dist", "{f}:", "--size", "1", "--input", "1"], "names no function after the colon"),
    (["dist", "{f}:boom", "--size", "1", "--input", "1"], "algorithms.py:11: "),
    (["test", "{f}:boom", "--size", "1", "--eps", "0.1", "--black-box"], "raised RuntimeError: a bug of the user's"),
    (["dist", "{d}/exits.py:rr", "--input", "1"], "failed: SystemExit: 4"),
    (["search", "{f}:rr", "--size", "2", "--domain", "1..1"], "holds a single input"),
    (["dist", "{f}:clipped_coin", "--size", "2", "--input", "1,1"], "declares its own domain"),
    (["dist", "{f}:not_a_function", "--input", "1"], "is a int, not a function or a @mechanism"),
])
def test_bad_plain_input_is_one_line_and_status_2(capsys, folder, argv, words):
    argv = [a.format(f=f"{folder}/algorithms.py", d=folder) for a in argv]
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert words in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_suite_entries_name_file_functions(folder):
    (folder / "suite.toml").write_text(textwrap.dedent('''
        [[entry]]
        mechanism = "algorithms.py:rr"
        params = { epsilon = 1.0, p = 0.75 }
        size = 2
        domain = "0..1"
        neighbours = "replace_one"
        [[entry]]
        mechanism = "samplers.plain.examples:svt"
        size = 3
        domain = [-2, 2]
    '''))
    suite = load_suite(str(folder / "suite.toml"))
    rr, svt = suite.entries
    assert rr.mechanism == f"{folder.resolve()}/algorithms.py:rr" and rr.id.startswith("algorithms.py:rr ")
    assert rr.inputs == {"size": 2, "domain": [0, 1], "neighbours": "replace_one"}
    assert rr.resolve().trace(epsilon=1.0).arity == 2
    assert svt.resolve().trace().domain.lo == (-2, -2, -2)
    assert rr.to_json()["inputs"]["size"] == 2


@pytest.mark.parametrize("extra, words", [
    ('size = 0', "size must be a positive integer"),
    ('domain = "a..b"', "domain must be"),
    ('neighbours = "nobody"', "unknown neighbour relation"),
])
def test_suite_refuses_bad_inputs(folder, extra, words):
    (folder / "suite.toml").write_text(f'[[entry]]\nmechanism = "algorithms.py:rr"\n{extra}\n')
    with pytest.raises((SuiteError, Exception), match=words):
        load_suite(str(folder / "suite.toml"))


@pytest.mark.parametrize("mechanism, extra, words", [
    ("algorithms.py:", "size = 1", "names no function after the colon"),
    ("nowhere.py:alg", "size = 1", "no such file"),
    ("algorithms.py:rr", 'neighbours = "nobody"', "unknown neighbour relation"),
])
def test_suite_entries_that_cannot_load_are_one_error(folder, mechanism, extra, words):
    """What can be told without running the user's code is refused when the suite is read."""
    (folder / "suite.toml").write_text(f'[[entry]]\nmechanism = "{mechanism}"\n{extra}\n')
    with pytest.raises(SuiteError, match=words):
        load_suite(str(folder / "suite.toml"))


def test_an_entry_whose_code_never_returns_is_its_own_row_and_the_run_goes_on(folder, capsys):
    """The user's file runs in the entry's process, never in the runner's: a top-level loop is that
    entry's timeout row (it once refused the whole suite after its limit, with no rows)."""
    (folder / "forever.py").write_text("while True:\n    pass\n")
    (folder / "suite.toml").write_text('[[entry]]\nmechanism = "forever.py:alg"\ntime_limit = 3\n'
                                       '[[entry]]\nmechanism = "algorithms.py:rr"\nsize = 2\ndomain = "0..1"\n'
                                       'neighbours = "replace_one"\nbudget = 20\n')
    out = folder / "rows.jsonl"
    assert main(["suite", str(folder / "suite.toml"), "--out", str(out), "--jobs", "1"]) in (0, 1)
    rows = {r["entry"]["mechanism"].rsplit("/", 1)[-1]: r for r in map(json.loads, out.read_text().splitlines())}
    assert rows["forever.py:alg"]["status"] in ("timeout", "error") and rows["algorithms.py:rr"]["status"] == "ok"


def test_catalogue_entries_refuse_plain_inputs(folder):
    (folder / "suite.toml").write_text('[[entry]]\nmechanism = "rr"\nsize = 3\n')
    with pytest.raises(SuiteError, match="size applies to a file.py:alg"):
        load_suite(str(folder / "suite.toml"))


def _rr(prng, queries, epsilon, p=0.75):
    return [q if prng.random() < p else 1 - q for q in queries]


def test_verify_takes_the_function():
    from verifiers.verify import verify

    assert str(verify(_rr).result.ratio) == "inf"  # StatDP's default domain -10..10: 1 - q leaves it
    from samplers.plain import statdp

    assert str(verify(statdp(_rr, size=1, domain=(0, 1), neighbours="replace_one")).result.ratio) == "3"


@pytest.mark.slow
def test_testers_take_the_function():
    from hybrid.testers.testing import statdp_test
    from samplers.plain import statdp

    mech = statdp(_rr, size=1, domain=(0, 1), neighbours="replace_one")
    assert statdp_test(mech, 0.5, samples=20_000, seed=0).extra["violation"] is True  # true eps ln 3


def test_certify_rebuilds_the_inputs_the_witness_was_found_with(capsys, folder):
    code, out, err = run(capsys, "search", f"{folder}/algorithms.py:rr", "--size", "3", "--domain", "0..1",
                         "--neighbours", "replace_one", "--json")
    assert code == 0, err
    witness = json.loads(out)["witness"]
    assert witness["inputs"] == {"size": 3, "domain": [0, 1], "neighbours": "replace_one"}
    assert len(witness["x"]) == 3  # not the default size 5
    (folder / "w.json").write_text(json.dumps(witness))
    code, out, err = run(capsys, "certify", str(folder / "w.json"), "--json")
    assert code == 0, err
    cert = json.loads(out)
    assert cert["ratio"] == "3" and cert["witness"]["inputs"] == witness["inputs"]
    code, out, err = run(capsys, "estimate", f"{folder}/algorithms.py:rr", "--size", "3", "--domain", "0..1",
                         "--neighbours", "replace_one", "--samples", "100000", "--json")
    assert code == 0, err
    (folder / "e.json").write_text(out)  # a tester's result: its witness is an exported attack
    code, out, err = run(capsys, "certify", str(folder / "e.json"), "--json")
    assert code == 0, err
    assert json.loads(out)["witness"]["inputs"]["size"] == 3
    (folder / "w.json").write_text(json.dumps({**witness, "inputs": {"size": 3, "domain": "0..1"}}))
    code, out, err = run(capsys, "certify", str(folder / "w.json"))
    assert code == 2 and "domain must be [lo, hi]" in err
    (folder / "w.json").write_text(json.dumps({**witness, "mechanism": "rr"}))
    code, out, err = run(capsys, "certify", str(folder / "w.json"))
    assert code == 2 and "inputs apply to a file.py:alg" in err


@pytest.mark.parametrize("source, spec, words", [
    ("while True:\n    pass\n", "forever.py:alg", "while running"),
    ("def alg(prng, queries, epsilon):\n    while True:\n        try:\n            pass\n"
     "        except Exception:\n            pass\n", "forever.py:alg", "while tracing"),
])
def test_code_that_never_returns_is_stopped_by_the_time_budget(capsys, tmp_path, source, spec, words):
    """A module or function looping forever never checks the clock: the budget interrupts it (in the main
    thread), even through an `except Exception` in the loop."""
    (tmp_path / "forever.py").write_text(source)
    code, out, err = run(capsys, "dist", f"{tmp_path}/{spec}", "--size", "1", "--input", "1",
                         "--time-budget", "1")
    assert code == 3 and words in err and "time budget of 1 s" in err
