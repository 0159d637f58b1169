"""CheckDP's benchmark (Wang et al., CCS 2020, cmla-psu/checkdp ``examples/``) in our language.

The summations take integer query answers in ``0..10`` and CheckDP's ``ONE_DIFFER``
(one answer changes, by at most 1); the sparse-vector family takes answers in
``-10..10`` and ``ALL_DIFFER`` (every answer may change by at most 1), and ``NN`` is our
``c``.  Every program claims eps (smartsum 2 eps) as its ``CHECK`` line does; the
correct ones carry their true level, the buggy twins a claim they miss.

CheckDP's sparsevector, numsparsevector and badsparsevector1..3 are the catalogue's
svt1, numerical_svt, svt5, svt6 and svt4 (same noise, cutoff and outputs; a loop that
stops is our BOTTOM padding), so they are aliases of those.  The gap and adaptive sparse
vectors are here.
"""

from __future__ import annotations

from typing import Any, Mapping

from samplers.catalogue import register
from samplers.errors import ParameterError
from samplers.lang import BOTTOM, all_differ, ints, ite, mechanism, one_differ, scan
from samplers.lang import laplace as lap


def _check(p: Mapping[str, Any]) -> None:
    """eps > 0; c >= 1 for the sparse vectors, T >= 0 for prefixsum, and for the smart sums
    CheckDP's assumptions 0 <= T < n and 1 < M < n."""
    if not p["eps"] > 0:
        raise ParameterError(f"eps must be positive, got {p['eps']}")
    if "c" in p and p["c"] < 1:
        raise ParameterError(f"c must be at least 1 (CheckDP's NN > 0), got {p['c']}")
    if "T" in p and "M" not in p and "c" not in p and p["T"] < 0:
        raise ParameterError(f"need T >= 0 (the last step released), got T={p['T']}")
    if "M" in p and not (0 <= p["T"] < p["n"] and 1 < p["M"] < p["n"]):
        raise ParameterError(f"need 0 <= T < n and 1 < M < n (CheckDP's assumptions), got T={p['T']}, "
                             f"M={p['M']}, n={p['n']}")


def _checkdp(claimed: Any, name: str, *, lo: int = 0, neighbours: Any = one_differ):
    def wrap(fn):
        return register(mechanism(domain=ints(lo=lo, hi=10, size="n"), neighbours=neighbours, check=_check,
                                  claimed_eps=claimed, name=name)(fn))

    return wrap


@_checkdp(lambda p: p["eps"], "partialsum")
def partialsum(x, *, eps=0.1, n=5):
    """CheckDP's partialsum: the sum of the answers plus Lap(1/eps); eps-DP (true level eps)."""
    return scan(x, lambda q, state: (None, (state[0] + q,)), (0,))[1][0] + lap(1 / eps)


@_checkdp(lambda p: p["eps"], "shadowdp_prefixsum")
def shadowdp_prefixsum(x, *, eps=0.1, n=5, T=4):
    """ShadowDP's prefixsum (Wang et al. 2019): noisy running sums of steps 0..T; eps-DP (true level eps).

    Each answer gets its own Lap(1/eps), so a changed answer moves one draw (the catalogue's
    prefix_sum is the same loop under all_differ, where the level is n eps).
    """
    def step(q, state):
        running = state[0] + q + lap(1 / eps)
        return running, (running,)

    return scan(x[: T + 1], step, (0,))[0]


@_checkdp(lambda p: p["eps"], "badpartialsum")
def badpartialsum(x, *, eps=0.1, n=5):
    """CheckDP's badpartialsum: Lap(1/(2 eps)) instead of Lap(1/eps); claims eps, true level 2 eps."""
    return sum(x) + lap(1 / (2 * eps))


def _smart_sum(x, *, eps, T, M, block_noise):
    """CheckDP's smartsum loop: a running noisy sum, restarted from the noisy block sum every M steps
    (an indexed ``scan`` over steps 0..T; traced at a size it is the ``for i, q in enumerate`` loop)."""

    def step(i, q, state):
        running, block = state
        noise = lap(1 / eps)
        last = (i + 1) % M == 0  # the block's last step
        restart = block + q + noise if block_noise else block + q
        running = ite(last, restart, running + q + noise)
        return running, (running, ite(last, 0, block + q))

    return scan(x[: T + 1], step, (0, 0), indexed=True)[0]


@_checkdp(lambda p: 2 * p["eps"], "smartsum")
def smartsum(x, *, eps=0.1, n=4, T=3, M=2):
    """CheckDP's smartsum (after Chan, Shi and Song): released steps 0..T; claims 2 eps, true level 2 eps.

    A changed answer moves its own step's noisy release and, through the block sum, the
    release at the end of its block: two Laplace(1/eps) draws shift by 1.
    """
    return _smart_sum(x, eps=eps, T=T, M=M, block_noise=True)


@_checkdp(lambda p: 2 * p["eps"], "badsmartsum")
def badsmartsum(x, *, eps=0.1, n=4, T=3, M=2):
    """CheckDP's badsmartsum: the block-end release has no noise; claims 2 eps, not DP for any eps."""
    return _smart_sum(x, eps=eps, T=T, M=M, block_noise=False)


def _svt(name: str):
    """A sparse-vector program of CheckDP's: answers in -10..10, ALL_DIFFER, claims eps."""
    return _checkdp(lambda p: p["eps"], name, lo=-10, neighbours=all_differ)


def _gap_svt(x, *, eps, c, T, gap):
    """CheckDP's gap sparse vector loop; ``gap`` False releases the noisy answer (the bug)."""
    t_bar = T + lap(2 / eps)
    out, count = [], 0
    for q in x:
        noisy = q + lap(4 * c / eps)
        above = noisy >= t_bar
        out.append(ite(count >= c, BOTTOM, ite(above, noisy - t_bar if gap else noisy, 0.0 if gap else -100.0)))
        count = count + above
    return tuple(out)


@_svt("gapsvt")
def gapsvt(x, *, eps=0.1, n=5, c=1, T=0.5):
    """CheckDP's gapsparsevector (Wang et al. 2019): an answer above releases its gap; claims eps, eps-DP.

    The gap is q + eta - T_bar; threshold Lap(2/eps), queries Lap(4c/eps), halts after c answers
    above.  eps-DP, and n eps / (4c)-DP (keeping the threshold and shifting every answer): upper
    bounds of the exact level, which is not known.
    """
    return _gap_svt(x, eps=eps, c=c, T=T, gap=True)


@_svt("badgapsvt")
def badgapsvt(x, *, eps=0.1, n=5, c=1, T=0.5):
    """CheckDP's badgapsparsevector: releases q + eta, not its gap; claims eps, level grows with n.

    A released answer moves with the input and no threshold noise cancels it, so the threshold
    cannot move: n eps / 4 at c = 1 (proved at n = 5 and 20; certified at n = 5, 0.475 of 0.5 at
    n = 20, eps = 0.1).
    """
    return _gap_svt(x, eps=eps, c=c, T=T, gap=False)


def _adaptive_svt(x, *, eps, c, T, gap):
    """CheckDP's adaptive sparse vector: a top test (Lap(8c/eps), margin 16) costing eps, then a middle
    test (Lap(4c/eps)) costing 2 eps, from a budget of 4c eps of which 2c eps go to the threshold;
    it halts once more than 4c eps - 2 eps is spent.  ``gap`` False releases the top answer without
    subtracting the threshold (the bug); a below answer is 0 (the bug's -100)."""
    t_bar = T + lap(2 / eps)
    out, spent = [], 2 * c  # in units of eps
    for q in x:
        top = q + lap(8 * c / eps)
        middle = q + lap(4 * c / eps)
        is_top = top - t_bar >= 16
        is_middle = middle - t_bar >= 0
        answer = ite(is_top, top - t_bar if gap else top, ite(is_middle, middle - t_bar, 0.0 if gap else -100.0))
        out.append(ite(spent > 4 * c - 2, BOTTOM, answer))
        spent = spent + ite(is_top, 1, ite(is_middle, 2, 0))
    return tuple(out)


@_svt("adaptivesvt")
def adaptivesvt(x, *, eps=0.1, n=5, c=1, T=0.5):
    """CheckDP's adaptivesparsevector (Ding et al. 2019, sqrt 2 as 2): two-level thresholds; claims eps, eps-DP.

    An answer far above (gap >= 16 with Lap(8c/eps)) releases its gap for eps/(4c), one just
    above (Lap(4c/eps)) for eps/(2c).  eps-DP, an upper bound of the exact level, which is not known.
    """
    return _adaptive_svt(x, eps=eps, c=c, T=T, gap=True)


@_svt("badadaptivesvt")
def badadaptivesvt(x, *, eps=0.1, n=5, c=1, T=0.5):
    """CheckDP's badadaptivesparsevector: the top branch releases q + eta; claims eps, level grows with n.

    A top answer fixes the threshold (its release reads no threshold noise), so every answer below
    before it pays 3 eps / 8: (3n - 2) eps / 8 at c = 1 (proved at n = 5 and 20; certified at n = 5,
    0.575 of 0.725 at n = 20, eps = 0.1).
    """
    return _adaptive_svt(x, eps=eps, c=c, T=T, gap=False)


# CheckDP's noisy max loop and its monotone sparse vectors (imports here keep this part apart)
from samplers.catalogue.continuous import _sparse_vector  # noqa: E402
from samplers.lang import any_of, decreasing, increasing  # noqa: E402


def _running_max(x, *, eps, value):
    """CheckDP's noisymax loop: keep the best noisy answer ``bq`` and release its index (``value``:
    the answer itself, badnoisymax's bug); ``q[i] + eta > bq || i == 0`` as CheckDP writes it."""
    best, bq = 0, 0
    for i, q in enumerate(x):
        eta = lap(2 / eps)
        better = any_of(q + eta > bq, i == 0)
        best = ite(better, q + eta if value else i, best)
        bq = ite(better, q + eta, bq)
    return best


@_checkdp(lambda p: p["eps"], "noisymax", neighbours=all_differ)
def noisymax(x, *, eps=0.1, n=5):
    """CheckDP's noisymax: report noisy max as a running-max loop, Lap(2/eps), the index; eps-DP.

    The prover reads the loop's chain of choices as one ``argmax`` (first maximum: ``>``)."""
    return _running_max(x, eps=eps, value=False)


@_checkdp(lambda p: p["eps"], "badnoisymax", neighbours=all_differ)
def badnoisymax(x, *, eps=0.1, n=5):
    """CheckDP's badnoisymax: the loop releases the noisy max value; claims eps, true level n eps / 2."""
    return _running_max(x, eps=eps, value=True)


def _monotone_svt(neighbours: Any, name: str):
    """CheckDP's svt_increasing / svt_decreasing: answers in -10..10 that all move one way."""
    return _checkdp(lambda p: p["eps"], name, lo=-10, neighbours=neighbours)


@_monotone_svt(increasing, "svt_increasing")
def svt_increasing(x, *, eps=0.1, n=5, c=1, T=0.5):
    """CheckDP's svt_increasing: threshold Lap(2/eps), answers Lap(2c/eps), cutoff c; eps-DP.

    Half the answer noise of sparse vector under all_differ (svt1): when every answer moves the
    same way, the threshold's shift pays for the answers' common move (aligned per direction).
    DP compares both orders of a pair, so increasing and decreasing are one relation."""
    return _sparse_vector(x, T=T, c=c, threshold_scale=2 / eps, query_scale=2 * c / eps)


@_monotone_svt(decreasing, "svt_decreasing")
def svt_decreasing(x, *, eps=0.1, n=5, c=1, T=0.5):
    """CheckDP's svt_decreasing: svt_increasing under DECREASING (the same symmetric relation); eps-DP."""
    return _sparse_vector(x, T=T, c=c, threshold_scale=2 / eps, query_scale=2 * c / eps)
