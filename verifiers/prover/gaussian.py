"""The (eps, delta) rule for Gaussian noise: one alignment for every draw, analytic Gaussian bound.

When the program makes no noisy decision (one path) its outputs are a function of
``x`` and the draws, and the outputs force a shift ``a(d)`` of the draws that maps the
run on ``x`` to the run on ``x'`` for *every* draw (:mod:`verifiers.prover.synthesis`;
z3 confirms the outputs are equal).  Then ``M(x)`` and ``M(x')`` are one post-processing
of ``N(a, S)`` and ``N(0, S)`` (``S`` the draws' variances), whose privacy profile is the
Gaussian mechanism's at l2 sensitivity ``D = max_d ||a(d) / sigma||_2`` (Balle and Wang,
ICML 2018, Theorem 8):
``delta(eps) = Phi(D/2 - eps/D) - e^eps Phi(-D/2 - eps/D)``.  ``D^2`` is exact (a
Fraction: the maximum of a convex quadratic at the differences' extreme points);
``delta`` is enclosed by arb ball arithmetic (python-flint, rigorous error bounds) and
its upper end rounded up to a float, so the reported delta is never below the truth.  Paths that
depend on noisy decisions (Gaussian noisy max) shift differently per path and are not
a post-processing of one Gaussian pair: no proof.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

from samplers.json_shape import NAT, RATIONAL, Map
from samplers.lang.exact import fraction_str
from samplers.lang.ir import Program
from verifiers.prover.alignment import SHIFT, shift_json
from verifiers.prover.conditions import Discharger
from verifiers.prover.gaussian_check import check  # the rule's independent checker
from verifiers.prover.linear import Lin, render
from verifiers.prover.neighbourhood import differences
from verifiers.prover.paths import Unsupported, noise_laws, paths
from verifiers.prover.proof import NoProof, Proof, round_up
from verifiers.prover.synthesis import Stuck, Synthesiser

RULE = "gaussian"
RATIO = False
EVIDENCE = {  # the evidence's shape, as a proof file must have it (verifiers.prover.proof_json)
    "covers": str, "shifts": Map(SHIFT), "alignment": [str], "sigma": Map(RATIONAL),
    "sensitivity_squared": RATIONAL, "bound": str, "z3": {"conditions": NAT, "answers": [str]},
}
confirm = check  # the checker is complete and exact: it re-checks proof files as they are


def analytic_delta(sensitivity_sq: Fraction, eps: Fraction) -> float:
    """Balle and Wang's delta(eps) for the Gaussian mechanism (sigma 1), a float at least the truth.

    The two terms are arb balls; the precision doubles until the difference's ball is tight
    (the terms cancel for small ``D`` and large ``eps``), and the float returned is the
    ball's upper end rounded up: sound at any precision, tight once the loop ends.
    """
    from flint import arb, ctx, fmpq

    if sensitivity_sq == 0:
        return 0.0
    prec = 128
    while True:
        with ctx.workprec(prec):
            d = arb(fmpq(sensitivity_sq.numerator, sensitivity_sq.denominator)).sqrt()
            e = arb(fmpq(eps.numerator, eps.denominator))
            root2 = arb(2).sqrt()
            val = ((e / d - d / 2) / root2).erfc() / 2 - e.exp() * ((e / d + d / 2) / root2).erfc() / 2
            tight = val.is_finite() and val.rad() <= abs(val.mid()) * arb(2) ** -60
            if tight or prec >= MAX_PREC:
                return min(_float_above(val), 1.0)  # a delta is a difference of probabilities
        prec *= 2


MAX_PREC = 1 << 15  # bits: past this the (still rigorous) upper end is taken as it is


def _float_above(ball) -> float:
    """The smallest float at least the ball's upper end (``inf`` for a non-finite ball)."""
    if not ball.is_finite():
        return math.inf
    m, e = (int(v) for v in ball.upper().man_exp())
    if m <= 0:
        return 0.0
    if e + m.bit_length() < -1074:  # below the smallest positive float
        return math.ulp(0.0)
    return round_up(Fraction(m) * Fraction(2) ** e)


def attempt(program: Program, eps: Fraction | None) -> Proof | NoProof:
    """``(eps, delta(eps))``-DP for single-path Gaussian programs, or why not."""
    if eps is None:
        return NoProof("approximate DP: delta is proved at a given eps (none was given)", RULE)
    try:
        laws = noise_laws(program)
        diffs = differences(program)
        if not any(law == "gaussian" for law, _ in laws.values()):
            return NoProof("no Gaussian noise", RULE)
        if any(law != "gaussian" for law, _ in laws.values()):
            return NoProof("Gaussian noise mixed with other continuous noise", RULE)
        found = list(itertools.islice(paths(program), 2))
    except Unsupported as exc:
        return NoProof(exc.reason, RULE, "" if exc.node is None else f"node {exc.node}")
    if len(found) != 1:
        if not found:
            return NoProof("the program has no feasible path", RULE)
        return NoProof("the program makes noisy decisions: the alignment depends on the path, "
                       "so the outputs are no post-processing of one Gaussian pair", RULE,
                       f"decision %{min(found[0].decisions)}")
    (path,) = found
    try:
        shifts = {e: a for e, a in Synthesiser(laws, diffs).align(path).shifts.items()}
        if any(a.vars_of("w") for a in shifts.values()):
            return NoProof("a draw's shift reads the difference of a noise-free value that is not affine "
                           "in the inputs (a clamp, minimum, maximum or table): the Gaussian rule needs "
                           "outputs affine in the inputs", RULE)
        sens_sq = diffs.max_cost([(a, 1 / laws[e][1] ** 2) for e, a in shifts.items()], square=True)
    except Stuck as exc:
        return NoProof(exc.reason, RULE, exc.where)
    except Unsupported as exc:  # a shift coupling too many coordinates for the exact maximum
        return NoProof(exc.reason, RULE)
    z = Discharger(diffs)
    for k, out in enumerate(path.outputs):
        if isinstance(out, Lin) and out.coef and (ans := z.changed(out, shifts, None)) != "unsat":
            return NoProof(f"z3 answered {ans} to 'output {k} changes'", RULE, f"output {k}")
    delta = analytic_delta(sens_sq, eps)
    evidence = {
        "covers": diffs.covers(program),
        "shifts": {str(e): shift_json(a) for e, a in sorted(shifts.items())},
        "alignment": [f"eta_{e}' = eta_{e} + {render(a)}" for e, a in sorted(shifts.items())],
        "sigma": {str(e): fraction_str(laws[e][1]) for e in sorted(shifts)},
        "sensitivity_squared": fraction_str(sens_sq),
        "bound": "Balle-Wang: delta = Phi(D/2 - eps/D) - e^eps Phi(-D/2 - eps/D)",
        "z3": {"conditions": z.asked, "answers": sorted(set(z.answers.values()))},
    }
    return Proof(RULE, program.name, dict(program.params), eps, evidence, delta=delta,
                 solver=f"z3: unsat to {len(z.answers)} distinct queries; delta by arb ball arithmetic, rounded up")
