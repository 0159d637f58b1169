"""The exact output law of a program by propagating a joint law over live values.

The reference semantics shared by the enumerate backend (:mod:`verifiers.enumerate`)
and the HMM compiler of the SMT backend (:mod:`verifiers.smt.hmm_compile`), so neither
backend imports the other.  :func:`distribution` specialises the program to the input
(constants folded), then walks the nodes in order keeping a joint law over the values
still needed later (:class:`JointLaw`: exact, integer weights over a common ``Fraction``
scale), summing out each value after its last use.  This is enumeration of the noise
support with sharing: identical partial states merge, so streaming mechanisms (noisy
max, sparse vector) stay small.
"""

from __future__ import annotations

import math
from collections import defaultdict
from fractions import Fraction
from operator import itemgetter
from typing import Any, Callable, Iterable, Iterator, Sequence

from samplers import deadline
from samplers.lang.builder import replay
from samplers.lang.ir import Node, Program, evaluate, tied_maxima
from verifiers.base import Distribution, refuse_continuous


CHECK_EVERY = 1 << 16  # states between two looks at the clock in the loops over a large law


def _clocked(items: Iterable[Any], size: int) -> Iterable[Any]:
    """``items``, looking at the deadline every :data:`CHECK_EVERY` of them when there are that many."""
    return items if size < CHECK_EVERY else _with_clock(items)


def _with_clock(items: Iterable[Any]) -> Iterator[Any]:
    for k, item in enumerate(items):
        if k % CHECK_EVERY == 0:
            deadline.check("while enumerating a large law")
        yield item


def specialise(program: Program, x: Sequence[int]) -> tuple[list[Node], list[int]]:
    refuse_continuous(program, "enumerate")
    return replay(program.nodes, program.outputs, inputs=program.domain.check(x))


def output_value(program: Program, values: Sequence[Any]) -> Any:
    return tuple(values) if program.tuple_output else values[0]


class JointLaw:
    """A finite joint law over the values of the live nodes, exact and fast.

    Probabilities are ``scale * w`` with a common ``Fraction`` scale and integer
    weights ``w`` (``state`` maps tuples of values, one per id in ``live``, to
    weights), so merging identical partial states adds integers.  Constants are kept
    aside in ``consts``.  :meth:`apply` adds one node's value and :meth:`keep` sums out
    the values no longer needed.  Shared by :func:`distribution` and the HMM compiler
    (:mod:`verifiers.smt.hmm_compile`).
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
            for key, p in _clocked(self.state.items(), len(self.state)):
                for v, w in ints:
                    new[key + (v,)] += p * w
            self.scale /= den
        elif n.op == "argmax" and n.attr == "uniform":
            den = math.lcm(*range(1, len(n.args) + 1))
            for key, p in _clocked(self.state.items(), len(self.state)):
                tied = tied_maxima(args_of(key))
                share = p * (den // len(tied))
                for t in tied:
                    new[key + (t,)] += share
            self.scale /= den
        else:
            memo: dict[tuple, Any] = {}
            for key, p in _clocked(self.state.items(), len(self.state)):
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
        for key, p in _clocked(self.state.items(), len(self.state)):
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
    nodes, outs = specialise(program, x)
    last = last_uses(nodes, outs)
    law = JointLaw()
    for i, n in enumerate(nodes):
        deadline.check(f"while enumerating {program.name}")
        law.apply(i, n)
        if any(last[j] <= i for j in law.live):
            law.keep([j for j in law.live if last[j] > i])
    result: Distribution = defaultdict(Fraction)
    projected = law.project(outs)
    for vals, p in _clocked(projected.items(), len(projected)):
        result[output_value(program, vals)] += p
    return dict(result)

