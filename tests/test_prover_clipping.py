"""Clipping and clamping: a clamp, minimum, maximum or float64 table of queries (no noise in it)
is a function of the input, not a path decision, so clipped sums, means and histograms are
proved; every level is compared with a brute-force truth computed in numpy over all
neighbour pairs (for additive Laplace noise: max sum_k |f_k(x) - f_k(x')| / b_k)."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest

from samplers.lang import all_differ, clamp, ints, laplace, maximum, mechanism, minimum, one_differ, replace_one
from samplers.lang.neighbours import BY_NAME
from samplers.plain import statdp
from verifiers.prover import alignment, alignment_check
from verifiers.prover.proof import NoProof, Proof
from verifiers.prover.prove import prove


def clipped_mean(prng, queries, epsilon):
    q = np.clip(np.asarray(queries), 0, 5)
    return np.sum(q) / 4 + prng.laplace(scale=5 / (4 * epsilon))


def clipped_mean_narrow_noise(prng, queries, epsilon):
    q = np.clip(np.asarray(queries), 0, 5)
    return np.sum(q) / 4 + prng.laplace(scale=1 / (4 * epsilon))


def clipped_histogram(prng, queries, epsilon):
    q = np.clip(np.asarray(queries), 0, 5)
    return q + prng.laplace(scale=1 / epsilon, size=len(q))


def clipped_min(prng, queries, epsilon):
    q = np.minimum(np.asarray(queries), 5)
    return q[0] + prng.laplace(scale=5 / epsilon)


def min_of_two(prng, queries, epsilon):
    q = np.asarray(queries)
    return np.minimum(q[0], q[1]) + prng.laplace(scale=10 / epsilon)


def both_sides(prng, queries, epsilon):
    q = np.maximum(np.minimum(np.asarray(queries), 7), 2)
    return np.sum(q) + prng.laplace(scale=5 / epsilon)


def float_clip(prng, queries, epsilon):
    q = np.clip(np.asarray(queries, dtype=float), 0.5, 5.5)
    return np.sum(q) / 4 + prng.laplace(scale=5 / (4 * epsilon))


def tenths(prng, queries, epsilon):  # 0.1 * k is inexact: the builder tabulates it
    q = np.clip(np.asarray(queries), 0, 5) * 0.1
    return q + prng.laplace(scale=0.5 / epsilon, size=len(q))


def raw_minus_clip(prng, queries, epsilon):  # a raw query next to its clip: the intervals over-approximate
    q = np.asarray(queries)
    return q[0] - np.clip(q[0], 0, 5) + np.clip(q[1], 3, 4) + prng.laplace(scale=2 / epsilon)


FUNCTIONS = {f.__name__: f for f in (clipped_mean, clipped_mean_narrow_noise, clipped_histogram, clipped_min,
                                      min_of_two, both_sides, float_clip, tenths, raw_minus_clip)}
NOISE_FREE = {  # the part without noise, in numpy, and the Laplace scale of each output
    "clipped_mean": (lambda x: [np.sum(np.clip(x, 0, 5)) / 4], lambda e: [5 / (4 * e)]),
    "clipped_mean_narrow_noise": (lambda x: [np.sum(np.clip(x, 0, 5)) / 4], lambda e: [1 / (4 * e)]),
    "clipped_histogram": (lambda x: list(np.clip(x, 0, 5)), lambda e: [1 / e] * 3),
    "clipped_min": (lambda x: [min(x[0], 5)], lambda e: [5 / e]),
    "min_of_two": (lambda x: [min(x[0], x[1])], lambda e: [10 / e]),
    "both_sides": (lambda x: [np.sum(np.clip(x, 2, 7))], lambda e: [5 / e]),
    "float_clip": (lambda x: [np.sum(np.clip(np.asarray(x, dtype=float), 0.5, 5.5)) / 4], lambda e: [5 / (4 * e)]),
    "tenths": (lambda x: list(np.clip(np.asarray(x), 0, 5) * 0.1), lambda e: [0.5 / e] * 3),
    "raw_minus_clip": (lambda x: [x[0] - np.clip(x[0], 0, 5) + np.clip(x[1], 3, 4)], lambda e: [2 / e]),
}


def _traced(name: str, neighbours: str = "replace_one", size: int = 3):
    return statdp(FUNCTIONS[name], size=size, domain=(0, 10), neighbours=neighbours).trace(epsilon=0.5)


def _truth(name: str, neighbours: str, eps: float, n: int) -> Fraction:
    """max over neighbour pairs of the domain of sum_k |f_k(x) - f_k(x')| / b_k, exactly (float64 values)."""
    f, scales = NOISE_FREE[name]
    b = [Fraction(s) for s in scales(eps)]
    points = list(itertools.product(range(11), repeat=n))
    value = {p: [Fraction(float(v)) for v in f(np.array(p))] for p in points}
    rel = BY_NAME[neighbours]
    best = Fraction(0)
    for x in points:
        for xp in rel.of(x, _domain(n)):
            best = max(best, sum((abs(a - c) / s for a, c, s in zip(value[x], value[xp], b)), Fraction(0)))
    return best


def _domain(n: int):
    from samplers.lang.domain import Domain

    return Domain((0,) * n, (10,) * n)


def test_the_issue_s_clipped_mean_is_proved_at_its_true_level():
    proof = prove(_traced("clipped_mean", size=4), Fraction(1, 2))
    assert isinstance(proof, Proof) and proof.checked and proof.rule == "alignment"
    assert proof.eps == Fraction(1, 2) == _truth("clipped_mean", "replace_one", 0.5, 4)
    (path,) = proof.evidence["paths"]
    assert path["decisions"] == {}  # the clamps are no branches x and x' must share
    assert "(%4 - %4')" in path["alignment"][0]


def test_the_narrow_noise_variant_is_refuted_at_half_and_proved_at_its_truth():
    program = _traced("clipped_mean_narrow_noise", size=4)
    found = prove(program, Fraction(1, 2), rules=["alignment"])
    assert isinstance(found, list) and "within the claim 1/2" in found[0].reason
    proof = prove(program, rules=["alignment"])
    assert isinstance(proof, Proof) and proof.eps == Fraction(5, 2) == _truth("clipped_mean_narrow_noise",
                                                                             "replace_one", 0.5, 4)


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
@pytest.mark.parametrize("neighbours", ["replace_one", "one_differ", "all_differ"])
def test_proved_level_is_never_below_the_brute_force_truth(name, neighbours):
    program = _traced(name, neighbours)
    proof = prove(program, rules=["alignment"])
    assert isinstance(proof, Proof), proof
    truth = _truth(name, neighbours, 0.5, program.domain.size)
    assert proof.eps >= truth
    loose = LOOSE.get((name, neighbours))
    if loose is None:
        assert proof.eps == truth  # clamps, minima and maxima of queries are priced exactly
    else:
        assert proof.eps == loose > truth


# Sound but above the truth: q0 - clip(q0, 0, 5) moves by at most 5 (replace_one; 1 for all_differ)
# but is priced |d| + |clip's difference|; a float64 table by the width of its range.
LOOSE = {("raw_minus_clip", "replace_one"): Fraction(10, 4), ("raw_minus_clip", "all_differ"): Fraction(3, 4),
         ("tenths", "one_differ"): Fraction(1, 2), ("tenths", "all_differ"): Fraction(3, 2)}


@pytest.mark.parametrize("neighbours", ["replace_one", "one_differ"])
def test_a_clipped_histogram_is_proved_at_its_level_at_n_20(neighbours):
    program = statdp(clipped_histogram, size=20, domain=(0, 10), neighbours=neighbours).trace(epsilon=0.5)
    proof = prove(program, rules=["alignment"])
    # one bin moves, by at most min(5, the relation's change), over the scale 2
    assert isinstance(proof, Proof) and proof.eps == (Fraction(5, 2) if neighbours == "replace_one" else Fraction(1, 2))


def test_the_language_s_clamp_minimum_and_maximum():
    @mechanism(domain=ints(lo=0, hi=10, size=3), neighbours=replace_one)
    def clipped(x, *, eps=0.5):
        return (clamp(x[0], 0, 5) + minimum(x[1], 4) + laplace(5 / eps),
                maximum(x[2], 8) + laplace(2 / eps))

    proof = prove(clipped.trace(), rules=["alignment"])
    # replace one coordinate: x[0] or x[1] moves the first output by at most 5 (or 4), x[2] the second by 2
    assert isinstance(proof, Proof) and proof.eps == Fraction(1, 2)
    assert isinstance(prove(clipped.trace(eps=0.25), Fraction(1, 5), rules=["alignment"]), list)


def test_a_clamp_wider_than_the_sensitivity_costs_the_sensitivity():
    @mechanism(domain=ints(lo=0, hi=10, size=2), neighbours=one_differ)
    def wide(x, *, eps=0.5):
        return clamp(x[0], 0, 5) + clamp(x[1], -3, 30) + laplace(1 / eps)

    assert prove(wide.trace(), rules=["alignment"]).eps == Fraction(1, 2)

    @mechanism(domain=ints(lo=0, hi=10, size=2), neighbours=all_differ)
    def both(x, *, eps=0.5):
        return clamp(x[0], 0, 5) + clamp(x[1], -3, 30) + laplace(1 / eps)

    assert prove(both.trace(), rules=["alignment"]).eps == Fraction(1)


def test_a_branch_the_domain_never_takes_is_folded_before_the_prover():
    def negative_branch(prng, queries, epsilon):
        if queries[0] < 0:  # never for the domain 0..10: tracing folds it
            return prng.laplace(scale=1.0)
        return np.clip(queries[0], 0, 5) + prng.laplace(scale=5 / epsilon)

    program = statdp(negative_branch, size=2, domain=(0, 10), neighbours="replace_one").trace(epsilon=0.5)
    assert not any(n.op in ("lt", "le") for n in program.nodes)
    proof = prove(program, rules=["alignment"])
    assert isinstance(proof, Proof) and proof.eps == Fraction(1, 2)


def test_a_noise_free_comparison_that_chooses_noise_stays_a_decision():
    """x and x' may not take different branches between two noisy values: no proof, and why."""
    def chooses(prng, queries, epsilon):
        if queries[0] > 5:
            return queries[1] + prng.laplace(scale=1 / epsilon)
        return queries[1] + prng.laplace(scale=1 / epsilon) + 100.0

    program = statdp(chooses, size=2, domain=(0, 10), neighbours="one_differ").trace(epsilon=0.5)
    found = alignment.attempt(program, None)
    assert isinstance(found, NoProof) and "decision" in found.reason


def test_the_checker_rejects_a_shift_that_misreads_the_clamp():
    program = _traced("clipped_histogram")
    proof = alignment.attempt(program, None)
    assert isinstance(proof, Proof) and alignment_check.check(program, proof) is None
    eps, groups = alignment_check._read(proof)
    halved = [(dec, {e: (s[0], s[1], {k: c / 2 for k, c in s[2].items()}) for e, s in shifts.items()})
              for dec, shifts in groups[None]]
    assert alignment_check.check_runs(program, eps, {None: halved}) is not None
    assert alignment_check.check_z3(program, eps, halved) is not None
    noisy = next(i for i, n in enumerate(program.nodes) if n.op == "laplace")
    evidence = {**proof.evidence, "paths": [{**p, "shifts": {e: {**s, "w": {str(noisy): "1"}}
                                                              for e, s in p["shifts"].items()}}
                                             for p in proof.evidence["paths"]]}
    tampered = Proof(proof.rule, proof.mechanism, proof.params, proof.eps, evidence)
    assert "reads noise" in alignment_check.check(program, tampered)
