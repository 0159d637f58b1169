"""The proof rule by randomness alignment (coupling), for Laplace and exponential noise.

For neighbours ``x, x'`` (difference ``d``) every path of the program gets a shift of
its draws, ``eta' = eta + a(d)`` (:mod:`verifiers.prover.synthesis`), such that on
``x'`` with ``eta'`` every decision of the path has the same outcome and every output
the same value.  Kept outcomes make the map injective across paths and a shift has
Jacobian 1, so ``P(M(x) in E) <= e^c P(M(x') in E)`` where ``c`` is the largest path
cost ``sum |a_e| / b_e`` (Laplace scale ``b``; exponential noise: ``a_e / b_e`` with
``a_e >= 0`` so the draw stays in its support).  Every condition is discharged by z3
(:mod:`verifiers.prover.conditions`) for every integer input of the traced program (the
declared domain for replace_one); the proof covers the declared domain
(:meth:`verifiers.prover.neighbourhood.Differences.covers` says why not more).

Under ``increasing`` / ``decreasing`` every pair's difference lies in one of two boxes
(``d >= 0`` or ``d <= 0``), and each box gets its own alignment per path (its evidence
says which: ``"box"``), as CheckDP aligns the two directions of a monotone query apart.

``attempt(program, None)`` proves the largest path cost (exact, a Fraction: scales at
their exact binary value); ``attempt(program, eps)`` proves ``eps`` or says which path
and which draw or decision stopped it.  :func:`confirm` re-checks a proof nobody vouches
for (a proof file): the independent checker, then every path's conditions discharged
again with the proof's own shifts.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import z3

from samplers import deadline
from samplers.json_shape import NAT, RATIONAL, Map
from samplers.lang.exact import fraction_str
from samplers.lang.ir import Program
from verifiers.prover import alignment_check, equivalence_check
from verifiers.prover.conditions import Discharger, discharge
from verifiers.prover.linear import Lin, render
from verifiers.prover.neighbourhood import differences
from verifiers.prover.neighbourhood import named as relation
from verifiers.prover.paths import Unsupported, noise_laws, paths
from verifiers.prover.proof import NoProof, Proof
from verifiers.prover.running_max import normal_form
from verifiers.prover.synthesis import Stuck, Synthesiser
from verifiers.prover.template import NoTemplate, template, unchanged
from verifiers.prover.template import cost as template_cost

# With a path template in hand, the per-path search may look for a cheaper proof over this
# many paths only (a count, so the result does not depend on the machine): past it the
# template's proof stands (noisy max releasing the value has 2^(n-1) paths).
PATHS_BESIDE_TEMPLATE = 1024

RULE = "alignment"
RATIO = False  # the level is eps itself, exact
SHIFT = {"const": RATIONAL, "d": Map(RATIONAL), "w?": Map(RATIONAL)}  # a shift's JSON (shift_json)
EVIDENCE = {  # the evidence's shape, as a proof file must have it (verifiers.prover.proof_json)
    "covers": str, "neighbours": str, "draws": Map({"law": str, "scale": RATIONAL}), "eps": RATIONAL,
    "paths": [{"decisions": Map(NAT), "shifts": Map(SHIFT), "alignment": [str], "cost": RATIONAL, "box?": str}],
    "z3": {"conditions": NAT, "distinct_queries": NAT, "answers": [str]}, "normal_form?": str,
}


def shift_json(a: Lin) -> dict[str, Any]:
    """``const + sum_i k_i d_i + sum_k c_k w_k``: ``d`` by input, ``w`` (differences of noise-free
    derived values, ``v_k(x) - v_k(x')``) by IR node, present only when the shift reads one."""
    out = {"const": fraction_str(a.const),
           "d": {str(v[1]): fraction_str(k) for v, k in sorted(a.coef.items()) if v[0] == "d"}}
    w = {str(v[1]): fraction_str(k) for v, k in sorted(a.coef.items()) if v[0] == "w"}
    return out | ({"w": w} if w else {})


def shift_from_json(s: dict[str, Any]) -> Lin:
    coef = {("d", int(i)): Fraction(k) for i, k in s["d"].items()}
    coef.update({("w", int(i)): Fraction(k) for i, k in s.get("w", {}).items()})
    return Lin(Fraction(s["const"]), coef)


def _path_label(decisions: dict[int, int]) -> str:
    return "{" + ", ".join(f"%{k}={v}" for k, v in sorted(decisions.items())) + "}"


def synthesise(program: Program, eps: Fraction | None,
               max_paths: int = 20000) -> tuple[list[dict], Fraction, Any] | NoProof:
    """Per path (and per box of a monotone relation) shifts and costs, the proved level and the
    laws (or why not)."""
    try:
        laws = noise_laws(program)
        diffs = differences(program)
        gauss = [e for e, (law, _) in laws.items() if law == "gaussian"]
        if gauss:
            return NoProof("Gaussian noise: a shift has unbounded privacy loss, no pure eps-DP "
                           "(the gaussian rule proves (eps, delta))", RULE, f"draw eta_{gauss[0]}")
        boxes = diffs.boxes()
        synths = [Synthesiser(laws, box) for box in boxes]
        found: list[dict] = []
        worst = Fraction(0)
        for path in paths(program, max_paths):
            for box, syn in zip(boxes, synths):
                where = f"path {_path_label(path.decisions)}" + (f", pairs with {box.box}" if box.box else "")
                try:
                    al = syn.align(path, limit=eps, enough=max(worst, eps or worst))
                except Stuck as exc:
                    return NoProof(exc.reason, RULE, f"{where}: {exc.where}")
                if eps is not None and al.cost > eps:
                    return NoProof(f"no alignment within the claim {fraction_str(eps)} (~{float(eps):.6g}) on this "
                                   f"path: the search, pruned at the claim, ended at one costing "
                                   f"{fraction_str(al.cost)} (~{float(al.cost):.6g})", RULE, where)
                if al.cost == math.inf:  # a noise-free value whose change between neighbours has no bound
                    return NoProof("no alignment of finite cost: a value without noise changes without bound "
                                   "between neighbours (over every integer input)", RULE, where)
                worst = max(worst, al.cost)
                found.append({"path": path, "shifts": al.shifts, "cost": al.cost, "box": box})
    except Unsupported as exc:
        where = f"node {exc.node}" if exc.node is not None else ""
        return NoProof(exc.reason, RULE, where)
    return found, worst, (laws, diffs)


def _template(program: Program) -> tuple[list[dict], Fraction, Any] | None:
    """The path template (:mod:`verifiers.prover.template`) as a single path with no decisions."""
    try:
        laws, diffs = noise_laws(program), differences(program)
        if any(law == "gaussian" for law, _ in laws.values()):
            return None
        shifts, cost = template(program, laws, diffs)
    except (Unsupported, NoTemplate):
        return None
    if cost == math.inf:
        return None
    return [{"path": None, "shifts": shifts, "cost": cost, "box": None}], cost, (laws, diffs)


def attempt(program: Program, eps: Fraction | None) -> Proof | NoProof:
    """Prove ``eps``-DP by alignment (``eps=None``: the smallest level the templates reach) of the
    program's normal form (running-max chains as ``max`` / ``argmax``; node numbers are its).

    A path template that proves the claim is used at once; else the per-path search runs
    (over :data:`PATHS_BESIDE_TEMPLATE` paths at most when a template proof exists and no
    claim is given) and the cheaper of the two proofs is kept."""
    named, (program, custom) = program, relation(program)
    normal = normal_form(program)
    program = normal.program
    shared = _template(program)
    if shared is not None and eps is not None and shared[1] <= eps:
        result = shared
    else:
        result = synthesise(program, eps, 20000 if shared is None or eps is not None else PATHS_BESIDE_TEMPLATE)
        if shared is not None and eps is None and (isinstance(result, NoProof) or shared[1] <= result[1]):
            result = shared
    if isinstance(result, NoProof):
        return result
    found, level, (laws, diffs) = result
    zs = {box.sign: Discharger(box) for box in diffs.boxes()} if found[0]["path"] is not None else {}
    for item in found if zs else []:  # a template is proved by its walk, not by z3
        deadline.check("while discharging alignment conditions")
        problem = discharge(item["path"], item["shifts"], laws, level, zs[item["box"].sign])
        if problem is not None:
            return NoProof(f"z3 did not confirm the synthesised alignment: {problem}", RULE,
                           f"path {_path_label(item['path'].decisions)}")
    answers = {a for z in zs.values() for a in z.answers.values()}
    asked, distinct = sum(z.asked for z in zs.values()), sum(len(z.answers) for z in zs.values())
    evidence = {
        "covers": diffs.covers(program) + custom,
        "neighbours": program.neighbours.name,
        "draws": {str(e): {"law": law, "scale": fraction_str(b)} for e, (law, b) in laws.items()},
        "eps": fraction_str(level),
        "paths": [{
            "decisions": {} if item["path"] is None else
            {str(k): v for k, v in sorted(item["path"].decisions.items())},
            "shifts": {str(e): shift_json(a) for e, a in sorted(item["shifts"].items())},
            "alignment": [f"eta_{e}' = eta_{e} + {render(a)}" for e, a in sorted(item["shifts"].items())]
            or ["no draw shifted"],
            "cost": fraction_str(item["cost"]),
        } | ({"box": item["box"].box} if item["box"] and item["box"].box else {}) for item in found],
        "z3": {"conditions": asked, "distinct_queries": distinct, "answers": sorted(answers)},
    } | ({"normal_form": f"{normal.rewrites} running-max choices rewritten as max / argmax; node numbers are "
                         "those of the rewritten program"} if normal.rewrites else {})
    solver = (f"z3 {z3.get_version_string()}: unsat to {distinct} distinct queries ({asked} conditions)" if zs
              else "path template: every value unchanged under one shift for all paths (exact arithmetic)")
    return Proof(RULE, named.name, dict(named.params), level, evidence, solver=solver)


def _normal(program: Program) -> tuple[Program, str | None]:
    """The program the proof speaks of (its normal form) and, where the rewrite changed it, the
    independent re-check that it means the same (None: confirmed)."""
    program = relation(program)[0]
    normal = normal_form(program)
    if not normal.rewrites:
        return program, None
    problem = equivalence_check.check(program, normal.program, normal.draws)
    return normal.program, (None if problem is None else f"the running-max rewrite is not confirmed: {problem}")


def check(program: Program, proof: Proof) -> str | None:
    """The rule's independent checker (:mod:`verifiers.prover.alignment_check`) on the program's
    normal form, once :mod:`verifiers.prover.equivalence_check` confirmed that it means the same."""
    normal, problem = _normal(program)
    return problem or alignment_check.check(normal, proof)


def _listed_shifts(evidence: dict[str, Any]) -> dict[tuple, tuple[dict[int, Lin], Fraction]]:
    """The evidence's shifts and cost per path, keyed by the path's box (None: every difference)
    and outcomes (the checker has vetted the shifts: draws of the program, differences of its inputs)."""
    return {(p.get("box"), frozenset((int(k), int(v)) for k, v in p["decisions"].items())):
            ({int(e): shift_from_json(s) for e, s in p["shifts"].items()}, Fraction(p["cost"]))
            for p in evidence["paths"]}


def _confirm_template(program: Program, shifts: dict[int, Lin], cost: Fraction, eps: Fraction, laws: Any,
                      diffs: Any) -> str | None:
    """The template's shifts leave every value unchanged (the walk again) and cost what it claims."""
    problem = unchanged(program, shifts)
    if problem is None and not 0 <= cost <= eps:
        problem = f"the template claims cost {cost}, outside [0, eps = {eps}]"
    if problem is None:
        try:
            true_cost = template_cost(shifts, laws, diffs)
        except NoTemplate as exc:
            return str(exc)
        if true_cost > cost:
            problem = f"the template's shifts cost {true_cost}, more than the {cost} it claims"
    return problem


def confirm(program: Program, proof: Proof) -> str | None:
    """None when a proof from outside holds: the independent checker (which re-asks z3 on a
    sample of the paths only, and on none past its size limit) and then, for *every* path
    of the program (and box, where the proof aligns a monotone relation's boxes apart), z3's
    unsat to each condition of the proof's own shifts at the path's own cost, at most eps
    (the cost a path claims is a claim too)."""
    problem = check(program, proof)
    if problem is not None:
        return problem
    program = normal_form(relation(program)[0]).program
    try:
        laws, diffs = noise_laws(program), differences(program)
        listed = _listed_shifts(proof.evidence)
        eps = Fraction(proof.evidence["eps"])
        if set(listed) == {(None, frozenset())}:  # a path template: one shift for every path
            return _confirm_template(program, *listed[(None, frozenset())], eps, laws, diffs)
        boxes = diffs.boxes() if any(box is not None for box, _ in listed) else [diffs]
        zs = [Discharger(box) for box in boxes]
        for path in paths(program):
            for z in zs:
                deadline.check("while confirming an alignment proof")
                where = f"path {_path_label(path.decisions)}" + (f" ({z.diffs.box})" if z.diffs.box else "")
                entry = listed.get((z.diffs.box, frozenset(path.decisions.items())))
                if entry is None:
                    return f"{where} of the program is not in the proof"
                shifts, cost = entry
                if not 0 <= cost <= eps:
                    return f"{where} claims cost {cost}, outside [0, eps = {eps}]"
                problem = discharge(path, shifts, laws, cost, z)
                if problem is not None:
                    return f"{where}: {problem}"
    except Unsupported as exc:
        return f"the program has no alignment proof: {exc.reason}"
    except (KeyError, TypeError, ValueError) as exc:
        return f"malformed alignment evidence ({type(exc).__name__}: {exc})"
    return None
