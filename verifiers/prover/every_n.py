"""The every-n rule: eps-DP for every input size n >= 1, by induction over a ``scan`` loop.

The mechanism (catalogue name or ``module:alg``, written with :func:`samplers.lang.scan`) is
traced for one symbolic iteration (:func:`samplers.lang.loop.trace_loop`).  Synthesis tries
small templates -- prologue draws shifted by ``0, +-u, +-2u``; each iteration's draws by
``k0 + k1 d_i`` (``k0`` in ``0, +-u, +-2u``, ``k1`` in ``0, +-1``) per outcome row of its noisy
comparisons (and of those reading an indexed scan's index), cheapest first, and where none
keeps a row, by ``k0 + k1 d_i + kc D`` (``kc`` in ``+-1``) on the row reset the accumulator
(SmartSum's block end); a halt predicate among the body's comparisons of integer state;
a counter among the integer state -- and keeps the plan with the smallest total cost for
every n (:mod:`verifiers.prover.every_n_check` states the conditions and the argument).  A
plan whose cost grows with n (all_differ with a per-element cost, a cost on rows no counter
bounds) is no proof: the reason gives its level as ``a + b n``.

The proof's ``params`` are those it was asked with; the evidence says ``"n": "every n >= 1"``.
:func:`check` re-traces the loop and asks z3 every condition again, and recomputes the cost.
"""

from __future__ import annotations

import itertools
from fractions import Fraction
from typing import Any

import z3

from samplers.errors import DPHybridError, LanguageError
from samplers.json_shape import NAT, RATIONAL, Map
from samplers.lang.exact import fraction_str
from samplers.lang.ir import COMPARE, FLOAT, INT, Program
from samplers.lang.loop import LoopTrace, NotALoop, poisoned, trace_loop
from verifiers.prover.every_n_check import (Bound, Frame, NoEveryN, Plan, Row, Setting, all_rows, bound,
                                            counter_below, described, halted_holds, init_holds, row_assumptions,
                                            row_feasible, row_holds, setting, verify)
from verifiers.prover.loop_agreement import disagreement
from verifiers.prover.loop_z3 import Unencodable
from verifiers.prover.proof import NoProof, Proof

RULE = "every_n"
RATIO = False
MAX_PROLOGUE_PLANS = 64
EVIDENCE = {
    "n": str, "neighbours": str, "element": [int], "unit": NAT, "sum_d": str,
    "prologue": Map(RATIONAL), "state": [{"mode": str, "k": RATIONAL}], "halt": int,
    "rows": [{"outcomes": Map(NAT), "halts": bool, "feasible": bool, "count": RATIONAL,
              "shifts": Map({"const": RATIONAL, "d": RATIONAL}), "resets?": bool, "carry?": Map(RATIONAL)}],
    "counter": int, "start": RATIONAL, "top": RATIONAL,
    "epilogue": Map({"const": RATIONAL, "acc": RATIONAL}),
    "costs": {"prologue": RATIONAL, "gamma": RATIONAL, "alpha": RATIONAL, "epilogue": RATIONAL, "kappa?": RATIONAL},
    "eps": RATIONAL,
}


class NotEveryN(DPHybridError):
    """``every_n`` asked of a mechanism that is not written with the loop construct (or not known)."""


def loop_of(program: Program) -> tuple[Any, LoopTrace]:
    """The program's mechanism and its symbolic iteration, or :class:`NotEveryN` saying why not."""
    from samplers.lang.mechanism import Mechanism
    from samplers.plain import resolve

    try:
        mech = resolve(program.name)
    except DPHybridError as e:
        raise NotEveryN(f"--every-n needs a catalogue mechanism or module:alg: {e}") from None
    if not isinstance(mech, Mechanism) or mech.trace(**dict(program.params)).nodes != program.nodes:
        raise NotEveryN(f"{program.name}: --every-n needs the @mechanism definition it was traced from")
    dom = program.domain
    if len(set(dom.lo)) != 1 or len(set(dom.hi)) != 1:
        raise NotEveryN(f"{program.name}: --every-n needs one range for every element of the input")
    size = mech.domain_spec.size
    spec = mech.domain_spec
    if isinstance(size, str) and any(b == size or (isinstance(b, (list, tuple)) and size in b)
                                      for b in (spec.lo, spec.hi)):
        raise NotEveryN(f"{program.name}: the elements' range depends on the size parameter {size}")
    if callable(mech.neighbours_spec) and isinstance(size, str):
        try:
            mech.neighbours_spec({**dict(program.params), size: poisoned(size)})
        except NotALoop:
            raise NotEveryN(f"{program.name}: the neighbour relation depends on the size parameter {size}") from None
    try:
        loop = trace_loop(mech.fn, dict(program.params), size if isinstance(size, str) else None,
                          dom.lo[0], dom.hi[0], program.name)
    except NotALoop as e:
        raise NotEveryN(str(e)) from None
    except LanguageError as e:
        raise NotEveryN(f"{program.name} cannot be traced for a symbolic iteration: {e}") from None
    params = dict(program.params)
    why = disagreement(loop, lambda k: mech.trace(**{**params, size: k}) if isinstance(size, str)
                       else (program if k == len(dom.lo) else None))
    if why is not None:
        raise NotEveryN(f"{program.name}: {why}")
    return mech, loop


def _cone(loop: LoopTrace, i: int, memo: dict[int, frozenset]) -> frozenset:
    if i not in memo:
        n = loop.nodes[i]
        memo[i] = frozenset({i}).union(*(_cone(loop, a, memo) for a in n.args))
    return memo[i]


def _state_modes(st: Setting, f: Frame) -> list[tuple[str, Fraction]]:
    """Per state component: an accumulator (noise-free, reads the element) with its growth per d_i,
    or a constant difference (found from the initial state once the prologue shifts are known)."""
    lt, memo, modes = st.loop, {}, []
    for s_in, s_out in zip(lt.state_in, lt.state_out):
        cone = _cone(lt, s_out, memo)
        if lt.element in cone and not (cone & set(st.laws)):
            modes.append(("acc", Fraction(-1)))
        else:
            modes.append(("delta", Fraction(0)))
    return modes


def _deltas(f: Frame, plan: Plan) -> list[tuple[str, Fraction]] | None:
    """The constant differences of the initial state under the plan's prologue shifts."""
    lt = f.st.loop
    x, y = f.runs(Plan(plan.prologue, [("delta", Fraction(0))] * len(lt.state_in)), {})
    out = []
    for i, (mode, k) in zip(lt.init, plan.state):
        if mode == "acc":
            out.append((mode, k))
            continue
        d = _number(z3.simplify(y[i][1] - x[i][1]))
        if d is None:
            return None
        out.append(("delta", d))
    return out


def _options(u: int, laws: dict, draws: list[int], with_d: bool) -> list[dict[int, tuple[Fraction, Fraction]]]:
    ks = [Fraction(k * u) for k in (0, 1, -1, 2, -2)]
    single = [(k0, Fraction(k1)) for k0 in ks for k1 in ((0, 1, -1) if with_d else (0,))]

    def cost(choice: dict) -> Fraction:
        return sum(((abs(k0) + abs(k1) * u) / laws[e][1] for e, (k0, k1) in choice.items()), Fraction(0))

    combos = [dict(zip(draws, c)) for c in itertools.product(single, repeat=len(draws))]
    return sorted(combos, key=cost)


def _row_count(f: Frame, plan: Plan, row: Row, counter: int) -> Fraction | None:
    """The counter's growth on a row, when it is one constant."""
    lt = f.st.loop
    x, _ = f.runs(plan, {})
    s = z3.Solver()
    s.add(*f.assume, *row_assumptions(f, plan, row, x))
    if s.check() != z3.sat:
        return None
    growth = _number(s.model().eval(x[lt.state_out[counter]][1] - x[lt.state_in[counter]][1],
                                    model_completion=True))
    if growth is None:
        return None
    probe = Row(row.outcomes, row.shifts, True, growth, row.halts)
    return growth if row_holds(f, Plan(plan.prologue, plan.state, plan.halt, counter=counter), probe) else None


def _number(v: Any) -> Fraction | None:
    """A z3 numeral as a Fraction (None for anything else: an infinity, an expression)."""
    if z3.is_int_value(v):
        return Fraction(v.as_long())
    if z3.is_rational_value(v):
        return Fraction(v.numerator_as_long(), v.denominator_as_long())
    return None


def _top(f: Frame, plan: Plan, counter: int) -> Fraction | None:
    lt = f.st.loop
    x, _ = f.runs(plan, {})
    o = z3.Optimize()
    o.add(*f.assume, *row_assumptions(f, plan, Row({}), x))
    h = o.maximize(x[lt.state_out[counter]][1])
    if o.check() != z3.sat:
        return None
    return _number(o.upper(h))


def _with_counter(f: Frame, plan: Plan) -> None:
    """Give the plan a counter bounding its rows' constant costs, where one exists."""
    lt = f.st.loop
    if all(k0 == 0 for r in plan.rows for k0, _ in r.shifts.values()):
        return
    for k, (i, (mode, delta)) in enumerate(zip(lt.state_in, plan.state)):
        init = lt.nodes[lt.init[k]]
        if lt.nodes[i].kind != INT or mode != "delta" or delta != 0 or init.op != "const":
            continue
        counts = [_row_count(f, plan, r, k) if r.feasible else Fraction(0) for r in plan.rows]
        top = _top(f, plan, k)
        if None in counts or top is None or any(c < 0 for c in counts) or not counter_below(
                f, Plan(plan.prologue, plan.state, plan.halt, counter=k), top):
            continue
        for r, c in zip(plan.rows, counts):
            r.count = c
        plan.counter, plan.start, plan.top = k, Fraction(init.attr), top
        return


def _halts(st: Setting) -> list[int | None]:
    lt, memo = st.loop, {}
    ints = {s for s in lt.state_in if lt.nodes[s].kind == INT}
    found: list[int | None] = [None]
    for i in range(lt.body_start, lt.epilogue_start):
        if lt.nodes[i].op in COMPARE:
            leaves = {j for j in _cone(lt, i, memo) if lt.nodes[j].op not in ("const",) and not lt.nodes[j].args}
            if leaves and leaves <= ints:
                found.append(i)
    return found if not lt.results else [None]


def _plan_rows(f: Frame, plan: Plan, body: list[int]) -> str | None:
    """Fill the plan's rows, cheapest shifts first; the reason when a row keeps no template."""
    for outcomes, halts in all_rows(f.st.decisions(), plan.halt):
        row = Row(outcomes, halts=halts)
        if not row_feasible(f, plan, row):
            plan.rows.append(Row(outcomes, {}, False, halts=halts))
            continue
        for choice in _options(f.st.u, f.st.laws, body, True):
            row.shifts = {e: s for e, s in choice.items() if s != (0, 0)}
            if row_holds(f, plan, row):
                break
        else:
            if not _resetting_row(f, plan, row, body):
                return (f"no shift of the iteration's draws (k0 + k1 d_i, k0 in 0, +-u, +-2u, k1 in 0, +-1; "
                        f"+ kc D resetting an accumulator) keeps its outputs and state on the outcomes "
                        f"{_label(outcomes)}" + (" (halting)" if halts else ""))
        plan.rows.append(row)
    return None


def _resetting_row(f: Frame, plan: Plan, row: Row, body: list[int]) -> bool:
    """Give the row shifts ``k0 + k1 d_i + kc D`` (``kc`` in +-1 for one draw) that keep it and reset
    the accumulator, cheapest first; False when there is no accumulator or none does."""
    if not any(mode == "acc" for mode, _ in plan.state):
        return False
    row.resets = True
    for e in body:
        for kc in (Fraction(1), Fraction(-1)):
            row.carry = {e: kc}
            for choice in _options(f.st.u, f.st.laws, body, True):
                row.shifts = {e: s for e, s in choice.items() if s != (0, 0)}
                if row_holds(f, plan, row):
                    return True
    row.resets, row.carry, row.shifts = False, {}, {}
    return False


def _plan_epilogue(f: Frame, plan: Plan) -> bool:
    lt = f.st.loop
    if not lt.results:
        return True
    from verifiers.prover.every_n_check import epilogue_holds

    for choice in _options(1, f.st.laws, f.st.draws("epilogue"), True):
        plan.epilogue = {e: s for e, s in choice.items() if s != (0, 0)}
        if epilogue_holds(f, plan):
            return True
    return False


def _label(outcomes: dict[int, int]) -> str:
    return "{" + ", ".join(f"%{k}={v}" for k, v in sorted(outcomes.items())) + "}"


def synthesise(st: Setting, eps: Fraction | None) -> tuple[Plan, Bound] | str:
    """The cheapest plan found (proved for every n or growing with n), or why none."""
    f = Frame(st)
    modes = _state_modes(st, f)
    body = st.draws("body")
    best: tuple[Plan, Bound] | None = None
    why = "no prologue shift relates the initial states"
    for halt in _halts(st):
        prologues = _options(st.u, st.laws, st.draws("prologue"), False)[:MAX_PROLOGUE_PLANS]
        for choice in prologues:
            plan = Plan({e: k0 for e, (k0, _) in choice.items() if k0}, modes, halt)
            state = _deltas(f, plan)
            if state is None:
                continue
            plan.state = state
            if not init_holds(f, plan) or (halt is not None and not halted_holds(f, plan)):
                continue
            problem = _plan_rows(f, plan, body)
            if problem is not None:
                why = problem
                continue
            if not _plan_epilogue(f, plan):
                why = "no shift of the epilogue's draws keeps its results"
                continue
            _with_counter(f, plan)
            try:
                b = bound(st, plan)
            except NoEveryN as e:
                why = str(e)
                continue
            key = (b.constant is None, b.constant if b.constant is not None else b.per_n)
            if best is None or key < (best[1].constant is None, best[1].constant if best[1].constant is not None
                                      else best[1].per_n):
                best = (plan, b)
            if eps is not None and b.constant is not None and b.constant <= eps:
                return best
    return best if best is not None else why


def attempt(program: Program, eps: Fraction | None) -> Proof | NoProof:
    """Prove ``eps``-DP for every n (``eps=None``: the smallest level the templates reach)."""
    try:
        _, loop = loop_of(program)
        if loop.reduce is not None:
            return NoProof(f"the loop's outputs are reduced by {loop.reduce[0]} (the every_n_reduce rule)", RULE)
        st = setting(program, loop)
        found = synthesise(st, eps)
    except NotEveryN as e:
        return NoProof(str(e), RULE)
    except NoEveryN as e:
        return NoProof(str(e), RULE)
    except Unencodable as e:
        return NoProof(e.reason, RULE, f"node %{e.node}")
    if isinstance(found, str):
        return NoProof(found, RULE)
    plan, b = found
    if b.constant is None:
        return NoProof(f"the cheapest alignment for every n found costs {b.text()} ({st.relation}: every element "
                       "may change, each iteration pays): no constant eps covers every n", RULE)
    if eps is not None and b.constant > eps:
        return NoProof(f"the cheapest alignment for every n found costs {b.text()}, above the claim "
                       f"{fraction_str(eps)}", RULE)
    return Proof(RULE, program.name, dict(program.params), b.constant, evidence(st, plan, b),
                 solver=f"z3 {z3.get_version_string()}: every condition unsat for a symbolic iteration")


def evidence(st: Setting, plan: Plan, b: Bound) -> dict[str, Any]:
    fs = fraction_str
    return {
        "n": "every n >= 1", "neighbours": st.relation, "element": [st.loop.lo, st.loop.hi], "unit": st.u,
        "sum_d": fs(st.total) if st.total is not None else f"{st.per_element} n",
        "prologue": {str(e): fs(k) for e, k in sorted(plan.prologue.items())},
        "state": [{"mode": m, "k": fs(k)} for m, k in plan.state],
        "halt": -1 if plan.halt is None else plan.halt,
        "rows": [{"outcomes": {str(c): v for c, v in sorted(r.outcomes.items())}, "halts": r.halts,
                  "feasible": r.feasible,
                  "count": fs(r.count),
                  "shifts": {str(e): {"const": fs(k0), "d": fs(k1)} for e, (k0, k1) in sorted(r.shifts.items())},
                  "resets": r.resets, "carry": {str(e): fs(k) for e, k in sorted(r.carry.items())}}
                 for r in plan.rows],
        "counter": -1 if plan.counter is None else plan.counter, "start": fs(plan.start), "top": fs(plan.top),
        "epilogue": {str(e): {"const": fs(k0), "acc": fs(k2)} for e, (k0, k2) in sorted(plan.epilogue.items())},
        "costs": {"prologue": fs(b.prologue), "gamma": fs(b.gamma), "alpha": fs(b.alpha), "epilogue": fs(b.epilogue),
                  "kappa": fs(b.kappa)},
        "eps": fs(b.constant),
    }


def _plan_from(ev: dict[str, Any]) -> Plan:
    F = Fraction
    rows = [Row({int(c): int(v) for c, v in r["outcomes"].items()},
                {int(e): (F(s["const"]), F(s["d"])) for e, s in r["shifts"].items()}, r["feasible"], F(r["count"]),
                r["halts"], r.get("resets", False), {int(e): F(k) for e, k in r.get("carry", {}).items()})
            for r in ev["rows"]]
    return Plan({int(e): F(k) for e, k in ev["prologue"].items()}, [(s["mode"], F(s["k"])) for s in ev["state"]],
                None if ev["halt"] < 0 else ev["halt"], rows, None if ev["counter"] < 0 else ev["counter"],
                F(ev["start"]), F(ev["top"]),
                {int(e): (F(s["const"]), F(s["acc"])) for e, s in ev["epilogue"].items()})


def check(program: Program, proof: Proof) -> str | None:
    """None when the proof holds for every n: its loop re-traced, every condition asked of z3
    again, the cost recomputed and at most the proof's eps."""
    try:
        _, loop = loop_of(program)
        st = setting(program, loop)
        problem = described(st, proof.evidence)
        if problem is not None:
            return problem
        plan = _plan_from(proof.evidence)
        if any(m not in ("delta", "acc") for m, _ in plan.state):
            return "a state component is neither 'delta' nor 'acc'"
        if any(e not in st.laws for r in plan.rows for e in (*r.shifts, *r.carry)) or any(
                e not in st.laws for e in (*plan.prologue, *plan.epilogue)):
            return "a shift names a node that is no draw of the loop"
        problem = verify(st, plan)
        if problem is not None:
            return problem
        b = bound(st, plan)
    except (NotEveryN, NoEveryN) as e:
        return str(e)
    except (KeyError, TypeError, ValueError, ZeroDivisionError) as e:
        return f"malformed every-n evidence ({type(e).__name__}: {e})"
    if b.constant is None:
        return f"the proof's cost grows with n ({b.text()})"
    if b.constant > Fraction(proof.eps):
        return f"the proof's cost {b.text()} is above its eps {proof.eps}"
    return None


confirm = check  # every condition is asked of z3 again by check itself
