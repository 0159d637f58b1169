"""The neighbour relation as a set of differences ``d = x - x'``, with exact extremes over it.

An alignment's conditions and cost depend on the inputs only through ``d``.  For the
built-in relations the set of differences is simple: ``one_differ(s)`` and
``replace_one`` are ``{t e_j}`` (``1 <= |t| <= s``, resp. ``<=`` the domain's width in
coordinate ``j``), ``all_differ(s)`` the box ``[-s, s]^n`` without 0, ``increasing(s)`` /
``decreasing(s)`` (one relation, :class:`~samplers.lang.neighbours.Monotone`) the union of
the sign-constrained boxes ``[0, s]^n`` and ``[-s, 0]^n`` without 0.  A pair's difference
lies in one box, so a monotone proof may align each box its own way: :meth:`Differences.box`
restricts the differences to one (``sign``), and the alignment rule proves each.  Only the
replace-one relation needs the declared bounds; for the others the conditions are discharged for
every integer input of the program *as traced*, which folded what the declared bounds decide
(a clamp the domain never reaches, a comparison it settles), so a proof covers the declared
domain only, never more of the mechanism as written.
Linear forms have their extremes at ``t = +-s`` / box vertices, and a sum of absolute
values of linear forms (an alignment's cost) is convex, so its maximum is at those
points too (over a union of boxes: the largest of the boxes' maxima): both are computed
here exactly.  Shifts may also read the differences
``w_k`` of noise-free derived values (:mod:`verifiers.prover.derived`), which range
over sound intervals given ``t``; those prices guide the synthesis, and z3 checks the
cost bound exactly.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Sequence
from dataclasses import dataclass, replace
from fractions import Fraction

from samplers.lang.ir import Program
from samplers.lang.neighbours import AllDiffer, Custom, Monotone, OneDiffer, ReplaceOne, same_as_named
from verifiers.prover.derived import Derived, derived
from verifiers.prover.linear import Lin
from verifiers.prover.paths import Unsupported

MAX_COUPLED = 12  # all_differ: coordinates one cost component may couple (2^k vertices)
STEPS = 64  # one_differ / replace_one: differences t = 1..STEPS (and the largest) priced one by one


@dataclass(frozen=True)
class Differences:
    """The neighbour differences of a program: ``kind`` one / all / replace / monotone;
    ``derived`` its noise-free derived values, whose differences ``w_k`` shifts may also read;
    ``sign`` (monotone only) +1 / -1 keeps the box ``d >= 0`` / ``d <= 0`` alone, 0 both."""

    kind: str
    n: int
    bound: tuple[int, ...]  # per coordinate, the largest |d_i|
    derived: Derived | None = None
    sign: int = 0

    def boxes(self) -> list["Differences"]:
        """The parts a proof may align separately: one per box of a monotone relation, else itself."""
        if self.kind != "monotone" or self.sign:
            return [self]
        return [replace(self, sign=1), replace(self, sign=-1)]

    @property
    def box(self) -> str | None:
        """The box in words (``"x >= x'"``: ``d >= 0``), None for every difference."""
        return {1: "x >= x'", -1: "x <= x'"}.get(self.sign)

    @property
    def joint(self) -> bool:
        """Every coordinate may differ at once (all / monotone), not one at a time."""
        return self.kind in ("all", "monotone")

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

    def coords(self, form: Lin) -> set[int]:
        """The input coordinates a form over ``d`` and ``w`` reads."""
        out: set[int] = set()
        for v in form.coef:
            out.update({v[1]} if v[0] == "d" else self.derived.defs[v[1]].support)
        return out

    def _steps(self, j: int, forms: Sequence[Lin]) -> list[int]:
        """The differences ``t`` of coordinate ``j`` at which the forms are extreme: linear
        forms at ``+-1`` and ``+-m``; derived differences are piecewise linear in ``t``, so
        every ``t`` (up to :data:`STEPS`, then the largest) is tried."""
        m = self.bound[j]
        if not m:
            return []
        if not any(v[0] == "w" for f in forms for v in f.coef):
            return sorted({-m, -1, 1, m})
        ts = set(range(1, min(m, STEPS) + 1)) | {m}
        return sorted(ts | {-t for t in ts})

    @functools.cached_property
    def _boxes(self) -> list[dict[int, tuple[int, int]]]:
        """The boxes whose union holds the differences (all / monotone): per coordinate its range
        (built once: a form's extremes read them for every constraint of every path)."""
        if self.kind == "monotone":
            up, down = {i: (0, b) for i, b in enumerate(self.bound)}, {i: (-b, 0) for i, b in enumerate(self.bound)}
            return [up] if self.sign > 0 else [down] if self.sign < 0 else [up, down]
        return [{i: (-b, b) for i, b in enumerate(self.bound)}]

    def _value_range(self, var: tuple[str, int], moves: dict) -> tuple[Fraction, Fraction]:
        if var[0] == "d":
            lo, hi = moves.get(var[1], (0, 0))
            return Fraction(lo), Fraction(hi)
        return self.derived.node_difference(var[1], moves)

    def extremes(self, form: Lin) -> tuple[Fraction, Fraction]:
        """Min and max of a linear form over ``d`` (and ``w``) on the differences."""
        if not form.coef:
            return form.const, form.const
        if self.joint:
            ends = [self._interval(form, box) for box in self._boxes]
            return min(lo for lo, _ in ends), max(hi for _, hi in ends)
        coords = self.coords(form)
        lo = hi = form.const if len(coords) < self.n else None
        for j in coords:
            for t in self._steps(j, [form]):
                a, b = self._interval(form, {j: (t, t)})
                lo, hi = (a, b) if lo is None else (min(lo, a), max(hi, b))
        return lo, hi

    def _interval(self, form: Lin, moves: dict) -> tuple[Fraction, Fraction]:
        lo = hi = form.const
        for v, k in form.coef.items():
            vlo, vhi = self._value_range(v, moves)
            a, b = (vlo * k, vhi * k) if k > 0 else (vhi * k, vlo * k)
            lo, hi = lo + a, hi + b
        return lo, hi

    def max_cost(self, terms: Sequence[tuple[Lin, Fraction]], square: bool = False) -> Fraction:
        """``max_d sum w |form(d)|`` (``square``: ``sum w form(d)^2``) over the differences (exact
        for forms over ``d``; derived differences range over their intervals)."""
        size = (lambda v: v * v) if square else abs
        if self.joint:
            return max(self._max_cost_box(terms, size, box) for box in self._boxes)
        base = sum((w * size(f.const) for f, w in terms), Fraction(0))
        touching: dict[int, list[tuple[Lin, Fraction]]] = {}
        for f, w in terms:
            for j in self.coords(f):
                touching.setdefault(j, []).append((f, w))
        best = base if len(touching) < self.n else None
        for j, ts in touching.items():
            rest = base - sum((w * size(f.const) for f, w in ts), Fraction(0))
            for t in self._steps(j, [f for f, _ in ts]):
                val = rest + self._vertex_max(ts, {j: (t, t)}, size)
                best = val if best is None or val > best else best
        return base if best is None else best

    def _vertex_max(self, terms: Sequence[tuple[Lin, Fraction]], moves: dict, size) -> Fraction:
        """The largest ``sum w size(form)`` over the vertices of the box of the forms' variables."""
        if len(terms) == 1:  # |form| (or its square) is largest at an end of the form's interval
            (f, w), = terms
            return w * max(size(v) for v in self._interval(f, moves))
        names = sorted({v for f, _ in terms for v in f.coef})
        corners = [sorted(set(self._value_range(v, moves))) for v in names]
        if sum(len(c) > 1 for c in corners) > MAX_COUPLED:
            raise Unsupported(f"an alignment cost coupling {sum(len(c) > 1 for c in corners)} input differences")
        best = None
        for point in itertools.product(*corners):
            at = dict(zip(names, point))
            val = sum((w * size(f.const + sum((k * at[v] for v, k in f.coef.items()), Fraction(0)))
                       for f, w in terms), Fraction(0))
            best = val if best is None or val > best else best
        return best

    def _max_cost_box(self, terms: Sequence[tuple[Lin, Fraction]], size, moves: dict) -> Fraction:
        """The largest cost over one box: forms reading disjoint coordinates move independently."""
        total = Fraction(0)
        groups: list[tuple[set[int], list[tuple[Lin, Fraction]]]] = []
        for f, w in terms:
            coords = self.coords(f)
            if not coords:
                total += w * size(f.const)
                continue
            joined = [g for g in groups if g[0] & coords]
            merged = (coords.union(*(g[0] for g in joined)), [(f, w)] + [t for g in joined for t in g[1]])
            groups = [g for g in groups if not (g[0] & coords)] + [merged]
        for _, ts in groups:
            total += self._vertex_max(ts, moves, size)
        return total


def differences(program: Program) -> Differences:
    """The program's neighbour differences; custom relations have no proof rule."""
    rel, dom = program.neighbours, program.domain
    n = dom.size
    values = derived(program)
    if isinstance(rel, OneDiffer):
        return Differences("one", n, (rel.sensitivity,) * n, values)
    if isinstance(rel, AllDiffer):
        return Differences("all", n, (rel.sensitivity,) * n, values)
    if isinstance(rel, Monotone):
        return Differences("monotone", n, (rel.sensitivity,) * n, values)
    if isinstance(rel, ReplaceOne):
        return Differences("replace", n, tuple(h - l for l, h in zip(dom.lo, dom.hi)), values)
    raise Unsupported(f"the neighbour relation {rel.name!r} is a custom predicate, a Python function the prover "
                      "cannot read as a set of differences x - x' (the form its conditions need): declare the "
                      "relation by name where it is one (one_differ, all_differ, increasing, decreasing, "
                      "replace_one, each with a sensitivity), or one that contains every pair of it (a proof "
                      "covers a smaller relation)")


def named(program: Program) -> tuple[Program, str]:
    """A program whose custom relation has exactly a built-in relation's pairs on the declared
    domain (every pair compared; small domains), as the program with that relation, and what
    a proof of it covers of the custom one; any other program as it is."""
    rel = program.neighbours
    same = same_as_named(rel, program.domain) if isinstance(rel, Custom) else None
    if same is None:
        return program, ""
    return (replace(program, neighbours=same, _meta={}),
            f"; the custom relation {rel.name!r} has exactly the pairs of {same.name} on the declared domain, "
            "every pair compared")