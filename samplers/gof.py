"""Goodness of fit of sampled counts against an exact distribution (Pearson chi-square).

Used to check that a sampler draws from the law the exact backends compute.  Cells
whose expected count is below ``min_expected`` are pooled so the chi-square
approximation holds; a sample at an output of probability zero fails outright.  The
pooling looks at the exact law only (expected counts, ties in the law's own order),
never at the observed counts: pooling cells by what was observed (say, the cells that
happened to be empty together) inflates the statistic and rejects correct samplers.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Mapping

from scipy.stats import chi2


@dataclass(frozen=True)
class GofResult:
    statistic: float
    dof: int
    pvalue: float
    impossible: int  # samples at outputs the exact law gives probability 0


def goodness_of_fit(
    counts: Mapping[Any, int], probs: Mapping[Any, Fraction], min_expected: float = 5.0
) -> GofResult:
    """Chi-square test of H0: ``counts`` are multinomial with probabilities ``probs``."""
    n = sum(counts.values())
    impossible = sum(c for o, c in counts.items() if probs.get(o, 0) == 0)
    if impossible:
        return GofResult(float("inf"), 0, 0.0, impossible)
    support = [o for o, p in probs.items() if p > 0]
    expected = {o: float(probs[o]) * n for o in support}
    cells = [(expected[o], counts.get(o, 0)) for o in sorted(support, key=expected.__getitem__)]  # stable
    pooled: list[tuple[float, int]] = []
    acc_e, acc_c = 0.0, 0
    for e, c in cells:  # ascending expected counts: pool the small ones together
        acc_e, acc_c = acc_e + e, acc_c + c
        if acc_e >= min_expected:
            pooled.append((acc_e, acc_c))
            acc_e, acc_c = 0.0, 0
    if acc_e > 0:
        if pooled:
            e, c = pooled.pop()
            pooled.append((e + acc_e, c + acc_c))
        else:
            pooled.append((acc_e, acc_c))
    dof = len(pooled) - 1
    if dof < 1:
        return GofResult(0.0, 0, 1.0, 0)
    stat = sum((c - e) ** 2 / e for e, c in pooled)
    return GofResult(stat, dof, float(chi2.sf(stat, dof)), 0)
