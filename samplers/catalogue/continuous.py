"""Continuous-noise mechanisms of the StatDP and DP-Sniper suites (sampled by numba, certified by enclosures).

Definitions follow DP-Sniper's ``dpsniper/mechanisms`` (Bichsel et al. 2021) and
StatDP's ``statdp/algorithms.py`` (Ding et al. 2018); names are ours, the other tools'
names are aliases.  Inputs are integer query answers (the suites' patterns use 0..2) in
DP-Sniper's ranges.  Sparse-vector outputs have one entry per query: 1 above the
threshold, 0 below, BOTTOM after the cutoff (DP-Sniper pads with -1); variants that
release noisy values output floats, with -1000.0 for "below" as DP-Sniper does and NaN
(BOTTOM) after the cutoff.
"""

from __future__ import annotations

from itertools import accumulate
from typing import Any, Mapping

from samplers.catalogue import register
from samplers.errors import ParameterError
from samplers.lang import BOTTOM, all_differ, argmax, ints, ite, maximum, mechanism, one_differ
from samplers.lang import exponential as exp_noise
from samplers.lang import scan
from samplers.lang import laplace as lap

BELOW = -1000.0  # DP-Sniper's code for a below-threshold answer in value-releasing SVTs


def _eps(p: Mapping[str, Any]) -> float:
    return p["eps"]


def _check(p: Mapping[str, Any]) -> None:
    """eps > 0 (every noise scale divides by it); the cutoff c and the release count k at least 1."""
    if "eps" in p and not p["eps"] > 0:
        raise ParameterError(f"eps must be positive, got {p['eps']}")
    for key in ("c", "k"):
        if key in p and p[key] < 1:
            raise ParameterError(f"{key} must be at least 1, got {p[key]}")


def _continuous(*, size: Any = 1, lo: int = -10, hi: int = 10, neighbours: Any = one_differ,
                aliases: tuple[str, ...] = (), claimed: Any = _eps):
    """Declare and register a suite mechanism (DP-Sniper's integer-valued query domain)."""

    def wrap(fn):
        return register(mechanism(domain=ints(lo=lo, hi=hi, size=size), neighbours=neighbours, check=_check,
                                  claimed_eps=claimed, aliases=aliases)(fn))

    return wrap


@_continuous(aliases=("LaplaceMechanism", "laplace_mechanism"))
def laplace(x, *, eps=0.1):
    """The Laplace mechanism (Dwork et al. 2006): x + Lap(1/eps) on a sensitivity-1 query."""
    return x[0] + lap(1 / eps)


@_continuous(size="n", lo=0, hi=10, aliases=("NoisyHist1", "histogram"))
def noisy_hist1(x, *, eps=0.1, n=5):
    """Noisy histogram (StatDP Alg. 9, DP-Sniper NoisyHist1): every count + Lap(1/eps); eps-DP."""
    return scan(x, lambda q, state: (q + lap(1 / eps), state))[0]


@_continuous(size="n", lo=0, hi=10, aliases=("NoisyHist2", "histogram_eps"))
def noisy_hist2(x, *, eps=0.1, n=5):
    """Buggy noisy histogram (StatDP Alg. 10, DP-Sniper NoisyHist2): Lap(eps) instead of Lap(1/eps).

    The true level is 1/eps (10 at eps = 0.1).
    """
    return tuple(xi + lap(eps) for xi in x)


def _noisy_max(x, eps, noise, value):
    noisy = scan(x, lambda q, state: (q + noise(2 / eps), state))[0]
    return maximum(noisy) if value else argmax(noisy)


@_continuous(size="n", neighbours=all_differ, aliases=("ReportNoisyMax1", "noisy_max_v1a"))
def report_noisy_max1(x, *, eps=0.1, n=5):
    """Report noisy max with Lap(2/eps), releasing the index (StatDP Alg. 5); eps-DP."""
    return _noisy_max(x, eps, lap, value=False)


@_continuous(size="n", neighbours=all_differ, aliases=("ReportNoisyMax2", "noisy_max_v2a"))
def report_noisy_max2(x, *, eps=0.1, n=5):
    """Report noisy max with Exp(2/eps), releasing the index (StatDP Alg. 6); eps-DP."""
    return _noisy_max(x, eps, exp_noise, value=False)


@_continuous(size="n", neighbours=all_differ, aliases=("ReportNoisyMax3", "noisy_max_v1b"))
def report_noisy_max3(x, *, eps=0.1, n=5):
    """Buggy report noisy max with Lap(2/eps) releasing the max value (StatDP Alg. 7); n eps/2-DP."""
    return _noisy_max(x, eps, lap, value=True)


@_continuous(size="n", neighbours=all_differ, aliases=("ReportNoisyMax4", "noisy_max_v2b"))
def report_noisy_max4(x, *, eps=0.1, n=5):
    """Buggy report noisy max with Exp(2/eps) releasing the max value (StatDP Alg. 8); not DP."""
    return _noisy_max(x, eps, exp_noise, value=True)


def _sparse_vector(x, *, T, c, threshold_scale, query_scale, cutoff=True, release=None,
                   redraw=False):
    """The sparse-vector loop shared by svt1..svt6 (Lyu, Su and Li 2017).

    ``release(q)`` gives the value output for an above-threshold answer (default 1);
    ``redraw`` draws fresh threshold noise after every such answer (Lyu's Algorithm 2).
    """
    def step(q, state):
        count, rho = state
        noisy = q if query_scale is None else q + lap(query_scale)
        above = noisy >= T + rho
        answer = ite(above, release(noisy), BELOW) if release else above
        if cutoff:
            out = ite(count >= c, BOTTOM, answer)
            count = count + above
        else:
            out = answer
        if redraw:
            rho = ite(above, lap(threshold_scale), rho)
        return out, (count, rho)

    return scan(x, step, (0, lap(threshold_scale)))[0]


_SVT = dict(size="n", neighbours=all_differ)


@_continuous(**_SVT, aliases=("SparseVectorTechnique1", "SVT", "sparsevector"))
def svt1(x, *, eps=0.1, n=10, c=1, T=0.5):
    """Sparse vector (Lyu Alg. 1; StatDP SVT; CheckDP sparsevector): eps-DP.

    Threshold Lap(2/eps), queries Lap(4c/eps), halts after c answers above.
    """
    return _sparse_vector(x, T=T, c=c, threshold_scale=2 / eps, query_scale=4 * c / eps)


@_continuous(**_SVT, aliases=("SparseVectorTechnique2",))
def svt2(x, *, eps=0.1, n=10, c=1, T=1.0):
    """Sparse vector (Lyu Alg. 2): threshold Lap(2c/eps) redrawn after each answer above; eps-DP."""
    return _sparse_vector(x, T=T, c=c, threshold_scale=2 * c / eps, query_scale=4 * c / eps,
                          redraw=True)


@_continuous(**_SVT, aliases=("SparseVectorTechnique3", "iSVT4"))
def svt3(x, *, eps=0.1, n=10, c=1, T=1.0):
    """Buggy sparse vector (Lyu Alg. 3; StatDP iSVT4): releases the noisy answer; not DP as n grows."""
    return _sparse_vector(x, T=T, c=c, threshold_scale=2 / eps, query_scale=2 * c / eps,
                          release=lambda v: v)


@_continuous(**_SVT, aliases=("SparseVectorTechnique4", "iSVT3", "badsparsevector3"))
def svt4(x, *, eps=0.1, n=10, c=1, T=1.0):
    """Buggy sparse vector (Lyu Alg. 4; StatDP iSVT3; CheckDP badsparsevector3): query noise not scaled by c.

    Threshold Lap(4/eps), queries Lap(4/(3 eps)); true level (1 + 6c)/4 eps.
    """
    return _sparse_vector(x, T=T, c=c, threshold_scale=4 / eps, query_scale=4 / (3 * eps))


@_continuous(**_SVT, aliases=("SparseVectorTechnique5", "iSVT1", "badsparsevector1"))
def svt5(x, *, eps=0.1, n=10, c=1, T=1.0):
    """Buggy sparse vector (Lyu Alg. 5; StatDP iSVT1; CheckDP badsparsevector1): not DP.

    No query noise, no cutoff.
    """
    return _sparse_vector(x, T=T, c=c, threshold_scale=2 / eps, query_scale=None, cutoff=False)


@_continuous(**_SVT, aliases=("SparseVectorTechnique6", "iSVT2", "badsparsevector2"))
def svt6(x, *, eps=0.1, n=10, c=1, T=1.0):
    """Buggy sparse vector (Lyu Alg. 6; StatDP iSVT2; CheckDP badsparsevector2): not DP.

    Query noise Lap(2/eps), no cutoff.
    """
    return _sparse_vector(x, T=T, c=c, threshold_scale=2 / eps, query_scale=2 / eps, cutoff=False)


@_continuous(**_SVT, claimed=lambda p: 2 * p["eps"], aliases=("SVT34Parallel", "svt_34_parallel"))
def svt34_parallel(x, *, eps=0.1, n=10, c=2, T=1.0):
    """svt3 and svt4 run independently on the same input, outputs concatenated (DP-Sniper).

    Claims 2 eps by composition; not DP because svt3 is not.
    """
    return svt3.fn(x, eps=eps, n=n, c=c, T=T) + svt4.fn(x, eps=eps, n=n, c=c, T=T)


@_continuous(**_SVT, aliases=("NumericalSVT", "numsparsevector"))
def numerical_svt(x, *, eps=0.1, n=10, c=2, T=1.0):
    """Numerical sparse vector (Wang et al. 2019, ShadowDP; CheckDP numsparsevector): eps-DP.

    Releases a fresh noisy answer: threshold Lap(3/eps); comparison noise Lap(6c/eps); released value q + Lap(3c/eps);
    0.0 when below, BOTTOM after c answers above.
    """
    def step(q, state):
        count, rho = state
        above = q + lap(6 * c / eps) >= T + rho
        answer = ite(above, q + lap(3 * c / eps), 0.0)
        return ite(count >= c, BOTTOM, answer), (count + above, rho)

    return scan(x, step, (0, lap(3 / eps)))[0]


@_continuous(claimed=lambda p: p["k"] * p["eps"], aliases=("LaplaceParallel",))
def laplace_parallel(x, *, eps=0.005, k=20):
    """k independent Laplace releases of the same query (DP-Sniper): k eps-DP by composition."""
    return tuple(x[0] + lap(1 / eps) for _ in range(k))


@_continuous(size="n", neighbours=all_differ, aliases=("PrefixSum",))
def prefix_sum(x, *, eps=0.1, n=10):
    """Running sums of a noisy histogram (Wang et al. 2019; DP-Sniper PrefixSum).

    eps-DP when one query changes; DP-Sniper tests it with all queries changing
    (all_differ), where the true level is n eps.
    """
    return tuple(accumulate(xi + lap(1 / eps) for xi in x))
