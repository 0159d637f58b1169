"""Alignment synthesis: for each path, a shift of every noise draw, cheapest first.

On a path a draw's shift ``a_e`` is a linear form in the neighbour differences ``d``
(fixed per path: alignments may depend on the path's outcomes, which is how the
selective alignments of noisy max and sparse vector arise).  Running on ``x'`` with
``eta + a`` changes a path form ``g`` (over inputs and draws) by
``Delta = sum_e mu_e a_e - lambda . d``.  The conditions are local and exact:

* every output form: ``Delta == 0`` (outputs equal);
* every constraint ``g rel 0`` of the path: ``Delta >= 0`` for ``>=`` / ``>``,
  ``Delta == 0`` for ``==`` / ``!=`` (the outcome is kept, whatever ``g`` is), for all ``d``;
* exponential draws: ``a_e >= 0`` (the shifted draw stays in the support);
* cost ``max_d sum_e |a_e| / b_e``.

Outputs fix the shifts of the draws they release (solved in order); the rest come from
templates ``k u`` and ``D_e + k u`` (``u`` the sensitivity, ``D_e`` the input difference
the draw is added to, ``|k| <= 2``).  Draws in one constraint only are chosen per
constraint (cheapest that keeps it); draws shared by several are enumerated jointly.
A second search *pins* the draws an output reads besides its own (a threshold in a
released gap ``q + eta_i - rho``): they are enumerated with the shared ones and the
output's own draw absorbs the rest, a shift linear in ``d`` (GapSVT's ``1 + d_i``).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction

from samplers import deadline
from verifiers.prover.linear import Lin
from verifiers.prover.neighbourhood import Differences
from verifiers.prover.paths import Path

MAX_COMBOS = 4096  # joint choices tried for the draws several constraints share


class Stuck(Exception):
    """No template keeps this path: ``where`` names the output, constraint or draw."""

    def __init__(self, reason: str, where: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.where = where


@dataclass
class Alignment:
    """A path's shifts (draws not listed are not shifted) and its exact worst-case cost."""

    shifts: dict[int, Lin]
    cost: Fraction


def change(form: Lin, shifts: dict[int, Lin]) -> Lin:
    """``g(x', eta + a) - g(x, eta)`` as a form over ``d`` (``x' = x - d``) and the differences
    ``w`` of noise-free derived values."""
    out = -form.differences()
    for v, k in form.coef.items():
        if v[0] == "e" and v[1] in shifts:
            out = out + shifts[v[1]].scale(k)
    return out


def keeps(delta: Lin, rel: str, diffs: Differences) -> bool:
    lo, hi = diffs.extremes(delta)
    return lo >= 0 if rel in (">=", ">") else lo == hi == 0


class Synthesiser:
    """Shifts for the paths of one program (laws: draw -> (law, scale))."""

    def __init__(self, laws: dict[int, tuple[str, Fraction]], diffs: Differences) -> None:
        self.laws = laws
        self.diffs = diffs
        self._candidates: dict[tuple[int, Lin | None], list[tuple[Fraction, Lin]]] = {}
        self._hint: tuple[Lin, ...] | None = None  # the shared shifts that won last

    def weight(self, e: int) -> Fraction:
        return 1 / self.laws[e][1]

    def cost(self, shifts: dict[int, Lin]) -> Fraction:
        return self.diffs.max_cost([(a, self.weight(e)) for e, a in shifts.items()])

    def candidates(self, e: int, pairing: Lin | None) -> list[tuple[Fraction, Lin]]:
        """Templates for draw ``e`` as (standalone cost, shift), cheapest first."""
        key = (e, pairing)
        if key not in self._candidates:
            self._candidates[key] = self._templates(e, pairing)
        return self._candidates[key]

    def _templates(self, e: int, pairing: Lin | None) -> list[tuple[Fraction, Lin]]:
        u = self.diffs.unit
        forms = [Lin(k * u) for k in (0, 1, -1, 2, -2)]
        if pairing is not None and pairing.coef:
            base = pairing.differences()
            forms += [base + Lin(k * u) for k in (0, 1, -1, 2, -2)]
        if self.laws[e][0] == "exponential":
            forms = [f for f in forms if self.diffs.extremes(f)[0] >= 0]
        scored = [(self.cost({e: f}), i, f) for i, f in enumerate(forms)]
        return [(c, f) for c, _, f in sorted(scored, key=lambda t: (t[0], t[1]))]

    def align(self, path: Path, limit: Fraction | None = None, enough: Fraction | None = None) -> Alignment:
        """The cheapest alignment found for ``path`` (raises :class:`Stuck`).

        ``limit``: alignments dearer than it are not wanted; ``enough``: stop at the first
        alignment that cheap (the caller needs no cheaper one).  Outputs first fix the
        draws they release and leave their other draws unshifted; when that is not enough
        the draws an output shares with the decisions (a threshold in a released gap) are
        chosen from the templates too, and the outputs solved for the rest (GapSVT's
        ``1 + d[i]`` on the released answer's draw).
        """
        best: Alignment | None = None
        stuck: Stuck | None = None
        pinnable = self._pinnable(path)
        for pinned in ([], pinnable) if pinnable else ([],):
            if best is not None and (best.cost == 0 or (enough is not None and best.cost <= enough)):
                break
            try:
                found = self._align(path, pinned, best.cost if best is not None else limit, enough)
            except Stuck as exc:
                stuck = stuck or exc
                continue
            if best is None or found.cost < best.cost:
                best = found
        if best is None:
            raise stuck or Stuck("no template keeps the path", "")
        return best

    def _pinnable(self, path: Path) -> list[int]:
        """Draws that an output reads besides its own draw (the one fewest outputs and decisions
        read: a released answer's noise, not the threshold's), that a decision reads and that no
        output reads alone: their shifts can be chosen, the outputs' own draws absorb the rest."""
        reads = [[v[1] for v in out.vars_of("e")] for out in path.outputs if isinstance(out, Lin)]
        readers: dict[int, int] = {}
        for form in [*(c.form for c in path.constraints), *(o for o in path.outputs if isinstance(o, Lin))]:
            for v in form.vars_of("e"):
                readers[v[1]] = readers.get(v[1], 0) + 1
        in_constraints = {v[1] for c in path.constraints for v in c.form.vars_of("e")}
        alone = {draws[0] for draws in reads if len(draws) == 1}
        others: set[int] = set()
        for draws in reads:
            if len(draws) > 1:
                own = min(draws, key=lambda e: (readers[e], -self.laws[e][1], -e))
                others.update(e for e in draws if e != own)
        return sorted((others & in_constraints) - alone)

    def _align(self, path: Path, pinned: list[int], limit: Fraction | None, enough: Fraction | None) -> Alignment:
        """The cheapest alignment with the ``pinned`` draws chosen from the templates before the outputs."""
        released = {v[1] for out in path.outputs if isinstance(out, Lin) for v in out.vars_of("e")} - set(pinned)
        open_cons = [(c, [e for e in dict.fromkeys(v[1] for v in c.form.vars_of("e")) if e not in released])
                     for c in path.constraints]
        uses: dict[int, int] = {e: 0 for e in pinned}
        for _, es in open_cons:
            for e in es:
                uses[e] = uses.get(e, 0) + 1
        shared = list(dict.fromkeys([*pinned, *(e for e, k in uses.items() if k > 1)]))
        options = {e: self.candidates(e, path.pairing.get(e)) for e in uses}
        forced = None if pinned else self._outputs(path, {})  # the same for every combo
        best: Alignment | None = None
        stuck: Stuck | None = None
        for combo in self._combos(shared, options):
            deadline.check("while synthesising alignments")
            bound = best.cost if best is not None else limit
            if bound is not None and max((c for c, _ in combo), default=Fraction(0)) > bound:
                continue
            chosen = {e: f for e, (_, f) in zip(shared, combo)}
            try:
                outputs = forced if forced is not None else self._outputs(path, {e: chosen[e] for e in pinned})
                shifts = {**outputs, **chosen}
                self._keep_all(open_cons, shifts, options, bound)
            except Stuck as exc:
                stuck = exc
                continue
            found = Alignment({e: a for e, a in shifts.items() if a.coef or a.const}, self.cost(shifts))
            if best is None or found.cost < best.cost:
                best = found
                self._hint = tuple(f for _, f in combo)
            if best.cost == 0 or (enough is not None and best.cost <= enough):
                break
        if best is None:
            raise stuck or Stuck("no template keeps the path", "")
        return best

    def _keep_all(self, open_cons, shifts: dict[int, Lin], options, bound: Fraction | None) -> None:
        fixed_cost = self._fixed_cost(shifts)
        for cons, es in open_cons:
            free = [e for e in es if e not in shifts]
            self._keep(cons, free, shifts, options)
            fixed_cost += self._fixed_cost({e: shifts[e] for e in free})
            if bound is not None and fixed_cost > bound:
                raise Stuck(f"every alignment found costs more than {float(bound):.6g}", "cost")

    def _fixed_cost(self, shifts: dict[int, Lin]) -> Fraction:
        """A lower bound of the cost: the shifts that do not depend on ``d``."""
        return sum((abs(a.const) * self.weight(e) for e, a in shifts.items() if not a.coef), Fraction(0))

    def _combos(self, shared: list[int], options: dict[int, list]) -> Iterable[tuple]:
        pools = [options[e] for e in shared]
        size = 1
        for p in pools:
            size *= len(p)
        if size > MAX_COMBOS:
            pools = [p[:3] for p in pools]
        combos = list(itertools.product(*pools))
        combos.sort(key=lambda c: (tuple(f for _, f in c) != self._hint, sum((x[0] for x in c), Fraction(0))))
        return combos[:MAX_COMBOS]

    def _keep(self, cons, free: list[int], shifts: dict[int, Lin], options: dict[int, list]) -> None:
        """Choose the free draws of one constraint (cheapest joint choice) so it is kept."""
        if len(free) == 1:
            choices: list = [(c,) for c in options[free[0]]]
        else:
            choices = sorted(itertools.product(*(options[e] for e in free)),
                             key=lambda c: sum((x[0] for x in c), Fraction(0)))
        for choice in choices:
            trial = {**shifts, **{e: f for e, (_, f) in zip(free, choice)}}
            if keeps(change(cons.form, trial), cons.rel, self.diffs):
                shifts.update({e: f for e, (_, f) in zip(free, choice)})
                return
        raise Stuck(f"no shift keeps the outcome of decision %{cons.node} ({cons.form} {cons.rel} 0) "
                    "for every neighbour pair", f"node {cons.node}")

    def _outputs(self, path: Path, preset: dict[int, Lin]) -> dict[int, Lin]:
        """Shifts that the outputs force, given the ``preset`` ones: each output form must not change."""
        fixed: dict[int, Lin] = dict(preset)
        for k, out in enumerate(path.outputs):
            if not isinstance(out, Lin) or not out.coef:
                continue
            draws = [v[1] for v in out.vars_of("e") if v[1] not in fixed]
            if draws:
                last = max(draws, key=lambda e: (self.laws[e][1], e))  # the cheapest draw absorbs it
                for e in draws:
                    if e != last:
                        fixed[e] = Lin()
                fixed[last] = Lin()
                rest = change(out, fixed)
                fixed[last] = (-rest).scale(1 / out.coef[("e", last)])
                if self.laws[last][0] == "exponential" and self.diffs.extremes(fixed[last])[0] < 0:
                    raise Stuck(f"output {k} needs a negative shift {fixed[last]} of the one-sided draw "
                                f"eta_{last}: it would leave the support", f"output {k}, draw {last}")
            delta = change(out, fixed)
            if delta.coef or delta.const:
                raise Stuck(f"output {k} = {out} changes by {delta} under every alignment "
                            "(it depends on the input without noise)", f"output {k}")
        return fixed
