"""The reference exact backend: output distributions by enumerating the noise.

:class:`Enumerator` answers every query of :mod:`verifiers.base` from
:func:`verifiers.joint_law.distribution` (enumeration of the noise support with
sharing).  :func:`distribution_naive` is the plain product over all noise outcomes,
used to test the former.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from fractions import Fraction
from typing import Any, Sequence

from samplers.lang.ir import Program, evaluate, tied_maxima
from verifiers.base import MAX_CACHED_INPUTS, Distribution, ExactBackend
from verifiers.joint_law import distribution, output_value, specialise

__all__ = ["Enumerator", "distribution", "distribution_naive"]


def distribution_naive(program: Program, x: Sequence[int]) -> Distribution:
    """The same law by the plain product over every noise outcome (exponential; for tests)."""
    nodes, outs = specialise(program, x)
    noise = [i for i, n in enumerate(nodes) if n.op == "draw"]
    ties = [i for i, n in enumerate(nodes) if n.op == "argmax" and n.attr == "uniform"]
    supports = [
        [(nodes[i].attr[0] + k, w) for k, w in enumerate(nodes[i].attr[1]) if w] for i in noise
    ]
    # A uniform argmax picks the j-th of its tied maxima for j in 0..arity-1 (when it exists).
    tie_choices = [range(len(nodes[i].args)) for i in ties]
    result: Distribution = defaultdict(Fraction)
    for outcome in itertools.product(*supports):
        p_noise = Fraction(1)
        for _, w in outcome:
            p_noise *= w
        for choice in itertools.product(*tie_choices):
            vals: dict[int, Any] = {i: v for i, (v, _) in zip(noise, outcome)}
            picks = dict(zip(ties, choice))
            p = p_noise
            for i, n in enumerate(nodes):
                if i in vals:
                    continue
                args = [vals[a] for a in n.args]
                if i in picks:
                    tied = tied_maxima(args)
                    if picks[i] >= len(tied):
                        p = Fraction(0)
                        break
                    vals[i] = tied[picks[i]]
                    p /= len(tied)
                else:
                    vals[i] = evaluate(n.op, n.attr, args)
            if p:
                result[output_value(program, [vals[o] for o in outs])] += p
    return dict(result)


class Enumerator(ExactBackend):
    """The enumerate backend: the reference that every other exact backend is tested against."""

    name = "enumerate"

    def __init__(self, program: Program) -> None:
        super().__init__(program)
        self._cache: dict[tuple[int, ...], Distribution] = {}

    def distribution(self, x: Sequence[int]) -> Distribution:
        key = self.check_input(x)
        if key not in self._cache:
            self._cache[key] = distribution(self.program, key)
        return self._cache[key]

    def trim(self) -> None:
        if len(self._cache) > MAX_CACHED_INPUTS:
            self._cache.clear()
