"""CheckDP's summation benchmarks (Wang et al., CCS 2020, ``examples/``) in our language.

Inputs are integer query answers in ``0..10``; neighbours are CheckDP's ``ONE_DIFFER``
(one answer changes, by at most 1).  The correct programs carry their true level and the
buggy twins a claim they miss, so the prover must prove the first and refute nothing of
the second (and the certified lower bound must exceed the claim).
"""

from __future__ import annotations

from typing import Any, Mapping

from samplers.catalogue import register
from samplers.errors import ParameterError
from samplers.lang import ints, mechanism, one_differ
from samplers.lang import laplace as lap


def _check(p: Mapping[str, Any]) -> None:
    """eps > 0; for the smart sums also CheckDP's assumptions 0 <= T < n and 1 < M < n."""
    if not p["eps"] > 0:
        raise ParameterError(f"eps must be positive, got {p['eps']}")
    if "M" in p and not (0 <= p["T"] < p["n"] and 1 < p["M"] < p["n"]):
        raise ParameterError(f"need 0 <= T < n and 1 < M < n (CheckDP's assumptions), got T={p['T']}, "
                             f"M={p['M']}, n={p['n']}")


def _checkdp(claimed: Any, name: str):
    def wrap(fn):
        return register(mechanism(domain=ints(lo=0, hi=10, size="n"), neighbours=one_differ, check=_check,
                                  claimed_eps=claimed, name=name)(fn))

    return wrap


@_checkdp(lambda p: p["eps"], "partialsum")
def partialsum(x, *, eps=0.1, n=5):
    """CheckDP's partialsum: the sum of the answers plus Lap(1/eps); eps-DP (true level eps)."""
    return sum(x) + lap(1 / eps)


@_checkdp(lambda p: p["eps"], "badpartialsum")
def badpartialsum(x, *, eps=0.1, n=5):
    """CheckDP's badpartialsum: Lap(1/(2 eps)) instead of Lap(1/eps); claims eps, true level 2 eps."""
    return sum(x) + lap(1 / (2 * eps))


def _smart_sum(x, *, eps, T, M, block_noise):
    """CheckDP's smartsum loop: a running noisy sum, restarted from the noisy block sum every M steps."""
    out, running, block = [], 0, 0
    for i, q in enumerate(x[: T + 1]):
        if (i + 1) % M == 0:
            running = block + q + (lap(1 / eps) if block_noise else 0)
            block = 0
        else:
            running = running + q + lap(1 / eps)
            block = block + q
        out.append(running)
    return tuple(out)


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
