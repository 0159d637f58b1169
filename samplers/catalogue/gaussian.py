"""Gaussian-noise mechanisms: approximate DP, checked by the continuous backend's (eps, delta) bounds.

The Gaussian mechanism (Dwork and Roth 2014; its exact delta(eps) is Balle and Wang's
analytic formula, 2018) and a report-noisy-max with Gaussian noise (as DiPApprox
checks it).  They are not eps-DP for any eps: the search's pure-DP bounds grow with the
events it tries; their meaningful question is delta at a given eps.
"""

from __future__ import annotations

from samplers.catalogue import register
from samplers.lang import all_differ, argmax, ints, mechanism, one_differ
from samplers.lang import gaussian as gauss


@register
@mechanism(domain=ints(lo=-10, hi=10, size=1), neighbours=one_differ, aliases=("GaussianMechanism",))
def gaussian_mechanism(x, *, sigma=1.0):
    """x + N(0, sigma^2) on a sensitivity-1 query."""
    return x[0] + gauss(sigma)


@register
@mechanism(domain=ints(lo=-10, hi=10, size="n"), neighbours=all_differ)
def gaussian_noisy_max(x, *, sigma=2.0, n=3):
    """Report noisy max with N(0, sigma^2) noise on every query, releasing the index."""
    return argmax([xi + gauss(sigma) for xi in x])
