"""The every_n_reduce rule: eps-DP for every n of ``argmax`` / ``maximum`` over a stateless loop's outputs.

The mechanism is ``argmax(scan(x, step)[0])`` (or ``maximum``): every element's value
``v_i = step(x_i)`` is computed alike, with its own draws, and one is reported.  The
alignment shifts the *winner's* draws by ``k0 + k1 d_w`` and every other element's draws by
``k0' + k1' d_j`` (templates as the every_n rule's).  z3 checks, for a symbolic winner ``w`` and a
symbolic other element ``j`` (each with its own value, difference and draws, in the declared
range), that the run on ``x'`` with shifted draws keeps the order the tie rule needs
(``v_w > v_j`` stays strict, ``v_w >= v_j`` stays so: the first maximum is still ``w``) and, for
``maximum``, releases the same value ``v'_w = v_w``; exponential draws stay in their support.
The winner is read back from the run on ``x'``, so the map is injective with Jacobian 1 and
the level is at most the winner's cost plus the others' (``sum |k'| / b`` each).  Others with a
constant shift, or with ``k1' != 0`` under a relation where every element may change
(all_differ), cost a multiple of n: no proof, and the reason gives the level as ``a + b n``
(``report_noisy_max3``: ``n eps / 2``).  Uniform ties are not covered.
"""

from __future__ import annotations

import itertools
from fractions import Fraction
from typing import Any

import z3

from samplers import deadline
from samplers.lang.exact import fraction_str
from samplers.json_shape import NAT, RATIONAL, Map
from samplers.lang.ir import Program
from verifiers.prover.every_n import NotEveryN, loop_of
from verifiers.prover.every_n_check import NoEveryN, Setting, described, setting
from verifiers.prover.loop_z3 import Unencodable, evaluate, real
from verifiers.prover.proof import NoProof, Proof

RULE = "every_n_reduce"
RATIO = False
SHIFTS = Map({"const": RATIONAL, "d": RATIONAL})
EVIDENCE = {"n": str, "neighbours": str, "element": [int], "unit": NAT, "reduce": str,
            "winner": SHIFTS, "other": SHIFTS, "eps": RATIONAL}
Shifts = dict[int, tuple[Fraction, Fraction]]


def _reduction(program: Program) -> tuple[Setting, str]:
    _, loop = loop_of(program)
    if loop.reduce is None:
        raise NotEveryN("the loop's outputs are not reduced by argmax or maximum (the every_n rule)")
    op, ties, _ = loop.reduce
    if loop.index is not None or loop.stop is not None:
        raise NotEveryN("every_n_reduce covers a scan over the whole input that does not read the index")
    if loop.state_in or loop.results != (loop.reduce[2],) or op not in ("argmax", "max") or ties not in (None, "first"):
        raise NotEveryN(f"every_n_reduce covers argmax (first ties) or maximum of a stateless loop's outputs, not "
                        f"{op}" + (f" with {ties} ties" if ties else ""))
    st = setting(program, loop)
    if any(st.part(e) != "body" for e in st.laws):
        raise NotEveryN("every_n_reduce covers loops whose draws are all inside the step")
    return st, op


def _pair_holds(st: Setting, op: str, winner: Shifts, other: Shifts) -> bool:
    """Whether, for a symbolic winner and other element, the shifted run keeps the winner (and its value)."""
    lt = st.loop
    assume, vals = [], []
    for tag, shifts in (("w", winner), ("j", other)):
        q, d = z3.Int(f"q{tag}"), z3.Int(f"d{tag}")
        assume += [lt.lo <= q, q <= lt.hi, lt.lo <= q - d, q - d <= lt.hi, -st.u <= d, d <= st.u]
        no = z3.BoolVal(False)
        x, y = {lt.element: (no, z3.ToReal(q))}, {lt.element: (no, z3.ToReal(q - d))}
        goals = []
        for e, (law, _) in st.laws.items():
            eta = z3.Real(f"eta{e}{tag}")
            if law == "exponential":
                assume.append(eta >= 0)
            k0, k1 = shifts.get(e, (0, 0))
            shift = real(k0) + real(k1) * z3.ToReal(d)
            if law == "exponential":
                goals.append(shift >= 0)
            x[e], y[e] = (no, eta), (no, eta + shift)
        vx = evaluate(lt.nodes, x, lt.epilogue_start)[lt.out]  # the prologue: constants only (no draws)
        vy = evaluate(lt.nodes, y, lt.epilogue_start)[lt.out]
        vals.append((vx, vy, goals))
    (wx, wy, gw), (jx, jy, gj) = vals
    goals = [*gw, *gj, z3.Not(wx[0]), z3.Not(jx[0]), z3.Not(wy[0]), z3.Not(jy[0]),
             z3.Implies(wx[1] > jx[1], wy[1] > jy[1]), z3.Implies(wx[1] >= jx[1], wy[1] >= jy[1])]
    if op == "max":
        goals.append(wy[1] == wx[1])
    deadline.check("while discharging every-n conditions")
    s = z3.Solver()
    s.set("timeout", 20000)
    s.add(*assume, z3.Not(z3.And(*goals)))
    r = s.check()
    if r == z3.unknown:
        raise NoEveryN(f"z3 answered unknown ({s.reason_unknown()})")
    return r == z3.unsat


def _costs(st: Setting, winner: Shifts, other: Shifts) -> tuple[Fraction, Fraction | None, Fraction]:
    """(the winner's cost, the total for every n or None when it grows, the growth per element)."""
    w = sum(((abs(k0) + abs(k1) * st.u) / st.laws[e][1] for e, (k0, k1) in winner.items()), Fraction(0))
    full = sum(((abs(k0) + abs(k1) * st.u) / st.laws[e][1] for e, (k0, k1) in other.items()), Fraction(0))
    gamma = sum((abs(k1) / st.laws[e][1] for e, (_, k1) in other.items()), Fraction(0))
    if full == 0:
        return w, w, Fraction(0)
    if all(k0 == 0 for k0, _ in other.values()) and st.total is not None:
        return w, w + gamma * st.total, Fraction(0)
    return w, None, full


def _options(st: Setting) -> list[Shifts]:
    draws = sorted(st.laws)
    single = [(Fraction(k0 * st.u), Fraction(k1)) for k0 in (0, 1, -1, 2, -2) for k1 in (0, 1, -1)]
    return [{e: s for e, s in zip(draws, c) if s != (0, 0)} for c in itertools.product(single, repeat=len(draws))]


def attempt(program: Program, eps: Fraction | None) -> Proof | NoProof:
    """Prove ``eps``-DP for every n (``eps=None``: the smallest level the templates reach)."""
    try:
        st, op = _reduction(program)
        options = _options(st)
        pairs = sorted(itertools.product(options, options), key=lambda p: _key(st, *p))
        for winner, other in pairs:
            if _pair_holds(st, op, winner, other):
                break
        else:
            return NoProof(f"no shift of the winner's and the others' draws keeps the {op}", RULE)
    except (NotEveryN, NoEveryN) as e:
        return NoProof(str(e), RULE)
    except Unencodable as e:
        return NoProof(e.reason, RULE, f"node %{e.node}")
    w, total, per_n = _costs(st, winner, other)
    if total is None:
        return NoProof(f"the cheapest alignment for every n found costs {_q(w - per_n)} + {_q(per_n)} n "
                       f"({st.relation}: every other element's draws are shifted): no constant eps covers every n",
                       RULE)
    if eps is not None and total > eps:
        return NoProof(f"the cheapest alignment for every n found costs {_q(total)}, above the claim "
                       f"{fraction_str(eps)}", RULE)
    fs = fraction_str
    evidence = {"n": "every n >= 1", "neighbours": st.relation, "element": [st.loop.lo, st.loop.hi], "unit": st.u,
                "reduce": op, "eps": fs(total),
                **{k: {str(e): {"const": fs(k0), "d": fs(k1)} for e, (k0, k1) in sorted(v.items())}
                   for k, v in (("winner", winner), ("other", other))}}
    return Proof(RULE, program.name, dict(program.params), total, evidence,
                 solver=f"z3 {z3.get_version_string()}: unsat for a symbolic winner and other element")


def _key(st: Setting, winner: Shifts, other: Shifts) -> tuple:
    w, total, per_n = _costs(st, winner, other)
    return (total is None, total if total is not None else per_n, w)


def _q(v: Fraction) -> str:
    return str(v) if v.denominator == 1 else f"{v} (~{float(v):.6g})"


def check(program: Program, proof: Proof) -> str | None:
    """None when the proof holds for every n: the loop re-traced, z3 asked again, the cost recomputed."""
    try:
        st, op = _reduction(program)
        ev = proof.evidence
        problem = described(st, ev)
        if problem is not None:
            return problem
        shifts = [{int(e): (Fraction(s["const"]), Fraction(s["d"])) for e, s in ev[k].items()}
                  for k in ("winner", "other")]
        if any(e not in st.laws for s in shifts for e in s):
            return "a shift names a node that is no draw of the step"
        if ev["reduce"] != op:
            return f"the proof is of {ev['reduce']}, the mechanism reduces by {op}"
        if not _pair_holds(st, op, *shifts):
            return "the shifted run does not keep the winner (or its value)"
        _, total, per_n = _costs(st, *shifts)
    except (NotEveryN, NoEveryN) as e:
        return str(e)
    except Unencodable as e:
        return f"node %{e.node}: {e.reason}"
    except (KeyError, TypeError, ValueError) as e:
        return f"malformed every-n evidence ({type(e).__name__}: {e})"
    if total is None:
        return f"the proof's cost grows with n ({per_n} per element)"
    if total > Fraction(proof.eps):
        return f"the proof's cost {total} is above its eps {proof.eps}"
    return None


confirm = check  # check asks z3 everything again
