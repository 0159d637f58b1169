"""The command line: list, sample, dist; JSON output; one-line errors with exit status 2."""

import json
import shutil
import subprocess

import pytest

from hybrid.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys, *argv):
    code, out, err = run(capsys, *argv, "--json")
    assert code == 0, err
    return json.loads(out)


def test_dist_noisy_max_acceptance(capsys):
    res = run_json(capsys, "dist", "noisy_max_geom", "-p", "m=5", "-p", "n=2", "-p", "a=1/2", "--input", "0,2,2,2,2")
    probs = {row["output"]: row["probability"] for row in res["distribution"]}
    assert probs[1] == "73/1440" and probs[3] == "1367/5760"
    assert res["params"] == {"m": 5, "n": 2, "a": "1/2", "tie": "uniform"}


def test_dist_truncated_geometric_text(capsys):
    code, out, _ = run(capsys, "dist", "trunc_geom", "-p", "m=2", "-p", "a=1/2", "--input", "0")
    assert code == 0
    assert [line.split()[1] for line in out.splitlines()[1:]] == ["2/3", "1/6", "1/6"]


def test_dist_tuple_outputs_with_bottom(capsys):
    res = run_json(capsys, "dist", "above_threshold_geom", "--input", "0,1")
    outs = {tuple(r["output"]): r["probability"] for r in res["distribution"]}
    assert outs[(0, 1)] == "29/90" and (1, "bottom") in outs


def test_sample_counts_and_exact_comparison(capsys):
    res = run_json(capsys, "sample", "noisy_max_geom", "--input", "0,2,2,2,2", "-n", "200000", "--seed", "3", "--exact")
    assert sum(r["count"] for r in res["counts"]) == 200000
    assert {r["output"] for r in res["counts"]} == {1, 2, 3, 4, 5}
    assert res["seed"] == 3 and res["chi2"]["pvalue"] > 1e-4


def test_sample_counts_are_those_of_the_array_of_samples(capsys):
    """`sample` counts as it draws (the fused kernel): exactly the counts of the array the same seed draws."""
    from hybrid.formats import output_to_json
    from samplers import catalogue
    from samplers.compile import compile_sampler
    from samplers.counts import output_counts

    res = run_json(capsys, "sample", "above_threshold_geom", "-p", "L=3", "--input", "2,0,2", "-n", "50000", "--seed", "9",
                   "--top", "0")
    array = compile_sampler(catalogue.get("above_threshold_geom"), L=3).sample((2, 0, 2), 50000, 9)
    want = {json.dumps(output_to_json(o)): c for o, c in output_counts(array).items()}
    assert {json.dumps(r["output"]): r["count"] for r in res["counts"]} == want
    assert res["distinct_outputs"] == len(want) and "bottom" in str(list(want))


def test_sample_continuous_summary(capsys):
    res = run_json(capsys, "sample", "laplace", "-p", "eps=0.5", "--input", "3", "-n", "100000")
    s = res["summary"][0]
    assert abs(s["mean"] - 3) < 0.1 and abs(s["median"] - 3) < 0.1


def test_list(capsys):
    rows = run_json(capsys, "list")
    by = {r["name"]: r for r in rows}
    assert by["noisy_max_geom"]["exact"] and not by["svt1"]["exact"]
    assert "SVT" in by["svt1"]["aliases"]
    code, out, _ = run(capsys, "list")
    assert code == 0 and "rappor" in out


def test_list_names_everything_a_command_accepts(capsys):
    """Catalogue names, every alias (resolving to its mechanism) and every library black box
    (with whether its library is installed, which decides whether building it works)."""
    from samplers import catalogue
    from samplers.libraries import LIBRARY, MissingLibrary, library_mechanism

    rows = run_json(capsys, "list")
    names = [r["name"] for r in rows]
    assert len({n.lower() for n in names}) == len(names)
    kinds = {k: [r for r in rows if r["kind"] == k] for k in ("catalogue", "alias", "library")}
    assert len(kinds["catalogue"]) + len(kinds["alias"]) + len(kinds["library"]) == len(rows)
    assert [r["name"] for r in kinds["catalogue"]] == catalogue.names()
    assert {r["name"] for r in kinds["library"]} == set(LIBRARY)
    for r in kinds["alias"]:
        assert catalogue.get(r["name"]).name == r["alias_of"] != r["name"]
    want = {a for m in catalogue.mechanisms() for a in m.aliases if a.lower() != m.name.lower()}
    assert {r["name"] for r in kinds["alias"]} == want
    for r in kinds["library"]:
        assert r["exact"] is False and r["commands"] == ["test", "estimate"] and r["library"] in r["name"]
        try:
            library_mechanism(r["name"], {})
            built = True
        except MissingLibrary:
            built = False
        assert built == r["installed"], r["name"]
    code, out, _ = run(capsys, "list")
    assert code == 0
    for r in rows:
        assert r["name"] in out
    assert "alias of svt1" in out and "opendp:laplace" in out and ("not installed" in out) == (
        not all(r["installed"] for r in kinds["library"]))


@pytest.mark.parametrize("argv, message", [
    (["dist", "nope", "--input", "1"], "unknown mechanism"),
    (["dist", "rr", "-p", "lam=3/2", "--input", "0,0,0,0"], "outside [0, 1]"),
    (["dist", "rr", "-p", "lam", "--input", "0,0,0,0"], "key=value"),
    (["dist", "rr", "-p", "n=2", "-p", "n=3", "--input", "0,0"], "given twice"),
    (["dist", "rr", "-p", "zz=1", "--input", "0,0,0,0"], "unknown parameter"),
    (["dist", "rr", "-p", "n=x", "--input", "0,0"], "integer"),
    (["dist", "rr", "--input", "0,2,0,0"], "outside the domain"),
    (["dist", "rr", "--input", "0,0"], "coordinates"),
    (["dist", "rr", "--input", "a"], "integers"),
    (["dist", "kary_rr", "-p", "k=1", "--input", "0"], "at least 2"),
    (["dist", "laplace", "--input", "0"], "not supported"),
    (["dist", "rr", "--input", "0,0,0,0", "--backend", "magic"], "unknown backend"),
    (["dist", "rr"], "required"),
    (["sample", "rr", "--input", "0,0,0,0", "-n", "0"], "positive"),
    (["sample", "rr", "--input", "0,0,0,0", "-n", "ten"], "not an integer"),
    (["sample", "laplace", "--input", "0", "--exact"], "not supported"),
    (["sample", "nope", "--input", "0"], "unknown mechanism"),
    (["list", "--bogus"], "unrecognized"),
    (["frobnicate"], "invalid choice"),
])
def test_bad_input_gives_one_line_and_status_2(capsys, argv, message):
    with pytest.raises(SystemExit) as exc:
        code = main(argv)
        raise SystemExit(code)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and message in err, err


@pytest.mark.skipif(shutil.which("dphybrid") is None, reason="console script not installed")
def test_console_script():
    res = subprocess.run(["dphybrid", "dist", "trunc_geom", "--input", "1", "--json"],
                         capture_output=True, text=True, check=True)
    assert json.loads(res.stdout)["mechanism"] == "trunc_geom"
    bad = subprocess.run(["dphybrid", "dist", "trunc_geom", "--input", "9"], capture_output=True, text=True)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "Traceback" not in bad.stderr
