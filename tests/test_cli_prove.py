"""``dphybrid prove``, proof files re-checked by ``dphybrid certify``, and the proof in search results."""

from __future__ import annotations

import json
import math
import re
from fractions import Fraction

import pytest

from hybrid.cli import main
from hybrid.cli.certify import REJECTED
from hybrid.searcher.budget import Budget
from hybrid.searcher.proof_stage import ContradictoryBounds, attach
from hybrid.searcher.state import Search, SearchResult
from samplers import catalogue
from verifiers.prover.proof import Proof


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_prove_rr_at_any_size(capsys):
    code, out, _ = run(capsys, "prove", "rr", "-p", "n=1000", "--json")
    d = json.loads(out)
    assert code == 0 and d["proved"] and d["proof"]["ratio"] == "3" and d["proof"]["checked"]
    assert d["proof"]["eps_upper"] >= math.log(3)
    code, out, _ = run(capsys, "prove", "rr", "-p", "n=1000")
    assert code == 0 and "e^eps = 3" in out and "composition" in out


def test_prove_says_why_not(capsys):
    code, out, _ = run(capsys, "prove", "rr", "-p", "n=5", "--eps", "1")
    assert code == 0 and "no proof of 1-DP" in out and "not within the claim" in out
    code, out, _ = run(capsys, "prove", "noisy_max_geom", "-p", "m=30", "--json")
    d = json.loads(out)
    assert not d["proved"] and any("more than 20000 neighbour pairs" in n["reason"] and n["where"]
                                   for n in d["no_proof"])


def test_proof_file_round_trip(capsys, tmp_path):
    path = tmp_path / "proof.json"
    code, out, _ = run(capsys, "prove", "histogram_geom", "-p", "m=6", "--out", str(path))
    assert code == 0 and path.exists() and "proof written" in out
    code, out, _ = run(capsys, "certify", str(path), "--json")
    d = json.loads(out)
    assert code == 0 and d["confirmed"] and d["problem"] is None and d["rule"] == "composition"
    code, out, _ = run(capsys, "certify", str(path))
    assert code == 0 and "confirmed" in out
    # a proof overwrites a proof file of ours
    code, _, _ = run(capsys, "prove", "histogram_geom", "-p", "m=3", "--out", str(path))
    assert code == 0 and json.loads(path.read_text())["params"]["m"] == 3


def test_a_tampered_proof_is_rejected(capsys, tmp_path):
    path = tmp_path / "proof.json"
    run(capsys, "prove", "rr", "-p", "n=3", "--out", str(path))
    doc = json.loads(path.read_text())
    doc["evidence"]["classes"][0]["ratio"] = "2"
    doc["evidence"]["ratio"] = doc["ratio"] = "2"
    doc["eps"] = doc["eps_upper"] = math.log(2) + 1e-9
    path.write_text(json.dumps(doc))
    code, out, _ = run(capsys, "certify", str(path), "--json")
    d = json.loads(out)
    assert code == REJECTED and not d["confirmed"] and "re-sweep gives 3" in d["problem"]
    code, out, _ = run(capsys, "certify", str(path))
    assert code == REJECTED and "REJECTED" in out  # a proof that does not check is no success (it exited 0)


def test_an_approximate_proof_says_delta(capsys, tmp_path):
    """A Gaussian proof is (eps, delta): the text must say delta (it used to read "eps <= 1 proved
    for every input", a pure-DP claim the Gaussian mechanism never satisfies)."""
    path = tmp_path / "gauss.json"
    code, out, _ = run(capsys, "prove", "gaussian_mechanism", "--eps", "1", "--out", str(path))
    assert code == 0 and "eps <= 1" in out and "delta <= 0.126937" in out  # Balle-Wang at D = 1: 0.12693674
    code, out, _ = run(capsys, "certify", str(path))
    assert code == 0 and "confirmed" in out and "delta <= 0.126937" in out
    code, out, _ = run(capsys, "certify", str(path), "--json")
    assert json.loads(out)["delta"] == pytest.approx(0.12693673750664397)
    code, out, _ = run(capsys, "prove", "laplace", "--out", str(tmp_path / "lap.json"))
    assert "delta" not in out


def test_an_edited_gaussian_delta_is_rejected(capsys, tmp_path):
    """(9, 0)-DP is false for the Gaussian mechanism (test_prover_gaussian has the closed-form
    witness); a proof file whose delta was edited from ~1e-18 to 0 used to be confirmed."""
    path = tmp_path / "gauss.json"
    run(capsys, "prove", "gaussian_mechanism", "--eps", "9", "--out", str(path))
    doc = json.loads(path.read_text())
    assert 0 < doc["delta"] < 1e-15
    doc["delta"] = "0"
    path.write_text(json.dumps(doc))
    code, out, _ = run(capsys, "certify", str(path), "--json")
    d = json.loads(out)
    assert code == REJECTED and not d["confirmed"] and "below Balle and Wang" in d["problem"]


def _alignment_file(mechanism: str, params: dict, shifts: dict) -> dict:
    """A hand-made alignment proof of 1-DP, complete as a proof file must be."""
    return {"kind": "dphybrid-proof", "rule": "alignment", "mechanism": mechanism, "params": params, "eps": "1",
            "eps_upper": 1.0, "delta": "0", "checked": True, "solver": "by hand", "evidence": {
                "covers": "by hand", "neighbours": "one_differ", "draws": {}, "eps": "1",
                "paths": [{"decisions": {}, "shifts": shifts, "alignment": [], "cost": "1"}],
                "z3": {"conditions": 0, "distinct_queries": 0, "answers": []}}}


@pytest.mark.parametrize("change, says", [
    ({"rule": "composition", "evidence": {}}, "not a well-formed proof"),
    ({"rule": "telepathy"}, "unknown proof rule"),
    ({"mechanism": "no_such", "params": {}}, "unknown mechanism"),
    ({"mechanism": "rr", "params": {"n": "x"}}, "integer"),
    ({"eps": [1]}, "not a well-formed proof"),
    ("{not json", "not valid JSON"),
    ('{"hello": 1}', ""),
])
def test_bad_proof_files_are_one_line_errors(capsys, tmp_path, change, says):
    path = tmp_path / "bad.json"
    text = change if isinstance(change, str) else json.dumps(_alignment_file("laplace", {}, {}) | change)
    path.write_text(text)
    code, out, err = run(capsys, "certify", str(path))
    assert code == 2 and not out and len(err.strip().splitlines()) == 1 and says in err
    assert path.read_text() == text


def test_prove_out_never_overwrites_a_foreign_file(capsys, tmp_path):
    path = tmp_path / "notes.json"
    path.write_text('{"mine": true}')
    code, out, err = run(capsys, "prove", "rr", "--out", str(path))
    assert code == 2 and "refusing to overwrite" in err and len(err.strip().splitlines()) == 1
    assert path.read_text() == '{"mine": true}'
    code, _, err = run(capsys, "prove", "rr", "--out", str(tmp_path / "no" / "p.json"))
    assert code == 2 and "no folder" in err


def test_search_carries_the_proved_upper_and_the_proof(capsys):
    argv = ("search", "rr", "-p", "n=4", "--samples", "20000", "--no-global")
    code, out, _ = run(capsys, *argv, "--json")
    d = json.loads(out)
    assert code == 0 and d["certified"] and d["ratio"] == "3"
    assert d["proof"]["rule"] == "composition" and d["proof"]["ratio"] == "3"
    assert d["upper_source"] == "proof (composition rule)"
    assert d["eps_lower"] <= math.log(3) <= d["eps_upper"] == d["proof"]["eps_upper"]
    code, out, _ = run(capsys, *argv)
    flat = " ".join(out.split())  # the line may fold on a narrow terminal
    assert re.search(r"eps in \[1\.09861\d, 1\.09861\d\] \(gap \d+\.\d\d%; lower certified, upper by "
                     r"proof \(composition rule\)", flat), out


def test_an_exact_global_upper_is_kept_beside_the_proof():
    from hybrid.searcher.search import search

    r = search(catalogue.get("trunc_geom"), budget=Budget(samples=20_000), claimed_eps=0.7)
    assert r.upper_source == "global verification" and r.proof is not None
    assert r.eps_upper == pytest.approx(math.log(2)) and r.proved_dp is True


def test_an_upper_below_the_certified_lower_is_an_error():
    program = catalogue.get("rr").trace(n=2)
    s = Search(program, precision=1e-3, claimed_eps=None, seed=0, budget=Budget(), backend="auto",
               global_check=None, progress=lambda m: None)
    s.proof = Proof(rule="composition", mechanism="rr", params={}, eps=0.5, evidence={})
    result = SearchResult(mechanism="rr", params={}, certified=True, eps_lower=1.0986, ratio=3, witness=None,
                          backend="enumerate", precision=1e-3, seed=0)
    with pytest.raises(ContradictoryBounds, match="unsound"):
        attach(s, result)


@pytest.mark.slow
def test_svt4_interval(capsys):
    code, out, _ = run(capsys, "search", "svt4")
    assert code == 0
    # 1.75 times the double nearest 0.1 (the float parameter at its exact binary value)
    assert re.search(r"eps in \[0\.174[6-9]\d*, 0\.17500000000000002\]", out), out  # lower: 0.1746 or better


def test_search_says_why_there_is_no_proof():
    from hybrid.searcher.search import search

    d = search(catalogue.get("isvt1_geom"), budget=Budget(samples=20_000)).to_json()
    assert d["proof"] is None and d["eps_lower"] == "inf"
    assert any("not eps-DP for any eps" in n["reason"] and n["rule"] == "composition" for n in d["no_proof"])


@pytest.mark.slow
def test_a_statistical_result_can_carry_a_proved_upper():
    """No backend handles a product of continuous noise, yet the composition rule proves the program."""
    from hybrid.searcher.search import search
    from samplers.lang import flip, ints, laplace, mechanism, one_differ

    @mechanism(domain=ints(lo=0, hi=1, size=1), neighbours=one_differ)
    def odd(x, *, lam="1/4"):
        return (x[0] ^ flip(lam), laplace(1.0) * laplace(1.0))  # the second output reads no input

    r = search(odd, budget=Budget(samples=20_000))
    assert not r.certified and r.upper_source == "proof (composition rule)"
    assert r.eps_upper == pytest.approx(math.log(3)) and r.eps_upper >= math.log(3)


def test_an_approximate_proof_is_no_proved_upper(monkeypatch):
    """A proof with delta > 0 bounds no pure level: the search must not take its eps as eps_upper."""
    from hybrid.searcher.proof_stage import prove_stage
    from verifiers.prover import gaussian

    program = catalogue.get("gaussian_mechanism").trace()
    approximate = gaussian.attempt(program, Fraction(1))
    assert isinstance(approximate, Proof) and approximate.delta > 0
    monkeypatch.setattr("verifiers.prover.prove.prove", lambda *a, **k: approximate)
    s = Search(program, precision=1e-3, claimed_eps=None, seed=0, budget=Budget(), backend="auto",
               global_check=None, progress=lambda m: None)
    prove_stage(s, program)
    assert s.proof is None and s.proved_upper is None and "delta" in s.no_proof[0].reason


@pytest.mark.parametrize("mechanism, params, shifts", [
    ("gaussian_mechanism", {"sigma": 1.0}, {"1": {"const": "0", "d": {"0": "1"}}}),
    ("rr", {"n": 2}, {}),
])
def test_an_alignment_file_for_other_noise_is_rejected(capsys, tmp_path, mechanism, params, shifts):
    """A hand-made alignment proof of pure 1-DP for the Gaussian mechanism (no pure DP at any eps:
    P(Z > 11) / P(Z > 12) > e^9 for x = 1 against x' = 0) used to be confirmed: the checker costed
    a Gaussian shift like a Laplace one.  Discrete noise made the checker crash."""
    assert math.erfc(11 / math.sqrt(2)) > math.exp(9) * math.erfc(12 / math.sqrt(2))
    path = tmp_path / "fake.json"
    path.write_text(json.dumps(_alignment_file(mechanism, params, shifts)))
    code, out, _ = run(capsys, "certify", str(path), "--json")
    d = json.loads(out)
    assert code == REJECTED and not d["confirmed"] and "no pure-DP cost" in d["problem"]
