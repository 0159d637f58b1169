"""``dphybrid pufferfish``: results, JSON, and one-line errors with exit status 2."""

import json

import pytest

pytest.importorskip("z3")

from hybrid.cli import main  # noqa: E402


def _json(capsys, *argv):
    assert main(list(argv) + ["--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_ratio_bound(capsys):
    out = _json(capsys, "pufferfish", "geometric_contagious", "--c", "2")
    assert out["status"] == "violated" and out["backend"] == "smt" and out["c"] == "2"
    w = out["witness"]
    assert w["ratio"] == "4" and w["secrets"] == ["John == 1", "John == 0"] and w["event"] in ([0], [2])
    assert 0 < eval(w["params"]["p"]) < 1  # noqa: S307 (a "p/q" string from our own JSON)
    assert _json(capsys, "pufferfish", "geometric_contagious", "--c", "4")["status"] == "holds"


def test_eps_uses_the_sound_bracket(capsys):
    # e^(ln 2 as a float) is just below 2: the exact ratio 2 violates it, and 0.7 holds
    assert _json(capsys, "pufferfish", "geometric_dp", "--eps", "0.6931471805599453")["status"] == "violated"
    out = _json(capsys, "pufferfish", "geometric_dp", "--eps", "0.7")
    assert out["status"] == "holds" and out["witness"] is None


def test_dp_witness_has_inputs(capsys):
    out = _json(capsys, "pufferfish", "noisy_max5_witness", "--c", "3")
    w = out["witness"]
    assert w["x"] == [1, 1, 1, 1, 1] and w["x_prime"] == [0, 2, 2, 2, 2] and w["event"] == [1]
    assert w["ratio"] == "288/73" and w["mechanism"] == "noisy_max_geom"


def test_lengths_and_largest_k(capsys):
    out = _json(capsys, "pufferfish", "above_threshold_loop", "--eps", "2", "--k", "12")
    assert out["status"] == "violated" and out["largest_k_proved"] == out["k"] - 1


def test_fixed_parameter(capsys):
    out = _json(capsys, "pufferfish", "noisy_max_contagious", "--c", "24/7", "-p", "p=1/100")
    assert out["status"] == "holds"


def test_bisection(capsys):
    out = _json(capsys, "pufferfish", "geometric_dp", "--precision", "0.01")
    assert out["status"] == "bracketed" and out["eps_lower"] <= 0.6931471805599453 <= out["eps_upper"]
    assert out["ratio"] == "2"


def test_text_output(capsys):
    assert main(["pufferfish", "noisy_max_contagious", "--c", "2"]) == 0
    text = capsys.readouterr().out
    assert "violated" in text and "parameters: p = " in text and "output 1" in text
    assert main(["pufferfish", "--list"]) == 0
    assert "geometric_contagious" in capsys.readouterr().out


@pytest.mark.parametrize("argv,match", [
    (["pufferfish", "no_such_model", "--c", "2"], "no model file"),
    (["pufferfish", "geometric_dp"], "one of --eps, --c or --precision"),
    (["pufferfish", "geometric_dp", "--c", "two"], "not a number"),
    (["pufferfish", "geometric_dp", "--eps", "-1"], "non-negative"),
    (["pufferfish", "geometric_dp", "--c", "2", "--k", "0"], "positive integer"),
    (["pufferfish", "geometric_contagious", "--c", "2", "-p", "p=3/2"], "outside its range"),
    (["pufferfish", "geometric_contagious", "--c", "2", "-p", "q=1/2"], "no parameter 'q'"),
    (["pufferfish", "noisy_max_contagious", "--c", "2", "--encoding", "symbolic"], "needs a constant model"),
])
def test_errors_are_one_line(capsys, argv, match):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert match in err and err.count("\n") == 1


def test_bad_model_file(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert main(["pufferfish", str(bad), "--c", "2"]) == 2
    assert "not valid JSON" in capsys.readouterr().err
