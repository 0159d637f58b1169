"""The search's float-level stage: the audit of :mod:`verifiers.float64` on the search's pairs.

It tries the real-number witness pair first (both ways round: an output near ``x``'s query is
where the doubles ``x'`` cannot reach are easiest to certify), then the domain's neighbour pairs,
at most ``PAIRS`` of them, within the search's time limit.
"""

from __future__ import annotations

import itertools
import time

from hybrid.searcher.state import Search, SearchResult
from samplers.lang.ir import Program
from verifiers.base import neighbour_pairs
from verifiers.float64.witness import audit

PAIRS = 64


def _pairs(program: Program, result: SearchResult) -> list[tuple[tuple, tuple]]:
    first = []
    w = result.witness or {}
    if "x" in w and "x_prime" in w:
        x, xp = tuple(w["x"]), tuple(w["x_prime"])
        first = [(xp, x), (x, xp)]
    rest = [p for p in itertools.islice(neighbour_pairs(program), PAIRS) if p not in first]
    return first + rest


def float_stage(s: Search, program: Program, result: SearchResult) -> None:
    """Attach the float-level audit to ``result`` (its time is the timing ``float``, within ``total``)."""
    s.say("auditing numpy's float64 samplers")
    t0 = time.perf_counter()
    result.float_audit = audit(program, _pairs(program, result), seed=s.seed)
    spent = time.perf_counter() - t0
    result.timings["float"] = spent
    result.timings["total"] = result.timings.get("total", 0.0) + spent
