"""Accuracy synthesis: exact (alpha, beta)-accuracy of a mechanism over its whole domain.

``accuracy(alpha)`` is ``min over inputs x of P(|M(x) - f(x)| <= alpha)`` with the
inputs attaining it; :func:`tightest_alpha` is the smallest alpha whose accuracy is at
least ``1 - beta``.  The distance is the largest coordinate difference (a tuple output
is compared coordinate-wise; BOTTOM is at distance 0 from itself and infinitely far
from anything else).  The target ``f`` defaults to the mechanism's *noiseless* output:
the program run with every noise draw equal to 0 (for a count after randomized
response, the true count).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Callable

from samplers import deadline
from samplers.errors import ParameterError
from samplers.lang.exact import exact
from samplers.lang.ir import BOTTOM, Program, evaluate
from verifiers.base import ExactBackend, Output, Point
from verifiers.ratio import INF

Target = Callable[[Point], Output]


def noiseless_target(program: Program) -> Target:
    """``f(x)``: the program's output with every noise draw at 0 (ties to the lowest index)."""
    for n in program.nodes:
        if n.op == "draw" and not (n.lo <= 0 <= n.hi and n.attr[1][-n.lo]):
            raise ParameterError(
                f"{program.name} draws noise that cannot be 0; give the accuracy target explicitly")

    def target(x: Point) -> Output:
        vals: list[Any] = []
        for n in program.nodes:
            if n.op == "input":
                vals.append(x[n.attr])
            elif n.op == "draw":
                vals.append(0)
            else:
                vals.append(evaluate(n.op, n.attr, [vals[a] for a in n.args]))
        outs = [vals[o] for o in program.outputs]
        return tuple(outs) if program.tuple_output else outs[0]

    return target


def distance(o: Output, t: Output) -> float | int:
    """``max_i |o_i - t_i|``; BOTTOM is infinitely far from any other value."""
    pairs = zip(o, t) if isinstance(o, tuple) else [(o, t)]
    worst: float | int = 0
    for a, b in pairs:
        if a == b:
            continue
        if a is BOTTOM or b is BOTTOM:
            return INF
        worst = max(worst, abs(a - b))
    return worst


@dataclass(frozen=True)
class Accuracy:
    """``P(|M(x) - f(x)| <= alpha) >= probability`` for every input, tight at ``worst``."""

    alpha: float | int
    probability: Fraction
    worst: list[Point]
    inputs: int

    @property
    def beta(self) -> Fraction:
        return 1 - self.probability


def _error_laws(backend: ExactBackend, target: Target | None) -> dict[Point, dict[Any, Fraction]]:
    """For each input, the exact law of the error ``|M(x) - f(x)|``."""
    f = target or noiseless_target(backend.program)
    backend.prepare_sweep()
    laws = {}
    for x in backend.program.domain.points():
        deadline.check("while weighing every input's error")
        fx = f(x)
        law: dict[Any, Fraction] = defaultdict(Fraction)
        for o, p in backend.distribution(x).items():
            law[distance(o, fx)] += p
        laws[x] = law
    return laws


def _at(laws: dict[Point, dict[Any, Fraction]], alpha: float | int) -> Accuracy:
    probs = {x: sum((p for d, p in law.items() if d <= alpha), Fraction(0)) for x, law in laws.items()}
    low = min(probs.values())
    return Accuracy(alpha, low, [x for x, p in probs.items() if p == low], len(probs))


def accuracy(backend: ExactBackend, alpha: float | int, target: Target | None = None) -> Accuracy:
    """The exact minimum over inputs of ``P(|M(x) - f(x)| <= alpha)``, with the worst inputs."""
    if not alpha >= 0:
        raise ParameterError(f"accuracy: alpha must be non-negative, got {alpha}")
    return _at(_error_laws(backend, target), alpha)


def tightest_alpha(backend: ExactBackend, beta: Fraction | float | str, target: Target | None = None) -> Accuracy:
    """The smallest alpha with accuracy at least ``1 - beta`` (an error value attained somewhere)."""
    b = exact(beta, what="beta")
    if not 0 <= b < 1:
        raise ParameterError(f"accuracy: beta must be in [0, 1), got {beta}")
    laws = _error_laws(backend, target)
    for alpha in sorted({d for law in laws.values() for d in law}):
        result = _at(laws, alpha)
        if result.probability >= 1 - b:
            return result
    raise AssertionError("unreachable: the largest error has probability 1")

