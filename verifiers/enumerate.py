"""The reference exact backend: output distributions by enumerating the noise.

:func:`distribution` specialises the program to the input (constants folded), then
walks the nodes in order keeping a joint law over the values still needed later
(:class:`JointLaw`: exact, integer weights over a common ``Fraction`` scale),
summing out each value after its last use.  This is
enumeration of the noise support with sharing: identical partial states merge, so
streaming mechanisms (noisy max, sparse vector) stay small.  :func:`distribution_naive`
is the plain product over all noise outcomes, used to test the former.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from fractions import Fraction
from operator import itemgetter
from typing import Any, Callable, Sequence

from samplers import deadline
from samplers.lang.builder import replay
from samplers.lang.ir import Node, Program, evaluate, tied_maxima
from verifiers.base import Distribution, ExactBackend, refuse_continuous


def _specialise(program: Program, x: Sequence[int]) -> tuple[list[Node], list[int]]:
    refuse_continuous(program, "enumerate")
    return replay(program.nodes, program.outputs, inputs=program.domain.check(x))


def _output(program: Program, values: Sequence[Any]) -> Any:
    return tuple(values) if program.tuple_output else values[0]


class JointLaw:
    """A finite joint law over the values of the live nodes, exact and fast.

    Probabilities are ``scale * w`` with a common ``Fraction`` scale and integer
    weights ``w`` (``state`` maps tuples of values, one per id in ``live``, to
    weights), so merging identical partial states adds integers.  Constants are kept
    aside in ``consts``.  :meth:`apply` adds one node's value and :meth:`keep` sums out
    the values no longer needed.  Shared by :func:`distribution` and the HMM compiler
    (:mod:`verifiers.hmm_compile`).
    """

    def __init__(self, live: Sequence[int] = (), start: tuple = ()) -> None:
        self.live = list(live)
        self.state: dict[tuple, int] = {tuple(start): 1}
        self.scale = Fraction(1)
        self.consts: dict[int, Any] = {}

    def apply(self, i: int, n: Node) -> None:
        """Extend the law with the value of node ``i`` (``n``), drawing noise where it draws."""
        if n.op == "const":
            self.consts[i] = n.attr
            return
        args_of = self._getter(n.args)
        new: dict[tuple, int] = defaultdict(int)
        if n.op == "draw":
            lo, weights = n.attr
            den = math.lcm(*(w.denominator for w in weights))
            ints = [(lo + k, w.numerator * (den // w.denominator)) for k, w in enumerate(weights) if w]
            for key, p in self.state.items():
                for v, w in ints:
                    new[key + (v,)] += p * w
            self.scale /= den
        elif n.op == "argmax" and n.attr == "uniform":
            den = math.lcm(*range(1, len(n.args) + 1))
            for key, p in self.state.items():
                tied = tied_maxima(args_of(key))
                share = p * (den // len(tied))
                for t in tied:
                    new[key + (t,)] += share
            self.scale /= den
        else:
            memo: dict[tuple, Any] = {}
            for key, p in self.state.items():
                args = args_of(key)
                v = memo.get(args, memo)
                if v is memo:
                    v = memo[args] = evaluate(n.op, n.attr, args)
                new[key + (v,)] += p
        self.live.append(i)
        self.state = new

    def _getter(self, ids: Sequence[int]) -> Callable[[tuple], tuple]:
        """A function from a state key to the tuple of values of ``ids`` (live or constant)."""
        pos = {j: k for k, j in enumerate(self.live)}
        if any(j in self.consts for j in ids):
            getters = [(True, self.consts[j]) if j in self.consts else (False, pos[j]) for j in ids]
            return lambda key: tuple(v if is_const else key[v] for is_const, v in getters)
        if len(ids) == 1:
            k = pos[ids[0]]
            return lambda key: (key[k],)
        return itemgetter(*(pos[j] for j in ids)) if ids else (lambda key: ())

    def _marginal(self, ids: Sequence[int]) -> dict[tuple, int]:
        get = self._getter(ids)
        out: dict[tuple, int] = defaultdict(int)
        for key, p in self.state.items():
            out[get(key)] += p
        return out

    def project(self, ids: Sequence[int]) -> dict[tuple, Fraction]:
        """The marginal law of the values of ``ids`` (live or constant nodes)."""
        return {key: self.scale * w for key, w in self._marginal(ids).items()}

    def keep(self, ids: Sequence[int]) -> None:
        """Sum out every live value except those of ``ids`` (a sub-list of ``live``)."""
        ids = list(ids)
        if ids != self.live:
            self.state = dict(self._marginal(ids))
            self.live = ids


def last_uses(nodes: Sequence[Node], outs: Sequence[int]) -> list[int]:
    """For each node, the index of its last user (``len(nodes)`` for outputs, -1 if unused)."""
    last = [-1] * len(nodes)
    for i, n in enumerate(nodes):
        for a in n.args:
            last[a] = i
    for o in outs:
        last[o] = len(nodes)
    return last


def distribution(program: Program, x: Sequence[int]) -> Distribution:
    """Exact ``P(o | x)`` for every output ``o`` with positive probability."""
    nodes, outs = _specialise(program, x)
    last = last_uses(nodes, outs)
    law = JointLaw()
    for i, n in enumerate(nodes):
        deadline.check(f"while enumerating {program.name}")
        law.apply(i, n)
        if any(last[j] <= i for j in law.live):
            law.keep([j for j in law.live if last[j] > i])
    result: Distribution = defaultdict(Fraction)
    for vals, p in law.project(outs).items():
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
