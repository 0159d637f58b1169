"""Certified lower bounds on delta(eps) of approximate DP, for mechanisms with continuous noise.

For neighbours ``x, x'`` and any event ``E``, ``delta(eps) >= P(E|x) - e^eps P(E|x')``;
with enclosures of both probabilities and the rational bracket ``c_lo <= e^eps <= c_hi``,
``lo(P(E|x)) - c_hi hi(P(E|x'))`` is a certified lower bound (:func:`event_delta`).

For a mechanism releasing one number, the best event is a threshold (the likelihood
ratio of a Gaussian shift is monotone, so the optimal set ``{p > e^eps q}`` is a half
line): :func:`threshold_delta` maximises over ``[a, inf)`` and ``(-inf, a)`` by golden
section on the enclosures' midpoints, then certifies the best threshold.  For the
Gaussian mechanism this reaches Balle and Wang's analytic formula (REFERENCE.md)
``Phi(D/2s - eps s/D) - e^eps Phi(-D/2s - eps s/D)`` up to the enclosure width.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Callable, Sequence

from samplers.errors import ParameterError
from verifiers.continuous.backend import ContinuousBackend, NumericOutputs
from verifiers.epsilon import exp_bracket
from verifiers.continuous.linear import Form
from verifiers.continuous.paths import Run

GOLDEN = (math.sqrt(5) - 1) / 2
SECTIONS = 80  # golden-section steps on the threshold


@dataclass(frozen=True)
class DeltaBound:
    """``lo <= P(E|x) - e^eps P(E|x') <= hi`` for one event (``lo`` is the certified delta lower bound)."""

    eps: float
    lo: Fraction
    hi: Fraction
    threshold: Fraction | None = None  # the threshold event's ``a``, when one was optimised
    upper_tail: bool | None = None  # the event is ``[a, inf)`` (else ``(-inf, a)``)

    @property
    def delta_lower(self) -> Fraction:
        return max(self.lo, Fraction(0))


def _bracket(eps: float) -> tuple[Fraction, Fraction]:
    if not (isinstance(eps, (int, float)) and math.isfinite(eps) and eps >= 0):
        raise ParameterError(f"eps must be a finite non-negative number, got {eps!r}")
    return (Fraction(1), Fraction(1)) if eps == 0 else exp_bracket(eps)


def event_delta(backend: ContinuousBackend, x: Sequence[int], xp: Sequence[int], event: Any, eps: float,
                level: int = 1) -> DeltaBound:
    """Certified bounds on ``P(E|x) - e^eps P(E|x')`` for one event (collection of outputs or symbolic)."""
    c_lo, c_hi = _bracket(eps)
    x, xp = backend.check_pair(x, xp)
    p = backend.event_probability(x, event, level)
    q = backend.event_probability(xp, event, level)
    return DeltaBound(eps, p.lo - c_hi * q.hi, p.hi - c_lo * q.lo)


def _threshold_event(a: Fraction, upper: bool) -> Callable[[Run], bool]:
    def event(run: Run) -> bool:
        v = run.output(0)
        return run.require(a, v, strict=False) if upper else run.require(v, a)

    return event


def threshold_delta(backend: ContinuousBackend, x: Sequence[int], xp: Sequence[int], eps: float) -> DeltaBound:
    """The best threshold event's certified delta lower bound, for a mechanism releasing one number."""
    prog = backend.program
    if prog.tuple_output:
        raise NumericOutputs(f"{prog.name} releases a tuple; threshold events need one number")
    x, xp = backend.check_pair(x, xp)
    c = float(_bracket(eps)[1])
    centres, spread = [], 0.0
    for point in (x, xp):
        spec = backend.specialised(point)
        for path in backend.paths(point, lambda run: (run.output(0),)):
            v = path.result[0]
            if isinstance(v, Form):
                centres.append(float(v.const))
                spread = max(spread, float(sum(abs(a) * spec.laws[w].scale for w, a in v.coeffs)))
    if not centres:
        raise NumericOutputs(f"{prog.name} releases no continuous value")
    lo_a = min(centres) - 20 * spread - eps * spread
    hi_a = max(centres) + 20 * spread + eps * spread * spread

    def value(a: float, upper: bool) -> float:
        ev = _threshold_event(Fraction(a), upper)
        p, q = backend.event_probability(x, ev), backend.event_probability(xp, ev)
        return float((p.lo + p.hi) / 2) - c * float((q.lo + q.hi) / 2)

    best: DeltaBound | None = None
    for upper in (True, False):
        a, b = lo_a, hi_a
        m1, m2 = b - GOLDEN * (b - a), a + GOLDEN * (b - a)
        f1, f2 = value(m1, upper), value(m2, upper)
        for _ in range(SECTIONS):
            if f1 >= f2:
                b, m2, f2 = m2, m1, f1
                m1 = b - GOLDEN * (b - a)
                f1 = value(m1, upper)
            else:
                a, m1, f1 = m1, m2, f2
                m2 = a + GOLDEN * (b - a)
                f2 = value(m2, upper)
        t = Fraction((a + b) / 2)
        d = event_delta(backend, x, xp, _threshold_event(t, upper), eps)
        d = DeltaBound(eps, d.lo, d.hi, t, upper)
        if best is None or d.lo > best.lo:
            best = d
    return best

