"""Path templates: one shift for all paths proves loops with 2^n paths at their true level,
agrees with the per-path proofs at small n, and its proofs are re-checked (tampering caught)."""

from __future__ import annotations

import dataclasses
from fractions import Fraction

import pytest

from samplers import catalogue
from verifiers.prover import alignment
from verifiers.prover.alignment_check import cost_bound
from verifiers.prover.neighbourhood import differences
from verifiers.prover.paths import noise_laws
from verifiers.prover.proof import Proof
from verifiers.prover.prove import prove
from verifiers.prover.template import NoTemplate, template, unchanged

# (mechanism, n, the true level at eps = 0.1 in units of the exact scales: n / b)
AT_SCALE = [("prefix_sum", 20), ("report_noisy_max3", 20), ("svt6", 20)]


def _program(name: str, **params):
    return catalogue.get(name).trace(**params)


def _n_over_b(program) -> Fraction:
    """``sum_e 1 / b_e`` over the draws added to the inputs (the level the issue gives: n eps / 2, n eps)."""
    laws = noise_laws(program)
    return sum((1 / b for e, (_, b) in laws.items()), Fraction(0)) - (
        1 / laws[min(laws)][1] if program.name == "svt6" else 0)  # svt6's threshold draw is not shifted


@pytest.mark.parametrize("name,n", AT_SCALE)
def test_proved_at_the_true_level_for_n_20(name, n):
    program = _program(name, n=n, eps=0.1)
    proof = prove(program, rules=["alignment"])
    assert isinstance(proof, Proof) and proof.checked
    assert proof.eps == _n_over_b(program)
    assert abs(float(proof.eps) - {"prefix_sum": 2.0}.get(name, 1.0)) < 1e-9
    assert proof.evidence["paths"][0]["decisions"] == {}
    assert alignment.confirm(program, proof) is None


@pytest.mark.parametrize("name", ["prefix_sum", "report_noisy_max3", "svt6", "svt3"])
def test_template_agrees_with_the_per_path_proof_at_small_n(name):
    program = _program(name, n=4, eps=0.1)
    found, level, _ = alignment.synthesise(program, None)
    shifts, cost = template(program, noise_laws(program), differences(program))
    assert cost == level and shifts


def test_a_claim_below_the_template_is_not_proved_by_it():
    program = _program("report_noisy_max3", n=20, eps=0.1)
    found = alignment.attempt(program, _n_over_b(program) - Fraction(1, 1000))
    assert not isinstance(found, Proof)


def test_no_template_where_a_noise_free_value_meets_noise():
    program = _program("svt5", n=5)
    with pytest.raises(NoTemplate, match="reads %0"):
        template(program, noise_laws(program), differences(program))


def _tampered(proof: Proof, shifts: dict, cost: str | None = None) -> Proof:
    path = dict(proof.evidence["paths"][0], shifts=shifts)
    if cost is not None:
        path["cost"] = cost
    return dataclasses.replace(proof, evidence={**proof.evidence, "paths": [path]})


def test_a_tampered_template_is_rejected():
    program = _program("prefix_sum", n=6, eps=0.1)
    proof = alignment.attempt(program, None)
    assert isinstance(proof, Proof) and proof.evidence["paths"][0]["decisions"] == {}
    shifts = dict(proof.evidence["paths"][0]["shifts"])
    dropped = {e: s for e, s in shifts.items() if e != min(shifts)}  # one draw left unshifted
    bad = _tampered(proof, dropped)
    assert alignment.check(program, bad) is not None
    assert alignment.confirm(program, bad) is not None
    assert "changes by" in unchanged(program, {})  # the walk the confirmation runs
    cheap = _tampered(proof, shifts, cost="0")  # the right shifts, a cost below theirs
    assert "cost" in alignment.confirm(program, cheap)
    low = dataclasses.replace(proof, eps=Fraction(1, 10), evidence={**proof.evidence, "eps": "1/10"})
    assert alignment.check(program, low) is not None


def test_cost_bound_of_the_checker():
    program = _program("svt1", n=3, eps=0.1)  # all_differ: each shift bounded over the box
    laws = noise_laws(program)
    e = max(laws)
    assert cost_bound(program, {e: (Fraction(1), {2: Fraction(-1)}, {})}) == 2 / laws[e][1]
    assert cost_bound(program, {e: (Fraction(0), {}, {1: Fraction(1)})}) is None  # reads a derived value
