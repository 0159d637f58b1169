"""(eps, delta) claims: delta at a claimed eps proved and certified by ``search``, ``--delta`` in
``search``, ``prove`` and ``suite``, and the suite table's delta columns.

Balle and Wang's delta of the Gaussian mechanism is computed here independently with mpmath
(50 digits): the proved delta must lie within 1e-9 above it, the certified one below it.
"""

from __future__ import annotations

import json
import math
from fractions import Fraction

import mpmath
import pytest

from hybrid.cli import main
from hybrid.searcher.budget import Budget
from hybrid.searcher.search import search
from hybrid.suites.report import markdown, table
from hybrid.suites.suite_file import SuiteError, parse_suite
from samplers import catalogue
from samplers.errors import ParameterError
from verifiers.prover.proof import NoProof, Proof
from verifiers.prover.prove import prove

FEW = 20_000  # the testers only propose here: a small sample budget keeps each search near a second


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def balle_wang(sensitivity, sigma, eps) -> mpmath.mpf:
    """delta(eps) = Phi(D/2s - eps s/D) - e^eps Phi(-D/2s - eps s/D) (Balle and Wang 2018, Theorem 8)."""
    with mpmath.workdps(50):
        d, s, e = mpmath.mpf(sensitivity), mpmath.mpf(sigma), mpmath.mpf(eps)
        return mpmath.ncdf(d / (2 * s) - e * s / d) - mpmath.exp(e) * mpmath.ncdf(-d / (2 * s) - e * s / d)


def _search(**kw):
    return search("gaussian_mechanism", budget=Budget(samples=FEW), **kw).to_json()


def test_search_gaussian_mechanism_at_a_claimed_eps_reports_delta_proved_and_certified(capsys):
    """The issue's target: ``search gaussian_mechanism --claimed-eps 1`` prints delta(1) proved (Balle and
    Wang within 1e-9) and a certified lower delta (below the truth, above 0)."""
    code, out, _ = run(capsys, "search", "gaussian_mechanism", "--claimed-eps", "1", "--samples", str(FEW), "--json")
    d = json.loads(out)
    truth = balle_wang(1, 1, 1)  # sigma 1, neighbours one apart
    assert code == 0 and d["claimed_delta"] is None
    assert 0 <= d["delta_upper"] - truth <= 1e-9 and d["delta_upper_source"] == "proof (gaussian rule)"
    assert d["delta_proof"]["rule"] == "gaussian" and d["delta_proof"]["checked"]
    assert 0 < d["delta_lower"] <= truth and d["delta_lower"] <= d["delta_upper"]
    assert truth - d["delta_lower"] < 1e-6  # the best threshold event reaches the analytic optimum
    assert d["delta_witness"]["x"] == [1] and d["delta_witness"]["event"].startswith("output >= ")
    assert not any(n["rule"] == "gaussian" for n in d["no_proof"])  # it proved, at the claim
    code, out, _ = run(capsys, "search", "gaussian_mechanism", "--claimed-eps", "1", "--samples", str(FEW))
    out = " ".join(out.split())  # rich wraps at the width the environment sets (COLUMNS)
    assert code == 0 and "delta(1) in [0.1269367375, 0.1269367376] (lower certified, upper by proof (gaussian rule))" in out
    assert "delta witness: x = [1], x' = [0], event: output >= " in out
    assert "none was given" not in out


def test_a_delta_claim_is_refuted_above_the_truth_and_proved_below_it(capsys):
    refuted = _search(claimed_eps=1.0, claimed_delta=0.1)  # delta(1) = 0.12694 > 0.1
    assert refuted["refuted"] is True and refuted["proved_dp"] is False and refuted["claimed_delta"] == 0.1
    assert refuted["delta_lower"] > 0.1
    proved = _search(claimed_eps=1.0, claimed_delta=Fraction(1, 5))
    assert proved["refuted"] is False and proved["proved_dp"] is True and proved["delta_upper"] <= 0.2
    # at a rational eps the certified delta is taken just above it and the proof just below: both sound
    seventh = _search(claimed_eps=float(Fraction(7, 10)), claimed_delta="1/10")
    assert seventh["delta_lower"] <= balle_wang(1, 1, Fraction(7, 10)) <= seventh["delta_upper"]
    code, out, _ = run(capsys, "search", "gaussian_mechanism", "--claimed-eps", "1", "--delta", "1/10",
                       "--samples", str(FEW))
    assert code == 0 and "claim (eps, delta) = (1, 0.1): refuted (certified delta >= 0.1269367375)" in out
    code, out, _ = run(capsys, "search", "gaussian_mechanism", "--claimed-eps", "1", "--delta", "0.2",
                       "--samples", str(FEW))
    assert code == 0 and "claim (eps, delta) = (1, 0.2): proved (delta <= 0.1269367376)" in out


def test_a_delta_claim_on_discrete_noise_is_refuted_by_the_exact_delta():
    """Randomized response at eps 1 < ln 3: the witness pair's exact delta refutes a small delta, and the
    same certified delta does not refute a claim above it."""
    from verifiers.backends import get_backend

    r = search("rr", claimed_eps=1.0, claimed_delta=0.01, budget=Budget(samples=FEW)).to_json()
    program = catalogue.get("rr").trace()
    w = r["delta_witness"]
    lo, hi = get_backend(program, "enumerate").pair_delta(tuple(w["x"]), tuple(w["x_prime"]), 1.0)
    assert r["refuted"] is True and 0.01 < r["delta_lower"] <= hi and r["delta_lower"] >= float(lo) - 1e-12
    assert r["delta_upper"] is None and r["proved_dp"] is None  # no rule proves delta for finite noise
    higher = search("rr", claimed_eps=1.0, claimed_delta=0.5, budget=Budget(samples=FEW)).to_json()
    assert higher["refuted"] is False


def test_prove_with_a_claimed_delta(capsys):
    program = catalogue.get("gaussian_mechanism").trace()
    assert isinstance(prove(program, Fraction(1), delta=Fraction(1, 5)), Proof)
    found = prove(program, Fraction(1), delta=0.1)
    assert isinstance(found, list) and all(isinstance(n, NoProof) for n in found)
    assert any(n.rule == "gaussian" and "not the claimed delta 0.1" in n.reason for n in found)
    code, out, _ = run(capsys, "prove", "gaussian_mechanism", "--eps", "1", "--delta", "0.1")
    assert code == 0 and "no proof of (1, 0.1)-DP" in out and "proves delta <= 0.1269367375066" in out
    code, out, _ = run(capsys, "prove", "gaussian_mechanism", "--eps", "1", "--delta", "1/5", "--json")
    d = json.loads(out)
    assert code == 0 and d["proved"] and d["delta"] == 0.2 and d["proof"]["delta"] <= 0.2


RANGE = "--delta: must be a number in [0, 1]"


@pytest.mark.parametrize("argv, says", [
    (["search", "gaussian_mechanism", "--claimed-eps", "1", "--delta", "nan"], RANGE),
    (["search", "gaussian_mechanism", "--claimed-eps", "1", "--delta", "inf"], RANGE),
    (["search", "gaussian_mechanism", "--claimed-eps", "1", "--delta", "-0.1"], RANGE),
    (["search", "gaussian_mechanism", "--claimed-eps", "1", "--delta", "3/2"], RANGE),
    (["search", "gaussian_mechanism", "--delta", "0.1"], "--delta needs --claimed-eps"),
    (["prove", "gaussian_mechanism", "--eps", "1", "--delta", "1.5"], RANGE),
    (["prove", "gaussian_mechanism", "--eps", "1", "--delta=-inf"], RANGE),
    (["prove", "gaussian_mechanism", "--delta", "0.1"], "--delta needs --eps"),
    (["suite", "discrete", "--delta", "NaN"], RANGE),
    (["suite", "discrete", "--delta", "2"], RANGE),
])
def test_bad_deltas_are_one_line_exit_2(capsys, argv, says):
    try:
        code = main(argv)
    except SystemExit as e:  # argparse's refusal
        code = e.code
    _, err = capsys.readouterr()
    assert code == 2 and len(err.strip().splitlines()) == 1 and says in err


@pytest.mark.parametrize("kw", [dict(claimed_eps=1.0, claimed_delta=math.nan),
                                dict(claimed_eps=1.0, claimed_delta=math.inf),
                                dict(claimed_eps=1.0, claimed_delta=-0.5),
                                dict(claimed_eps=1.0, claimed_delta=1.5),
                                dict(claimed_eps=1.0, claimed_delta="x"),
                                dict(claimed_delta=0.1)])
def test_bad_deltas_from_the_api_are_parameter_errors(kw):
    with pytest.raises(ParameterError, match="delta"):
        search("gaussian_mechanism", **kw)


def test_bad_deltas_in_prove_and_suites():
    program = catalogue.get("gaussian_mechanism").trace()
    with pytest.raises(ParameterError, match="delta"):
        prove(program, Fraction(1), delta=math.nan)
    with pytest.raises(ParameterError, match="needs a claimed eps"):
        prove(program, None, delta=0.1)
    for entry, message in (({"claimed_eps": 1.0, "claimed_delta": 2.0}, "in \\[0, 1\\]"),
                           ({"claimed_delta": 0.1}, "needs claimed_eps"),
                           ({"claimed_eps": 1.0, "claimed_delta": True}, "must be a number")):
        with pytest.raises(SuiteError, match=message):
            parse_suite({"entry": [{"mechanism": "gaussian_mechanism", **entry}]}, "t")


def test_suite_rows_and_the_report_table_gain_the_delta_columns():
    suite = parse_suite({"entry": [{"mechanism": "gaussian_mechanism", "claimed_eps": 1.0, "claimed_delta": "1/10"},
                                   {"mechanism": "rr", "claimed_eps": 1.0}]}, "t")
    gauss, rr = suite.entries
    assert gauss.claimed_delta == "1/10" and gauss.id == "gaussian_mechanism claim=1 delta=1/10"
    assert rr.with_overrides(delta=0.2).claimed_delta == 0.2  # --delta: beside every claimed eps
    rows = []
    for entry in (gauss, rr):
        result = search(entry.resolve(), entry.params, claimed_eps=entry.claimed_eps,
                        claimed_delta=entry.claimed_delta, budget=Budget(samples=FEW)).to_json()
        rows.append({"entry": entry.to_json(), "status": "ok", "result": result, "elapsed": 1.0})
    cols, cells = table(rows)
    assert cols[3:5] == ["claimed delta", "delta at claimed eps"]
    assert cells[0]["claimed delta"] == "1/10" and cells[0]["delta at claimed eps"] == "[0.126936, 0.126937]"
    assert cells[0]["verdict"] == "refuted (certified)" and "delta at claimed eps" not in cells[1]
    assert "| 1/10 | [0.126936, 0.126937] |" in markdown(rows)
    cols, _ = table(rows[1:])  # no row reports delta: the table is as before
    assert "claimed delta" not in cols
