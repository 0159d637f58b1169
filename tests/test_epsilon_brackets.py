"""The rational/float brackets of ``verifiers.epsilon`` hold at every scale (issue 13, item 2).

References are computed with :mod:`decimal` at 60 digits plus the digits that the ratio
shares with 1 (so the reference is exact to ~1e-60 relative to ``ln r`` even for
``r = 1 + 1e-70``), far finer than the float results being checked.
"""

import math
import random
from decimal import Context, Decimal
from fractions import Fraction

import pytest

from verifiers.epsilon import compare_exp, eps_lower, eps_upper, exp_bracket, log_bracket


def _reference_ln(r: Fraction) -> Decimal:
    near = max(0, len(str(r.denominator)) - len(str(abs(r.numerator - r.denominator))))
    ctx = Context(prec=60 + near + 10, Emax=10**9, Emin=-(10**9))
    return ctx.ln(ctx.divide(Decimal(r.numerator), Decimal(r.denominator)))


def _ratios(seed: int, count: int) -> list[Fraction]:
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        kind = rng.randrange(4)
        if kind == 0:  # within 10^-j of 1, j up to 80, on both sides
            j = rng.randrange(1, 81)
            out.append(1 + Fraction(rng.choice([-1, 1]) * rng.randrange(1, 10**6), 10 ** (j + 6)))
        elif kind == 1:  # random rationals of every size
            out.append(Fraction(rng.randrange(1, 10 ** rng.randrange(1, 60)), rng.randrange(1, 10 ** rng.randrange(1, 60))))
        elif kind == 2:  # huge and tiny powers
            out.append(Fraction(rng.randrange(1, 1000), 3) ** rng.choice([-1, 1]) * Fraction(2) ** rng.randrange(-2000, 2000))
        else:  # the audit's shape: 1 + 1e-30 - 3e-41 and neighbours
            out.append(1 + Fraction(1, 10**30) - Fraction(rng.randrange(1, 10**6), 10 ** (41 + rng.randrange(6))))
    return out


@pytest.mark.parametrize("seed", range(4))
def test_log_bracket_contains_ln_r_at_every_scale(seed):
    for r in _ratios(seed, 1500):
        ref = _reference_ln(r)
        lo, hi = log_bracket(r)
        assert Decimal(lo) <= ref <= Decimal(hi), r
        assert Decimal(eps_lower(r)) <= max(ref, Decimal(0)) <= Decimal(eps_upper(r)), r
        assert hi - lo <= 4 * math.ulp(max(abs(lo), abs(hi))) + 1e-300, r  # and tight


@pytest.mark.slow
def test_log_bracket_on_many_ratios():
    for r in _ratios(99, 20_000):
        ref = _reference_ln(r)
        lo, hi = log_bracket(r)
        assert Decimal(lo) <= ref <= Decimal(hi), r


def test_the_audit_reproducer():
    r = 1 + Fraction(1, 10**30) - Fraction(3, 10**41)
    ref = _reference_ln(r)
    assert Decimal(eps_lower(r)) <= ref <= Decimal(eps_upper(r))
    assert eps_lower(r) < 9.9999999999e-31  # a claim just above ln r is not refuted


@pytest.mark.parametrize("eps", [0.0, 1e-300, 1e-30, 1e-12, 0.1, 1 / 3, math.log(2), 1.0, 10.0, 700.0, 1e4, 123456.789])
def test_exp_bracket_contains_e_to_the_eps(eps):
    c_lo, c_hi = exp_bracket(eps)
    ctx = Context(prec=80, Emax=10**9, Emin=-(10**9))
    ref = ctx.exp(Decimal(eps))
    assert Fraction(c_lo) <= Fraction(ref) * (1 + Fraction(1, 10**70)) and Fraction(ref) * (1 - Fraction(1, 10**70)) <= c_hi
    assert c_lo < c_hi or eps == 0


@pytest.mark.parametrize("seed", range(2))
def test_compare_exp_agrees_with_the_reference(seed):
    rng = random.Random(seed)
    for r in _ratios(seed + 10, 300):
        ref = _reference_ln(r)
        if ref <= 0:
            continue
        for eps in (float(ref), math.nextafter(float(ref), 0), math.nextafter(float(ref), math.inf), rng.uniform(0, 50)):
            sign = compare_exp(r, eps)
            truth = (ref > Decimal(eps)) - (ref < Decimal(eps))
            assert sign is None or sign == truth, (r, eps)


@pytest.mark.parametrize("eps", [0.1, 0.3, 0.7, 1 / 3, 2.2, Fraction(1, 3), Fraction(7, 10)])
def test_compare_exp_near_eps_beyond_28_digits(eps):
    """ln r within 1e-29 of eps, on both sides: a comparison made in the default decimal
    context (28 digits) rounded eps and claimed r > e^0.1 for an r below it.  Truth
    from mpmath at 100 digits."""
    import mpmath

    with mpmath.workdps(100):
        e = mpmath.mpf(eps) if isinstance(eps, float) else mpmath.mpf(eps.numerator) / eps.denominator
        for offset in (-3, -1, 1, 3):
            target = e + offset * mpmath.mpf(10) ** -31
            r = Fraction(mpmath.nstr(mpmath.exp(target), 90, min_fixed=-1, max_fixed=2))
            truth = int(mpmath.sign(mpmath.log(mpmath.mpf(r.numerator) / r.denominator) - e))
            assert truth == (1 if offset > 0 else -1)
            sign = compare_exp(r, eps)
            assert sign is None or sign == truth, (r, eps, offset, sign)
