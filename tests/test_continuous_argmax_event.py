"""Events ``{index in S}`` on an argmax output explore only the winners in S (or the complement's).

The narrowed paths must give the same enclosure as the full exploration (every winner's region,
the event weighing the others 0), and the complement route ``1 - P(index not in S)`` an enclosure
of the same value; with equal inputs report noisy max's index is uniform, so ``|S| / n`` exactly.
"""

from __future__ import annotations

import random
from fractions import Fraction

import pytest

from hybrid.searcher.regions import symbolic
from hybrid.testers.events import SetEvent, Threshold
from hybrid.testers.features import IDENTITY, Feature
from samplers import catalogue
from samplers.lang import all_differ, argmax, ints, laplace, mechanism
from verifiers.continuous.backend import ContinuousBackend


def _full(backend: ContinuousBackend, x, k: int, tuple_output: bool, S) -> object:
    """``P(output k in S)`` from every winner's paths (no narrowing: a plain callable event)."""
    def event(run):
        out = run.output(k)
        return 1 if out in S else 0

    return backend.enclose(backend.specialised(x), backend.paths(x, event), 0)


def _subsets(arity: int, rng: random.Random) -> list[tuple[int, ...]]:
    out = [(), (0,), (arity - 1,), (0, arity - 1), tuple(range(arity)), tuple(range(1, arity)), (arity + 3,)]
    out += [tuple(sorted(rng.sample(range(arity), rng.randint(1, arity)))) for _ in range(3)]
    return out


def _check(backend: ContinuousBackend, x, event_of, k: int, tuple_output: bool, arity: int, rng) -> None:
    for S in _subsets(arity, rng):
        got = backend.event_probability(x, event_of(S))
        full = _full(backend, x, k, tuple_output, S)
        if 2 * len([s for s in S if s < arity]) <= arity:  # the same paths: the same enclosure
            assert (got.lo, got.hi) == (full.lo, full.hi), S
        else:  # 1 - P(complement): an enclosure of the same value, as tight
            assert max(got.lo, full.lo) <= min(got.hi, full.hi), S
            assert got.hi - got.lo < Fraction(1, 10**12)


@pytest.mark.parametrize("n", range(3, 11))
def test_report_noisy_max_narrowed_equals_full(n):
    prog = catalogue.get("report_noisy_max1").trace(eps=0.1, n=n)
    b = ContinuousBackend(prog)
    rng = random.Random(n)
    for x in ([1] * n, [0] + [2] * (n - 1), [rng.randint(0, 3) for _ in range(n)]):
        _check(b, x, lambda S: symbolic(SetEvent(IDENTITY, S), arity=1, tuple_output=False), 0, False, n, rng)


@pytest.mark.parametrize("n", [3, 10, 200])
def test_equal_inputs_give_a_uniform_index(n):
    """P(index in S | x = [1]*n) = |S|/n (symmetry), by both the narrowed and the complement route."""
    b = ContinuousBackend(catalogue.get("report_noisy_max1").trace(eps=0.1, n=n))
    for S in ((0,), (1, n - 1), tuple(range(1, n))):
        p = b.event_probability([1] * n, symbolic(SetEvent(IDENTITY, S), arity=1, tuple_output=False))
        assert p.lo <= Fraction(len(S), n) <= p.hi and p.hi - p.lo < Fraction(1, 10**12)


def test_one_index_event_builds_one_winners_region():
    """The event {index = 0} builds the constraints of winner 0 only, not every winner's (n(n-1) forms)."""
    n = 60
    b = ContinuousBackend(catalogue.get("report_noisy_max1").trace(eps=0.1, n=n))
    x = [0] + [2] * (n - 1)
    b.event_probability(x, symbolic(SetEvent(IDENTITY, (0,)), arity=1, tuple_output=False))
    built = [members for members, _ in b.specialised(x).choices.values()]
    assert built == [[0]]


def _tied_program(ties: str):
    """A tuple output with an argmax over noisy values, a repeated noise value and equal constants
    (exact ties: lowest index or uniform), and a noisy value beside it."""
    @mechanism(domain=ints(lo=0, hi=2, size=3), neighbours=all_differ)
    def prog(x):
        z = laplace(3)
        vals = [xi + laplace(2) for xi in x] + [z, z, x[0] * 0 + 1, x[1] * 0 + 1]
        return (x[2] + laplace(5), argmax(vals, ties=ties))

    return prog.trace()


@pytest.mark.parametrize("ties", ["first", "uniform"])
def test_ties_and_thresholds_narrowed_equal_full(ties):
    b = ContinuousBackend(_tied_program(ties))
    rng = random.Random(7)
    arity = 7
    for x in ([0, 0, 0], [2, 1, 0], [1, 2, 2]):
        _check(b, x, lambda S: symbolic(SetEvent(Feature("component", index=1), S), arity=2, tuple_output=True),
               1, True, arity, rng)
        one = [b.event_probability(x, symbolic(SetEvent(Feature("component", index=1), (i,)), arity=2,
                                               tuple_output=True)) for i in range(arity)]
        assert sum(e.lo for e in one) <= 1 <= sum(e.hi for e in one)
        if ties == "first":  # the second of two equal values never wins
            assert one[4].hi == 0 and one[6].hi == 0 and one[3].lo > 0 and one[5].lo > 0
        else:  # equal values share their wins
            assert (one[3].lo, one[3].hi) == (one[4].lo, one[4].hi) and one[3].lo > 0
            assert (one[5].lo, one[5].hi) == (one[6].lo, one[6].hi)
        for alpha, below in ((2.5, True), (4, False), (0.0, True), (float("inf"), True), (-1.5, False)):
            ev = symbolic(Threshold(Feature("component", index=1), alpha, below=below), arity=2, tuple_output=True)
            got = b.event_probability(x, ev)
            full = _full(b, x, 1, True, [i for i in range(arity) if (i < alpha if below else alpha <= i)])
            assert max(got.lo, full.lo) <= min(got.hi, full.hi) and got.hi - got.lo < Fraction(1, 10**12)


def test_threshold_on_report_noisy_max_index():
    """A tester's event ``output < a`` on the index: the winners below ``a`` only, or 1 minus the others."""
    n = 8
    b = ContinuousBackend(catalogue.get("report_noisy_max1").trace(eps=0.1, n=n))
    x = [0, 2, 1, 3, 0, 1, 2, 2]
    for alpha in (0.5, 3, 6.5, 100.0):
        got = b.event_probability(x, symbolic(Threshold(IDENTITY, alpha, below=True), arity=1, tuple_output=False))
        full = _full(b, x, 0, False, [i for i in range(n) if i < alpha])
        assert max(got.lo, full.lo) <= min(got.hi, full.hi) and got.hi - got.lo < Fraction(1, 10**12)
