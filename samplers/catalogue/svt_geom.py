"""Discrete sparse-vector variants with geometric noise (after Lyu, Su and Li 2017, and StatDP).

One driver, :func:`_sparse_vector`, runs the loop; each catalogue entry fixes the
noise bases, the cutoff and what an above-threshold answer releases.  Noise bases are
powers of ``a = e^(-eps/(4c))`` so that every base is an exact rational: the textbook
SVT (Lyu's Algorithm 1) uses Lap(2/eps) on the threshold (base a^(2c)) and Lap(4c/eps)
on the queries (base a), and claims eps = 4c ln(1/a).

Noisy query answers are clamped to ``-W .. n+W`` (the geometric noise must be bounded
to be exact); the noisy threshold is clamped to one more on each side, which changes
no comparison.  Truncating the noise is not free: FAIER's above threshold, with no
margin, is not private at all; a margin W keeps the textbook structure and the exact
verifier measures what the truncation costs.

Outputs, one per query: 1 above the threshold, 0 below, BOTTOM once halted.  The
value-releasing variant (isvt4_geom) outputs the noisy answer when above and
``-(W+1)`` (below every noisy answer) when below.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

from samplers.catalogue import register
from samplers.errors import ParameterError
from samplers.lang import BOTTOM, all_differ, clamp, ints, ite, mechanism, two_sided_geometric


def _claimed(p: Mapping[str, Any]) -> float:
    return 4 * p["c"] * -math.log(p["a"]) if p["a"] > 0 else math.inf


def _check(p: Mapping[str, Any]) -> None:
    """The cutoff c at least 1 (noise bases are powers a^c) and the clamping margin W at least 0."""
    if p["c"] < 1:
        raise ParameterError(f"c must be at least 1, got {p['c']}")
    if p["W"] < 0:
        raise ParameterError(f"W must be at least 0, got {p['W']}")


def _sparse_vector(x, *, n, T, W, threshold_base, query_base, cutoff, release_value=False):
    lo, hi = -W, n + W
    t = clamp(T + two_sided_geometric(threshold_base), lo - 1, hi + 1)
    out, count = [], 0
    for q in x:
        noisy = q if query_base is None else clamp(q + two_sided_geometric(query_base), lo, hi)
        above = noisy >= t
        answer = ite(above, noisy, lo - 1) if release_value else above
        if cutoff is None:
            out.append(answer)
        else:
            out.append(ite(count >= cutoff, BOTTOM, answer))
            count = count + above
    return tuple(out)


def _svt_mechanism(name: str, aliases: tuple[str, ...], doc: str, **shape: Any):
    """Register one variant: ``shape`` maps (a, c) to the driver's noise bases and cutoff."""

    def body(x, *, L=4, n=2, T=1, c=1, a="1/2", W=2):
        return _sparse_vector(x, n=n, T=T, W=W, **{k: f(a, c) for k, f in shape.items()})

    body.__name__ = name
    body.__doc__ = doc
    return register(mechanism(domain=ints(lo=0, hi="n", size="L"), neighbours=all_differ, check=_check,
                              claimed_eps=_claimed, name=name, aliases=aliases, length_param="L")(body))


svt_geom = _svt_mechanism(
    "svt_geom", (),
    """Sparse vector with geometric noise (Lyu et al. Algorithm 1): the textbook version.

    Threshold noise base a^(2c), query noise base a, halts after c answers above the
    threshold; claims eps = 4c ln(1/a) (up to what truncating the noise costs).""",
    threshold_base=lambda a, c: a ** (2 * c), query_base=lambda a, c: a, cutoff=lambda a, c: c,
)
isvt1_geom = _svt_mechanism(
    "isvt1_geom", (),
    """Buggy sparse vector after StatDP's iSVT1 (Lyu Algorithm 5): no query noise, no cutoff.

    Not private for any eps: comparisons of exact answers with one noisy threshold.""",
    threshold_base=lambda a, c: a ** (2 * c), query_base=lambda a, c: None, cutoff=lambda a, c: None,
)
isvt2_geom = _svt_mechanism(
    "isvt2_geom", (),
    """Buggy sparse vector after StatDP's iSVT2 (Lyu Algorithm 6): query noise not scaled by c, no cutoff.

    Its loss grows with the number of queries L.""",
    threshold_base=lambda a, c: a ** (2 * c), query_base=lambda a, c: a ** (2 * c),
    cutoff=lambda a, c: None,
)
isvt3_geom = _svt_mechanism(
    "isvt3_geom", (),
    """Buggy sparse vector after StatDP's iSVT3 (Lyu Algorithm 4): threshold Lap(4/eps), query Lap(4/(3 eps)).

    Bases a^c and a^(3c); Lyu et al. show the true level is (1+6c)/4 eps.""",
    threshold_base=lambda a, c: a**c, query_base=lambda a, c: a ** (3 * c), cutoff=lambda a, c: c,
)
isvt4_geom = _svt_mechanism(
    "isvt4_geom", (),
    """Buggy sparse vector after StatDP's iSVT4 (Lyu Algorithm 3): releases the noisy answer when above.

    Query noise base a^2 (Lap(2c/eps)); not private for any eps as L grows.""",
    threshold_base=lambda a, c: a ** (2 * c), query_base=lambda a, c: a * a, cutoff=lambda a, c: c,
    release_value=lambda a, c: True,
)
