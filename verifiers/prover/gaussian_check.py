"""Independent re-check of a Gaussian (eps, delta) proof (no code shared with the rule).

Complete and exact, so that it also confirms proof files nobody vouches for:

1. *Shape*: no node that reads an input or a draw makes a decision (a comparison,
   ``argmax``, ``min`` / ``max`` / ``abs`` / ``clamp``, logic, ``//``, ``%``, an ``ite``
   condition) or multiplies two such values, and every draw is Gaussian: each output is
   an affine function of the inputs and the draws.
2. *Outputs*: their affine coefficients, read off exact runs of the IR interpreter at the
   origin and the unit points, must make the proof's shift exact, identically in every
   difference a coordinate can take: ``-lambda . d + sum_e mu_e a_e(d) == 0``.
3. *Sensitivity*: ``D^2 = max_d sum_e (a_e(d) / sigma_e)^2`` over the neighbour
   differences, exactly (a convex quadratic: the extremes of one coordinate for
   one_differ / replace_one, the box vertices of each group of coupled coordinates for
   all_differ); the evidence's ``D^2`` must not be smaller.
4. *delta*: Balle and Wang's delta at that ``D^2`` and the proof's eps is enclosed by arb
   balls (the erfc form), with the precision raised until the proof's delta is decided
   to be at least its upper end.
"""

from __future__ import annotations

import itertools
from fractions import Fraction
from typing import Any

from samplers.lang.builder import draws_randomness
from samplers.lang.ir import BOTTOM, Program
from samplers.lang.neighbours import AllDiffer, Monotone, OneDiffer, ReplaceOne
from verifiers.prover.alignment_check import run

AFFINE = {"add", "sub", "neg", "mul", "input", "gaussian", "const"}
MAX_GROUP = 20  # all_differ: coupled coordinates whose 2^k box vertices are enumerated
MAX_PREC = 1 << 16  # bits of the largest arb precision tried when deciding delta

Shift = tuple[Fraction, dict[int, Fraction]]


def _shape(program: Program) -> str | None:
    """None when every output is affine in the inputs and the draws, else the node that is not."""
    live = [False] * len(program.nodes)  # reads an input or a draw
    for i, n in enumerate(program.nodes):
        if draws_randomness(n.op, n.attr) and n.op != "gaussian":
            return f"node %{i} draws {n.op} {n.attr if n.op == 'argmax' else 'noise'}: not a Gaussian program"
        reads = [a for a in n.args if live[a]]
        live[i] = n.op in ("input", "gaussian") or bool(reads)
        if not reads:
            continue
        if n.op not in AFFINE and not (n.op == "ite" and not live[n.args[0]]):
            return f"node %{i} ({n.op}) reads an input or a draw: the outputs are not affine in them"
        if n.op == "mul" and len(reads) == 2:
            return f"node %{i} multiplies two values that read inputs or draws"
    return None


def _bounds(program: Program) -> list[int] | None:
    rel, dom = program.neighbours, program.domain
    if isinstance(rel, (OneDiffer, AllDiffer, Monotone)):
        return [rel.sensitivity] * dom.size
    if isinstance(rel, ReplaceOne):
        return [h - l for l, h in zip(dom.lo, dom.hi)]
    return None


def _read_shifts(program: Program, ev: dict[str, Any], sigma: dict[int, Fraction]) -> dict[int, Shift] | str:
    shifts: dict[int, Shift] = {}
    for e, s in ev["shifts"].items():
        node = int(e)
        coef = {int(i): Fraction(k) for i, k in s["d"].items()}
        if node not in sigma:
            return f"the proof shifts node %{node}, which is no Gaussian draw"
        if any(not 0 <= i < program.domain.size for i in coef):
            return f"the shift of draw %{node} names an input the program does not have"
        shifts[node] = (Fraction(s["const"]), coef)
    return shifts


def _exact_outputs(program: Program, shifts: dict[int, Shift], sigma: dict[int, Fraction],
                   bounds: list[int]) -> str | None:
    """The shifted draws give every output its value back, for every difference (identically)."""
    n = program.domain.size
    zero_eta = {e: Fraction(0) for e in sigma}

    def at(x: list[int], eta: dict[int, Fraction]) -> tuple:
        return run(program, x, eta)[0]

    base = at([0] * n, zero_eta)
    unit_x = [at([int(i == j) for j in range(n)], zero_eta) for i in range(n)]
    unit_e = {e: at([0] * n, {f: Fraction(int(f == e)) for f in sigma}) for e in sigma}
    for o, c in enumerate(base):
        if c is BOTTOM or all(u[o] == c for u in unit_x) and all(u[o] == c for u in unit_e.values()):
            continue
        lam = [u[o] - c for u in unit_x]
        mu = {e: u[o] - c for e, u in unit_e.items()}
        const = sum((mu[e] * s[0] for e, s in shifts.items()), Fraction(0))
        if const != 0:
            return f"output {o} changes by {const} under the proof's shifts"
        for i in range(n):
            k = -lam[i] + sum((mu[e] * s[1].get(i, Fraction(0)) for e, s in shifts.items()), Fraction(0))
            if k != 0 and bounds[i] > 0:
                return f"output {o} changes by {k} d[{i}] under the proof's shifts"
    return None


def sensitivity_squared(program: Program, shifts: dict[int, Shift], sigma: dict[int, Fraction],
                        bounds: list[int]) -> Fraction:
    """``max_d sum_e (a_e(d) / sigma_e)^2`` over the program's neighbour differences, exactly."""
    weight = {e: 1 / sigma[e] ** 2 for e in shifts}

    def size(d: dict[int, int], only: list[int]) -> Fraction:
        return sum((weight[e] * (shifts[e][0] + sum((k * d.get(i, 0) for i, k in shifts[e][1].items()),
                                                   Fraction(0))) ** 2 for e in only), Fraction(0))

    nb = program.neighbours
    if isinstance(nb, (AllDiffer, Monotone)):  # the box [-s, s]^n, or the larger of [0, s]^n and [-s, 0]^n
        s = nb.sensitivity
        boxes = [(-s, s)] if isinstance(nb, AllDiffer) else [(0, s), (-s, 0)]
        groups: list[tuple[set[int], list[int]]] = []
        total = Fraction(0)
        for e, (c, coef) in shifts.items():
            coords = {i for i, k in coef.items() if k != 0}
            if not coords:
                total += weight[e] * c * c
                continue
            joined = [g for g in groups if g[0] & coords]
            groups = [g for g in groups if not g[0] & coords]
            groups.append((coords.union(*(g[0] for g in joined)), [e] + [f for g in joined for f in g[1]]))
        for coords, _ in groups:
            if len(coords) > MAX_GROUP:
                raise ValueError(f"a shift couples {len(coords)} input differences (the checker enumerates "
                                 f"at most {MAX_GROUP})")
        return total + max(sum((max(size(dict(zip(sorted(coords), ends)), draws)
                                    for ends in itertools.product(box, repeat=len(coords)))
                                for coords, draws in groups), Fraction(0)) for box in boxes)
    values = [size({i: t}, list(shifts)) for i, b in enumerate(bounds) if b > 0 for t in (-b, b)]
    return max(values, default=Fraction(0))


def _delta_decided(sens_sq: Fraction, eps: Fraction, delta: Fraction) -> str | None:
    """None when ``delta`` is at least Balle and Wang's delta(eps) at ``D^2 = sens_sq`` (arb balls)."""
    from flint import arb, ctx, fmpq

    if sens_sq == 0 or delta >= 1:  # no difference at all, or a delta that holds for any two laws
        return None if delta >= 0 else f"delta {delta} is negative"
    prec = 128
    while prec <= MAX_PREC:
        with ctx.workprec(prec):
            big_d = arb(fmpq(sens_sq.numerator, sens_sq.denominator)).sqrt()
            e = arb(fmpq(eps.numerator, eps.denominator))
            half = arb(1) / 2
            ball = half * ((e / big_d - big_d / 2) / arb(2).sqrt()).erfc() \
                - half * e.exp() * ((e / big_d + big_d / 2) / arb(2).sqrt()).erfc()
            claimed = arb(fmpq(delta.numerator, delta.denominator))
            if ball.is_finite() and claimed >= ball:
                return None
            if ball.is_finite() and claimed < ball:
                return f"delta {float(delta):.6g} is below Balle and Wang's {float(ball.mid()):.6g} at D^2 = {sens_sq}"
        prec *= 2
    return f"delta {float(delta):.6g} could not be told apart from Balle and Wang's at D^2 = {sens_sq}"


def check(program: Program, proof: Any) -> str | None:
    """None when the proof's (eps, delta) follows for the program, else what fails."""
    try:
        return _check(program, proof)
    except (KeyError, TypeError, ValueError, AttributeError, ArithmeticError) as exc:
        return f"malformed or unsupported Gaussian proof ({type(exc).__name__}: {exc})"


def _check(program: Program, proof: Any) -> str | None:
    bounds = _bounds(program)
    if bounds is None:
        return f"the neighbour relation {program.neighbours.name} has no Gaussian rule"
    problem = _shape(program)
    if problem is not None:
        return problem
    sigma = {i: Fraction(n.attr) for i, n in enumerate(program.nodes) if n.op == "gaussian"}
    ev = proof.evidence
    shifts = _read_shifts(program, ev, sigma)
    if isinstance(shifts, str):
        return shifts
    if {int(e): Fraction(s) for e, s in ev["sigma"].items()} != {e: sigma[e] for e in shifts}:
        return "the proof's sigma are not those of the draws it shifts"
    problem = _exact_outputs(program, shifts, sigma, bounds)
    if problem is not None:
        return problem
    sens_sq = sensitivity_squared(program, shifts, sigma, bounds)
    if Fraction(ev["sensitivity_squared"]) < sens_sq:
        return f"the evidence says D^2 = {ev['sensitivity_squared']}, the shifts reach {sens_sq}"
    return _delta_decided(sens_sq, Fraction(proof.eps), Fraction(proof.delta))
