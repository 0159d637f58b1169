"""CheckDP's benchmark in the catalogue: claims as CheckDP checks them, certified levels, proofs.

The certified lower bounds reach the true levels written in the docstrings (partialsum
eps, smartsum 2 eps) and refute the buggy twins' claims (badpartialsum: 2 eps > eps;
badsmartsum: a noiseless release, infinite); the gap and adaptive sparse vectors are
proved at eps by value-dependent alignments, and their buggy twins refuted.
"""

from __future__ import annotations

import dataclasses
import math
from fractions import Fraction

import pytest

from hybrid.searcher.budget import Budget
from hybrid.searcher.search import search
from samplers import catalogue
from samplers.errors import ParameterError
from verifiers.prover import alignment
from verifiers.prover.proof import Proof
from verifiers.prover.prove import prove

CHECKDP = {"partialsum": 0.1, "badpartialsum": 0.1, "smartsum": 0.2, "badsmartsum": 0.2}


def test_registered_with_their_claims():
    for name, claim in CHECKDP.items():
        mech = catalogue.get(name)
        assert mech.claimed_eps() == pytest.approx(claim) and mech.trace().continuous
    assert catalogue.get("smartsum").trace(n=6, T=4, M=3).arity == 5  # released steps 0..T
    with pytest.raises(ParameterError, match="CheckDP's assumptions"):
        catalogue.get("smartsum").params(M=1)


@pytest.mark.slow
@pytest.mark.parametrize("name, level, refuted", [
    ("partialsum", 0.1, False), ("badpartialsum", 0.2, True), ("smartsum", 0.2, False),
    ("badsmartsum", math.inf, True),
])
def test_certified_levels(name, level, refuted):
    r = search(catalogue.get(name), claimed_eps=CHECKDP[name], budget=Budget(samples=1_000_000))
    assert r.certified and r.refuted is refuted
    assert r.eps_lower <= level and (r.eps_lower == math.inf if level == math.inf else r.eps_lower > 0.99 * level)


ALIASES = {"sparsevector": "svt1", "numsparsevector": "numerical_svt", "badsparsevector1": "svt5",
           "badsparsevector2": "svt6", "badsparsevector3": "svt4"}


def test_checkdp_programs_the_catalogue_had_are_aliases():
    for theirs, ours in ALIASES.items():
        assert catalogue.get(theirs) is catalogue.get(ours)
    for name in ("gapsvt", "badgapsvt", "adaptivesvt", "badadaptivesvt", "shadowdp_prefixsum"):
        assert catalogue.get(name).claimed_eps() == pytest.approx(0.1)
    with pytest.raises(ParameterError, match="NN > 0"):
        catalogue.get("gapsvt").params(c=0)


@pytest.mark.parametrize("name, params", [
    ("gapsvt", {}), ("gapsvt", {"c": 2}), ("adaptivesvt", {}), ("adaptivesvt", {"c": 2}),
    ("shadowdp_prefixsum", {}), ("gapsvt", {"n": 20}), ("adaptivesvt", {"n": 20}),
    ("shadowdp_prefixsum", {"n": 20, "T": 19}),
])
def test_correct_programs_proved_at_their_claim(name, params):
    """Scales 2/eps, 4c/eps, 8c/eps are exact doubles at eps = 0.1, so the level is exactly 1/10 at
    c = 1; at c = 2 five queries cost less than the threshold's shift (gapsvt: n eps / (4c) = 1/16)."""
    params = {"n": 5, **params}
    proof = prove(catalogue.get(name).trace(**params), Fraction(0.1), rules=["alignment"])
    assert isinstance(proof, Proof) and proof.checked
    assert proof.eps == Fraction(1, 10) if params.get("c", 1) == 1 else proof.eps < Fraction(1, 10)


def _gap_proof():
    program = catalogue.get("gapsvt").trace(n=5)  # n eps / 4 > eps: the threshold must move
    proof = alignment.attempt(program, Fraction(0.1))
    assert isinstance(proof, Proof)
    return program, proof


def test_gapsvt_aligns_the_released_gap_by_one_plus_the_difference():
    """ShadowDP's annotation: threshold noise + 1, the released answer's noise + 1 - (q'[i] - q[i])
    (``d = x - x'``), every other draw unshifted; it is the only alignment within eps of the path
    answering the last of five queries (paths answering earlier are cheaper with the threshold kept)."""
    program, proof = _gap_proof()
    threshold = str(min(int(e) for e in proof.evidence["draws"]))
    last = next(p for p in proof.evidence["paths"] if len(p["decisions"]) == 5 and 1 in p["decisions"].values())
    shifts = dict(last["shifts"])
    assert shifts.pop(threshold) == {"const": "1", "d": {}}
    ((_, own),) = shifts.items()
    assert own == {"const": "1", "d": {"4": "1"}}


def test_checker_rejects_the_gap_proof_without_its_value_term():
    program, proof = _gap_proof()
    assert alignment.confirm(program, proof) is None
    constant = [dict(p, shifts={e: dict(s, d={}) for e, s in p["shifts"].items()}) for p in proof.evidence["paths"]]
    forged = dataclasses.replace(proof, evidence=dict(proof.evidence, paths=constant))
    assert alignment.check(program, forged) is not None
    assert alignment.confirm(program, forged) is not None


@pytest.mark.parametrize("name, level", [
    ("badgapsvt", Fraction(5, 40)), pytest.param("badadaptivesvt", Fraction(13, 80), marks=pytest.mark.slow),
])
def test_buggy_sparse_vectors_refuted_not_proved(name, level):
    """Not proved at the claim; the search's certified bound refutes it and meets the proved level
    (n eps / 4 and (3n - 2) eps / 8 at n = 5) within 1%."""
    mech = catalogue.get(name)
    claim = mech.claimed_eps(n=5)
    assert isinstance(prove(mech.trace(n=5), Fraction(claim), rules=["alignment"]), list)
    proof = prove(mech.trace(n=5), rules=["alignment"])
    assert isinstance(proof, Proof) and proof.eps == level
    r = search(mech, {"n": 5}, claimed_eps=claim, time_budget=60)
    assert r.certified and r.refuted and claim < 0.99 * float(level) < r.eps_lower <= r.eps_upper
