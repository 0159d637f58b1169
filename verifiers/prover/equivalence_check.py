"""The independent re-check that a rewritten program means what the original means.

A proof about :func:`verifiers.prover.running_max.normal_form`'s program speaks for the
original only if both give the same outputs for every input and every value of the draws
they share.  Shares no code with the rewrite; it checks two ways:

1. *Draws*: every draw of the rewrite is a distinct draw of the original with the same
   law and scale (so the rewrite's draws are jointly distributed as the original's).
2. *z3*: both programs encoded node by node (the alignment checker's encoding, ``If`` for
   every branch, ``argmax`` by "index k wins" formulas), over integer inputs and real draws
   (ties included), "some output differs" must be unsat.
3. *Runs*: both run by the exact IR interpreter on random inputs and draws, half of them
   small half-integers that tie, must agree (a second witness, and the only one past
   :data:`Z3_NODES` nodes).
"""

from __future__ import annotations

import random
from fractions import Fraction

import z3

from samplers import deadline
from samplers.lang.builder import draws_randomness
from samplers.lang.ir import Program
from verifiers.prover.alignment_check import _Encoder, run
from verifiers.z3_timeout import bounded_ms

TRIALS = 400
Z3_NODES = 1000


def _draws(original: Program, rewritten: Program, draws: dict[int, int]) -> str | None:
    mine = [i for i, n in enumerate(rewritten.nodes) if draws_randomness(n.op, n.attr)]
    if sorted(draws) != mine or len(set(draws.values())) != len(draws):
        return "the rewrite's draws are not distinct draws of the original"
    for new, old in draws.items():
        a, b = rewritten.nodes[new], original.nodes[old] if 0 <= old < len(original.nodes) else None
        if b is None or (a.op, a.attr) != (b.op, b.attr) or a.op not in ("laplace", "exponential"):
            return f"draw %{new} of the rewrite is not draw %{old} of the original (same Laplace or exponential law)"
    return None


def _z3(original: Program, rewritten: Program, draws: dict[int, int]) -> str | None:
    xs = [z3.Int(f"x{i}") for i in range(original.domain.size)]
    eta = {i: z3.Real(f"eta{i}") for i, n in enumerate(original.nodes) if draws_randomness(n.op, n.attr)}
    before = _Encoder(original, xs, eta, "a")
    after = _Encoder(rewritten, xs, {new: eta[old] for new, old in draws.items()}, "b")
    same = [z3.And(before.bot[o] == after.bot[p], z3.Or(before.bot[o], before.val[o] == after.val[p]))
            for o, p in zip(original.outputs, rewritten.outputs)]
    solver = z3.Solver()
    solver.set("timeout", bounded_ms(60_000))
    solver.add(*before.facts, *after.facts, z3.Not(z3.And(same)))
    answer = solver.check()
    return None if answer == z3.unsat else f"z3 answered {answer} (expected unsat) to 'some output differs'"


def _runs(original: Program, rewritten: Program, draws: dict[int, int], seed: int = 0) -> str | None:
    rng = random.Random(seed)
    dom = original.domain
    ours = [i for i, n in enumerate(original.nodes) if draws_randomness(n.op, n.attr)]
    for trial in range(TRIALS):
        deadline.check("while re-checking a rewritten program")
        x = [rng.randint(lo - 2, hi + 2) for lo, hi in zip(dom.lo, dom.hi)]
        if trial % 2:
            eta = {i: Fraction(rng.randint(-8, 8), 2) for i in ours}
        else:
            eta = {i: Fraction(rng.gauss(0, 10)) for i in ours}
        eta = {i: abs(v) if original.nodes[i].op == "exponential" else v for i, v in eta.items()}
        a, _ = run(original, x, eta)
        b, _ = run(rewritten, x, {new: eta[old] for new, old in draws.items()})
        if a != b:
            return f"x={x}, draws {eta}: the original gives {a}, the rewrite {b}"
    return None


def check(original: Program, rewritten: Program, draws: dict[int, int]) -> str | None:
    """None when ``rewritten`` (whose draw ``k`` is the original's ``draws[k]``) gives the
    original's outputs for every input and draw, else what failed."""
    if rewritten.domain != original.domain or len(rewritten.outputs) != len(original.outputs):
        return "the rewrite changes the inputs or the number of outputs"
    try:
        problem = _draws(original, rewritten, draws) or _runs(original, rewritten, draws)
        if problem is None and max(len(original.nodes), len(rewritten.nodes)) <= Z3_NODES:
            problem = _z3(original, rewritten, draws)
    except (TypeError, ValueError, ArithmeticError) as exc:
        return f"the rewrite cannot be re-checked: {exc}"
    return problem
