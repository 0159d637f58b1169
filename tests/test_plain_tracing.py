"""The path-forking tracer: what traced plain code means is what numpy runs.

Each function here is traced, its exact output law computed by the enumerate backend,
and compared with the frequencies of the same function run by numpy itself (a fixed
seed, so the comparison is deterministic; the tolerance is five standard errors).
"""

from __future__ import annotations

import math
from collections import Counter
from fractions import Fraction

import numpy as np
import pytest

import hybrid
from samplers.lang.ir import BOTTOM
from samplers.plain import PlainMechanism, as_mechanism, resolve, statdp
from verifiers.enumerate import Enumerator


def randomized_response(prng, queries, epsilon):
    return [q if prng.random() < 0.75 else 1 - q for q in queries]


def first_head(prng, queries, epsilon):
    k = 0
    while k < 3:
        if prng.random() < 0.5:
            return k + queries[0]
        k += 1
    return None


def truncated_geometric(prng, queries, epsilon):
    return np.clip(queries[0] + (prng.geometric(0.5) - prng.geometric(0.5)), 0, 3)


def choice_and_integers(prng, queries, epsilon):
    a = prng.choice([10, 20, 35], p=[0.5, 0.25, 0.25])
    b = prng.integers(0, 3) + queries[0]
    return a, b


def builtins_on_noise(prng, queries, epsilon):
    noisy = [q + prng.integers(-1, 2) for q in queries]
    return max(noisy), min(noisy), abs(noisy[0] - noisy[1])


def numpy_calls(prng, queries, epsilon):
    noisy = np.asarray(queries) + prng.integers(-1, 2, size=len(queries))
    above = noisy > 0
    return (int(0) + np.sum(above), np.where(noisy[0] >= noisy[1], 1, 0), np.cumsum(noisy)[-1],
            noisy.clip(0, 1).max(), np.argmin(noisy))


def early_stop(prng, queries, epsilon):
    out = []
    for q in queries:
        if q + prng.choice(3) >= 2:
            out.append(True)
            break
        out.append(False)
    return out


def int_of_comparisons(prng, queries, epsilon):
    count = 0
    for q in queries:
        count += int(q + prng.integers(0, 2) > 1)
    return count, float(queries[0] > 0)


def statdp_idioms(prng, queries, epsilon):
    """Idioms of StatDP's own algorithms: float64 arrays, list.count, zip_longest, int(len / 2)."""
    from itertools import zip_longest

    values = np.asarray(queries, dtype=np.float64)
    out = []
    for v in values:
        if v + prng.integers(-1, 2) >= 1:
            out.append(True)
            break
        out.append(False)
    half = int(len(queries) / 2)
    wrong = sum(a != b for a, b in zip_longest((i < half for i in range(len(queries))), out))
    return out.count(False), wrong


CASES = [
    (statdp_idioms, (0, 1), 3, "all_differ"),
    (int_of_comparisons, (0, 2), 2, "all_differ"),
    (randomized_response, (0, 1), 2, "replace_one"),
    (first_head, (0, 2), 1, "one_differ"),
    (truncated_geometric, (0, 3), 1, "one_differ"),
    (choice_and_integers, (0, 2), 1, "one_differ"),
    (builtins_on_noise, (0, 2), 2, "all_differ"),
    (numpy_calls, (-1, 1), 3, "all_differ"),
    (early_stop, (0, 1), 3, "all_differ"),
]
RUNS = 5_000


def _as_output(v):
    if v is None:
        return BOTTOM
    if isinstance(v, (list, tuple)) or (isinstance(v, np.ndarray) and v.ndim == 1):
        return tuple(_as_output(e) for e in v)
    return int(v)


def _padded(v, arity):
    return v + (BOTTOM,) * (arity - len(v)) if isinstance(v, tuple) else v


@pytest.mark.parametrize("fn, domain, size, neighbours", CASES, ids=[c[0].__name__ for c in CASES])
def test_traced_law_is_what_numpy_runs(fn, domain, size, neighbours):
    mech = statdp(fn, size=size, domain=domain, neighbours=neighbours)
    program = mech.trace()
    assert not program.continuous
    exact = Enumerator(program)
    rng = np.random.default_rng(1)
    for x in [tuple([domain[1]] * size), tuple(range(domain[0], domain[0] + size))[:size]]:
        x = tuple(min(max(v, domain[0]), domain[1]) for v in x)
        law = exact.distribution(x)
        assert sum(law.values()) == 1
        runs = Counter(_padded(_as_output(fn(rng, np.asarray(x), 0.1)), program.arity) for _ in range(RUNS))
        assert set(runs) <= set(law), set(runs) - set(law)
        for o, p in law.items():
            se = math.sqrt(float(p) * (1 - float(p)) / RUNS)
            assert abs(runs[o] / RUNS - float(p)) <= 5 * se + 1e-9, (x, o, p, runs[o] / RUNS)


def test_exact_laws_of_the_coins():
    """prng.random() < p is a coin of probability exactly p (the float's binary value)."""
    law = Enumerator(statdp(first_head, size=1, domain=(0, 0)).trace()).distribution((0,))
    assert law == {0: Fraction(1, 2), 1: Fraction(1, 4), 2: Fraction(1, 8), BOTTOM: Fraction(1, 8)}
    rr = Enumerator(statdp(randomized_response, size=1, domain=(0, 1)).trace()).distribution((1,))
    assert rr == {(1,): Fraction(3, 4), (0,): Fraction(1, 4)}


def test_outputs_keep_their_shape():
    assert statdp(lambda prng, q, epsilon: q[0] + prng.laplace(scale=1.0), size=1).trace().tuple_output is False
    assert statdp(lambda prng, q, epsilon: (q[0],), size=1).trace().tuple_output is True
    assert statdp(early_stop, size=3).trace().arity == 3  # the longest path's list, others padded with BOTTOM


@pytest.mark.slow
def test_search_takes_the_function_itself():
    assert hybrid.search(randomized_response, global_check=False).eps_lower == math.inf  # 1 - q leaves {0, 1}
    res = hybrid.search(statdp(randomized_response, size=2, domain=(0, 1), neighbours="replace_one"),
                        precision=1e-2, global_check=True)
    assert res.certified
    assert res.eps_lower == pytest.approx(math.log(3), abs=1e-2) and res.eps_lower <= math.log(3)


def test_names_resolve_back_to_the_function():
    mech = as_mechanism(early_stop)
    assert isinstance(mech, PlainMechanism) and mech.name == f"{__name__}:early_stop"
    again = resolve("samplers.plain.examples:svt", size=3)
    assert again.trace().arity == 3 and again.name == "samplers.plain.examples:svt"


def test_parameters_follow_statdp():
    mech = statdp(lambda prng, queries, epsilon, N, T=0.5: [queries[0] + N + T >= prng.laplace(scale=1 / epsilon)])
    with pytest.raises(Exception, match="N .*has no default"):
        mech.params()
    assert mech.params(N="2") == {"epsilon": 0.1, "N": 2, "T": 0.5}
    assert mech.params(N="1/2", epsilon="0.5") == {"epsilon": 0.5, "N": 0.5, "T": 0.5}
