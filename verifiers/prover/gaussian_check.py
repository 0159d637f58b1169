"""Independent re-check of a Gaussian (eps, delta) proof (no code shared with the rule).

Runs the program with the IR interpreter in exact Fractions on random neighbours and
draws: the shifted draws must give the same outputs, and ``||a(d)/sigma||^2`` must not
exceed the proof's ``D^2`` (also at every corner of the differences for up to 12
coordinates).  ``delta`` is recomputed from ``D^2`` with ``math.erfc`` in double
precision and must agree within 1e-12 without being smaller by more than rounding.
"""

from __future__ import annotations

import itertools
import math
import random
from fractions import Fraction
from typing import Any

from samplers.lang.ir import Program
from samplers.lang.neighbours import AllDiffer, OneDiffer, ReplaceOne
from verifiers.prover.alignment_check import _neighbour, run

TRIALS = 60


def _phi(z: float) -> float:
    return 0.5 * math.erfc(-z / math.sqrt(2))


def _corners(program: Program):
    rel, n = program.neighbours, program.domain.size
    if isinstance(rel, AllDiffer) and n <= 12:
        yield from (list(c) for c in itertools.product((-rel.sensitivity, rel.sensitivity), repeat=n))
    elif isinstance(rel, (OneDiffer, ReplaceOne)):
        dom = program.domain
        for i in range(n):
            m = rel.sensitivity if isinstance(rel, OneDiffer) else dom.hi[i] - dom.lo[i]
            for t in (-m, m):
                yield [t if j == i else 0 for j in range(n)]


def check(program: Program, proof: Any) -> str | None:
    ev = proof.evidence
    shifts = {int(e): (Fraction(s["const"]), {int(i): Fraction(k) for i, k in s["d"].items()})
              for e, s in ev["shifts"].items()}
    sigma = {i: Fraction(n.attr) for i, n in enumerate(program.nodes) if n.op == "gaussian"}
    bound = Fraction(ev["sensitivity_squared"])

    def amount(e: int, d: list[int]) -> Fraction:
        c, k = shifts.get(e, (Fraction(0), {}))
        return c + sum((v * d[i] for i, v in k.items()), Fraction(0))

    def size(d: list[int]) -> Fraction:
        return sum(((amount(e, d) / s) ** 2 for e, s in sigma.items()), Fraction(0))

    rng = random.Random(1)
    dom = program.domain
    for _ in range(TRIALS):
        x = [rng.randint(l, h) for l, h in zip(dom.lo, dom.hi)]
        xp = _neighbour(program, x, rng)
        d = [a - b for a, b in zip(x, xp)]
        eta = {e: Fraction(rng.gauss(0, float(s))) for e, s in sigma.items()}
        out, _ = run(program, x, eta)
        outp, _ = run(program, xp, {e: v + amount(e, d) for e, v in eta.items()})
        if out != outp:
            return f"x={x}, x'={xp}: the shifted run gives {outp}, not {out}"
        if size(d) > bound:
            return f"d={d}: ||a/sigma||^2 = {size(d)} > {bound}"
    for d in _corners(program):
        if size(d) > bound:
            return f"d={d}: ||a/sigma||^2 = {size(d)} > {bound}"
    if bound == 0:
        return None if proof.delta == 0 else f"delta {proof.delta} for sensitivity 0"
    D, e = math.sqrt(bound), float(proof.eps)
    delta = _phi(D / 2 - e / D) - math.exp(e) * _phi(-D / 2 - e / D)
    if abs(delta - float(proof.delta)) > 1e-12 or float(proof.delta) < delta - 1e-15:
        return f"delta {proof.delta} disagrees with the recomputed {delta}"
    return None
