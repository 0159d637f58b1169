"""The grid lemma (verifiers/float64/grid.py), checked exhaustively on small binary formats and on float64 near 0."""

from __future__ import annotations

import math
import random
from fractions import Fraction

import pytest

from verifiers.float64.grid import grid, unreachable


def _values(p: int, emin: int, emax: int) -> list[Fraction]:
    """Every finite value of a binary format with p-bit significands and exponents emin..emax (subnormals too)."""
    out = {Fraction(0)}
    for e in range(emin, emax + 1):
        for m in range(2 ** (p - 1) if e > emin else 0, 2**p):  # below emin's binade: the subnormals
            v = Fraction(m) * Fraction(2) ** (e - p + 1)
            out |= {v, -v}
    return sorted(out)


def _exponent(a: Fraction) -> int:
    """e with 2^e <= a < 2^(e+1), for a > 0."""
    e = a.numerator.bit_length() - a.denominator.bit_length()
    while Fraction(2) ** (e + 1) <= a:
        e += 1
    while Fraction(2) ** e > a:
        e -= 1
    return e


def _round(v: Fraction, p: int, emin: int) -> Fraction:
    """v rounded to nearest, ties to even, in the format (no overflow in the ranges used)."""
    if v == 0:
        return v
    a = abs(v)
    q = Fraction(2) ** (max(emin, _exponent(a)) - p + 1)
    m, r = divmod(a, q)
    m = int(m) + (1 if r > q / 2 or (r == q / 2 and int(m) % 2) else 0)
    return (m * q) if v > 0 else -(m * q)


@pytest.mark.parametrize("p,emin,emax", [(3, -3, 2), (4, -4, 3), (5, -3, 2)])
def test_lemma_exhaustive_on_small_formats(p, emin, emax):
    """For every x' != 0 and z of the format: a non-zero fl(x' + z) below |x'|/2 is a multiple of
    2^max(e - p, emin - p + 1) (the format's g: half an ulp of x', at least the smallest subnormal)."""
    vals = _values(p, emin, emax)
    small = Fraction(2) ** (emin - p + 1)
    top = Fraction(2) ** emax
    finer = 0  # cases where the half-ulp grid, not the ulp, is what the output lies on
    for xp in vals:
        if xp == 0 or abs(xp) > top / 4:  # keep x' + z clear of overflow
            continue
        g = max(Fraction(2) ** (_exponent(abs(xp)) - p), small)
        for z in vals:
            if abs(z) > top / 2:
                continue
            r = _round(xp + z, p, emin)
            if r != 0 and abs(r) < abs(xp) / 2:
                assert r == xp + z and (r / g).denominator == 1, (xp, z, r)
                finer += (r / (2 * g)).denominator != 1
    assert finer  # the bound is reached: it cannot be made coarser


def test_float64_grid_values():
    assert grid(1.0) == Fraction(1, 2**53) and grid(-1.5) == Fraction(1, 2**53) and grid(2.0) == Fraction(1, 2**52)
    assert grid(5e-324) == Fraction(1, 2**1074) and grid(2.0**-1022) == Fraction(1, 2**1074)
    assert unreachable(1.0, 2.0**-54) and not unreachable(1.0, 2.0**-53) and not unreachable(1.0, 0.0)
    with pytest.raises(ValueError):
        grid(0.0)


@pytest.mark.parametrize("xp", [1.0, -1.0, 3.0, 0.75, 2.0**-1000, 1e300])
def test_float64_near_zero_by_brute_force(xp):
    """float64 itself: z from every binade around -x' (seeded, 20000 draws; no assertion can fail by chance,
    the lemma is a theorem) never gives a non-zero fl(x' + z) below grid(x')."""
    rng = random.Random(5)
    g = grid(xp)
    for _ in range(20000):
        z = -xp * (1 + rng.choice([-1, 1]) * rng.random() * 2.0 ** -rng.randrange(0, 60))
        z = math.nextafter(z, rng.choice([-math.inf, math.inf])) if rng.random() < 0.5 else z
        r = xp + z
        assert r == 0 or abs(Fraction(r)) >= g, (xp, z, r)
        if abs(r) < abs(xp) / 2:
            assert Fraction(r) == Fraction(xp) + Fraction(z)
