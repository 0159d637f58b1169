"""Rigorous probability that independent continuous noise lies in an intersection of half-spaces.

A path's region (:mod:`verifiers.continuous.paths`) is a list of constraints ``c(z) > 0`` with
``c`` affine.  Its probability is computed, as an arb ball, by structure:

1. one-variable constraints are bounds: a variable that appears in no other constraint
   contributes ``P(lo < z < hi)`` in closed form;
2. variables linked by multi-variable constraints form *components*, which are
   independent, so their probabilities multiply;
3. a component is a **star** when one variable (the hub ``t``: the sparse vector's
   threshold noise, the noisy max's winner) appears in every constraint and each
   constraint has one other variable.  Given ``t``, each other variable lies in an
   interval whose ends are max/min of affine functions of ``t``, so the probability is
   ``int f_hub(t) prod_j (F_j(U_j(t)) - F_j(L_j(t))) dt``.  Between the break points
   (where an active end changes, an interval empties, or an argument crosses a kink),
   every factor is one fixed formula: for Laplace and exponential noise a sum of
   exponentials, integrated in closed form (:mod:`verifiers.continuous.expsum`); with Gaussian
   noise, arb's rigorous quadrature, with the infinite ends truncated and the tails
   bounded rigorously (hub tail probability times each factor's monotone bound);
4. any other component is split into cells of its most connected variable: inside a
   cell, each constraint through that variable is replaced by its loosest version (an
   upper bound on the probability) and its tightest (a lower bound), which removes the
   variable; the rest is solved recursively.  The enclosure tightens as the cells
   shrink (more cells at a higher level); beyond ``MAX_CELL_DEPTH`` nested splits the
   trivial bounds ``[0, P(bounds)]`` are used, which are sound but loose.

Empty pieces, empty intervals and factors that vanish are skipped, so a region that is
empty gives an exact 0 (which makes infinite ratios certain).
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction
from statistics import NormalDist
from typing import Callable, Mapping, Sequence

from verifiers.continuous import expsum, laws
from verifiers.continuous.enclosure import bits
from verifiers.continuous.linear import Form
from verifiers.continuous.paths import INF, Law

MAX_CELL_DEPTH = 2
TAIL_STEPS = 16
CLOSED_FORM_LEAVES = 16  # stars with more leaves are integrated by quadrature (see _Solver.quadrature)

Fn = tuple[Fraction, Fraction]  # t -> m t + k


class Stars:
    """The stars integrated so far, keyed by their shape (the hub's law and bounds, the leaves'
    laws, ends and multiplicities), and the work their integration took: closed-form pieces times
    their factors, quadrature evaluations times theirs (``QUADRATURE_WEIGHT`` each) -- a count
    that grows as the time does, for budgets that must not depend on the machine."""

    def __init__(self) -> None:
        self.shapes: dict[tuple, object] = {}
        self.work = 0


QUADRATURE_WEIGHT = 4  # work units of an integrand evaluation, per factor
CLOSED_FORM_WORK = 20  # work units of a closed-form piece, per factor


def probability(constraints: Sequence[Form], noise: Mapping[int, Law], level: int = 0,
                stars: Stars | None = None):
    """``P(c(z) > 0 for every c)`` as an arb ball, at the precision of ``level``.

    ``stars`` remembers the stars integrated, so that identical stars -- the outputs of equal
    coordinates, the same shape on another input -- are integrated once; pass one per caller
    (a backend) so that what is recomputed never depends on other work done in the process."""
    return _Solver(noise, level, Stars() if stars is None else stars).solve(list(constraints), 0)


def _at(f: Fn, t: Fraction) -> Fraction:
    return f[0] * t + f[1]


def _sample(a: Fraction | float, b: Fraction | float) -> Fraction:
    """A rational point inside the piece ``(a, b)``."""
    if a == -INF and b == INF:
        return Fraction(0)
    if a == -INF:
        return Fraction(b) - 1
    if b == INF:
        return Fraction(a) + 1
    return (Fraction(a) + Fraction(b)) / 2


def _single(v: int, lo: Fraction | float, hi: Fraction | float) -> list[Form]:
    out = []
    if lo != -INF:
        out.append(Form(((v, Fraction(1)),), -Fraction(lo)))
    if hi != INF:
        out.append(Form(((v, Fraction(-1)),), Fraction(hi)))
    return out


class _Leaf:
    """A non-hub variable of a star: its law and the affine ends of its interval given the hub."""

    def __init__(self, law: Law) -> None:
        self.law = law
        self.lower: list[Fn] = []
        self.upper: list[Fn] = []

    def signature(self) -> tuple:
        """What the leaf's factor depends on: its law and its ends (leaves with equal signatures are identical)."""
        return (self.law.kind, self.law.scale, tuple(sorted(set(self.lower))), tuple(sorted(set(self.upper))))

    def breakpoints(self) -> set[Fraction]:
        fns = self.lower + self.upper
        pts = set()
        for i, (m1, k1) in enumerate(fns):
            for m2, k2 in fns[i + 1:]:
                if m1 != m2:
                    pts.add((k2 - k1) / (m1 - m2))
            for kink in laws.kinks(self.law):
                if m1 != 0:
                    pts.add((kink - k1) / m1)
        return pts

    def active(self, t: Fraction) -> tuple[Fn | None, Fn | None] | None:
        """The active lower and upper ends at ``t``; None when the interval is empty there."""
        lo = max(self.lower, key=lambda f: _at(f, t)) if self.lower else None
        hi = min(self.upper, key=lambda f: _at(f, t)) if self.upper else None
        if lo is not None and hi is not None and _at(lo, t) >= _at(hi, t):
            return None
        if self.law.kind == "exponential" and hi is not None and _at(hi, t) <= 0:
            return None
        return lo, hi


class _Solver:
    def __init__(self, noise: Mapping[int, Law], level: int, stars: Stars) -> None:
        self.noise = noise
        self.stars = stars
        self.level = level
        self.prec = bits(level)

    # -- structure -------------------------------------------------------------------
    def solve(self, constraints: list[Form], depth: int):
        from flint import arb

        bounds: dict[int, list] = {}
        multi: list[Form] = []
        for c in constraints:
            if len(c.coeffs) == 1:
                (v, a), = c.coeffs
                b = bounds.setdefault(v, list(self.noise[v].support))
                edge = -c.const / a
                if a > 0:
                    b[0] = max(b[0], edge)
                else:
                    b[1] = min(b[1], edge)
            else:
                multi.append(c)
                for v in c.variables:
                    bounds.setdefault(v, list(self.noise[v].support))
        if any(lo >= hi for lo, hi in bounds.values()):
            return arb(0)
        comps = _components(multi)
        linked = {v for vs, _ in comps for v in vs}
        result = arb(1)
        for v, (lo, hi) in bounds.items():
            if v not in linked:
                result *= laws.interval(self.noise[v], lo, hi)
        for vs, cons in comps:
            if result.is_zero():
                break
            result *= self.component(vs, cons, bounds, depth)
        return result

    def component(self, vs: list[int], cons: list[Form], bounds: dict[int, list], depth: int):
        if all(len(c.coeffs) == 2 for c in cons):
            hubs = [v for v in vs if all(v in c.variables for c in cons)]
            if hubs:
                hub = min(hubs, key=lambda v: (self.noise[v].kind == "gaussian", v))
                return self.star(hub, vs, cons, bounds)
        return self.cells(vs, cons, bounds, depth)

    # -- stars -----------------------------------------------------------------------
    def star(self, hub: int, vs: list[int], cons: list[Form], bounds: dict[int, list]):
        """The star's probability; identical leaves (same law, same ends) enter once, as a power, and a
        star already integrated (the same hub law, bounds and leaves, in any order) is not integrated again."""
        leaves = {v: _Leaf(self.noise[v]) for v in vs if v != hub}
        for v, leaf in leaves.items():
            lo, hi = bounds[v]
            if lo != -INF:
                leaf.lower.append((Fraction(0), Fraction(lo)))
            if hi != INF:
                leaf.upper.append((Fraction(0), Fraction(hi)))
        for c in cons:
            (v, a), = [(w, a) for w, a in c.coeffs if w != hub]
            fn = (-c.coeff(hub) / a, -c.const / a)  # a z_v + h t + k > 0  <=>  z_v >< (-h t - k) / a
            (leaves[v].lower if a > 0 else leaves[v].upper).append(fn)
        groups: dict[tuple, list] = {}
        for leaf in leaves.values():
            groups.setdefault(leaf.signature(), [leaf, 0])[1] += 1
        hub_law, (t_lo, t_hi) = self.noise[hub], bounds[hub]
        key = (hub_law, t_lo, t_hi, tuple(sorted((sig, k) for sig, (_, k) in groups.items())), self.prec)
        found = self.stars.shapes.get(key)
        if found is None:
            found = self.stars.shapes[key] = self._star(hub_law, t_lo, t_hi, [(leaf, k) for leaf, k in groups.values()])
        return found

    def _star(self, hub_law: Law, t_lo, t_hi, groups: list[tuple[_Leaf, int]]):
        """``int f_hub(t) prod_leaves (F(U(t)) - F(L(t)))^multiplicity dt`` piece by piece."""
        from flint import arb

        points = set(laws.kinks(hub_law)) | {Fraction(0)}
        for leaf, _ in groups:
            points |= leaf.breakpoints()
        edges = [t_lo] + sorted(p for p in points if t_lo < p < t_hi) + [t_hi]
        mixed = hub_law.kind == "gaussian" or any(leaf.law.kind == "gaussian" for leaf, _ in groups)
        quadrature = mixed or sum(k for _, k in groups) > CLOSED_FORM_LEAVES
        den = 1 if mixed else _rate_denominator(hub_law, [leaf for leaf, _ in groups])
        total = arb(0)
        for a, b in zip(edges, edges[1:]):
            tau = _sample(a, b)
            active = [(leaf, leaf.active(tau), k) for leaf, k in groups]
            if any(act is None for _, act, _ in active):
                continue
            if hub_law.kind == "exponential" and tau < 0:
                continue
            if quadrature:  # Gaussian noise to full precision; many Laplace leaves to half (see quadrature)
                total += self.quadrature(hub_law, active, a, b, tau, self.prec if mixed else self.prec // 2)
            else:
                self.stars.work += CLOSED_FORM_WORK * (len(active) + 1)
                f = _factor(hub_law, None, None, (tau >= 0,), den, self.prec)
                for leaf, (lo, hi), k in active:
                    signs = (lo is not None and _at(lo, tau) >= 0, hi is not None and _at(hi, tau) >= 0)
                    f = expsum.multiply(f, _power(_factor(leaf.law, lo, hi, signs, den, self.prec), k))
                    if not f:
                        break
                if f:
                    total += expsum.integrate(f, a, b, den)
        return total

    # -- pieces by quadrature (Gaussian noise, many leaves) -------------------------------
    def quadrature(self, hub_law: Law, active: list, a, b, tau: Fraction, goal: int):
        """``int_a^b`` of a piece's integrand by arb quadrature to a relative ``2^-goal``, infinite ends
        truncated with tail bounds.

        Used for Gaussian noise (no closed form) and for stars of many leaves, where the product
        of the leaves' exp-sums, expanded, would cancel catastrophically (``(1 - y/2)^k`` has terms
        up to ``1.5^k`` for a value near ``0.5^k``); the factored integrand does not.  Many-leaf stars
        ask half the working precision (32 bits at level 0, far below any search precision; a
        witness asking more raises the level): the quadrature's cost grows with the bits asked."""
        from flint import arb

        sums: list[expsum.ExpSum] = []  # the Laplace factors' exp-sums, evaluated together
        factors: list[tuple[Callable | int, int]] = []  # a Gaussian factor, or an index into sums
        for leaf, (lo, hi), k in active:
            if leaf.law.kind == "gaussian":
                factors.append((_gaussian_factor(leaf.law, lo, hi), k))
            else:
                factors.append((len(sums), k))
                sums.append(_difference(leaf.law, lo, hi, tau))
        if hub_law.kind == "gaussian":
            density: Callable | int = lambda t: laws.density_ball(hub_law, t)  # noqa: E731
        else:
            density = len(sums)
            sums.append(laws.density_terms(hub_law, tau >= 0))
        at = expsum.evaluators(sums)

        stars, weight = self.stars, QUADRATURE_WEIGHT * (len(factors) + 1)
        terms = [(f, k, isinstance(f, int)) for f, k in factors]
        hub_indexed = isinstance(density, int)

        def integrand(t, _analytic):  # entire: exponentials, erfc and integer powers (by multiplication)
            stars.work += weight
            vs = at(t)
            v = vs[density] if hub_indexed else density(t)
            for f, k, indexed in terms:
                x = vs[f] if indexed else f(t)
                v = v * (x if k == 1 else _ball_power(x, k))
            return v

        if a != -INF and b != INF:
            return self._integral(integrand, a, b, goal)
        # one infinite end (0 is always a break point, so never both)
        finite = Fraction(b) if a == -INF else Fraction(a)
        direction = -1 if a == -INF else 1
        width = Fraction(hub_law.scale)
        inner = arb(0)
        start = finite
        for _ in range(TAIL_STEPS):
            end = start + direction * width
            inner += self._integral(integrand, min(start, end), max(start, end), goal)
            tail = self._tail(hub_law, active, end, direction)
            start, width = end, 2 * width
            if tail.upper() <= inner.lower() * arb(2) ** (-goal):
                break
        return inner + _between_zero_and(tail)

    def _integral(self, integrand, a: Fraction, b: Fraction, goal: int):
        from flint import acb, arb

        r = acb.integral(integrand, expsum.q(a), expsum.q(b), rel_tol=arb(2) ** (-goal),
                         abs_tol=arb(2) ** (-4 * goal), eval_limit=10**6)
        return r.real  # the imaginary part is zero on the real segment

    def _tail(self, hub_law: Law, active: list, end: Fraction, direction: int):
        """A rigorous bound on the integrand's mass beyond ``end`` (in ``direction``)."""
        from flint import ctx

        bound = laws.above(hub_law, end) if direction > 0 else laws.below(hub_law, end)
        for leaf, (lo, hi), k in active:
            factor = _leaf_tail(leaf.law, lo, hi, end, direction, ctx.prec)
            if factor is not None:
                bound *= _ball_power(factor, k)
        return bound

    # -- general components: cells ---------------------------------------------------------
    def cells(self, vs: list[int], cons: list[Form], bounds: dict[int, list], depth: int):
        from flint import arb

        if depth >= MAX_CELL_DEPTH:
            box = arb(1)
            for v in vs:
                box *= laws.interval(self.noise[v], *bounds[v])
            return _between_zero_and(box)
        v = max(vs, key=lambda w: (sum(w in c.variables for c in cons), -w))
        law, (lo, hi) = self.noise[v], bounds[v]
        others = [c for c in cons if v not in c.variables]
        for w in vs:
            if w != v:
                others += _single(w, *bounds[w])
        low, high = arb(0), arb(0)
        edges = _cell_edges(law, lo, hi, min(8 << self.level, 256))
        for c0, c1 in zip(edges, edges[1:]):
            p = laws.interval(law, c0, c1)
            inner: list[Form] | None = list(others)
            outer: list[Form] | None = list(others)
            for c in cons:
                a = c.coeff(v)
                if a == 0:
                    continue
                rest = Form(tuple((w, x) for w, x in c.coeffs if w != v), c.const) if len(c.coeffs) > 1 else c.const
                least, most = _cell_shifts(a, c0, c1)
                inner = _relax(inner, rest, least)
                outer = _relax(outer, rest, most)
            if outer is None:
                continue
            high += p * self.solve(outer, depth + 1)
            if inner is not None:
                low += p * self.solve(inner, depth + 1)
        return low.union(high)


def _cell_shifts(a: Fraction, c0, c1) -> tuple:
    """The least and the most of ``a z`` over a cell ``c0 < z < c1``, compared exactly (two ends a
    float apart can convert to one float, and a wrong order would swap the cell's inner and outer bounds)."""
    ends = (a * c0, a * c1)
    return min(ends), max(ends)


def _relax(cons: list[Form] | None, rest, shift) -> list[Form] | None:
    """``cons`` plus ``rest + shift > 0``; None when that is impossible (or already None)."""
    if cons is None:
        return None
    if shift == INF:
        return cons
    if shift == -INF:
        return None
    if isinstance(rest, Form):
        return cons + [Form(rest.coeffs, rest.const + shift)]
    return cons if rest + shift > 0 else None


def _cell_edges(law: Law, lo, hi, k: int) -> list:
    """About ``k`` cells of (roughly) equal probability inside ``(lo, hi)``, as exact end points."""
    f_lo = 0.0 if lo == -INF else float(laws.below(law, lo).mid())
    f_hi = 1.0 if hi == INF else float(laws.below(law, hi).mid())
    inner = set()
    for i in range(1, k):
        u = f_lo + (f_hi - f_lo) * i / k
        x = _quantile(law, u)
        if math.isfinite(x):
            fx = Fraction(x)
            if lo < fx < hi:
                inner.add(fx)
    return [lo] + sorted(inner) + [hi]


def _quantile(law: Law, u: float) -> float:
    if not 0 < u < 1:
        return math.nan
    b = float(law.scale)
    if law.kind == "laplace":
        return b * math.log(2 * u) if u < 0.5 else -b * math.log(2 * (1 - u))
    if law.kind == "exponential":
        return -b * math.log1p(-u)
    return NormalDist(0.0, b).inv_cdf(u)


def _rate_denominator(hub: Law, leaves) -> int:
    """A common denominator of every rate ``m / scale`` the star's exp-sums can have."""
    dens = [(1 / hub.scale).denominator]
    for leaf in leaves:
        dens += [(m / leaf.law.scale).denominator for m, _ in leaf.lower + leaf.upper]
    return math.lcm(*dens)


def _difference(law: Law, lo: Fn | None, hi: Fn | None, tau: Fraction) -> expsum.ExpSum:
    """``F(hi(t)) - F(lo(t))`` as an exp-sum on the piece containing ``tau``, at the working precision."""
    from flint import ctx

    signs = (lo is not None and _at(lo, tau) >= 0, hi is not None and _at(hi, tau) >= 0)
    return _cdf_difference(law, lo, hi, signs, ctx.prec)


@functools.lru_cache(maxsize=1 << 16)
def _cdf_difference(law: Law, lo: Fn | None, hi: Fn | None, signs: tuple[bool, bool], prec: int) -> expsum.ExpSum:
    """``F(hi(t)) - F(lo(t))`` as an exp-sum keyed by rates, given the signs of ``lo(t)`` and
    ``hi(t)`` on the piece, at ``prec`` bits.  Cached (read only by its callers): a star's leaves
    meet the same ends on piece after piece and star after star."""
    from flint import ctx

    with ctx.workprec(prec):
        upper = {Fraction(0): expsum.q(1)} if hi is None else laws.cdf_terms(law, hi, signs[1])
        lower = {} if lo is None else laws.cdf_terms(law, lo, signs[0])
        return expsum.subtract(upper, lower)


@functools.lru_cache(maxsize=1 << 16)
def _factor(law: Law, lo: Fn | None, hi: Fn | None, signs: tuple, den: int, prec: int) -> expsum.ExpSum:
    """A closed-form factor on a piece, keyed by integer rates: the density (``lo = hi = None``,
    ``signs = (t >= 0,)``) or ``F(hi(t)) - F(lo(t))`` with the arguments' signs.  Cached: the
    paths of one input share most factors (a sparse vector's query j is above or below, on every path)."""
    from flint import ctx

    if lo is None and hi is None and len(signs) == 1:
        with ctx.workprec(prec):
            return expsum.rekey(laws.density_terms(law, signs[0]), den)
    return expsum.rekey(_cdf_difference(law, lo, hi, signs, prec), den)


@functools.lru_cache(maxsize=1 << 16)
def _leaf_tail(law: Law, lo: Fn | None, hi: Fn | None, end: Fraction, direction: int, prec: int):
    """An upper bound, beyond ``end`` (in ``direction``), on a leaf's factor ``F(hi(t)) - F(lo(t))``
    from an end that moves away from the mass, or None (no such end).  Cached (read only): the
    outputs of one input meet the same leaves at the same tail steps."""
    from flint import ctx

    options = []
    with ctx.workprec(prec):
        if hi is not None and direction * hi[0] <= 0:  # the upper end moves away from the mass
            options.append(laws.below(law, _at(hi, end)))
        if lo is not None and direction * lo[0] >= 0:
            options.append(laws.above(law, _at(lo, end)))
    return min(options, key=lambda x: x.upper()).upper() if options else None


def _power(f: expsum.ExpSum, k: int) -> expsum.ExpSum:
    """``f^k`` for an exp-sum (k >= 1), by repeated squaring."""
    out = None
    while True:
        if k & 1:
            out = f if out is None else expsum.multiply(out, f)
        k >>= 1
        if not k:
            return out
        f = expsum.multiply(f, f)


def _ball_power(x, k: int):
    """``x^k`` for an arb or acb ball by repeated squaring (multiplications only: entire, exact rules)."""
    out = None
    while True:
        if k & 1:
            out = x if out is None else out * x
        k >>= 1
        if not k:
            return out
        x = x * x


def _gaussian_factor(law: Law, lo: Fn | None, hi: Fn | None) -> Callable:
    def factor(t):
        up = 1 if hi is None else laws.gaussian_cdf(law, expsum.q(hi[0]) * t + expsum.q(hi[1]))
        down = 0 if lo is None else laws.gaussian_cdf(law, expsum.q(lo[0]) * t + expsum.q(lo[1]))
        return up - down

    return factor


def _between_zero_and(x):
    """A ball containing ``[0, x]`` for a non-negative ball ``x``."""
    from flint import arb

    return arb(0).union(x)


def _components(multi: list[Form]) -> list[tuple[list[int], list[Form]]]:
    """Connected components of the variables linked by multi-variable constraints."""
    parent: dict[int, int] = {}

    def find(v: int) -> int:
        while parent.setdefault(v, v) != v:
            parent[v] = parent[parent[v]]
            v = parent[v]
        return v

    for c in multi:
        first = find(c.variables[0])
        for v in c.variables[1:]:
            parent[find(v)] = first
    groups: dict[int, tuple[list[int], list[Form]]] = {}
    for v in sorted(parent):
        groups.setdefault(find(v), ([], []))[0].append(v)
    for c in multi:
        groups[find(c.variables[0])][1].append(c)
    return list(groups.values())
