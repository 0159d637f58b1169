"""Exact weighted model counting of a ``dd`` BDD, keeping some variables symbolic.

Noise variables carry integer weights ``(a, b)`` for values 0 and 1 with ``a + b = d``
(probabilities ``a/d`` and ``b/d``).  Scaling every noise variable by its ``d`` turns
the count into integer arithmetic: the count of a node at level ``l`` is
``sum over the noise variables at levels >= l of prod(weights) * f``, an integer, and
a noise level skipped by an edge contributes its factor ``d`` (both of its values).
The probability is that integer over ``D``, the product of every ``d``.

*Kept* variables (outputs, and inputs when wanted) are not summed: the count is then a
function of them, a :class:`~verifiers.wdd.WDD` edge, built at kept nodes and added
at noise nodes.  Complement edges (``dd.cudd``): ``low``/``high`` are the children of
the regular node, so a parity is carried down and the count of a node is memoised
per (node, parity); no ``1 - P`` is ever formed.  The traversal is iterative.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from samplers.errors import BudgetExceeded
from verifiers.bdd.dag import memo_eval
from verifiers.bdd.wdd import ONE, WDD, ZERO, Edge


@dataclass(frozen=True)
class Levels:
    """What each BDD level is: a kept variable (its WDD rank) or a weighted noise variable.

    ``prefix[l]`` is the product of the noise denominators at levels below ``l``; the
    last entry (the terminal level) is ``D``.
    """

    kept: dict[int, int]  # level -> WDD variable rank
    weights: dict[int, tuple[int, int]]  # level -> integer weights of 0 and 1
    prefix: list[int]

    @classmethod
    def build(cls, nlevels: int, kept_levels: list[int], weights: dict[int, tuple[int, int]]) -> "Levels":
        prefix = [1]
        for level in range(nlevels):
            prefix.append(prefix[-1] * sum(weights.get(level, (1, 0))))
        return cls({l: r for r, l in enumerate(sorted(kept_levels))}, dict(weights), prefix)

    @property
    def denominator(self) -> int:
        return self.prefix[-1]

    def gap(self, upper: int, lower: int) -> int:
        """Product of the noise denominators at levels ``upper <= l < lower``."""
        return self.prefix[lower] // self.prefix[upper]


def count(u: Any, levels: Levels, wdd: WDD, regular: Callable[[Any], int],
          budget: int | None = None) -> Edge:
    """``D * P`` as a WDD edge over the kept variables: ``sum_noise weight * u``.

    ``regular(f)`` gives the id of the regular (non-complemented) node of ``f``;
    :class:`BudgetExceeded` is raised once ``wdd`` holds more than ``budget`` nodes.
    """
    terminal = len(levels.prefix) - 1
    funcs: dict[tuple[int, int], Any] = {}

    def level_of(f: Any) -> int:
        return terminal if f.var is None else f.level

    def key(f: Any, parity: int) -> tuple[int, int]:
        k = (regular(f), parity ^ int(f.negated))
        funcs.setdefault(k, f)
        return k

    def expand(k: tuple[int, int]):
        f, parity = funcs[k], k[1]
        if f.var is None:  # the constant TRUE node, complemented when parity is 1
            return [], lambda _: ZERO if parity else (1, ONE)
        level = f.level
        low, high = f.low, f.high
        sides = (level_of(low), level_of(high))
        kids = [key(low, parity), key(high, parity)]

        def combine(vals: list[Edge]) -> Edge:
            (w0, n0), (w1, n1) = (
                (w * levels.gap(level + 1, s), n) for (w, n), s in zip(vals, sides)
            )
            if budget is not None and len(wdd.var) > budget:
                raise BudgetExceeded(f"weighted diagram node budget exceeded: more than {budget} nodes",
                                     limit="wdd_nodes", value=budget)
            rank = levels.kept.get(level)
            if rank is not None:
                return wdd.node(rank, (w0, n0), (w1, n1))
            a, b = levels.weights[level]
            return wdd.add((a * w0, n0), (b * w1, n1))

        return kids, combine

    root = key(u, 0)
    w, n = memo_eval(root, expand, {})
    return w * levels.gap(0, level_of(u)), n
