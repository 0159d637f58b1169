"""Plain numpy mechanisms from a soundness audit of the per-n prover, each with its true level
worked out by hand: a proof may be loose, never below the truth.

Laplace noise of scale b costs |shift| / b; the levels below are attained (a pair and an event
reach them), so a proof under them would be false:

* a running max written as CheckDP writes it (the normal form's argmax / max): the index with
  ``>=`` (last ties) is eps-DP at Lap(2/eps), the value n eps / 2 (n = 4: 2 at eps = 1);
* monotone neighbours: ``q0 - q1 + q2 - q3`` moves by 2 under a monotone move (d = (1, 0, 1, 0))
  and by 4 under all_differ; ``clip(-q0, -5, 5) - q1`` by 2 (the clip moves against q1);
* a noise-free comparison scaled by 10 moves by 10 between neighbours;
* float64 rounding: ``(q + 2^53) - 2^53`` rounds odd q to even, so a unit move changes it by 2.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from samplers.plain.function import statdp
from verifiers.prover.proof import Proof
from verifiers.prover.prove import prove


def _running_max(prng, q, epsilon, value):
    bq = q[0] + prng.laplace(scale=2.0 / epsilon)
    best = 0
    for i in range(1, len(q)):
        v = q[i] + prng.laplace(scale=2.0 / epsilon)
        if v >= bq:
            bq = v
            best = i
    return bq if value else best


def running_max_index(prng, q, epsilon):
    return _running_max(prng, q, epsilon, False)


def running_max_value(prng, q, epsilon):
    return _running_max(prng, q, epsilon, True)


def alternating(prng, q, epsilon):
    return q[0] - q[1] + q[2] - q[3] + prng.laplace(scale=1.0 / epsilon)


def clip_against(prng, q, epsilon):
    return np.clip(-q[0], -5, 5) - q[1] + prng.laplace(scale=1.0 / epsilon)


def comparison_times_ten(prng, q, epsilon):
    return (q[0] > 3) * 10 + prng.laplace(scale=1.0 / epsilon)


def rounds_to_even(prng, q, epsilon):
    return (q[0] + 2.0 ** 53) - 2.0 ** 53 + prng.laplace(scale=1.0 / epsilon)


CASES = [  # function, neighbours, domain, true level at eps = 1
    (running_max_index, "all_differ", (-10, 10), 1),
    (running_max_value, "all_differ", (-10, 10), 2),
    (alternating, "increasing", (-10, 10), 2),
    (alternating, "all_differ", (-10, 10), 4),
    (clip_against, "increasing", (-10, 10), 2),
    (comparison_times_ten, "all_differ", (-10, 10), 10),
    (rounds_to_even, "one_differ", (0, 4), 2),
]


@pytest.mark.parametrize("fn, neighbours, domain, truth", CASES,
                         ids=[f"{c[0].__name__}-{c[1]}" for c in CASES])
def test_no_proof_below_the_true_level(fn, neighbours, domain, truth):
    program = statdp(fn, size=4, domain=domain, neighbours=neighbours).trace(epsilon=1.0)
    assert not isinstance(prove(program, Fraction(truth) * Fraction(99, 100)), Proof)
    found = prove(program)  # each is proved (at or above its level: the test is not vacuous)
    assert isinstance(found, Proof) and Fraction(found.eps) >= truth
