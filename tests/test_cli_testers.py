"""``dphybrid test`` and ``dphybrid estimate``: JSON contract and one-line errors (exit 2)."""

import json

import pytest

from hybrid.cli import main
from hybrid.testers.event_json import event_from_json


def _json(capsys, argv):
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_statdp_test_json(capsys):
    out = _json(capsys, ["test", "report_noisy_max3", "-p", "eps=0.7", "--eps", "0.7", "--samples", "100000",
                         "--seed", "3", "--json"])
    for key in ("eps_lower", "ratio", "witness", "certified", "backend", "stat_interval", "eps_upper",
                "proved_dp", "precision", "timings", "candidates", "p_value", "seed"):
        assert key in out
    assert out["violation"] is True and out["certified"] is False and out["seed"] == 3
    w = out["witness"]
    assert w["mechanism"] == "report_noisy_max3" and w["params"]["eps"] == 0.7
    event_from_json(w["event"])
    assert out["candidates"][0]["stat_interval"] == [0.7, "inf"]


def test_sniper_and_audit_methods(capsys):
    out = _json(capsys, ["test", "rr", "-p", "n=2", "--eps", "0.5", "--method", "sniper", "--samples", "200000",
                         "--json"])
    assert out["violation"] is True and 0.5 < out["eps_lower"] < 1.0987
    assert "attack" in out["witness"]["event"]
    out = _json(capsys, ["test", "rr", "-p", "n=2", "--eps", "2", "--method", "audit", "--samples", "20000",
                         "--json"])
    assert out["violation"] is False and 0 < out["eps_lower"] < 1.0987


def test_estimate_text_and_json(capsys):
    assert main(["estimate", "trunc_geom", "--samples", "200000"]) == 0
    text = capsys.readouterr().out
    assert "eps >= " in text and "not certified" in text
    out = _json(capsys, ["estimate", "report_noisy_max1", "-p", "eps=0.7", "--method", "statdp", "--samples",
                         "100000", "--precision", "0.1", "--json"])
    lo, hi = out["stat_interval"]  # one-sided: eps >= lo with the stated confidence
    assert 0 < lo == out["eps_lower"] and hi == "inf" and out["precision"] == 0.1 and out["confidence"] == 0.9
    b0, b1 = out["bisection"]
    assert b0 < b1


@pytest.mark.parametrize("argv,msg", [
    (["test", "nope", "--eps", "1"], "unknown mechanism"),
    (["test", "laplace", "--eps", "-1"], "--eps"),
    (["test", "laplace", "--eps", "1", "--samples", "0"], "--samples"),
    (["test", "laplace", "--eps", "1", "--alpha", "2"], "--alpha"),
    (["test", "laplace", "-p", "eps=abc", "--eps", "1"], "parameter eps"),
    (["test", "laplace", "-p", "zz=1", "--eps", "1"], "unknown parameter"),
    (["estimate", "laplace", "--confidence", "1"], "--confidence"),
    (["estimate", "opendp:nope"], "unknown library mechanism"),
])
def test_bad_input_one_line_exit_2(capsys, argv, msg):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert msg in err and err.count("\n") == 1


def test_argparse_errors_exit_2(capsys):
    assert main(["test", "laplace", "--method", "magic", "--eps", "1"]) == 2
    assert capsys.readouterr().err.count("\n") == 1
