"""The Gaussian (eps, delta) rule: Balle-Wang's delta within 1e-9 (mpmath as reference),
no proof for path-dependent alignments, and a checker that rejects a wrong delta."""

from __future__ import annotations

import dataclasses
from fractions import Fraction

import mpmath
import pytest

from samplers import catalogue
from samplers.lang import all_differ, gaussian, ints, mechanism
from verifiers.prover import gaussian as rule
from verifiers.prover.proof import NoProof, Proof
from verifiers.prover.prove import prove


def balle_wang(d: float, sigma: float, eps: float) -> float:
    with mpmath.workdps(40):
        d, s, e = mpmath.mpf(d), mpmath.mpf(sigma), mpmath.mpf(eps)
        return float(mpmath.ncdf(d / (2 * s) - e * s / d) - mpmath.exp(e) * mpmath.ncdf(-d / (2 * s) - e * s / d))


@pytest.mark.parametrize("sigma,eps", [(1.0, 0.5), (1.0, 1.0), (2.0, 0.1), (0.5, 2.0)])
def test_gaussian_mechanism_delta_is_balle_wang(sigma, eps):
    program = catalogue.get("gaussian_mechanism").trace(sigma=sigma)
    proof = prove(program, Fraction(eps), rules=["gaussian"])
    assert isinstance(proof, Proof) and proof.checked
    assert abs(float(proof.delta) - balle_wang(1, sigma, eps)) < 1e-9
    assert float(proof.delta) >= balle_wang(1, sigma, eps) - 1e-15


@mechanism(domain=ints(lo=0, hi=5, size=2), neighbours=all_differ)
def gaussian_pair(x, *, sigma=1.0):
    return (x[0] + gaussian(sigma), x[1] + gaussian(2 * sigma))


def test_l2_sensitivity_combines_draws():
    proof = rule.attempt(gaussian_pair.trace(), Fraction(1))
    assert isinstance(proof, Proof)
    assert proof.evidence["sensitivity_squared"] == "5/4"  # 1/1 + 1/4 at d = (+-1, +-1)
    assert abs(float(proof.delta) - balle_wang(1.25 ** 0.5, 1, 1)) < 1e-9
    assert rule.check(gaussian_pair.trace(), proof) is None


def test_gaussian_noisy_max_gets_no_proof():
    found = rule.attempt(catalogue.get("gaussian_noisy_max").trace(), Fraction(1))
    assert isinstance(found, NoProof) and "path" in found.reason


def test_checker_rejects_a_smaller_delta():
    program = catalogue.get("gaussian_mechanism").trace()
    proof = rule.attempt(program, Fraction(1))
    assert rule.check(program, proof) is None
    assert rule.check(program, dataclasses.replace(proof, delta=proof.delta / 2)) is not None
    smaller = dict(proof.evidence, sensitivity_squared="1/4")
    assert rule.check(program, dataclasses.replace(proof, evidence=smaller)) is not None


def test_no_claim_or_no_gaussian():
    assert isinstance(rule.attempt(catalogue.get("gaussian_mechanism").trace(), None), NoProof)
    assert isinstance(rule.attempt(catalogue.get("laplace").trace(), Fraction(1)), NoProof)
