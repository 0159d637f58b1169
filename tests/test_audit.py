"""Auditing by guessing games: REFERENCE.md values, classic and one-run audits."""

import math

import numpy as np
import pytest

from hybrid.testers.audit import audit_bound, classic_audit, max_certifiable, one_run_audit
from hybrid.inputs import Pair
from samplers import catalogue
from samplers.blackbox import VectorisedBlackBox
from samplers.compile import compile_sampler
from samplers.errors import DomainError, ParameterError
from samplers.lang.domain import Domain
from samplers.lang.neighbours import all_differ, replace_one


@pytest.mark.parametrize("v,r,want", [(100, 100, 3.492965), (90, 100, 1.630823), (80, 100, 0.958392),
                                      (50, 100, 0.0)])
def test_reference_values(v, r, want):
    assert audit_bound(v, r, 0.05) == pytest.approx(want, abs=5e-7)


def test_max_certifiable():
    assert max_certifiable(100, 0.05) == pytest.approx(3.492965, abs=5e-7)
    assert audit_bound(100, 100, 0.05) == pytest.approx(max_certifiable(100, 0.05))
    assert max_certifiable(10, 0.05) < max_certifiable(1000, 0.05)


def _rr_box(n: int, lam: float) -> VectorisedBlackBox:
    def rr(x, k, rng):
        return x[None, :] ^ (rng.random((k, len(x))) < lam)

    return VectorisedBlackBox(rr, domain=Domain((0,) * n, (1,) * n), neighbours=replace_one, name="rr_numpy")


def test_one_run_audit_is_valid_and_informative():
    """lam = 1/10: exact eps = ln 9 = 2.197; at beta = 0.001 a bound above it has probability
    <= 0.1% per seed, so these 20 fixed seeds pass but for a 2% chance (they do)."""
    box = _rr_box(1000, 0.1)
    bounds = [one_run_audit(box, beta=0.001, seed=s).eps_lower for s in range(20)]
    assert max(bounds) <= math.log(9)
    assert min(bounds) > 1.5  # about 900 of 1000 guesses are right
    r = one_run_audit(box, seed=0, guesses=100)
    assert r.guesses == 100 and r.kind == "one-run" and r.eps_lower <= r.max_certifiable


def test_one_run_audit_on_a_compiled_mechanism():
    r = one_run_audit(compile_sampler(catalogue.get("rr"), n=25, lam="1/10"), seed=4)
    assert 0 <= r.eps_lower <= math.log(9) and r.guesses == 25


def test_one_run_audit_checks_its_premise():
    with pytest.raises(DomainError):  # with all_differ, including a canary at 0..5 is not a neighbour step
        one_run_audit(VectorisedBlackBox(lambda x, k, rng: np.zeros((k, 3)), domain=Domain((0,) * 3, (5,) * 3),
                                         neighbours=all_differ), seed=0)
    with pytest.raises(ParameterError):
        one_run_audit(_rr_box(10, 0.1), canaries=[0, 0])
    with pytest.raises(ParameterError):
        one_run_audit(_rr_box(10, 0.1), guesses=11)


def test_classic_audit_on_randomized_response():
    box = _rr_box(1, 0.25)  # e^eps = 3, a right guess has probability 3/4
    r = classic_audit(box, Pair((1,), (0,)), lambda out: out[:, 0] - 0.5, runs=20_000, beta=0.001, seed=1)
    assert r.eps_lower <= math.log(3) and r.eps_lower > 0.9 * math.log(3) - 0.1
    assert abs(r.correct / r.guesses - 0.75) < 0.02
