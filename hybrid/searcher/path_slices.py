"""The slice of a program with too many paths: the longest output prefix whose paths fit.

The continuous backend certifies a finite output by enclosing every symbolic path of each input
(:mod:`verifiers.continuous.paths`).  A program without a cutoff (``svt6``: each answer branches,
2^n paths) has, at n = 20, more paths on one input than the search may enclose in all
(``budget.enclosures``), and more than the backend's cap: searched whole it gets no certified
bound.  Its first ``k`` output components are a slice (:mod:`samplers.lang.slicing`) with exactly
the program's joint law on them, so an event on them certified on the slice is certified for the
program (:mod:`hybrid.searcher.slices` searches the slice and lifts the result).

The rule, by counts only (the same on any machine): a tuple-output program of finite outputs
whose paths on the fill input (:func:`hybrid.searcher.slices.fill`) number more than
``budget.enclosures`` is searched on its longest output prefix with at most
``budget.enclosures // (2 * PAIRS)`` paths there, so that the enclosures budget covers both inputs
of :data:`PAIRS` candidate pairs (``svt6``'s first 10 answers, 1,024 paths).  Paths only grow with
the prefix (each path of a longer prefix extends one of a shorter), so the prefix is found by
bisection, each count stopped at the limit.  A program that releases values (a float component)
is searched whole: its events prune the paths, so the count says less there.
"""

from __future__ import annotations

from hybrid.searcher.slices import Slice, fill, prefix
from samplers.deadline import TimeLimitReached
from samplers.errors import BudgetExceeded, UnsupportedByBackend
from samplers.lang.ir import FLOAT, Program
from samplers.lang.neighbours import Custom
from verifiers.backends import get_backend
from verifiers.continuous.paths import explore

PAIRS = 8  # candidate pairs whose two inputs' paths the enclosures budget must cover on the slice


def count_paths(program: Program, limit: int) -> int:
    """The paths of ``program`` on the fill input, counted up to ``limit + 1`` (more: ``limit + 1``)."""
    backend = get_backend(program, "continuous")  # running-max loops read as argmax, as the search reads them
    count = 0
    try:
        spec = backend.specialised(fill(backend.program.domain))
        for _ in explore(spec, lambda run: (run.outputs(),), max_paths=limit):
            count += 1
    except BudgetExceeded:
        return limit + 1
    return count


def path_plan(program: Program, enclosures: int) -> list[Slice] | None:
    """The prefix slice to search ``program`` on (see the module docstring), or None to search it whole."""
    limit = enclosures // (2 * PAIRS)
    if (not program.tuple_output or program.arity < 2 or isinstance(program.neighbours, Custom) or limit < 1
            or any(program.nodes[o].kind == FLOAT for o in program.outputs)):
        return None
    try:
        if count_paths(program, enclosures) <= enclosures:
            return None
        lo, hi = 0, program.arity  # the prefix of lo fits (0: none known), that of hi does not
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if count_paths(prefix(program, mid, "").program, limit) <= limit:
                lo = mid
            else:
                hi = mid
    except (UnsupportedByBackend, TimeLimitReached):  # the whole search says why, or stops in time
        return None
    if lo == 0:
        return None
    return [prefix(program, lo, f"the program has more paths on the fill input than budget enclosures = "
                                f"{enclosures}; these at most {limit}")]


__all__ = ["PAIRS", "count_paths", "path_plan"]
