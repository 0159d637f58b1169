"""The reference exact backend: output distributions by enumerating the noise.

:func:`distribution` specialises the program to the input (constants folded), then
walks the nodes in order keeping a joint law over the values still needed later
(``Fraction`` weights), summing out each value after its last use.  This is
enumeration of the noise support with sharing: identical partial states merge, so
streaming mechanisms (noisy max, sparse vector) stay small.  :func:`distribution_naive`
is the plain product over all noise outcomes, used to test the former.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from fractions import Fraction
from typing import Any, Sequence

from samplers.lang.builder import replay
from samplers.lang.ir import Node, Program, evaluate, tied_maxima
from verifiers.base import Distribution, ExactBackend, refuse_continuous


def _specialise(program: Program, x: Sequence[int]) -> tuple[list[Node], list[int]]:
    refuse_continuous(program, "enumerate")
    return replay(program.nodes, program.outputs, inputs=program.domain.check(x))


def _output(program: Program, values: Sequence[Any]) -> Any:
    return tuple(values) if program.tuple_output else values[0]


def distribution(program: Program, x: Sequence[int]) -> Distribution:
    """Exact ``P(o | x)`` for every output ``o`` with positive probability."""
    nodes, outs = _specialise(program, x)
    last = [-1] * len(nodes)
    for i, n in enumerate(nodes):
        for a in n.args:
            last[a] = i
    for o in outs:
        last[o] = len(nodes)

    consts: dict[int, Any] = {}
    live: list[int] = []  # node ids whose values make up a state key, in key order
    state: dict[tuple, Fraction] = {(): Fraction(1)}
    for i, n in enumerate(nodes):
        if n.op == "const":
            consts[i] = n.attr
            continue
        pos = {j: k for k, j in enumerate(live)}
        getters = [(True, consts[a]) if a in consts else (False, pos[a]) for a in n.args]

        def args_of(key: tuple) -> list[Any]:
            return [v if is_const else key[v] for is_const, v in getters]

        new: dict[tuple, Fraction] = defaultdict(Fraction)
        if n.op == "draw":
            lo, weights = n.attr
            for key, p in state.items():
                for k, w in enumerate(weights):
                    if w:
                        new[key + (lo + k,)] += p * w
        elif n.op == "argmax" and n.attr == "uniform":
            for key, p in state.items():
                tied = tied_maxima(args_of(key))
                share = p / len(tied)
                for t in tied:
                    new[key + (t,)] += share
        else:
            for key, p in state.items():
                new[key + (evaluate(n.op, n.attr, args_of(key)),)] += p
        live.append(i)
        state = new
        keep = [k for k, j in enumerate(live) if last[j] > i]
        if len(keep) < len(live):
            merged: dict[tuple, Fraction] = defaultdict(Fraction)
            for key, p in state.items():
                merged[tuple(key[k] for k in keep)] += p
            state = merged
            live = [live[k] for k in keep]

    pos = {j: k for k, j in enumerate(live)}
    result: Distribution = defaultdict(Fraction)
    for key, p in state.items():
        vals = [consts[o] if o in consts else key[pos[o]] for o in outs]
        result[_output(program, vals)] += p
    return dict(result)


def distribution_naive(program: Program, x: Sequence[int]) -> Distribution:
    """The same law by the plain product over every noise outcome (exponential; for tests)."""
    nodes, outs = _specialise(program, x)
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
                result[_output(program, [vals[o] for o in outs])] += p
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
