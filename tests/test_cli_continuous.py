"""search, certify, verify and dist on mechanisms with continuous noise give certified results."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest

from hybrid.cli import main


def run_json(capsys, *argv):
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_search_then_certify_laplace(capsys, tmp_path):
    """The Laplace mechanism's certified bound lies in (0.0999, 0.1]; certify re-derives it from the file."""
    d = run_json(capsys, "search", "laplace", "--samples", "100000")
    assert d["certified"] and d["backend"] == "continuous"
    assert 0.0999 < d["eps_lower"] <= 0.1
    lo, hi = (Fraction(v) for v in d["ratio_enclosure"])
    assert Fraction(d["ratio"]) == lo <= hi and hi - lo < Fraction(1, 10**12)
    assert d["bracket"][0] == d["eps_lower"] and d["stat_interval"] is not None
    path = tmp_path / "result.json"
    path.write_text(json.dumps(d))
    c = run_json(capsys, "certify", str(path), "--eps", "0.09")
    assert c["certified"] and c["violation_holds"] and c["ratio"] == d["ratio"]
    assert c["ln_ratio_upper"] >= 0.1 - 1e-12 and 0.0999 < c["eps_lower"] <= 0.1


def test_certify_a_statdp_list_on_a_continuous_mechanism(capsys, tmp_path):
    """StatDP's (-inf, -5) on the Laplace mechanism: both left tails, ratio exactly e^0.1."""
    rows = [[0.09, 0.01, [0], [1], {"epsilon": 0.1}, [[float("-inf"), -5.0]]]]
    path = tmp_path / "statdp.json"
    path.write_text(json.dumps(rows))
    c = run_json(capsys, "certify", str(path), "--mechanism", "laplace")
    assert c["source"] == "statdp" and c["violation_holds"]
    assert 0.0999 < c["eps_lower"] <= 0.1 <= c["ln_ratio_upper"]


def test_verify_over_a_small_box(capsys):
    d = run_json(capsys, "verify", "report_noisy_max1", "-p", "n=3", "--input-range", "0..2", "--eps", "0.1")
    assert d["certified"] and d["proved_dp"] is True and d["domain"] == "{0..2}^3"
    assert d["eps_upper"] - d["eps_lower"] <= 1e-3 and d["eps_upper"] < 0.1
    d = run_json(capsys, "verify", "svt1", "-p", "n=3", "--input-range", "0..2", "--eps", "0.05")
    assert d["proved_dp"] is False and Fraction(d["ratio"]) == Fraction(d["ratio_enclosure"][0])


def test_search_finite_outputs(capsys):
    d = run_json(capsys, "search", "svt1", "-p", "n=3", "--samples", "100000", "--time-budget", "30")
    assert d["certified"] and 0 < d["eps_lower"] <= 0.1
    assert d["bracket"][1] - d["bracket"][0] <= 1e-3 and d["bracket"][1] <= 0.1 + 1e-12
    assert isinstance(d["witness"]["event"], list)


def test_dist_prints_enclosures(capsys):
    d = run_json(capsys, "dist", "report_noisy_max1", "-p", "n=2", "--input", "0,1")
    probs = {e["output"]: [Fraction(v) for v in e["probability"]] for e in d["distribution"]}
    assert probs[0][1] < probs[1][0] and probs[0][0] + probs[1][0] <= 1 <= probs[0][1] + probs[1][1]


@pytest.mark.parametrize("argv, message", [
    (["verify", "laplace", "--input-range", "0..2"], "single outputs are not supported"),
    (["verify", "svt1", "--input-range", "5..1"], "LO..HI"),
    (["verify", "svt1", "--input-range", "a..b"], "LO..HI"),
    (["verify", "svt1", "-p", "n=3", "--input-range", "50..60"], "misses the domain"),
    (["search", "laplace", "--backend", "enumerate"], "continuous noise"),
])
def test_bad_input_is_one_line_and_status_2(capsys, argv, message):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1


@pytest.mark.slow
def test_exported_attack_on_a_continuous_mechanism_is_certified(capsys, tmp_path):
    """A DP-Sniper-style attack on the Laplace mechanism (a logistic score with a step feature)."""
    from hybrid.testers.testing import sniper_estimate
    from samplers import catalogue
    from samplers.compile import compile_sampler

    est = sniper_estimate(compile_sampler(catalogue.get("laplace").trace()), samples=50_000, seed=3).to_json()
    path = tmp_path / "attack.json"
    path.write_text(json.dumps(est))
    c = run_json(capsys, "certify", str(path))
    assert "attack" in c["witness"]["event"] and c["backend"] == "continuous"
    assert c["eps_lower"] <= 0.1  # never above the true level
    assert main(["certify", str(path)]) == 0
    assert "certified ratio >=" in capsys.readouterr().out
