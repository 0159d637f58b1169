"""Weighted decision diagrams: exact integer-valued functions of Boolean variables.

A function ``f: {0,1}^k -> N`` is an *edge* ``(w, n)``: ``f = w * [n]``.  A node
``n = (v, wl, lo, wh, hi)`` tests variable ``v`` (variables are ranks ``0..k-1``,
tested in increasing order along every path) and scales its children by the integer
weights ``wl`` and ``wh``.  Nodes are normalised so that ``gcd(wl, wh) = 1``: then a
node's values have greatest common divisor 1, the split ``f = content * primitive
part`` is unique, and hash-consing makes equal functions share one node.  Scaling is
O(1) (it only touches the edge weight), which is what keeps products of independent
factors (randomized response: one factor per client) linear in size.

These diagrams hold ``D * P(o | x)`` for every output ``o`` (and, optionally, every
input ``x``) at once: :mod:`verifiers.bdd.wmc` builds them from a BDD by summing out the
noise.  Everything is exact integer arithmetic; ratios are ``Fraction`` or ``inf``.
"""

from __future__ import annotations

import itertools
from fractions import Fraction
from math import gcd
from typing import Iterator

import numpy as np

from samplers import deadline
from verifiers.bdd.dag import CLOCK_EVERY, memo_eval
from verifiers.ratio import INF, Ratio

Edge = tuple[int, int]  # (weight, node id)
ONE = 0  # the terminal node: the constant function 1
ZERO: Edge = (0, ONE)
_INT64_MAX = 2**63 - 1


class WDD:
    """A manager of weighted decision diagram nodes over ``nvars`` variables."""

    def __init__(self, nvars: int) -> None:
        self.nvars = nvars
        # node arrays; node 0 is the terminal, whose "variable" is nvars (after all others)
        self.var: list[int] = [nvars]
        self.wl: list[int] = [0]
        self.lo: list[int] = [ONE]
        self.wh: list[int] = [0]
        self.hi: list[int] = [ONE]
        self._unique: dict[tuple[int, int, int, int, int], int] = {}
        self._add_memo: dict[tuple[int, int, int, int], Edge] = {}
        # node functions never change, so pair results are kept across queries
        self._ratio_memo: dict[tuple[int, int], tuple[int, int, int]] = {(ONE, ONE): (1, 1, -1)}
        self._power_memo: dict[int, dict[tuple[int, int], Ratio]] = {}

    def __len__(self) -> int:
        """Number of nodes (the terminal included)."""
        return len(self.var)

    def entries(self) -> int:
        """Nodes plus memo entries: what the manager holds in memory."""
        return len(self.var) + len(self._add_memo) + len(self._ratio_memo) + sum(map(len, self._power_memo.values()))

    # -- construction -----------------------------------------------------------------
    def node(self, v: int, low: Edge, high: Edge) -> Edge:
        """The function ``v ? high : low`` (children must not test variables <= v)."""
        a, lo = low
        b, hi = high
        if a == b and (lo == hi or a == 0):
            return low if a else ZERO
        g = gcd(a, b)
        a, b = a // g, b // g
        key = (v, a, lo if a else ONE, b, hi if b else ONE)
        n = self._unique.get(key)
        if n is None:
            n = len(self.var)
            self._unique[key] = n
            self.var.append(v)
            self.wl.append(key[1])
            self.lo.append(key[2])
            self.wh.append(key[3])
            self.hi.append(key[4])
        return g, n

    def variable(self, v: int) -> Edge:
        """The function equal to variable ``v`` (1 when it is set)."""
        return self.node(v, ZERO, (1, ONE))

    def cofactors(self, n: int, v: int) -> tuple[Edge, Edge]:
        """The edges of ``[n]`` with variable ``v`` set to 0 and to 1 (``v`` <= var of n)."""
        if self.var[n] == v:
            return (self.wl[n], self.lo[n]), (self.wh[n], self.hi[n])
        return (1, n), (1, n)

    def add(self, e1: Edge, e2: Edge) -> Edge:
        """The pointwise sum of two functions."""
        trivial, g, key = self._add_plan(e1, e2)
        if trivial is not None:
            return trivial
        w, n = memo_eval(key, self._expand_add, self._add_memo)
        return w * g, n

    @staticmethod
    def _add_plan(e1: Edge, e2: Edge) -> tuple[Edge | None, int, tuple[int, int, int, int] | None]:
        """Either the sum outright, or a common factor and a normalised memo key."""
        a, n = e1
        b, m = e2
        if a == 0:
            return e2, 1, None
        if b == 0:
            return e1, 1, None
        if n == m:
            return (a + b, n), 1, None
        g = gcd(a, b)
        a, b = a // g, b // g
        if n > m:
            n, m, a, b = m, n, b, a
        return None, g, (n, a, m, b)

    def _expand_add(self, key: tuple[int, int, int, int]):
        n, a, m, b = key
        v = min(self.var[n], self.var[m])
        (nl, nh), (ml, mh) = self.cofactors(n, v), self.cofactors(m, v)
        plans = [
            self._add_plan((a * nl[0], nl[1]), (b * ml[0], ml[1])),
            self._add_plan((a * nh[0], nh[1]), (b * mh[0], mh[1])),
        ]
        kids = [p[2] for p in plans if p[0] is None]

        def combine(vals: list[Edge]) -> Edge:
            it = iter(vals)
            sides = []
            for trivial, g, _ in plans:
                if trivial is not None:
                    sides.append(trivial)
                else:
                    w, r = next(it)
                    sides.append((w * g, r))
            return self.node(v, sides[0], sides[1])

        return kids, combine

    def restrict(self, e: Edge, values: dict[int, int], into: "WDD | None" = None,
                 rename: dict[int, int] | None = None) -> Edge:
        """``e`` with the variables in ``values`` fixed (a cofactor).

        With ``into`` the result is built in that manager, each remaining variable ``v``
        becoming ``rename[v]`` (an order-preserving map).
        """
        target = self if into is None else into
        new_var = (lambda v: v) if rename is None else rename.__getitem__
        memo: dict[int, Edge] = {ONE: (1, ONE)}

        def expand(n: int):
            v = self.var[n]
            if v in values:
                w, kid = (self.wh[n], self.hi[n]) if values[v] else (self.wl[n], self.lo[n])
                return [kid], lambda r: (w * r[0][0], r[0][1])
            return [self.lo[n], self.hi[n]], lambda r: target.node(
                new_var(v), (self.wl[n] * r[0][0], r[0][1]), (self.wh[n] * r[1][0], r[1][1]))

        w, n = memo_eval(e[1], expand, memo) if e[0] else ZERO
        return e[0] * w, n

    # -- reading ----------------------------------------------------------------------
    def evaluate(self, e: Edge, bits: dict[int, int] | list[int]) -> int:
        """The value at one assignment (``bits[v]`` for each variable ``v`` tested)."""
        w, n = e
        while n != ONE and w:
            if bits[self.var[n]]:
                w, n = w * self.wh[n], self.hi[n]
            else:
                w, n = w * self.wl[n], self.lo[n]
        return w

    def items(self, e: Edge) -> Iterator[tuple[tuple[int, ...], int]]:
        """Every assignment (a bit tuple over all variables) with a non-zero value."""
        if e[0] == 0:
            return
        stack = [(e[1], e[0], ())]
        popped = 0
        while stack:
            popped += 1
            if popped % CLOCK_EVERY == 0:
                deadline.check("while listing the outputs of a decision diagram")
            n, w, prefix = stack.pop()
            v = self.var[n]
            for free in itertools.product((0, 1), repeat=v - len(prefix)):
                bits = prefix + free
                if n == ONE:
                    yield bits, w
                    continue
                if self.wh[n]:
                    stack.append((self.hi[n], w * self.wh[n], bits + (1,)))
                if self.wl[n]:
                    stack.append((self.lo[n], w * self.wl[n], bits + (0,)))

    def to_array(self, e: Edge) -> np.ndarray:
        """All ``2**nvars`` values, variable 0 the most significant bit.

        The array is int64 when every value fits (checked exactly), else of Python ints.
        """
        bound = memo_eval(e[1], self._expand_bound, {ONE: 1}) * e[0]
        dtype = np.int64 if bound <= _INT64_MAX else object
        memo: dict[int, np.ndarray] = {ONE: np.ones(1, dtype=dtype)}

        def side(v: int, w: int, kid: int, table: np.ndarray) -> np.ndarray:
            size = 2 ** (self.nvars - v - 1)
            if w == 0:
                return np.zeros(size, dtype=dtype)
            return np.tile(table, size // len(table)) * w

        def expand(n: int):
            v = self.var[n]
            return [self.lo[n], self.hi[n]], lambda t: np.concatenate(
                [side(v, self.wl[n], self.lo[n], t[0]), side(v, self.wh[n], self.hi[n], t[1])])

        table = memo_eval(e[1], expand, memo)
        return np.tile(table, 2**self.nvars // len(table)) * e[0]

    def _expand_bound(self, n: int):
        return [self.lo[n], self.hi[n]], lambda b: max(self.wl[n] * b[0], self.wh[n] * b[1])

    # -- comparing two functions ------------------------------------------------------
    def max_ratio(self, e1: Edge, e2: Edge, *, witness: bool = True) -> tuple[Ratio, tuple[int, ...] | None]:
        """``max f1(a) / f2(a)`` over assignments with ``f1(a) > 0``, and one such ``a``.

        ``inf`` when some ``f1(a) > 0 = f2(a)``; ``(0, None)`` when ``f1`` is zero.  Node
        pair ratios are kept as integer pairs ``(num, den)`` (``den = 0`` for inf) and
        compared by cross-multiplication; only the result becomes a Fraction.
        """
        if e1[0] == 0:
            return Fraction(0), None
        if e2[0] == 0:
            return INF, self._some_path(e1[1]) if witness else None
        root = (e1[1], e2[1])
        num, den, _ = memo_eval(root, self._expand_ratio, self._ratio_memo)
        bits = self._ratio_path(root, self._ratio_memo) if witness else None
        return (INF if den == 0 else Fraction(num * e1[0], den * e2[0])), bits

    def _expand_ratio(self, key: tuple[int, int]):
        u, w = key
        v = min(self.var[u], self.var[w])
        cands = []  # (branch, numerator, denominator, kid key or None)
        for branch, (eu, ew) in enumerate(zip(self.cofactors(u, v), self.cofactors(w, v))):
            if eu[0] == 0:
                continue
            if ew[0] == 0:
                cands.append((branch, 1, 0, None))
            else:
                cands.append((branch, eu[0], ew[0], (eu[1], ew[1])))
        kids = [c[3] for c in cands if c[3] is not None]

        def combine(vals: list[tuple[int, int, int]]) -> tuple[int, int, int]:
            it = iter(vals)
            best = (-1, 1, -1)
            for branch, a, b, kid in cands:
                if kid is not None:
                    c, d, _ = next(it)
                    a, b = a * c, b * d
                if b == 0:
                    return 1, 0, branch  # infinite: nothing beats it
                if a * best[1] > best[0] * b:
                    best = (a, b, branch)
            return best

        return kids, combine

    def _ratio_path(self, key: tuple[int, int], memo: dict) -> tuple[int, ...]:
        bits = [0] * self.nvars
        u, w = key
        while (u, w) != (ONE, ONE):
            v = min(self.var[u], self.var[w])
            branch = memo[(u, w)][2]
            bits[v] = branch
            eu, ew = self.cofactors(u, v)[branch], self.cofactors(w, v)[branch]
            if ew[0] == 0:  # an infinite ratio: any positive path of u from here on
                self._complete_path(eu[1], bits)
                break
            u, w = eu[1], ew[1]
        return tuple(bits)

    def _some_path(self, n: int) -> tuple[int, ...]:
        bits = [0] * self.nvars
        self._complete_path(n, bits)
        return tuple(bits)

    def _complete_path(self, n: int, bits: list[int]) -> None:
        while n != ONE:
            if self.wl[n]:
                bits[self.var[n]], n = 0, self.lo[n]
            else:
                bits[self.var[n]], n = 1, self.hi[n]

    def power_sum(self, e1: Edge, e2: Edge, alpha: int) -> Ratio:
        """``sum_a f1(a)^alpha / f2(a)^(alpha-1)`` (Renyi divergence's sum); ``inf`` if some
        ``f1(a) > 0 = f2(a)``."""
        if e1[0] == 0:
            return Fraction(0)
        if e2[0] == 0:
            return INF
        memo = self._power_memo.setdefault(alpha, {(ONE, ONE): Fraction(1)})

        def top(key: tuple[int, int]) -> int:
            return min(self.var[key[0]], self.var[key[1]])

        def expand(key: tuple[int, int]):
            v = top(key)
            terms = []  # (factor or INF, kid)
            for eu, ew in zip(self.cofactors(key[0], v), self.cofactors(key[1], v)):
                if eu[0] == 0:
                    continue
                if ew[0] == 0:
                    terms.append((INF, None))
                    continue
                kid = (eu[1], ew[1])
                mult = 2 ** (top(kid) - v - 1)
                terms.append((Fraction(eu[0] ** alpha, ew[0] ** (alpha - 1)) * mult, kid))
            kids = [k for _, k in terms if k is not None]

            def combine(vals: list[Ratio]) -> Ratio:
                if any(f == INF for f, _ in terms):
                    return INF
                return sum((f * s for (f, _), s in zip(terms, vals)), Fraction(0))

            return kids, combine

        root = (e1[1], e2[1])
        s = memo_eval(root, expand, memo)
        if s == INF:
            return INF
        return s * 2 ** top(root) * Fraction(e1[0] ** alpha, e2[0] ** (alpha - 1))
