"""Bad input on every command: exit status 2, one line on stderr, no traceback, nothing written.

Each case runs the CLI in-process on files in a fresh folder; the folder's files (names
and SHA-256) are compared before and after, so a case that creates, truncates or
overwrites anything fails.  Every case is refused before any sampling or solving, so
the whole file runs in a few seconds.  Issue 14, items 12 and 13, and the hostile
inputs found beyond them.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from pathlib import Path

import pytest

from hybrid.cli import main
from hybrid.suites.plots import plot_path

RR4 = ["--input", "1,0,1,0", "-n", "10"]
BIG = b"1" * 5000  # more digits than Python's int() reads (4300)
ATTACK = {"attack": {"x": [0, 0], "x_prime": [1, 0], "transform": {"name": "joint", "joint": [[0, 0], [1, 1]]},
                     "model": {"kind": "logistic", "mean": [0.5, 0.5], "scale": [0.5, 0.5],
                               "weights": [[[1.0], [1.0]]], "biases": [[0.0]]}, "t": 0.0, "q": 0.0, "c": 0.1}}


def _witness(**over):
    return {"mechanism": "trunc_geom", "x": [0], "x_prime": [1], "event": [0], **over}


FILES = {  # name -> bytes or a JSON value
    "notes.txt": b"important notes\n",
    "not_an_image.png": b"my results, not a PNG\n",
    "deep.json": ("[" * 100_000 + "]" * 100_000).encode(),
    "deep_object.json": ('{"a":' * 100_000 + "1" + "}" * 100_000).encode(),
    "latin1.json": '{"name": "caf\xe9"}'.encode("latin-1"),
    "empty.json": b"",
    "x_huge.json": b'{"mechanism": "trunc_geom", "x": [1e400], "x_prime": [1], "event": [0]}',
    "x_fraction.json": _witness(x=[0.5]),
    "statdp_abc.json": [[0.5, 0.1, [0], [1], {}, [[0, "abc"]]]],
    "statdp_null.json": [[0.5, 0.1, [0], [1], {}, [[0, None]]]],
    "event_shape.json": {"mechanism": "svt_geom", "x": [1, 1, 1, 1], "x_prime": [2, 0, 0, 0], "event": [1]},
    "attack_arity.json": {"mechanism": "rr", "params": {"n": 3}, "x": [0, 0, 0], "x_prime": [1, 0, 0],
                          "event": ATTACK},
    "attack_empty.json": {"mechanism": "rr", "params": {"n": 2}, "x": [0, 0], "x_prime": [1, 0],
                          "event": {"attack": {**ATTACK["attack"], "transform": {"name": "joint", "joint": ""}}}},
    "attack_shapes.json": {"mechanism": "rr", "params": {"n": 2}, "x": [0, 0], "x_prime": [1, 0],
                           "event": {"attack": {**ATTACK["attack"], "model": {**ATTACK["attack"]["model"],
                                                                             "weights": [[[1.0]]]}}}},
    "feature_index.json": {"mechanism": "svt_geom", "x": [1, 1, 1, 1], "x_prime": [2, 0, 0, 0],
                           "event": {"feature": {"kind": "component", "index": 9}, "in": [1]}},
    "model_pairs_int.json": {"kind": "dp", "mechanism": {"name": "trunc_geom"}, "pairs": 5},
    "model_pairs_flat.json": {"kind": "dp", "mechanism": {"name": "trunc_geom"}, "pairs": [[1, 2]]},
    "model_params.json": {"kind": "dp", "mechanism": {"name": "trunc_geom", "params": 5}},
    "model_entries.json": {"kind": "pufferfish", "entries": 5, "secrets": [["a", "b"]]},
    "model_table.json": {"kind": "pufferfish", "entries": {"J": [0, 1]}, "prior": [{"entries": ["J"], "table": 7}]},
    "model_states.json": {"kind": "hmm", "states": 3, "symbols": ["a"], "transitions": {}, "emissions": {}},
    "model_alias.yaml": b"kind: dp\nmechanism: &m {name: trunc_geom}\nother: *m\n",
    # issue 24, item 5: integers beyond Python's int-string limit, and just below it
    "x_5000.json": b'{"mechanism": "trunc_geom", "x": [' + BIG + b'], "x_prime": [1], "event": [0]}',
    "event_5000.json": b'{"mechanism": "trunc_geom", "x": [0], "x_prime": [1], "event": [' + BIG + b']}',
    "params_5000.json": b'{"mechanism": "trunc_geom", "params": {"m": ' + BIG + b'}, "x": [0], "x_prime": [1], '
                        b'"event": [0]}',
    "x_4000.json": b'{"mechanism": "trunc_geom", "x": [' + BIG[:4000] + b'], "x_prime": [1], "event": [0]}',
    "event_4000.json": b'{"mechanism": "trunc_geom", "x": [0], "x_prime": [1], "event": [' + BIG[:4000] + b']}',
    "model_5000.json": b'{"kind": "dp", "mechanism": {"name": "trunc_geom", "params": {"m": ' + BIG + b'}}, '
                       b'"pairs": "all"}',
    "model_5000.yaml": b"kind: dp\nmechanism: {name: trunc_geom, params: {m: " + BIG + b"}}\npairs: all\n",
    "empty_event.json": _witness(event=[]),
    "model_4000.json": b'{"kind": "dp", "mechanism": {"name": "trunc_geom", "params": {"m": ' + BIG[:4000] + b'}}, '
                       b'"pairs": "all"}',
}


def _bad(*argv: str, msg: str):
    return pytest.param(list(argv), msg, id=" ".join(argv)[:70])


CASES = [
    # issue 14, item 12: tracebacks
    _bad("sample", "rappor", "-p", "m=0", "--input", "1", "-n", "10", msg="m must be at least 1"),
    _bad("sample", "laplace", "-p", "eps=0", "--input", "1", "-n", "10", msg="eps must be positive"),
    _bad("dist", "one_time_rappor", "-p", "h=0", "--input", "0", msg="h must be at least 1"),
    _bad("test", "laplace", "--eps", "0.5", "--seed", "-1", msg="--seed"),
    _bad("estimate", "laplace", "--seed", "-1", msg="--seed"),
    _bad("search", "rr", "--claimed-eps", "inf", msg="--claimed-eps"),
    _bad("search", "rr", "--plot", "{d}/x.zzz", msg="unknown image format"),
    _bad("search", "rr", "--plot", "{d}/res.json", msg="unknown image format"),
    _bad("search", "rr", "--plot", "{d}/not_an_image.png", msg="refusing to overwrite"),
    _bad("search", "rr", "--plot", "{d}/no/such/folder/p.png", msg="cannot write the plot"),
    _bad("search", "rr", "--plot", "{d}/", msg="names no file"),
    _bad("certify", "{d}/x_huge.json", msg="list of integers"),
    _bad("certify", "{d}/x_fraction.json", msg="list of integers"),
    _bad("certify", "{d}/statdp_abc.json", "--mechanism", "trunc_geom", msg="not a number"),
    _bad("certify", "{d}/statdp_null.json", "--mechanism", "trunc_geom", msg="not a number"),
    _bad("certify", "{d}/deep.json", msg="nested"),
    _bad("certify", "{d}/deep_object.json", msg="nested"),
    _bad("pufferfish", "{d}/deep.json", "--c", "2", msg="nested"),
    _bad("pufferfish", "{d}/model_pairs_int.json", "--c", "2", msg="pairs must be"),
    _bad("pufferfish", "{d}/model_pairs_flat.json", "--c", "2", msg="list of integers"),
    _bad("pufferfish", "{d}/latin1.json", "--c", "2", msg="not UTF-8"),
    _bad("pufferfish", "{d}", "--c", "2", msg="not a regular file"),
    _bad("pufferfish", "geometric_dp", "--c", "2", "--timeout", "nan", msg="--timeout"),
    _bad("pufferfish", "geometric_dp", "--c", "2", "--timeout", "inf", msg="--timeout"),
    _bad("pufferfish", "geometric_dp", "--c", "2", "--timeout", "1e300", msg="timeout"),
    # item 13: silent acceptance
    _bad("sample", "rr", *RR4, "--threads", "0", msg="--threads"),
    _bad("sample", "rr", *RR4, "--threads", "-1", msg="--threads"),
    _bad("sample", "rr", *RR4, "--threads", "100000", msg="threads must lie in"),
    _bad("sample", "rr", *RR4, "--seed", str(2**64), msg="outside [0, 2^64)"),
    _bad("search", "rr", "--seed", str(2**64 + 5), msg="outside [0, 2^64)"),
    _bad("test", "rr", "--eps", "1", "--seed", "-5", msg="outside [0, 2^64)"),
    _bad("sample", "rr", "--input", "1,,1", "-n", "10", msg="item 2 is empty"),
    _bad("sample", "rr", "--input", "1,0,1,", "-n", "10", msg="item 4 is empty"),
    _bad("dist", "rr", "--input", "1_0,0,0,0", msg="not an integer"),
    # further hostile numbers
    _bad("sample", "rr", "--input", "1,0,1,0", "-n", "0", msg="positive integer"),
    _bad("sample", "rr", "--input", "1,0,1,0", "--top", "-1", msg="--top"),
    _bad("sample", "svt1", "-p", "c=0", "--input", "1", "-n", "10", msg="c must be at least 1"),
    _bad("sample", "laplace_parallel", "-p", "k=0", "--input", "1", "-n", "10", msg="k must be at least 1"),
    _bad("dist", "svt_geom", "-p", "W=-1", "--input", "1,1,1,1", msg="W must be at least 0"),
    _bad("dist", "rr", "-p", "n=" + "9" * 30, "--input", "0", msg="needed"),
    _bad("dist", "rr", "-p", "lam=1e400", "--input", "0,0,0,0", msg="not a finite number"),
    _bad("search", "rr", "--precision", "nan", msg="--precision"),
    _bad("search", "rr", "--precision", "inf", msg="--precision"),
    _bad("search", "rr", "--time-budget", "-1", msg="--time-budget"),
    _bad("search", "rr", "--claimed-eps", "-1/2", msg="--claimed-eps"),
    _bad("test", "rr", "--eps", "nan", msg="--eps"),
    _bad("test", "rr", "--eps", "1", "--alpha", "0", msg="--alpha"),
    _bad("estimate", "rr", "--confidence", "1", msg="--confidence"),
    _bad("estimate", "rr", "--method", "statdp", "--precision", "inf", msg="--precision"),
    _bad("verify", "rr", "--eps", "inf", msg="--eps"),
    _bad("verify", "rr", "--eps", "1/0", msg="--eps"),
    _bad("verify", "rr", "--node-budget", "0", msg="--node-budget"),
    # foreign, binary, empty files and directories
    _bad("certify", "{d}", msg="not a regular file"),
    _bad("certify", "{d}/latin1.json", msg="not UTF-8"),
    _bad("certify", "{d}/fifo.json", msg="not a regular file"),
    _bad("pufferfish", "/dev/zero", "--c", "2", msg="not a regular file"),
    _bad("certify", "{d}/empty.json", msg="not valid JSON"),
    _bad("certify", "{d}/notes.txt", msg="not valid JSON"),
    _bad("certify", "{d}/event_shape.json", msg="does not fit svt_geom"),
    _bad("certify", "{d}/attack_arity.json", msg="fitted on outputs with 2 components"),
    _bad("certify", "{d}/attack_empty.json", msg="nonempty list"),
    _bad("certify", "{d}/attack_shapes.json", msg="shapes do not chain"),
    _bad("certify", "{d}/feature_index.json", msg="cannot be evaluated"),
    _bad("certify", "{d}/x_fraction.json", "--eps", "nan", msg="--eps"),
    _bad("certify", "{d}/event_shape.json", "--mechanism", "rr", msg="is for svt_geom, not rr"),
    _bad("certify", "{d}/event_shape.json", "--mechanism", "nope", msg="unknown mechanism"),
    _bad("pufferfish", "{d}/empty.json", "--c", "2", msg="not valid JSON"),
    _bad("pufferfish", "{d}/model_params.json", "--c", "2", msg="must be an object"),
    _bad("pufferfish", "{d}/model_entries.json", "--c", "2", msg="must be an object"),
    _bad("pufferfish", "{d}/model_table.json", "--c", "2", msg="must be a list"),
    _bad("pufferfish", "{d}/model_states.json", "--c", "2", msg="must be a list"),
    _bad("pufferfish", "{d}/model_alias.yaml", "--c", "2", msg="aliases"),
    _bad("pufferfish", "geometric_dp", "--eps", "-1", msg="--eps"),
    _bad("pufferfish", "geometric_dp", "--precision", "0", msg="--precision"),
    # issue 24, item 1: a continuous sweep too large to finish is refused up front, naming its size
    _bad("verify", "report_noisy_max1", msg="--input-range"),
    _bad("verify", "svt1", "--input-range", "-3..3", msg="neighbour pairs"),
    # item 2: sample sizes no run can draw
    _bad("estimate", "rr", "--samples", "1" + "0" * 30, msg="more than"),
    _bad("search", "rr", "--samples", "1" + "0" * 30, msg="more than"),
    _bad("sample", "rr", *RR4[:2], "-n", "1" + "0" * 12, msg="more than"),
    # item 5: 5000-digit integers (and 4000-digit ones, which int() reads) everywhere
    _bad("dist", "rr", "--input", "1," + "1" * 5000 + ",0,0", msg="not an integer"),
    _bad("sample", "rr", "--input", "1" * 5000 + ",0,0,0", "-n", "10", msg="not an integer"),
    _bad("dist", "rr", "--input", "1," + "1" * 4000 + ",0,0", msg="outside the domain"),
    _bad("dist", "rr", "-p", "n=" + "1" * 5000, "--input", "0", msg="digits"),
    _bad("dist", "rr", "-p", "lam=1/" + "3" * 5000, "--input", "0,0,0,0", msg="digits"),
    _bad("sample", "rr", *RR4, "--seed", "1" * 5000, msg="digits"),
    _bad("verify", "rr", "--input-range", "0.." + "1" * 5000, msg="--input-range"),
    _bad("certify", "{d}/x_5000.json", msg="cannot read a value"),
    _bad("certify", "{d}/event_5000.json", msg="cannot read a value"),
    _bad("certify", "{d}/params_5000.json", msg="cannot read a value"),
    _bad("certify", "{d}/x_4000.json", msg="outside the domain"),
    _bad("certify", "{d}/event_4000.json", msg="outside the range"),
    _bad("pufferfish", "{d}/model_5000.json", "--c", "2", msg="cannot read a value"),
    _bad("pufferfish", "{d}/model_5000.yaml", "--c", "2", msg="cannot read a value"),
    _bad("pufferfish", "{d}/model_4000.json", "--c", "2", msg="(4000 characters)"),
    _bad("dist", "x" * 5000, "--input", "0", msg="(5002 characters)"),
    # item 6 and 12: plot paths checked up front, the empty one too
    _bad("search", "rr", "--plot", "", msg="names no file"),
    # item 9: numbers that round to 0 (or infinity) as doubles
    _bad("dist", "rr", "-p", "lam=1e-400", "--input", "0,0,0,0", msg="rounds to 0"),
    _bad("sample", "laplace", "-p", "eps=1e-400", "--input", "1", "-n", "10", msg="rounds to 0"),
    _bad("test", "rr", "--eps", "1e-400", msg="rounds to 0"),
    _bad("verify", "rr", "--eps", "1e-400", msg="rounds to 0"),
    _bad("search", "rr", "--claimed-eps", "1e-400", msg="rounds to 0"),
    _bad("certify", "{d}/x_fraction.json", "--eps", "1e-400", msg="rounds to 0"),
    _bad("search", "rr", "--precision", "1e-400", msg="rounds to 0"),
    # item 10: one integer grammar (no "1_0", no other scripts' digits)
    _bad("dist", "rr", "-p", "n=1_0", "--input", "0", msg="not an integer"),
    _bad("dist", "rr", "-p", "n=\u0663", "--input", "0,0,0", msg="not an integer"),
    _bad("dist", "rr", "-p", "lam=0.2_5", "--input", "0,0,0,0", msg="not a number"),
    _bad("dist", "rr", "-p", "lam=\u0661/\u0664", "--input", "0,0,0,0", msg="not a rational"),
    _bad("sample", "rr", *RR4[:2], "-n", "1_000", msg="not an integer"),
    # item 11: a bracket wider than 1 says nothing, on the command line as in suite files
    _bad("search", "rr", "--precision", "5", msg="wider than 1"),
    _bad("verify", "rr", "--precision", "2", msg="wider than 1"),
    # item 16: a negative input is read as written (then checked against the domain)
    _bad("dist", "rr", "--input", "-1,0,0,0", msg="outside the domain"),
    _bad("search", "rr", "--claimed-eps", "-1/2", msg="non-negative"),
    # issue 31: an empty path names no file (it printed the result and wrote nothing)
    _bad("prove", "rr", "--out", "", msg="names no file"),
    _bad("search", "rr", "--plot", "", msg="names no file"),
    _bad("suite", "discrete", "--out", "", msg="names no file"),
    # issue 31: tracebacks of the testers and black boxes
    _bad("estimate", "laplace", "-p", "eps=1e-300", "--samples", "100000", msg="classifier needs finite ones"),
    _bad("test", "laplace", "--eps", "0.1", "--method", "audit", "--samples", "10000000000", "--time-budget", "5",
         msg="audit runs"),
    _bad("test", "{d}/outputs.py:nan", "--black-box", "--eps", "0.1", msg="returned NaN"),
    _bad("test", "{d}/outputs.py:thing", "--black-box", "--eps", "0.1", msg="returned a object"),
    _bad("test", "{d}/outputs.py:text", "--black-box", "--eps", "0.1", msg="returned a str ('abc')"),
]


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    for name, content in FILES.items():
        data = content if isinstance(content, bytes) else json.dumps(content).encode()
        (tmp_path / name).write_bytes(data)
    (tmp_path / "outputs.py").write_text("def nan(prng, queries, epsilon):\n    return float('nan')\n"
                                         "def thing(prng, queries, epsilon):\n    return object()\n"
                                         "def text(prng, queries, epsilon):\n    return 'abc'\n")
    os.mkfifo(tmp_path / "fifo.json")  # reading it would block forever
    return tmp_path


def _snapshot(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "not a file"
            for p in sorted(root.rglob("*"))}


@pytest.mark.parametrize("argv, msg", CASES)
def test_bad_input_is_one_line_exit_2_and_writes_nothing(folder, capsys, argv, msg):
    before = _snapshot(folder)
    code = main([a.replace("{d}", str(folder)) for a in argv])
    out, err = capsys.readouterr()
    assert code == 2, (out, err)
    assert err.count("\n") == 1 and err.endswith("\n") and "Traceback" not in err, err
    assert len(err) < 600, "a long value is echoed back in full"
    assert msg in err, err
    assert out == "", "refused after printing: bad input must be found before the work"
    assert _snapshot(folder) == before


def _strict_json(text: str):
    def refuse(name: str):
        raise ValueError(f"{name} is not JSON")
    return json.loads(text, parse_constant=refuse)


def test_rationals_are_accepted_wherever_an_eps_or_a_level_is(tmp_path, capsys):
    assert main(["verify", "rr", "-p", "n=2", "--eps", "11/10", "--json"]) == 0  # e^(11/10) > 3 = e^eps
    d = _strict_json(capsys.readouterr().out)
    assert d["eps"] == "11/10" and d["proved_dp"] is True
    (tmp_path / "w.json").write_text(json.dumps(_witness()))
    assert main(["certify", "--eps", "6/10", "--json", str(tmp_path / "w.json")]) == 0
    d = _strict_json(capsys.readouterr().out)
    assert d["claimed_eps"] == "3/5" and d["violation_holds"] is True  # ratio 2 > e^(3/5)
    assert main(["test", "trunc_geom", "--eps", "1/2", "--alpha", "1/20", "--samples", "20000", "--json"]) == 0
    d = _strict_json(capsys.readouterr().out)
    assert d["eps_tested"] == "1/2" and d["alpha"] == 0.05


def test_json_output_never_holds_nan_or_infinity(capsys):
    # every event is rare at this size: the selection p-value does not exist (NaN) and the
    # bisection never stops rejecting (hi = inf)
    assert main(["estimate", "rr", "-p", "lam=0", "--method", "statdp", "--samples", "1000", "--json"]) == 0
    text = capsys.readouterr().out
    d = _strict_json(text)
    assert "NaN" not in text and "Infinity" not in text and d["stat_interval"][1] == "inf"
    assert main(["pufferfish", "--list", "--json"]) == 0  # was one name a line
    assert "geometric_dp" in {m["name"] for m in _strict_json(capsys.readouterr().out)}


def test_plot_without_extension_is_written_as_png_and_reported(tmp_path, capsys):
    target = tmp_path / "noext"
    assert main(["search", "trunc_geom", "--samples", "20000", "--no-global", "--plot", str(target)]) == 0
    out = capsys.readouterr().out
    assert not target.exists() and (tmp_path / "noext.png").read_bytes().startswith(b"\x89PNG")
    assert f"plot written to {target}.png" in out
    assert plot_path(f"{target}.png") == tmp_path / "noext.png"  # a PNG may be overwritten by the next run


def test_sample_lists_the_top_outputs_only(capsys):
    assert main(["sample", "rr", "-p", "n=8", "--input", "1,0,1,0,1,0,1,0", "-n", "2000", "--top", "5"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1 + 5 + 1 and "more outputs" in lines[-1]
    counts = [int(line.split()[-2]) for line in lines[1:6]]  # output, count, frequency
    assert counts == sorted(counts, reverse=True)
    assert main(["sample", "rr", "-p", "n=8", "--input", "1,0,1,0,1,0,1,0", "-n", "2000", "--exact", "--json"]) == 0
    d = _strict_json(capsys.readouterr().out)
    assert len(d["counts"]) == 20 and d["distinct_outputs"] == 256 and math.isfinite(d["chi2"]["pvalue"])
