"""Whole-mechanism verification: the exact global epsilon, or a proof / refutation of eps-DP.

:func:`verify` runs an exact backend over every neighbour pair of the declared domain.
The global ratio is exact, so the certified bracket ``[eps_lower, eps_upper]`` is as
tight as floats allow; given a claimed ``eps``, eps-DP is proved when the ratio is at
most the lower end of the rational bracket of ``e^eps`` and refuted (with the witness)
when it exceeds the upper end.  With a ``precision``, the decision oracle is also
bisected (:func:`verifiers.epsilon.bisect_epsilon`), the route for backends that only
decide.  Hitting the BDD node budget gives a result whose status says so; so does the
time limit in force (:mod:`samplers.deadline`): status ``time_limit``, with the best pair
found so far when the sweep had started (a certified lower bound, nothing proved).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from samplers import deadline
from samplers.deadline import TimeLimitReached
from samplers.errors import BudgetExceeded
from samplers.lang.ir import Program
from verifiers.backends import get_backend
from verifiers.base import GlobalEpsilon
from verifiers.epsilon import Bisection, bisect_epsilon, exp_bracket
from verifiers.ratio import INF, Ratio


MAX_SWEEP_POINTS = 10**7  # inputs a global sweep may visit (each with all its neighbours)


@dataclass
class Verification:
    """The outcome of :func:`verify`: ``status`` is ``"ok"``, ``"budget_exceeded"`` or ``"time_limit"``."""

    program: Program
    backend: str
    status: str = "ok"
    result: GlobalEpsilon | None = None
    eps: float | None = None
    proved_dp: bool | None = None
    bisection: Bisection | None = None
    library: str | None = None
    bdd_nodes: int | None = None
    limit: dict[str, int] = field(default_factory=dict)
    stopped: str | None = None  # what the time limit interrupted
    timings: dict[str, float] = field(default_factory=dict)


def within(r: Ratio, eps: float) -> bool | None:
    """Soundly decide ``r <= e^eps``: True, False, or None within the bracket's rounding."""
    if eps == INF:
        return True
    if r == INF:
        return False
    if eps == 0:
        return r <= 1
    c_lo, c_hi = exp_bracket(eps)
    if r <= c_lo:
        return True
    if r > c_hi:
        return False
    return None


def verify(program: Program, *, backend: str = "auto", eps: float | None = None,
           precision: float | None = None, **options: Any) -> Verification:
    """Exact global verification of ``program`` (see the module docstring)."""
    t0 = time.perf_counter()
    be = get_backend(program, backend, **options)
    out = Verification(program, be.name, eps=eps)
    try:
        points = program.domain.count()
        if points > MAX_SWEEP_POINTS:
            raise BudgetExceeded(f"the domain has {points} inputs, more than a sweep's {MAX_SWEEP_POINTS}",
                                 limit="domain_points", value=MAX_SWEEP_POINTS)
        if hasattr(be, "compiled"):
            out.library, out.bdd_nodes = be.library, be.size
        t1 = time.perf_counter()
        out.timings["compile"] = t1 - t0
        out.result = be.global_epsilon()
        t2 = time.perf_counter()
        out.timings["verify"] = t2 - t1
        if not out.result.complete:
            _stopped(out, out.result.stopped or "the global sweep stopped early")
            return out
        if eps is not None:
            out.proved_dp = within(out.result.ratio, eps)
        if precision is not None:
            def oracle(c: Fraction) -> Any:
                return be.global_violation(c)

            out.bisection = bisect_epsilon(oracle, 0.0, INF, precision)
            out.timings["bisect"] = time.perf_counter() - t2
    except TimeLimitReached as e:
        out.timings.setdefault("compile", time.perf_counter() - t0)
        _stopped(out, str(e))
    except BudgetExceeded as e:
        out.status = "budget_exceeded"
        out.limit = {e.limit: e.value}
        out.timings["compile"] = time.perf_counter() - t0
    return out


def _stopped(out: Verification, why: str) -> None:
    """Mark ``out`` as cut by the time limit: a violation already found still refutes a claim."""
    out.status, out.stopped, out.limit = "time_limit", why, {"time": int(deadline.budget())}
    if out.result is not None and out.eps is not None and within(out.result.ratio, out.eps) is False:
        out.proved_dp = False
