"""The neighbour relation as a set of differences ``d = x - x'``, with exact extremes over it.

An alignment's conditions and cost depend on the inputs only through ``d``.  For the
built-in relations the set of differences is simple: ``one_differ(s)`` and
``replace_one`` are ``{t e_j}`` (``1 <= |t| <= s``, resp. ``<=`` the domain's width in
coordinate ``j``), ``all_differ(s)`` the box ``[-s, s]^n`` without 0.  Only the
replace-one relation needs the declared bounds; for the others the conditions are discharged for
every integer input of the program *as traced*, which folded what the declared bounds decide
(a clamp the domain never reaches, a comparison it settles), so a proof covers the declared
domain only, never more of the mechanism as written.
Linear forms have their extremes at ``t = +-s`` / box vertices, and a sum of absolute
values of linear forms (an alignment's cost) is convex, so its maximum is at those
points too: both are computed here exactly.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from samplers.lang.ir import Program
from samplers.lang.neighbours import AllDiffer, OneDiffer, ReplaceOne
from verifiers.prover.linear import Lin
from verifiers.prover.paths import Unsupported

MAX_COUPLED = 12  # all_differ: coordinates one cost component may couple (2^k vertices)


@dataclass(frozen=True)
class Differences:
    """The neighbour differences of a program: ``kind`` one / all / replace."""

    kind: str
    n: int
    bound: tuple[int, ...]  # per coordinate, the largest |d_i|

    @property
    def unit(self) -> int:
        """The natural shift unit: the sensitivity (1 for replace_one)."""
        return self.bound[0] if self.kind != "replace" and self.bound else 1

    def covers(self, program: Program) -> str:
        """Which inputs a proof over these differences covers."""
        where = f"every neighbour pair of the declared domain {program.domain.describe()}"
        if self.kind == "replace":
            return f"{where} (replace_one)"
        return (f"{where} ({program.neighbours.name}; the conditions hold for every integer input of the "
                "program as traced on that domain)")

    def extremes(self, form: Lin) -> tuple[Fraction, Fraction]:
        """Min and max of a linear form over ``d`` on the differences."""
        coef = [(v[1], k) for v, k in form.coef.items()]
        if not coef:
            return form.const, form.const
        if self.kind == "all":
            span = sum(abs(k) * self.bound[i] for i, k in coef)
        else:
            span = max(abs(k) * self.bound[i] for i, k in coef)
        return form.const - span, form.const + span

    def max_cost(self, terms: Sequence[tuple[Lin, Fraction]], square: bool = False) -> Fraction:
        """``max_d sum w |form(d)|`` (``square``: ``sum w form(d)^2``) over the differences (exact)."""
        size = (lambda v: v * v) if square else abs
        if self.kind == "all":
            return self._max_cost_box(terms, size)
        base = sum((w * size(f.const) for f, w in terms), Fraction(0))
        touching: dict[int, list[tuple[Lin, Fraction]]] = {}
        for f, w in terms:
            for v in f.coef:
                touching.setdefault(v[1], []).append((f, w))
        best = base if len(touching) < self.n else None
        for j, ts in touching.items():
            m = self.bound[j]
            for t in ({-m, -1, 1, m} if m else ()):
                val = base + sum((w * (size(f.const + f.coef[("d", j)] * t) - size(f.const)) for f, w in ts), Fraction(0))
                best = val if best is None or val > best else best
        return base if best is None else best

    def _max_cost_box(self, terms: Sequence[tuple[Lin, Fraction]], size) -> Fraction:
        total = Fraction(0)
        groups: list[tuple[set[int], list[tuple[Lin, Fraction]]]] = []
        for f, w in terms:
            coords = {v[1] for v in f.coef}
            if not coords:
                total += w * size(f.const)
                continue
            joined = [g for g in groups if g[0] & coords]
            merged = (coords.union(*(g[0] for g in joined)), [(f, w)] + [t for g in joined for t in g[1]])
            groups = [g for g in groups if not (g[0] & coords)] + [merged]
        for coords, ts in groups:
            if len(coords) > MAX_COUPLED:
                raise Unsupported(f"an alignment cost coupling {len(coords)} input differences")
            order = sorted(coords)
            best = None
            for signs in itertools.product((-1, 1), repeat=len(order)):
                d = {("d", j): s * self.bound[j] for j, s in zip(order, signs)}
                val = sum((w * size(f.const + sum(k * d[v] for v, k in f.coef.items())) for f, w in ts), Fraction(0))
                best = val if best is None or val > best else best
            total += best
        return total


def differences(program: Program) -> Differences:
    """The program's neighbour differences; custom relations have no proof rule."""
    rel, dom = program.neighbours, program.domain
    n = dom.size
    if isinstance(rel, OneDiffer):
        return Differences("one", n, (rel.sensitivity,) * n)
    if isinstance(rel, AllDiffer):
        return Differences("all", n, (rel.sensitivity,) * n)
    if isinstance(rel, ReplaceOne):
        return Differences("replace", n, tuple(h - l for l, h in zip(dom.lo, dom.hi)))
    raise Unsupported(f"the neighbour relation {rel.name!r} is a custom predicate: no symbolic form")
