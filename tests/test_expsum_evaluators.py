"""Exp-sums evaluated together for quadrature: each sum's ball is the one it has alone (same
exponentials, same order), at real and complex points, with rates shared between sums."""

from fractions import Fraction

from flint import acb, arb

from verifiers.continuous import expsum


def _alone(f: expsum.ExpSum, t):
    total = 0 * t
    for lam, c in f.items():
        total += c * (expsum.q(lam) * t).exp()
    return total


def test_each_sum_is_the_ball_it_is_alone():
    half, third = Fraction(1, 2), Fraction(-1, 3)
    sums = [
        {half: arb("0.25"), Fraction(0): arb(1)},
        {third: expsum.q(Fraction(2, 7)), half: arb(-3)},  # shares the rate 1/2 with the first
        {Fraction(0): arb("1.5")},
        {},  # an empty sum is zero
    ]
    at = expsum.evaluators(sums)
    for t in (arb("0.3"), arb(-2), acb("0.7", "0.1")):
        got = at(t)
        assert len(got) == len(sums)
        for f, v in zip(sums, got):
            want = _alone(f, t)
            assert v.mid() == want.mid() and v.rad() == want.rad()
        assert got[3] == 0


def test_a_value_contains_the_exact_sum():
    f = {Fraction(1): arb(2), Fraction(-1): arb(1)}  # 2 e^t + e^-t at t = 1
    (v,) = expsum.evaluators([f])(arb(1))
    assert v.overlaps(2 * arb(1).exp() + (-arb(1)).exp())
    assert v.rad() < arb(2) ** -40


def test_a_cached_cdf_difference_is_the_one_computed_afresh_at_each_precision():
    from flint import ctx

    from verifiers.continuous import laws
    from verifiers.continuous.paths import Law
    from verifiers.continuous.region import _difference

    law = Law("laplace", Fraction(3, 2))
    lo, hi = (Fraction(1), Fraction(-1, 3)), (Fraction(1), Fraction(2))  # t - 1/3 < z < t + 2
    for bits in (40, 200, 40):  # the second 40-bit ask is served from the cache: still 40 bits
        for tau in (Fraction(-5), Fraction(0), Fraction(7, 2)):
            with ctx.workprec(bits):
                got = _difference(law, lo, hi, tau)
                want = expsum.subtract(laws.cdf_terms(law, hi, hi[0] * tau + hi[1] >= 0),
                                       laws.cdf_terms(law, lo, lo[0] * tau + lo[1] >= 0))
            assert got.keys() == want.keys()
            assert all(got[k].mid() == want[k].mid() and got[k].rad() == want[k].rad() for k in got)
