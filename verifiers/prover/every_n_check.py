"""The conditions of an every-n proof, and its independent check (every condition asked of z3 again).

An every-n proof (:mod:`verifiers.prover.every_n`) is a :class:`Plan` over the mechanism's
symbolic loop iteration (:func:`samplers.lang.loop.trace_loop`): neighbours ``x, x' = x - d``,
each element difference ``d_i`` in ``[-u, u]`` (both elements in the declared range).  The
plan shifts the prologue's draws by constants, each iteration's draws by ``k0 + k1 d_i``
chosen by the outcomes (the *row*) of the iteration's noisy comparisons and of its
comparisons that read the index ``i`` (an indexed scan; ``i`` is any integer ``>= 0``), and
on rows that *reset* the accumulator also by ``kc D`` (``D`` its difference before the
iteration: a block sum paid once, at its block's end, as SmartSum's), and the epilogue's
draws by ``k0 + k2 D`` (``D`` the final difference of the accumulator).  It relates the runs
on ``x`` and ``x'``: every state component differs by a constant ``delta``, or is an
*accumulator* whose difference grows by ``k d_i`` per iteration, or is 0 after a row that
resets it (so it stays within ``|k|`` times the ``sum |d_j|`` since the last reset).  An
optional *halt* predicate over the state (sparse vector's cutoff ``count >= c``) ends the
live iterations.  The conditions, each for every value of the element, ``d``, the state, and
the draws (z3, unsat of the negation):

1. *init*: the initial states are related (and agree on halt); exponential prologue draws are
   shifted up only (they stay in their support);
2. *rows*, for each outcome vector of the noisy comparisons: if the state is not halted and the
   run on ``x`` takes the row, the run on ``x'`` with shifted draws takes it too, outputs the
   same, its new state is related again (unless the row *halts*: the new state is halted in both
   runs; on a row that *resets*, the accumulator's new difference is 0) and agrees on halt,
   exponential draws stay in their support, and the counter grows by the row's ``count``
   (rows no input takes are checked to be so);
3. *halted*: once halted (in both runs, any states), outputs agree without any shift and the
   state stays halted;
4. *counter bound*: after a live iteration that does not halt the counter is at most ``top``;
5. *epilogue*: with the final states related (the accumulator's difference anywhere in
   ``[-|k| S, |k| S]``, ``S`` the largest ``sum_i |d_i|`` of the relation), the results agree.

Then, by induction over the iterations, the shifted run on ``x'`` outputs what the run on
``x`` does, the shifts are recoverable from it (kept outcomes, synchronised halt), so the map
is injective with Jacobian 1 and ``P(M(x) in E) <= e^c P(M(x') in E)`` with ``c`` the total
cost :func:`bound` adds up: the prologue's ``sum |k| / b``, per live iteration at most
``gamma |d_i|`` on rows that leave the counter alone (their shifts are ``k1 d_i``) plus
``alpha`` per unit the counter grows, summed to ``gamma S + alpha (top - start)`` for every n,
plus ``kappa |D|`` on a row whose shifts read ``D`` (``kappa`` the largest ``sum |kc| / b``):
such a row must reset (or halt), so the ``D`` read are sums over disjoint blocks of
iterations and add up to at most ``|k| S``, giving ``kappa |k| S`` in all,
the cost of the one halting iteration (the last live one), and the epilogue's cost.  Relations where every element may change (all_differ, monotone)
have ``S = n s``: a positive ``gamma`` then gives a level growing with n, which is reported,
never proved.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import z3

from samplers import deadline
from samplers.lang.ir import COMPARE, FLOAT, Program
from samplers.lang.loop import LoopTrace
from samplers.lang.neighbours import AllDiffer, Monotone, OneDiffer, ReplaceOne
from verifiers.prover.loop_z3 import DRAWS, Unencodable, evaluate, real, same

Shift2 = tuple[Fraction, Fraction]
INDEX_LO = 0  # an indexed scan's index is any integer from 0 on


class NoEveryN(Exception):
    """No every-n proof, and why."""


@dataclass
class Setting:
    """The loop, its draws' laws (node -> (law, scale)), the relation's ``u`` and ``S`` (None: n s)."""

    loop: LoopTrace
    laws: dict[int, tuple[str, Fraction]]
    u: int
    total: Fraction | None
    per_element: int  # S / n when total is None
    relation: str

    def part(self, i: int) -> str:
        lt = self.loop
        return "prologue" if i < lt.body_start else "body" if i < lt.epilogue_start else "epilogue"

    def draws(self, part: str) -> list[int]:
        return sorted(e for e in self.laws if self.part(e) == part)

    def decisions(self) -> list[int]:
        """The body's noisy comparisons (they read a draw or real-valued state) and those reading the
        index: the row outcomes."""
        lt, noisy = self.loop, set(self.laws) | {s for s in self.loop.state_in
                                                 if self.loop.nodes[s].kind == FLOAT}
        if lt.index is not None:
            noisy.add(lt.index)
        for i in range(lt.body_start, lt.epilogue_start):
            if any(a in noisy for a in lt.nodes[i].args):
                noisy.add(i)
        return [i for i in range(lt.body_start, lt.epilogue_start)
                if lt.nodes[i].op in COMPARE and i in noisy]


@dataclass
class Row:
    outcomes: dict[int, int]
    shifts: dict[int, Shift2] = field(default_factory=dict)
    feasible: bool = True
    count: Fraction = Fraction(0)
    halts: bool = False  # the iteration halts the run (its state needs no relation after it)
    resets: bool = False  # the accumulator's difference is 0 after the iteration
    carry: dict[int, Fraction] = field(default_factory=dict)  # draw -> kc, its shift's part kc D


@dataclass
class Plan:
    prologue: dict[int, Fraction]
    state: list[tuple[str, Fraction]]  # ("delta", constant difference) or ("acc", growth per d_i)
    halt: int | None = None
    rows: list[Row] = field(default_factory=list)
    counter: int | None = None  # index into the state
    start: Fraction = Fraction(0)
    top: Fraction = Fraction(0)
    epilogue: dict[int, Shift2] = field(default_factory=dict)


def setting(program: Program, loop: LoopTrace) -> Setting:
    """The loop's laws and the relation's per-element and total differences (NoEveryN: why not)."""
    laws: dict[int, tuple[str, Fraction]] = {}
    for i, n in enumerate(loop.nodes):
        if i in loop.leaves:
            continue
        if n.op in ("draw", "geom", "gaussian"):
            raise NoEveryN(f"node %{i} draws {n.op} noise: every-n proofs cover Laplace and exponential noise")
        if n.op in DRAWS:
            laws[i] = (n.op, Fraction(n.attr))
    for s_in, s_out, init in zip(loop.state_in, loop.state_out, loop.init):
        if loop.nodes[s_in].kind == FLOAT and not (_reads_noise(loop, s_out, set(laws))
                                                   or _reads_noise(loop, init, set(laws))):
            raise NoEveryN(f"state %{s_in} is a float without noise: numpy rounds it, z3 would read it exactly")
    rel, width = program.neighbours, loop.hi - loop.lo
    if isinstance(rel, OneDiffer):
        s = rel.sensitivity
        return Setting(loop, laws, s, Fraction(s), 0, rel.name)
    if isinstance(rel, ReplaceOne):
        return Setting(loop, laws, width, Fraction(width), 0, rel.name)
    if isinstance(rel, (AllDiffer, Monotone)):
        return Setting(loop, laws, rel.sensitivity, None, rel.sensitivity, rel.name)
    raise NoEveryN(f"the neighbour relation {rel.name!r} has no per-element form")


def described(st: Setting, evidence: dict[str, Any]) -> str | None:
    """None when an every-n proof's evidence describes the setting its checker re-derived (the
    neighbour relation, the elements' range, the unit difference), else what differs: a proof
    file must not be confirmed while it states another relation or range than the one proved."""
    said = (evidence["neighbours"], list(evidence["element"]), evidence["unit"])
    truth = (st.relation, [st.loop.lo, st.loop.hi], st.u)
    if said != truth:
        return f"the proof describes neighbours, elements and unit {said}, the mechanism has {truth}"
    return None


def _reads_noise(loop: LoopTrace, i: int, draws: set[int]) -> bool:
    seen, todo = set(), [i]
    while todo:
        j = todo.pop()
        if j in draws:
            return True
        if j not in seen:
            seen.add(j)
            todo.extend(loop.nodes[j].args)
    return False


class Frame:
    """z3 variables for one condition: the element, d, draws, state, accumulator differences."""

    def __init__(self, st: Setting) -> None:
        lt = st.loop
        self.st = st
        self.q, self.d = z3.Int("q"), z3.Int("d")
        self.assume = [lt.lo <= self.q, self.q <= lt.hi, lt.lo <= self.q - self.d, self.q - self.d <= lt.hi,
                       -st.u <= self.d, self.d <= st.u]
        self.var: dict[int, Any] = {}
        for i in sorted(st.laws):
            self.var[i] = z3.Real(f"eta{i}")
            if st.laws[i][0] == "exponential":
                self.assume.append(self.var[i] >= 0)
        for i in (*lt.state_in, *lt.final):
            self.var[i] = z3.Int(f"s{i}") if lt.nodes[i].kind != FLOAT else z3.Real(f"s{i}")
        if lt.index is not None:
            self.index = z3.Int("i")
            self.assume.append(self.index >= INDEX_LO)
        self.diff = {i: z3.Real(f"D{i}") for i in (*lt.state_in, *lt.final)}
        self.other = {i: z3.Real(f"t{i}") if lt.nodes[i].kind == FLOAT else z3.Int(f"t{i}") for i in lt.state_in}

    def _val(self, i: int) -> Any:
        v = self.var[i]
        return z3.ToReal(v) if v.sort() == z3.IntSort() else v

    def runs(self, plan: Plan, body: dict[int, Shift2], free_state: bool = False,
             carry: dict[int, Fraction] | None = None) -> tuple[dict, dict]:
        """All node values on ``x`` and on ``x'`` with the plan's shifts (``free_state``: the
        state of ``x'`` unrelated, as once halted; ``carry``: body shifts' parts ``kc D``)."""
        lt, no = self.st.loop, z3.BoolVal(False)
        x = {lt.element: (no, z3.ToReal(self.q))}
        y = {lt.element: (no, z3.ToReal(self.q - self.d))}
        if lt.index is not None:
            x[lt.index] = y[lt.index] = (no, z3.ToReal(self.index))
        for i in self.st.laws:
            x[i] = (no, self.var[i])
            part = self.st.part(i)
            if part == "prologue":
                shift = real(plan.prologue.get(i, 0))
            elif part == "body":
                k0, k1 = body.get(i, (0, 0))
                shift = real(k0) + real(k1) * z3.ToReal(self.d) + real((carry or {}).get(i, 0)) * self.acc_in(plan)
            else:
                k0, k2 = plan.epilogue.get(i, (0, 0))
                shift = real(k0) + real(k2) * self.acc_final(plan)
            y[i] = (no, self.var[i] + shift)
        for leaves in (lt.state_in, lt.final):
            for k, i in enumerate(leaves):
                x[i] = (no, self._val(i))
                if free_state and leaves is lt.state_in:
                    t = self.other[i]
                    y[i] = (no, z3.ToReal(t) if t.sort() == z3.IntSort() else t)
                    continue
                mode, k_ = plan.state[k]
                y[i] = (no, self._val(i) + (real(k_) if mode == "delta" else self.diff[i]))
        n = len(lt.nodes)
        return evaluate(lt.nodes, x, n), evaluate(lt.nodes, y, n)

    def acc_final(self, plan: Plan) -> Any:
        """The accumulator's final difference (its leaf's variable; 0 without an accumulator)."""
        return self._acc(plan, self.st.loop.final)

    def acc_in(self, plan: Plan) -> Any:
        """The accumulator's difference before the iteration (0 without an accumulator)."""
        return self._acc(plan, self.st.loop.state_in)

    def _acc(self, plan: Plan, leaves: tuple[int, ...]) -> Any:
        accs = [f for f, (mode, _) in zip(leaves, plan.state) if mode == "acc"]
        return self.diff[accs[0]] if accs else real(0)

    def holds(self, extra: list[Any], goal: Any) -> bool:
        """Whether ``goal`` holds whenever the frame's and the ``extra`` assumptions do."""
        deadline.check("while discharging every-n conditions")
        s = z3.Solver()
        s.set("timeout", 20000)
        s.add(*self.assume, *extra, z3.Not(goal))
        r = s.check()
        if r == z3.unknown:
            raise NoEveryN(f"z3 answered unknown ({s.reason_unknown()})")
        return r == z3.unsat


def _halted(vals: dict, halt: int | None) -> Any:
    return z3.BoolVal(False) if halt is None else vals[halt][1] != 0


def _related(f: Frame, plan: Plan, x: dict, y: dict, leaves_in: tuple, leaves_out: tuple[int, ...],
             growth: bool, resets: bool = False) -> list[Any]:
    out = []
    for k, (i, o) in enumerate(zip(leaves_in, leaves_out)):
        mode, k_ = plan.state[k]
        if mode == "delta":
            out.append(y[o][1] == x[o][1] + real(k_))
        elif resets:
            out.append(y[o][1] == x[o][1])
        elif growth:
            out.append(y[o][1] == x[o][1] + f.diff[i] + real(k_) * z3.ToReal(f.d))
    return out


def init_holds(f: Frame, plan: Plan) -> bool:
    lt = f.st.loop
    x, y = f.runs(plan, {})
    at_x = evaluate(lt.nodes, {s: x[i] for s, i in zip(lt.state_in, lt.init)}, lt.epilogue_start,
                    lt.body_start, x)
    at_y = evaluate(lt.nodes, {s: y[i] for s, i in zip(lt.state_in, lt.init)}, lt.epilogue_start,
                    lt.body_start, y)
    goals = [y[i][1] == x[i][1] + (real(k) if mode == "delta" else 0)
             for i, (mode, k) in zip(lt.init, plan.state)]
    goals.append(_halted(at_x, plan.halt) == _halted(at_y, plan.halt))
    goals += [real(k) >= 0 for e, k in plan.prologue.items() if f.st.laws[e][0] == "exponential"]  # support
    return f.holds([], z3.And(*goals))


def _after(f: Frame, plan: Plan, run: dict) -> Any:
    """Whether a run is halted after the iteration (the halt predicate of its new state)."""
    lt = f.st.loop
    if plan.halt is None:
        return z3.BoolVal(False)
    vals = evaluate(lt.nodes, {s: run[o] for s, o in zip(lt.state_in, lt.state_out)}, lt.epilogue_start,
                    lt.body_start, run)
    return _halted(vals, plan.halt)


def row_assumptions(f: Frame, plan: Plan, row: Row, x: dict) -> list[Any]:
    return [z3.Not(_halted(x, plan.halt)), _after(f, plan, x) == row.halts,
            *[(x[c][1] != 0) == bool(v) for c, v in row.outcomes.items()]]


def row_feasible(f: Frame, plan: Plan, row: Row) -> bool:
    x, _ = f.runs(plan, {})
    return not f.holds(row_assumptions(f, plan, row, x), z3.BoolVal(False))


def row_holds(f: Frame, plan: Plan, row: Row) -> bool:
    lt = f.st.loop
    x, y = f.runs(plan, row.shifts, carry=row.carry)
    goals = [(y[c][1] != 0) == bool(v) for c, v in row.outcomes.items()]
    if lt.out is not None:
        goals.append(same(x[lt.out], y[lt.out]))
    if not row.halts:  # once both runs halt, their states need no relation (halted_holds)
        goals += _related(f, plan, x, y, lt.state_in, lt.state_out, growth=True, resets=row.resets)
    goals.append(_after(f, plan, y) == row.halts)
    for e, (k0, k1) in row.shifts.items():
        if f.st.laws[e][0] == "exponential":
            goals.append(real(k0) + real(k1) * z3.ToReal(f.d) + real(row.carry.get(e, 0)) * f.acc_in(plan) >= 0)
    for e, kc in row.carry.items():
        if f.st.laws[e][0] == "exponential" and e not in row.shifts:
            goals.append(real(kc) * f.acc_in(plan) >= 0)
    if plan.counter is not None:
        c_in, c_out = lt.state_in[plan.counter], lt.state_out[plan.counter]
        goals.append(x[c_out][1] - x[c_in][1] == real(row.count))
    return f.holds(row_assumptions(f, plan, row, x), z3.And(*goals))


def halted_holds(f: Frame, plan: Plan) -> bool:
    lt = f.st.loop
    x, y = f.runs(plan, {}, free_state=True)
    goals = [_after(f, plan, x), _after(f, plan, y)]
    if lt.out is not None:
        goals.append(same(x[lt.out], y[lt.out]))
    return f.holds([_halted(x, plan.halt), _halted(y, plan.halt)], z3.And(*goals))


def counter_below(f: Frame, plan: Plan, top: Fraction) -> bool:
    lt = f.st.loop
    x, _ = f.runs(plan, {})
    c_out = lt.state_out[plan.counter]
    return f.holds([z3.Not(_halted(x, plan.halt)), z3.Not(_after(f, plan, x))], x[c_out][1] <= real(top))


def epilogue_holds(f: Frame, plan: Plan) -> bool:
    lt, st = f.st.loop, f.st
    x, y = f.runs(plan, {})
    extra = []
    for k, i in enumerate(lt.final):
        mode, k_ = plan.state[k]
        if mode == "acc":
            if st.total is None:
                return False
            r = real(abs(k_) * st.total)
            extra += [-r <= f.diff[i], f.diff[i] <= r]
    goals = [same(x[r], y[r]) for r in lt.results]
    for e, (k0, k2) in plan.epilogue.items():
        if st.laws[e][0] == "exponential":
            goals.append(real(k0) + real(k2) * f.acc_final(plan) >= 0)
    return f.holds(extra, z3.And(*goals))


@dataclass
class Bound:
    prologue: Fraction
    gamma: Fraction  # per unit of sum |d_i|
    alpha: Fraction  # per unit of counter growth
    epilogue: Fraction
    constant: Fraction | None  # the total for every n, or None when it grows with n
    per_n: Fraction  # the growth per element when constant is None
    kappa: Fraction = Fraction(0)  # per unit of |D| on rows whose shifts read the accumulator's difference

    def text(self) -> str:
        if self.constant is not None:
            return f"{_q(self.constant)}"
        return f"{_q(self.constant_part)} + {_q(self.per_n)} n"

    @property
    def constant_part(self) -> Fraction:
        return self.prologue + self.epilogue


def _q(v: Fraction) -> str:
    return str(v) if v.denominator == 1 else f"{v} (~{float(v):.6g})"


def bound(st: Setting, plan: Plan) -> Bound:
    """The total cost of a plan for every n (see module doc); NoEveryN when a live row's cost is
    bounded neither by ``|d_i|`` nor by the counter."""
    prologue = sum((abs(k) / st.laws[e][1] for e, k in plan.prologue.items()), Fraction(0))
    gamma = alpha = Fraction(0)
    per_iteration = Fraction(0)
    last = Fraction(0)  # the halting iteration's cost: paid once, halting is absorbing
    kappa = Fraction(0)
    for row in plan.rows:
        if not row.feasible:
            continue
        if row.carry and not (row.resets or row.halts):
            raise NoEveryN("a row's shifts read the accumulator's difference but it neither resets nor halts")
        kappa = max(kappa, sum((abs(kc) / st.laws[e][1] for e, kc in row.carry.items()), Fraction(0)))
        full = sum(((abs(k0) + abs(k1) * st.u) / st.laws[e][1] for e, (k0, k1) in row.shifts.items()), Fraction(0))
        if row.halts:
            last = max(last, full)
            continue
        if row.count < 0:
            raise NoEveryN("a row lowers the counter")
        if row.count > 0:
            alpha = max(alpha, full / row.count)
        elif all(k0 == 0 for k0, _ in row.shifts.values()):
            gamma = max(gamma, sum((abs(k1) / st.laws[e][1] for e, (_, k1) in row.shifts.items()), Fraction(0)))
        else:
            per_iteration = max(per_iteration, full)
    epi_accs = [abs(k) for mode, k in plan.state if mode == "acc"]
    acc_range = (max(epi_accs) * st.total) if epi_accs and st.total is not None else Fraction(0)
    epilogue = sum(((abs(k0) + abs(k2) * acc_range) / st.laws[e][1] for e, (k0, k2) in plan.epilogue.items()),
                   Fraction(0))
    counter_part = alpha * (max(plan.top, plan.start) - plan.start)
    carried = kappa * (max(epi_accs) if epi_accs else 0)  # per unit of sum |d_j|: each block's D is read once
    if per_iteration > 0 or ((gamma > 0 or carried > 0) and st.total is None):
        grow = per_iteration + (gamma + carried) * st.per_element
        return Bound(prologue, gamma, alpha, epilogue + last, None, grow, kappa)
    return Bound(prologue, gamma, alpha, epilogue + last,
                 prologue + (gamma + carried) * (st.total or 0) + counter_part + epilogue + last, Fraction(0), kappa)


def all_rows(decisions: list[int], halt: int | None) -> list[tuple[dict[int, int], bool]]:
    """Every outcome vector of the decisions, each with and without halting (with a halt predicate)."""
    return [(dict(zip(decisions, bits)), halts) for bits in itertools.product((0, 1), repeat=len(decisions))
            for halts in ((False, True) if halt is not None else (False,))]


def verify(st: Setting, plan: Plan) -> str | None:
    """None when every condition of the plan holds (asked of z3 again), else the first that fails."""
    try:
        f = Frame(st)
        if len(plan.state) != len(st.loop.state_in):
            return "the plan relates a different number of state components"
        if any(st.part(e) != "prologue" for e in plan.prologue) or any(st.part(e) != "epilogue"
                                                                      for e in plan.epilogue):
            return "a shift names a draw outside its part of the loop"
        if plan.halt is not None and (plan.halt not in range(st.loop.body_start, st.loop.epilogue_start)
                                      or st.loop.results):
            return "the halt predicate is no body node, or the loop has an epilogue"
        if not init_holds(f, plan):
            return "the initial states are not related"
        wanted = all_rows(st.decisions(), plan.halt)
        if sorted((sorted(r.outcomes.items()), r.halts) for r in plan.rows) != sorted(
                (sorted(o.items()), h) for o, h in wanted):
            return "the rows are not every outcome vector of the iteration's noisy comparisons"
        for row in plan.rows:
            if any(st.part(e) != "body" for e in (*row.shifts, *row.carry)):
                return "a row shifts a draw outside the body"
            if row.carry and not (row.resets or row.halts):
                return f"row {row.outcomes} reads the accumulator's difference but neither resets nor halts"
            if not row.feasible:
                if row_feasible(f, plan, row):
                    return f"row {row.outcomes} is taken by some input but the proof says none"
            elif not row_holds(f, plan, row):
                return f"row {row.outcomes}: the shifted run does not keep it, its output or its state"
        if plan.halt is not None and not halted_holds(f, plan):
            return "the halt predicate is not absorbing with constant outputs"
        if plan.counter is not None:
            if st.loop.nodes[st.loop.init[plan.counter]].op != "const" or \
                    Fraction(st.loop.nodes[st.loop.init[plan.counter]].attr) != plan.start:
                return "the counter does not start at the stated constant"
            if not counter_below(f, plan, plan.top):
                return f"the counter can exceed {plan.top} after a live iteration"
        if sum(mode == "acc" for mode, _ in plan.state) > 1:
            return "more than one accumulator"
        if plan.counter is None and any(r.count for r in plan.rows):
            return "a row counts without a counter"
        if st.loop.results and not epilogue_holds(f, plan):
            return "the epilogue's results differ on related final states"
    except Unencodable as e:
        return f"node %{e.node}: {e.reason}"
    return None
