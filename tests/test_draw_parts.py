"""Parts of independent draws on one input (hybrid.searcher.draw_parts): which programs are split, that an
event over every part has the product of the parts' ratios on the whole program, and that the composed
result's witness is what the whole program gives (svt34_parallel: svt3 and svt4 on the same queries)."""

from __future__ import annotations

import pytest

from hybrid.searcher import draw_parts
from hybrid.searcher.regions import symbolic
from hybrid.searcher.search import search
from hybrid.searcher.slices import lift_event
from hybrid.testers.events import Product, SetEvent, Threshold
from hybrid.testers.features import IDENTITY, Feature
from samplers.catalogue import get
from verifiers.continuous.backend import ContinuousBackend

from slice_checks import overlap, whole_ratio


def test_svt34_parallel_is_planned_as_its_two_parts():
    prog = get("svt34_parallel").trace(n=5)
    svt3, svt4 = draw_parts.draw_plan(prog)
    assert (svt3.outputs, svt4.outputs) == (list(range(5)), list(range(5, 10)))
    assert svt3.inputs == svt4.inputs == list(range(5)) and svt3.draw_part and svt4.draw_part
    # each part is the mechanism it runs, up to numbering
    assert len(svt3.program.nodes) == len(get("svt3").trace(n=5, c=2).nodes)
    assert len(svt4.program.nodes) == len(get("svt4").trace(n=5, c=2).nodes)


@pytest.mark.parametrize("name", ["laplace_parallel", "smartsum", "svt1", "noisy_hist1", "report_noisy_max1"])
def test_other_programs_are_not_planned_by_draws(name):
    """Many copies of one part (laplace_parallel), parts that read a few inputs each (smartsum), one part
    (svt1), independent parts (noisy_hist1: the other rule's) and one output are left to the other rules."""
    assert draw_parts.draw_plan(get(name).trace()) is None


def test_an_event_over_both_parts_has_the_product_of_their_ratios():
    """Independent given the input: on one pair, the whole program's ratio of E3 x E4 is the svt3 part's
    ratio of E3 times the svt4 part's ratio of E4 (enclosures overlap)."""
    prog = get("svt34_parallel").trace(n=3, eps=1)
    svt3, svt4 = draw_parts.draw_plan(prog)
    x, xp = (1, 1, 1), (2, 0, 0)
    e3 = Product((SetEvent(Feature("skeleton", codes=(-1000.0,)), ((2, 0, 2),)),
                  Threshold(Feature("component", index=1), 3.0, True)))
    e4 = SetEvent(IDENTITY, ((0, 1, 0),))
    r3 = ContinuousBackend(svt3.program).witness_ratio(x, xp, symbolic(e3, arity=3, tuple_output=True)).ratio
    r4 = ContinuousBackend(svt4.program).witness_ratio(x, xp, symbolic(e4, arity=3, tuple_output=True)).ratio
    both = Product((lift_event(e3, svt3.outputs), lift_event(e4, svt4.outputs)))
    whole = whole_ratio(prog, {"x": list(x), "x_prime": list(xp), "event": both.to_json()})
    assert whole.lo <= r3.hi * r4.hi and r3.lo * r4.lo <= whole.hi
    assert r3.lo > 1 and r4.lo > 1 and whole.lo > max(r3.hi, r4.hi)  # together more than either alone


def test_a_search_on_the_parts_is_the_whole_programs():
    """svt34_parallel at n = 4: searched on its parts, the witness re-weighed on the whole program overlaps
    the reported enclosure, and the bound lies below the proved composition of the parts."""
    prog = get("svt34_parallel").trace(n=4, eps=1)
    r = search(get("svt34_parallel"), {"n": 4, "eps": 1})
    assert r.certified and "parts of independent draws" in r.slice["how"]
    assert prog.neighbours.contains(r.witness["x"], r.witness["x_prime"])
    assert overlap(whole_ratio(prog, r.witness), r.ratio_enclosure)
    assert 0 < r.eps_lower <= r.eps_upper


@pytest.mark.slow
def test_svt34_parallel_at_n_20_certifies_more_than_svt3_alone():
    """Issue 30's entry: svt34_parallel at n = 20, eps = 0.1, searched whole certified 0.3746, below what its
    svt3 part proves alone (0.5); on its parts, svt4's event times svt3's event on svt4's pair certifies
    above 0.5 (0.674), below the proved 0.825, the witness re-weighed on the whole program."""
    prog = get("svt34_parallel").trace(n=20, eps=0.1)
    r = search(get("svt34_parallel"), {"n": 20, "eps": 0.1})
    assert r.certified and 0.5 < r.eps_lower <= r.eps_upper <= 0.825 + 1e-9
    assert overlap(whole_ratio(prog, r.witness), r.ratio_enclosure)


def test_parts_share_the_certification_budget():
    """k parts of one search get 1/k of its enclosures and work each, every other count unchanged."""
    from hybrid.searcher.budget import Budget

    b = Budget(enclosures=20_001, work=30_000_000, tune_steps=7)
    assert b.shared(2) == Budget(enclosures=10_000, work=15_000_000, tune_steps=7)


def test_a_continuous_part_gets_an_event_tuned_on_the_other_parts_pair():
    """svt34_parallel at n = 5, eps = 0.1: svt4's witness pair with svt3's own witness event composed
    certified 0.3326; svt3's event tuned on svt4's pair raises it above 0.42 (proved 0.45), the
    witness re-weighed on the whole program."""
    prog = get("svt34_parallel").trace(n=5, eps=0.1)
    r = search(get("svt34_parallel"), {"n": 5, "eps": 0.1})
    assert r.certified and 0.42 < r.eps_lower <= r.eps_upper <= 0.45 + 1e-9
    assert overlap(whole_ratio(prog, r.witness), r.ratio_enclosure)


def _laplace_cdf(z, b):
    import mpmath

    return mpmath.mpf(1) / 2 * mpmath.exp(z / b) if z < 0 else 1 - mpmath.mpf(1) / 2 * mpmath.exp(-z / b)


def _svt34_product_probability(x, eps=1, T=1):
    """P(svt3's output[0] >= 3, svt4 answers above then below | x) for svt34_parallel at n = 2, c = 2,
    by 50-digit quadrature over each part's threshold noise, the parts' draws independent: svt3's
    threshold Lap(2/eps) and query noise Lap(2c/eps), svt4's Lap(4/eps) and Lap(4/(3 eps))."""
    import mpmath

    mpmath.mp.dps = 50
    # the scales as the program computes them, in float64 (4 / 3 is not 4/3), then exact in mpmath
    b3, q3, b4, q4 = (mpmath.mpf(v) for v in (2 / eps, 2 * 2 / eps, 4 / eps, 4 / (3 * eps)))

    def density(r, b):
        return mpmath.exp(-abs(r) / b) / (2 * b)

    def svt3(r):  # q0 + noise >= max(T + r, 3)
        return density(r, b3) * (1 - _laplace_cdf(max(T + r, 3) - x[0], q3))

    def svt4(r):  # q0 + noise >= T + r, then q1 + noise < T + r
        return density(r, b4) * (1 - _laplace_cdf(T + r - x[0], q4)) * _laplace_cdf(T + r - x[1], q4)

    cuts = sorted({mpmath.mpf(3) - T, mpmath.mpf(0), *(mpmath.mpf(v) - T for v in x)})  # the kinks
    points = [-mpmath.inf, *cuts, mpmath.inf]
    return mpmath.quad(svt3, points) * mpmath.quad(svt4, points)


def test_a_product_over_both_parts_matches_an_independent_quadrature():
    """The whole program's enclosure of a product event over svt3's and svt4's components contains the
    probability computed here by 50-digit quadrature as the product of the parts' (independent draws),
    on both inputs of a pair, and the certified ratio is at most the exact one."""
    from fractions import Fraction

    prog = get("svt34_parallel").trace(n=2, eps=1)
    event = Product((Threshold(Feature("component", index=0), 3.0, below=False),
                     SetEvent(Feature("component", index=2), (1,)), SetEvent(Feature("component", index=3), (0,))))
    x, xp = (1, 1), (0, 2)
    w = ContinuousBackend(prog).witness_ratio(x, xp, symbolic(event, arity=4, tuple_output=True))
    p, q = _svt34_product_probability(x), _svt34_product_probability(xp)
    for enclosure, exact in ((w.p, p), (w.q, q)):
        assert Fraction(enclosure.lo) <= Fraction(str(exact)) <= Fraction(enclosure.hi)
    ratio = w.ratio
    assert Fraction(ratio.lo) <= Fraction(str(p / q)) * (1 + Fraction(1, 10**30)) and ratio.lo > 1
