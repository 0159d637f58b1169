"""The verification conditions of a synthesised alignment, discharged by z3.

For each path and its shifts ``a_e(d)``, with ``x' = x - d`` and ``d`` ranging over the
neighbour differences (:mod:`verifiers.prover.neighbourhood`), z3 must answer *unsat* to:

* output ``k``: ``g(x, eta) != g(x', eta + a)``;
* constraint ``g rel 0``: ``g(x, eta) rel 0 and not g(x', eta + a) rel 0``;
* exponential draw: ``eta >= 0 and eta + a < 0``;
* cost: ``sum_e |a_e| / b_e > eps`` (for one_differ / replace_one one query per
  differing coordinate, ``d = t e_j``; for all_differ one query over the box, for
  increasing / decreasing one over the union of the boxes ``[0, s]^n`` and ``[-s, 0]^n``, or
  over one of them when each box has its own alignment).

After the template is fixed these are quantifier-free linear integer/real arithmetic.
Queries are put in a canonical form (variables renamed in order of appearance) and
asked once per form: the n paths of noisy max or the comparisons of sparse vector
repeat a handful of shapes.
"""

from __future__ import annotations

from collections.abc import Iterable
from fractions import Fraction
from typing import Any

import z3

from samplers import deadline
from verifiers.prover.derived import Derived, z3_op
from verifiers.prover.linear import Lin
from verifiers.prover.neighbourhood import Differences
from verifiers.prover.paths import Path
from verifiers.z3_timeout import bounded_ms

QUERY_TIMEOUT_MS = 10_000


class Canon:
    """Renames variables of each kind to 0, 1, ... in order of first appearance.

    A derived value ``v_k`` or difference ``w_k`` (:mod:`verifiers.prover.derived`) brings
    its definition, renamed alike, and the inputs it reads; ``w_k`` also the differences
    ``d_j`` of those inputs, except where ``moving`` says a coordinate does not move."""

    def __init__(self, derived: Derived | None = None, moving: int | None = None) -> None:
        self.names: dict[tuple[str, int], tuple[str, int]] = {}
        self.count: dict[str, int] = {}
        self.derived = derived
        self.moving = moving  # the only coordinate that differs (None: any)
        self.defs: list[tuple] = []  # per derived value, in canonical order: (op, attr, args)
        self.reads: dict[int, tuple] = {}  # canonical derived index -> its (x, d) name pairs

    def _name(self, v: tuple[str, int]) -> tuple[str, int]:
        if v[0] in "vw":
            return (v[0], self._derive(v[1], v[0] == "w"))
        if v not in self.names:
            self.names[v] = (v[0], self.count.get(v[0], 0))
            self.count[v[0]] = self.count.get(v[0], 0) + 1
        return self.names[v]

    def _derive(self, node: int, differs: bool) -> int:
        d = self.derived.defs[node]
        if ("v", node) not in self.names:
            args = tuple(self.form(a) if isinstance(a, Lin) else (a, ()) for a in d.args)
            self.names[("v", node)] = ("v", len(self.defs))
            self.defs.append((d.op, d.attr, args))
        k = self.names[("v", node)][1]
        if differs and k not in self.reads:
            self.reads[k] = ()  # reserved first: a definition reads earlier derived values only
            pairs = {}
            for j in sorted(d.support):
                moves = self.moving is None or self.moving == j
                pairs[j] = (self._name(("x", j))[1], self._name(("d", j))[1] if moves else None)
            self.reads[k] = tuple(sorted(pairs.values()))
        return k

    def form(self, f: Lin) -> tuple:
        out = [(self._name(v), k) for v, k in f.coef.items()]
        return (f.const, tuple(sorted(out)))

    def originals(self, kind: str) -> list[int]:
        return [v[1] for v, r in sorted(self.names.items(), key=lambda t: t[1]) if v[0] == kind]

    def signature(self) -> tuple:
        """What the key of a query needs beyond its forms: the derived definitions and pairings."""
        return tuple(self.defs), tuple(sorted(self.reads.items()))

    def env(self) -> dict:
        """z3 terms for every canonical variable: Ints for inputs and differences, Reals for
        draws, derived values ``v`` on ``x`` and differences ``w = v(x) - v(x - d)``."""
        env: dict = {}
        for kind, i in self.names.values():
            if kind in "xde":
                env[(kind, i)] = z3.Int(f"{kind}{i}") if kind in "xd" else z3.Real(f"{kind}{i}")
        here: dict = {}
        there: dict = {}
        pair_d = {x: d for pairs in self.reads.values() for x, d in pairs}
        x_now = {("x", i): z3.ToReal(env[("x", i)]) for kind, i in self.names.values() if kind == "x"}
        x_then = {k: (v - z3.ToReal(env[("d", pair_d[k[1]])]) if pair_d.get(k[1]) is not None else v)
                  for k, v in x_now.items()}
        for k, (op, attr, args) in enumerate(self.defs):
            for values, xs in ((here, x_now), (there, x_then)):
                values[("v", k)] = z3_op(op, attr, [_term(a, {**xs, **values}) for a in args])
        env.update({("v", k): v for (_, k), v in here.items()})
        env.update({("w", k): here[("v", k)] - there[("v", k)] for k in self.reads})
        return env


def _term(spec: tuple, env: dict) -> Any:
    const, coefs = spec
    out: Any = z3.RealVal(const)
    for v, k in coefs:
        term = env[v]
        out = out + z3.RealVal(k) * (z3.ToReal(term) if z3.is_int(term) else term)
    return out


def _rel(term: Any, rel: str) -> Any:
    return {">=": term >= 0, ">": term > 0, "==": term == 0, "!=": term != 0}[rel]


class Discharger:
    """Asks z3 each distinct condition once; records how many were asked and answered."""

    def __init__(self, diffs: Differences) -> None:
        self.diffs = diffs
        self.answers: dict[tuple, str] = {}
        self.asked = 0

    def _diff_vars(self, canon: Canon, env: dict, solver: z3.Solver) -> None:
        """``d`` ranges over the neighbour differences, projected on the coordinates used."""
        coords = canon.originals("d")
        ds = [env[("d", i)] for i in range(len(coords))]
        for d, j in zip(ds, coords):
            solver.add(d >= -self.diffs.bound[j], d <= self.diffs.bound[j])
        nonzero = [z3.If(d != 0, 1, 0) for d in ds]
        full = len(coords) == self.diffs.n
        if self.diffs.kind == "monotone" and ds:  # the union of the two boxes (or one), on these coordinates
            up, down = z3.And([d >= 0 for d in ds]), z3.And([d <= 0 for d in ds])
            solver.add(up if self.diffs.sign > 0 else down if self.diffs.sign < 0 else z3.Or(up, down))
        if self.diffs.joint:
            if full and ds:
                solver.add(z3.Or([d != 0 for d in ds]))
        elif ds:
            solver.add(z3.Sum(nonzero) == 1 if full else z3.Sum(nonzero) <= 1)

    def _inputs(self, canon: Canon) -> tuple:
        """replace_one: the domain bounds of every input the query reads, as (x, d, lo, hi) with
        canonical names (d None where that input does not move); empty for the other relations."""
        box = self.diffs.derived.inputs if self.diffs.derived is not None else None
        if box is None:
            return ()
        return tuple(sorted((canon.names[("x", j)][1], canon.names.get(("d", j), (None, None))[1], *box[j])
                            for j in canon.originals("x")))

    @staticmethod
    def _in_domain(bounds: tuple, env: dict, solver: z3.Solver) -> None:
        """Every input read lies in the declared domain, on ``x`` and on ``x' = x - d``."""
        for x, d, lo, hi in bounds:
            solver.add(env[("x", x)] >= lo, env[("x", x)] <= hi)
            if d is not None:
                solver.add(env[("x", x)] - env[("d", d)] >= lo, env[("x", x)] - env[("d", d)] <= hi)

    def _ask(self, key: tuple, build) -> str:
        self.asked += 1
        if key not in self.answers:
            deadline.check("while discharging alignment conditions with z3")
            solver = z3.Solver()
            solver.set("timeout", bounded_ms(QUERY_TIMEOUT_MS))
            build(solver)
            self.answers[key] = str(solver.check())
            deadline.check("while discharging alignment conditions with z3")
        return self.answers[key]

    def changed(self, form: Lin, shifts: dict[int, Lin], rel: str | None) -> str:
        """Output (``rel`` None) or constraint condition for one form."""
        canon = Canon(self.diffs.derived)
        g = canon.form(form)
        primed = canon.form(form.substitute(
            {**{v: Lin.var(v) - Lin.var(("d", v[1])) for v in form.vars_of("x")},
             **{v: Lin.var(v) - Lin.var(("w", v[1])) for v in form.vars_of("v")},
             **{v: Lin.var(v) + shifts.get(v[1], Lin()) for v in form.vars_of("e")}}))
        inputs = self._inputs(canon)
        key = ("form", rel, g, primed, canon.signature(), inputs, tuple(self.diffs.bound[j] for j in canon.originals("d")),
               len(canon.originals("d")) == self.diffs.n, self.diffs.kind)

        def build(solver: z3.Solver) -> None:
            env = canon.env()
            self._diff_vars(canon, env, solver)
            self._in_domain(inputs, env, solver)
            a, b = _term(g, env), _term(primed, env)
            solver.add(a != b if rel is None else z3.And(_rel(a, rel), z3.Not(_rel(b, rel))))
        return self._ask(key, build)

    def support(self, shift: Lin) -> str:
        canon = Canon(self.diffs.derived)
        a = canon.form(shift)
        inputs = self._inputs(canon)
        key = ("support", a, canon.signature(), inputs, tuple(self.diffs.bound[j] for j in canon.originals("d")),
               len(canon.originals("d")) == self.diffs.n, self.diffs.kind)

        def build(solver: z3.Solver) -> None:
            env = canon.env()
            self._diff_vars(canon, env, solver)
            self._in_domain(inputs, env, solver)
            eta = z3.Real("eta")
            solver.add(eta >= 0, eta + _term(a, env) < 0)
        return self._ask(key, build)

    def cost(self, terms: list[tuple[Lin, Fraction]], eps: Fraction) -> Iterable[str]:
        """Answers for ``sum w |a| > eps`` over the differences (several queries when split)."""
        if self.diffs.joint:
            yield self._cost_query(terms, eps, None)
            return
        touching: dict[int, list[tuple[Lin, Fraction]]] = {}
        for f, w in terms:
            for j in self.diffs.coords(f):
                touching.setdefault(j, []).append((f, w))
        if len(touching) < self.diffs.n:  # a coordinate none of the shifts reads differs
            yield self._cost_query([(Lin(f.const), w) for f, w in terms], eps, None)
        constant = sum((w * abs(f.const) for f, w in terms), Fraction(0))
        for j, ts in touching.items():  # d = t e_j: the other shifts are at their constants
            rest = constant - sum((w * abs(f.const) for f, w in ts), Fraction(0))
            yield self._cost_query([(self._along(f, j), w) for f, w in ts] + [(Lin(rest), Fraction(1))], eps, j)

    def _along(self, f: Lin, j: int) -> Lin:
        """A shift when only coordinate ``j`` differs: its ``d_j`` and the differences of the
        derived values that read ``x_j``."""
        keep = {v: k for v, k in f.coef.items()
                if (v[0] == "d" and v[1] == j) or (v[0] == "w" and j in self.diffs.derived.defs[v[1]].support)}
        return Lin(f.const, keep)

    def _cost_query(self, terms: list[tuple[Lin, Fraction]], eps: Fraction, coord: int | None) -> str:
        canon = Canon(self.diffs.derived, coord)
        specs = tuple(sorted((canon.form(f), w) for f, w in terms if f.coef or f.const))
        bounds = tuple(self.diffs.bound[j] for j in canon.originals("d"))
        full = len(canon.originals("d")) == self.diffs.n
        inputs = self._inputs(canon)
        key = ("cost", specs, canon.signature(), inputs, eps, bounds, full, self.diffs.kind, coord is None)

        def build(solver: z3.Solver) -> None:
            env = canon.env()
            self._in_domain(inputs, env, solver)
            if coord is None or self.diffs.joint:
                self._diff_vars(canon, env, solver)
            else:  # d = t e_coord, t != 0
                for i, b in enumerate(bounds):
                    solver.add(env[("d", i)] >= -b, env[("d", i)] <= b, env[("d", i)] != 0)
            total = z3.Sum([z3.RealVal(w) * z3.If(_term(s, env) >= 0, _term(s, env), -_term(s, env))
                            for s, w in specs]) if specs else z3.RealVal(0)
            solver.add(total > z3.RealVal(eps))
        return self._ask(key, build)


def discharge(path: Path, shifts: dict[int, Lin], laws: dict[int, tuple[str, Fraction]],
              eps: Fraction, z: Discharger) -> str | None:
    """None when z3 answers unsat to every condition of the path, else the first failure."""
    for k, out in enumerate(path.outputs):
        if isinstance(out, Lin) and out.coef and (ans := z.changed(out, shifts, None)) != "unsat":
            return f"output {k}: z3 answered {ans} to 'the output changes'"
    for c in path.constraints:
        if (ans := z.changed(c.form, shifts, c.rel)) != "unsat":
            return f"decision %{c.node} ({c.form} {c.rel} 0): z3 answered {ans} to 'its outcome flips'"
    for e, a in shifts.items():
        if laws[e][0] == "exponential" and (ans := z.support(a)) != "unsat":
            return f"draw eta_{e}: z3 answered {ans} to 'the shift leaves the support'"
    terms = [(a, 1 / laws[e][1]) for e, a in shifts.items()]
    for ans in z.cost(terms, eps):
        if ans != "unsat":
            return f"cost: z3 answered {ans} to 'the cost exceeds {eps}'"
    return None
