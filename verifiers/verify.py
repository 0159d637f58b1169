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

With continuous noise (the continuous backend, finite outputs only) the global level
is enclosed instead: ``result`` is a :class:`verifiers.continuous.GlobalLevel` whose
ratio is an enclosure; eps-DP is proved when its upper end is at most the lower end of
e^eps's bracket and refuted when its lower end exceeds the upper end.
:func:`restricted` narrows the declared domain to a box, for sweeps over small inputs.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from samplers import deadline
from samplers.deadline import TimeLimitReached
from samplers.errors import BudgetExceeded, DomainError
from samplers.lang.domain import Domain
from samplers.lang.ir import Program
from samplers.numerals import count_text
from samplers.plain import as_program
from verifiers.backends import get_backend
from verifiers.base import GlobalEpsilon, Progress
from verifiers.epsilon import Bisection, bisect_epsilon, compare_exp, exceeds_exp, within_exp
from verifiers.ratio import INF, Ratio

MAX_SWEEP_POINTS = 10**7  # inputs a global sweep may visit (each with all its neighbours)
MAX_ENCLOSED_PAIRS = 200_000  # neighbour pairs a continuous sweep may enclose (a millisecond or more each)


@dataclass
class Verification:
    """The outcome of :func:`verify`: ``status`` is ``"ok"``, ``"budget_exceeded"`` or ``"time_limit"``."""

    program: Program
    backend: str
    status: str = "ok"
    result: GlobalEpsilon | Any | None = None  # a GlobalLevel (enclosed) for continuous noise
    eps: float | None = None
    proved_dp: bool | None = None
    bisection: Bisection | None = None
    library: str | None = None
    bdd_nodes: int | None = None
    limit: dict[str, int] = field(default_factory=dict)
    stopped: str | None = None  # what stopped the verification: the time limit or a budget
    timings: dict[str, float] = field(default_factory=dict)


def within(r: Ratio, eps: float) -> bool | None:
    """Soundly decide ``r <= e^eps``: True, False, or None within the bracket's rounding."""
    sign = compare_exp(r, eps)
    return None if sign is None else sign <= 0


def restricted(program: Program, lo: int, hi: int) -> Program:
    """``program`` with its declared domain intersected with ``lo..hi`` in every coordinate."""
    d = program.domain
    box = Domain(tuple(max(a, lo) for a in d.lo), tuple(min(b, hi) for b in d.hi))
    if any(a > b for a, b in zip(box.lo, box.hi)):
        raise DomainError(f"the range {lo}..{hi} misses the domain {d.describe()}")
    return dataclasses.replace(program, domain=box)


def enclosed_within(r: Any, eps: float) -> bool | None:
    """Decide eps-DP from an enclosed level ``r`` (a RatioEnclosure): True, False or None."""
    if within_exp(r.hi, eps):
        return True
    if exceeds_exp(r.lo, eps):
        return False
    return None


def sweep_pairs_estimate(program: Program) -> int:
    """About how many ordered neighbour pairs a sweep of the declared domain visits: the
    inputs times the neighbours of its middle input (exact for replace-one relations)."""
    d = program.domain
    middle = tuple((a + b) // 2 for a, b in zip(d.lo, d.hi))
    return d.count() * sum(1 for _ in program.neighbours.of(middle, d))


def check_enclosed_sweep(program: Program) -> None:
    """Refuse up front a continuous sweep too large to finish (DomainError naming its size)."""
    points = program.domain.count()
    pairs = sweep_pairs_estimate(program) if points <= MAX_SWEEP_POINTS else points
    if pairs > MAX_ENCLOSED_PAIRS:
        raise DomainError(f"the domain {program.domain.describe()} has {count_text(points)} inputs and about {count_text(pairs)} "
                          f"neighbour pairs, more than the {MAX_ENCLOSED_PAIRS:,} a sweep with continuous noise "
                          "may enclose; narrow it to a box (--input-range LO..HI, or verifiers.verify.restricted)")


def verify(program: Program | Any, *, backend: str = "auto", eps: float | None = None,
           precision: float | None = None, progress: Progress | None = None, **options: Any) -> Verification:
    """Exact global verification of ``program`` (see the module docstring); a mechanism or a
    plain function in StatDP's contract is traced first (:func:`samplers.plain.as_program`).
    ``progress``, if given, is told how far the sweep is."""
    program = as_program(program)
    t0 = time.perf_counter()
    if program.continuous and backend in ("auto", "continuous"):
        check_enclosed_sweep(program)
    be = get_backend(program, backend, **options)
    out = Verification(program, be.name, eps=eps)
    try:
        points = program.domain.count()
        if points > MAX_SWEEP_POINTS:
            raise BudgetExceeded(f"the domain has {count_text(points)} inputs, more than a sweep's {MAX_SWEEP_POINTS}",
                                 limit="domain_points", value=MAX_SWEEP_POINTS)
        if be.name == "continuous":
            t1 = time.perf_counter()
            out.timings["compile"] = t1 - t0
            out.result = be.global_epsilon(precision if precision is not None else 1e-3, progress=progress)
            out.timings["verify"] = time.perf_counter() - t1
            if eps is not None:
                out.proved_dp = enclosed_within(out.result.ratio, eps)
            return out
        if hasattr(be, "compiled"):
            out.library, out.bdd_nodes = be.library, be.size
        t1 = time.perf_counter()
        out.timings["compile"] = t1 - t0
        out.result = be.global_epsilon(progress)
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
        out.status, out.stopped = "budget_exceeded", str(e)
        out.limit = {e.limit: e.value}
        out.timings["compile"] = time.perf_counter() - t0
    return out


def _stopped(out: Verification, why: str) -> None:
    """Mark ``out`` as cut by the time limit: a violation already found still refutes a claim."""
    out.status, out.stopped, out.limit = "time_limit", why, {"time": int(deadline.budget())}
    if out.result is not None and out.eps is not None and within(out.result.ratio, out.eps) is False:
        out.proved_dp = False
