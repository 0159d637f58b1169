"""Soundness of alignment proofs against an independent exact reference: random small
programs with Laplace / exponential noise and finite outputs; whenever the prover proves
eps, the continuous backend's certified lower bound of the global level (rigorous
enclosures, over a small box of inputs) must not exceed it."""

from __future__ import annotations

import math
import random

import pytest

from samplers.lang import (
    BOTTOM,
    all_differ,
    argmax,
    exponential,
    ints,
    ite,
    laplace,
    mechanism,
    one_differ,
)
from verifiers.continuous.backend import ContinuousBackend
from verifiers.prover.proof import Proof
from verifiers.prover.prove import prove


def random_program(seed: int):
    rng = random.Random(seed)
    n = rng.choice([1, 2])
    rel = rng.choice([one_differ, all_differ])
    shape = rng.choice(["compare", "argmax", "cutoff", "count"])
    scales = [rng.choice([1, 2, 4]) for _ in range(4)]
    one_sided = rng.random() < 0.3
    threshold = rng.choice([0, 1])

    @mechanism(domain=ints(lo=0, hi=1, size=n), neighbours=rel)
    def prog(x, *, s=tuple(scales)):
        def noise(k):
            return exponential(s[k]) if one_sided and k else laplace(s[k])

        rho = threshold + noise(0)
        vals = [x[i] + noise(i + 1) for i in range(n)]
        if shape == "compare":
            return tuple(v >= rho for v in vals)
        if shape == "argmax":
            return argmax(vals + [rho])
        if shape == "cutoff":
            first = vals[0] >= rho
            return (first, ite(first, BOTTOM, vals[-1] >= rho))
        count = sum(v >= rho for v in vals)
        return count >= rng.choice([1, 2])

    return prog.trace()


@pytest.mark.parametrize("seed", range(12))
def test_proved_level_is_above_the_certified_lower_bound(seed):
    program = random_program(seed)
    proof = prove(program, rules=["alignment"])
    if not isinstance(proof, Proof):
        pytest.skip(f"no proof: {proof[0].reason}")
    level = ContinuousBackend(program).global_epsilon(precision=1e-3)
    lower = math.log(level.ratio.lo) if level.ratio.lo > 0 else 0.0
    assert lower <= float(proof.eps) + 1e-12
