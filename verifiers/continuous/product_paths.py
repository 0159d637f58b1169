"""The paths of a product event, explored part by part from the runs kept after its first parts.

An event tuner weighs products of parts (set events and thresholds on output components) one
after another, and consecutive ones share their first parts: coordinate ascent changes one part
at a time.  A fresh exploration re-runs the program from its start along every path for each.
Here the runs that get past a prefix of parts with a nonzero weight are kept per input, with
how many of a fresh exploration's runs ended before (a dead branch, or a part weighing 0), and
an event goes on from the longest prefix kept, each further part weighed on the runs that
passed the parts before it (:func:`verifiers.continuous.paths.explore` with ``start=``).

A part weighed on a resumed run makes the decisions a fresh run makes there, and depth-first
order keeps every extension of a run together, so the paths are a fresh exploration's: the same
weights, constraints in the same order and results (the product of the parts' weights), hence
the same regions, enclosures and count budgets.  The path budget too: a fresh exploration runs
once per leaf, and every leaf ends at one part here.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Callable, Hashable, Sequence

from samplers.errors import BudgetExceeded
from verifiers.continuous.paths import Path, Run, Specialised, explore

KEPT_RUNS = 4096  # runs kept over every prefix (the least recently used prefix dropped first)

Part = tuple[Hashable, Callable[[Run], Any]]  # a part's key (equal keys: the same weighing) and its weigher


@dataclass
class _Passed:
    """The runs past a prefix of parts, each with the prefix's (nonzero) weight, and the runs of a
    fresh exploration that ended before the prefix's end."""

    runs: list[tuple[Run | None, Any]]
    ended: int


class ProductPaths:
    """Paths of product events on one program's inputs (see the module docstring)."""

    def __init__(self, max_paths: int, kept_runs: int = KEPT_RUNS) -> None:
        self.max_paths = max_paths
        self.kept_runs = kept_runs
        self._passed: OrderedDict[tuple, _Passed] = OrderedDict()
        self._kept = 0

    def paths(self, spec: Specialised, point: Hashable, parts: Sequence[Part]) -> list[Path]:
        """The paths on which every part weighs nonzero, with the product of the weights as result
        (``spec`` is ``point``'s specialisation)."""
        keys = tuple(k for k, _ in parts)
        start = len(parts) - 1
        while start > 0 and (point, keys[:start]) not in self._passed:
            start -= 1
        if start:
            self._passed.move_to_end((point, keys[:start]))
            passed = self._passed[(point, keys[:start])]
        else:
            passed = _Passed([(None, 1)], 0)
        for i in range(start, len(parts)):
            passed = self._weigh(spec, passed, parts[i][1])
            if i < len(parts) - 1:
                self._keep((point, keys[:i + 1]), passed)
        return [Path(run.weight, tuple(run.constraints), w) for run, w in passed.runs]

    def _weigh(self, spec: Specialised, passed: _Passed, weigh: Callable[[Run], Any]) -> _Passed:
        """The runs past one more part (explored from each run past the ones before)."""
        runs: list[tuple[Run | None, Any]] = []
        leaves = 0
        for start, before in passed.runs:
            def body(run: Run, before: Any = before) -> Any:
                nonlocal leaves
                leaves += 1
                w = before * weigh(run)
                return (run, w) if w else None

            runs += [p.result for p in explore(spec, body, max_paths=self.max_paths, start=start)]
        out = _Passed(runs, passed.ended + leaves - len(runs))
        if out.ended + len(runs) > self.max_paths:  # a fresh exploration has at least as many runs
            raise BudgetExceeded(f"more than {self.max_paths} paths in the symbolic execution",
                                 limit="paths", value=self.max_paths)
        return out

    def _keep(self, key: tuple, passed: _Passed) -> None:
        if len(passed.runs) > self.kept_runs or key in self._passed:
            return
        self._passed[key] = passed
        self._kept += len(passed.runs)
        while self._kept > self.kept_runs:
            _, old = self._passed.popitem(last=False)
            self._kept -= len(old.runs)

    def clear(self) -> None:
        self._passed.clear()
        self._kept = 0


__all__ = ["Part", "ProductPaths"]
