"""``dphybrid verify`` and ``dphybrid accuracy``: JSON contract and bad input."""

import json

import pytest

from hybrid.cli import main


def run_json(capsys, *argv, code=0):
    assert main([*argv, "--json"]) == code
    return json.loads(capsys.readouterr().out)


def test_verify_global_epsilon_json(capsys):
    d = run_json(capsys, "verify", "noisy_max_geom", "-p", "m=3", "--backend", "bdd")
    assert d["ratio"] == "24/7" and d["certified"] and d["backend"] == "bdd"
    assert d["bdd_library"] == "dd.cudd" and d["bdd_nodes"] > 0
    assert d["eps_lower"] <= d["eps_upper"] and abs(d["eps_lower"] - 1.2321436812926323) < 1e-12
    w = d["witness"]
    assert set(w) == {"mechanism", "params", "x", "x_prime", "event"}
    assert w["mechanism"] == "noisy_max_geom" and w["params"]["m"] == 3 and len(w["event"]) == 1
    assert {"timings", "precision", "proved_dp", "eps_upper"} <= set(d)


def test_verify_with_eps_proves_or_refutes(capsys):
    d = run_json(capsys, "verify", "rr", "-p", "n=3", "-p", "lam=1/4", "--eps", "1.1")
    assert d["proved_dp"] is True and d["ratio"] == "3"
    d = run_json(capsys, "verify", "rr", "-p", "n=3", "-p", "lam=1/4", "--eps", "1.0986")
    assert d["proved_dp"] is False and d["witness"]["x"] != d["witness"]["x_prime"]


def test_verify_precision_bisects_the_decision_oracle(capsys):
    d = run_json(capsys, "verify", "noisy_max_geom", "--precision", "0.001")
    b = d["bisection"]
    assert b["lo"] <= 1.3725010 <= b["hi"] and b["hi"] - b["lo"] <= 0.001
    assert d["ratio"] == "288/73"


def test_verify_infinite_level(capsys):
    d = run_json(capsys, "verify", "rr", "-p", "n=2", "-p", "lam=0", "--eps", "50")
    assert d["ratio"] == "inf" and d["eps_lower"] == "inf" and d["proved_dp"] is False
    assert main(["verify", "rr", "-p", "n=2", "-p", "lam=0", "--eps", "inf"]) == 2  # no claim to prove
    assert "finite non-negative" in capsys.readouterr().err


def test_verify_budget_exceeded_is_a_result(capsys):
    d = run_json(capsys, "verify", "noisy_max_geom", "--backend", "bdd", "--node-budget", "40", code=3)
    assert d["status"] == "budget_exceeded" and not d["certified"] and d["limit"] == {"bdd_nodes": 40}


def test_verify_text_output(capsys):
    assert main(["verify", "above_threshold_geom", "-p", "L=2", "--eps", "1"]) == 0
    out = capsys.readouterr().out
    assert "e^eps = 4" in out and "violated" in out


def test_accuracy_json(capsys):
    d = run_json(capsys, "accuracy", "rr_count", "-p", "n=2", "--alpha", "1")
    assert d["probability"] == "24/25" and sorted(d["worst_inputs"]) == [[0, 0], [1, 1]]
    d = run_json(capsys, "accuracy", "rr_count", "-p", "n=8", "--beta", "1/10", "--backend", "bdd")
    assert d["alpha"] == 3 and d["probability"] == "73728/78125"


@pytest.mark.parametrize("argv", [
    ["verify", "no_such_mechanism"],
    ["verify", "rr", "-p", "lam=2"],
    ["verify", "rr", "-p", "bogus=1"],
    ["verify", "rr", "--eps", "-1"],
    ["verify", "rr", "--precision", "0"],
    ["verify", "rr", "--backend", "magic"],
    ["verify", "laplace"],
    ["verify", "rr", "--node-budget", "0"],
    ["accuracy", "rr_count", "--alpha", "1/2"],
    ["accuracy", "rr_count", "--beta", "2"],
    ["accuracy", "rr_count"],
])
def test_bad_input_is_one_line_and_status_2(capsys, argv):
    with pytest.raises(SystemExit) as e:
        raise SystemExit(main(argv))
    assert e.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err and len(err.splitlines()) == 1


def test_verify_refuses_astronomical_sweeps(capsys):
    d = run_json(capsys, "verify", "rr", "-p", "n=30", "--backend", "bdd", code=3)
    assert d["status"] == "budget_exceeded" and d["limit"] == {"domain_points": 10**7}
