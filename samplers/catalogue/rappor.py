"""RAPPOR (Erlingsson, Pihur and Korolova 2014) as in DP-Sniper, with exact rational laws.

The input value is hashed into a Bloom filter (``h`` MurmurHash3 seeds of ``str(value)``
modulo ``m``, as DP-Sniper does); the filter is a fixed table over the input domain, so
the whole mechanism is discrete and every exact backend handles it.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

from samplers.catalogue import register
from samplers.catalogue.murmur import murmur3_32
from samplers.errors import ParameterError
from samplers.lang import any_of, categorical, flip, ints, ite, mechanism, one_differ

LO, HI = -10, 10  # DP-Sniper's input range for RAPPOR


def bloom_bits(value: int, h: int, m: int) -> frozenset[int]:
    """The Bloom-filter positions set by ``value``."""
    key = str(value).encode()
    return frozenset(murmur3_32(key, seed) % m for seed in range(h))


def _bloom(x0, h: int, m: int) -> list:
    table = {v: bloom_bits(v, h, m) for v in range(LO, HI + 1)}
    return [any_of(*[x0 == v for v, bits in table.items() if j in bits] or [0]) for j in range(m)]


def _check(p: Mapping[str, Any]) -> None:
    """At least one hash function and one filter bit (h seeds modulo m)."""
    for key in ("h", "m"):
        if p[key] < 1:
            raise ParameterError(f"{key} must be at least 1, got {p[key]}")


def _permanent(bit, f):
    """Permanent randomized response: 1 w.p. f/2, 0 w.p. f/2, the true bit otherwise."""
    choice = categorical([f / 2, f / 2, 1 - f])
    return ite(choice == 0, 1, ite(choice == 1, 0, bit))


def _claimed(p: Mapping[str, Any], instantaneous: bool) -> float:
    """2h times the per-bit loss: two inputs' filters differ in at most 2h bits (Erlingsson et al.)."""
    f = p["f"]
    one, zero = 1 - f / 2, f / 2  # P(reported bit = 1 | filter bit 1), and given 0
    if instantaneous:
        q, pp = p["q"], p["p"]
        one, zero = one * q + (1 - one) * pp, zero * q + (1 - zero) * pp
    if one in (0, 1) or zero in (0, 1):
        return math.inf
    per_bit = max(abs(math.log(one / zero)), abs(math.log((1 - one) / (1 - zero))))
    return 2 * p["h"] * per_bit


@register
@mechanism(domain=ints(lo=LO, hi=HI, size=1), neighbours=one_differ, aliases=("Rappor",), check=_check,
           claimed_eps=lambda p: _claimed(p, True))
def rappor(x, *, h=4, m=20, f="3/4", p="9/20", q="11/20"):
    """RAPPOR: Bloom filter, permanent RR (f), instantaneous RR (report 1 w.p. q if 1, p if 0).

    The level is the per-bit loss times the number of filter bits two inputs differ in
    (DP-Sniper's pattern pair 0 / 1 differs in 6 bits: 6 x 0.05001); the claim is the
    paper's 2h bits' worth.
    """
    bits = [_permanent(b, f) for b in _bloom(x[0], h, m)]
    return tuple(ite(b, flip(q), flip(p)) for b in bits)


@register
@mechanism(domain=ints(lo=LO, hi=HI, size=1), neighbours=one_differ,
           aliases=("OneTimeRappor",), check=_check,
           claimed_eps=lambda p: _claimed(p, False))
def one_time_rappor(x, *, h=4, m=20, f="19/20"):
    """One-time RAPPOR: Bloom filter and permanent randomized response only (DP-Sniper)."""
    return tuple(_permanent(b, f) for b in _bloom(x[0], h, m))
