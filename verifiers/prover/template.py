"""A path template: one shift of the draws for every path, proved without splitting paths.

When a single shift ``a(d)`` (independent of the outcomes) leaves every value of the
program unchanged -- each draw added to an input is shifted by that input's difference,
every other draw stays -- all paths share one alignment: every decision has the same
outcome on ``x'`` with ``eta + a`` as on ``x`` with ``eta`` because its arguments are
equal, and every output is equal.  The map ``eta -> eta + a`` is a translation (Jacobian
1, injective on its own), so ``P(M(x) in E) <= e^c P(M(x') in E)`` with ``c`` the cost
``max_d sum_e |a_e| / b_e``, whatever the number of paths.  This proves in time linear in
the program the loops whose paths grow as ``2^n`` (running sums, noisy max releasing the
value, sparse vector without cutoff), at ``n / b``-type levels.

The proof is a walk over the IR in exact arithmetic: each node's change (its value on
``x'`` with the shifted draws minus on ``x``) is a linear form in ``d`` for affine nodes;
any other node needs every argument unchanged, and then is unchanged itself.
"""

from __future__ import annotations

from fractions import Fraction

from samplers.lang.builder import draws_randomness
from samplers.lang.ir import CONTINUOUS_NOISE, Program
from verifiers.prover.derived import derived
from verifiers.prover.linear import Lin
from verifiers.prover.neighbourhood import Differences

AFFINE = ("add", "sub", "neg", "mul")


class NoTemplate(Exception):
    """No shift common to all paths leaves the program's values unchanged (the reason says where)."""


def _lone_draw(form: Lin) -> tuple[int, Fraction] | None:
    """``(e, k)`` when ``form`` is ``k eta_e`` alone."""
    if form.const == 0 and len(form.coef) == 1:
        (v, k), = form.coef.items()
        if v[0] == "e":
            return v[1], k
    return None


class _Walk:
    """Per node: its value as a linear form where affine (else None) and its change."""

    def __init__(self, program: Program, shifts: dict[int, Lin] | None) -> None:
        self.program = program
        self.choose = shifts is None  # pick each draw's shift where it is first added to a value
        self.shifts: dict[int, Lin] = {} if shifts is None else dict(shifts)
        self.form: list[Lin | None] = []
        self.change: list[Lin | None] = []
        free = derived(program).forms
        for i, n in enumerate(program.nodes):
            if i in free:
                f = free[i] if isinstance(free[i], Lin) else Lin(free[i])
                self.form.append(f)
                self.change.append(-f.differences())
            elif n.op in CONTINUOUS_NOISE:
                self.form.append(Lin.var(("e", i)))
                self.change.append(None)  # fixed when first used
            elif draws_randomness(n.op, n.attr):
                raise NoTemplate(f"node %{i} draws {n.op} randomness: only continuous draws are shifted")
            elif not n.args and n.op != "const":  # an input the derived forms missed: never "unchanged"
                raise NoTemplate(f"node %{i} ({n.op}) has no form to compare between neighbours")
            else:
                self._node(i, n)

    def _draw_change(self, i: int) -> Lin:
        if self.change[i] is None:
            self.change[i] = self.shifts.setdefault(i, Lin()) if self.choose else self.shifts.get(i, Lin())
        return self.change[i]

    def _arg(self, a: int) -> Lin | None:
        if self.program.nodes[a].op in CONTINUOUS_NOISE:
            return self._draw_change(a)
        return self.change[a]

    def _node(self, i: int, n) -> None:
        forms = [self.form[a] for a in n.args]
        if n.op in AFFINE and all(f is not None for f in forms):
            if self.choose and n.op in ("add", "sub"):
                self._pair(n.args, forms, n.op)
            ch = [self._arg(a) for a in n.args]
            if n.op == "mul" and not forms[0].is_const and not forms[1].is_const:
                form, change = None, None
            elif n.op == "mul":
                (k, f, c) = (forms[0].const, forms[1], ch[1]) if forms[0].is_const else (forms[1].const, forms[0], ch[0])
                form, change = f.scale(k), (None if c is None else c.scale(k))
            elif n.op == "neg":
                form, change = -forms[0], (None if ch[0] is None else -ch[0])
            else:
                sign = 1 if n.op == "add" else -1
                form = forms[0] + forms[1].scale(sign)
                change = None if None in ch else ch[0] + ch[1].scale(sign)
            self.form.append(form)
            self.change.append(change)
            return
        for a in n.args:
            c = self._arg(a)
            if c is None or c.coef or c.const:
                shown = "a non-linear change" if c is None else f"{c}"
                raise NoTemplate(f"node %{i} ({n.op}) reads %{a}, which changes by {shown} under the common shift")
        self.form.append(None)
        self.change.append(Lin())

    def _pair(self, args, forms: list[Lin], op: str) -> None:
        """``v + k eta_e`` (or ``-``) with ``v`` free of draws: shift ``eta_e`` so the sum is unchanged."""
        for pos, other in ((0, 1), (1, 0)):
            lone = _lone_draw(forms[pos])
            if lone is None or forms[other].vars_of("e") or self.change[lone[0]] is not None:
                continue
            e, k = lone
            if op == "sub" and pos == 1:
                k = -k
            oc = self.change[args[other]]
            if oc is not None:
                self.change[e] = self.shifts[e] = (-oc).scale(1 / k)
            return


def unchanged(program: Program, shifts: dict[int, Lin]) -> str | None:
    """None when ``shifts`` leave every output (and so every decision) unchanged, else where not."""
    try:
        walk = _Walk(program, shifts)
    except NoTemplate as exc:
        return str(exc)
    for k, o in enumerate(program.outputs):
        c = walk.change[o] if program.nodes[o].op not in CONTINUOUS_NOISE else shifts.get(o, Lin())
        if c is None or c.coef or c.const:
            return f"output {k} (%{o}) changes by {'a non-linear amount' if c is None else c} under the common shift"
    return None


def template(program: Program, laws: dict[int, tuple[str, Fraction]],
             diffs: Differences) -> tuple[dict[int, Lin], Fraction]:
    """One shift for every path and its exact worst-case cost (raises :class:`NoTemplate`)."""
    walk = _Walk(program, None)
    shifts = {e: a for e, a in walk.shifts.items() if a.coef or a.const}
    problem = unchanged(program, shifts)
    if problem is not None:
        raise NoTemplate(problem)
    return shifts, cost(shifts, laws, diffs)


def cost(shifts: dict[int, Lin], laws: dict[int, tuple[str, Fraction]], diffs: Differences) -> Fraction:
    """``max_d sum_e |a_e| / b_e``; a one-sided draw must not be shifted below its support."""
    for e, a in shifts.items():
        if laws[e][0] == "exponential" and diffs.extremes(a)[0] < 0:
            raise NoTemplate(f"the common shift {a} of the one-sided draw eta_{e} may be negative")
    return diffs.max_cost([(a, 1 / laws[e][1]) for e, a in shifts.items()])
