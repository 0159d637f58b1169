"""Path forking: run a function once per outcome of every branch on a symbolic condition.

A Python ``if``/``while`` on a symbolic comparison calls ``bool()`` on it, which asks the
:class:`Driver` for an outcome.  The first run takes True at every new fork; each later
run replays a prefix of decisions and flips the last True to False (depth-first), until
every path has been run.  So ``break``, counters and early returns need no rewriting:
each run is ordinary Python on one path.

All runs trace into one :class:`~samplers.lang.builder.Builder`, so deterministic nodes
are shared between paths.  Noise is never shared by the builder; the driver instead
names a draw by its position on the path and its law: the k-th draw of every path that
draws the same law at position k is one IR node.  That is sound because paths are
disjoint events and, within one path, distinct positions are distinct nodes, so each
path sees independent draws with the laws its code asked for.

The exploration is bounded by counts: ``max_paths`` paths, at most ``max_paths``
decisions on one path (a path that deep implies that many paths: every fork has a
sibling still to run, which also stops a ``while x > 0`` whose first path never ends),
and :data:`DECISIONS_PER_PATH` times ``max_paths`` decisions over all runs (a loop that
forks once per iteration costs its depth on every path: quadratic work).  A refusal
raised into the user's code ends the run even if the code catches it
(:func:`~samplers.plain.site.watching`).
"""

from __future__ import annotations

import threading
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Callable

from samplers import deadline
from samplers.errors import TooManyPaths, UntraceableError
from samplers.lang.builder import Builder
from samplers.plain.site import current_site, refusal, untraceable, watching
from samplers.scoped import scoped

MAX_PATHS = 10_000  # paths explored before a trace gives up (TooManyPaths)
DECISIONS_PER_PATH = 32  # decisions over a whole exploration: at most this many times max_paths
CLOCK_EVERY = 1024  # decisions between two looks at the clock (samplers.deadline)

_state = threading.local()


@dataclass(frozen=True)
class Path:
    """One run: the conditions it forked on (node id, outcome), in order, and what it returned."""

    decisions: tuple[tuple[int, bool], ...]
    result: Any


class Driver:
    """The decision stack of a depth-first exploration (see the module docstring)."""

    def __init__(self, builder: Builder, max_paths: int = MAX_PATHS) -> None:
        self.builder = builder
        self.max_paths = max_paths
        self._draws: dict[tuple, int] = {}
        self._replay: list[tuple[int, bool]] = []
        self._decisions: list[tuple[int, bool]] = []
        self._decided: dict[int, bool] = {}
        self._draw_count = 0
        self._forks = 0  # decisions taken over the whole exploration
        self.what = "the function"

    def decide(self, cond: int) -> bool:
        """The outcome of the 0/1 node ``cond`` on the current path (forking if new)."""
        node = self.builder.nodes[cond]
        if node.is_const:
            return bool(node.attr)
        if cond in self._decided:  # the same condition again on this path: already known
            return self._decided[cond]
        k = len(self._decisions)
        self._count_fork(k)
        if k < len(self._replay):
            expected, outcome = self._replay[k]
            if expected != cond:
                raise untraceable("the function branched differently when re-run on the same path; "
                                  "does it use randomness other than prng, or state kept between calls?",
                                  "branch")
        else:
            outcome = True
        self._decisions.append((cond, outcome))
        self._decided[cond] = outcome
        return outcome

    def _count_fork(self, depth: int) -> None:
        self._forks += 1
        if self._forks % CLOCK_EVERY == 0:
            deadline.check("while exploring the paths of the function")
        if depth >= self.max_paths:
            raise refusal(TooManyPaths(
                f"{self.what} branches on noisy values more than {self.max_paths} times on one path (so it has more "
                f"than {self.max_paths} paths; a loop whose noisy condition stays true?)", site=current_site(),
                operation="paths"))
        if self._forks > DECISIONS_PER_PATH * self.max_paths:
            raise refusal(TooManyPaths(
                f"{self.what} took more than {DECISIONS_PER_PATH * self.max_paths} branches on noisy values over "
                f"its paths (limit {DECISIONS_PER_PATH} x max_paths; a loop that forks once per iteration?)",
                site=current_site(), operation="paths"))

    def _run(self, run: Callable[[], Any]) -> Any:
        """One call of ``run`` on the current decision stack; a refusal it swallowed is raised now."""
        self._decisions, self._decided, self._draw_count = [], {}, 0
        with watching() as seen:
            result = run()
        if seen.first is not None:
            raise seen.first
        deadline.check("while exploring the paths of the function")  # a TimeLimitReached it swallowed
        return result

    def depth(self) -> int:
        """Decisions taken so far on the current path."""
        return len(self._decisions)

    def position(self) -> int:
        """Reserve the next draw position on this path."""
        self._draw_count += 1
        return self._draw_count - 1

    def draw(self, key: tuple, make: Callable[[], int], position: int | None = None) -> int:
        """The node of a draw on this path, shared with other paths' draws at the same position and law.

        ``position`` is one reserved earlier (a draw whose law is only known later); by default the next.
        """
        full = (self.position() if position is None else position, *key)
        if full not in self._draws:
            self._draws[full] = make()
        return self._draws[full]

    def replay_current(self, run: Callable[[], Any]) -> Any:
        """Run ``run`` again on the path just taken (same decisions, same draws)."""
        return self.replay(Path(tuple(self._decisions), None), run)

    def replay(self, path: Path, run: Callable[[], Any]) -> Any:
        """Run ``run`` again on ``path``: the same decisions, so the same nodes if the function is deterministic."""
        self._replay, forks = list(path.decisions), self._forks
        with driving(self):
            result = self._run(run)
        self._forks = forks  # a check of the exploration, not counted against its budget
        if tuple(self._decisions) != path.decisions:
            raise UntraceableError(f"{self.what} branched differently when run again on the same path; does "
                                   "it use randomness other than prng, or state kept between calls?",
                                   operation="branch")
        return result

    def explore(self, run: Callable[[], Any], what: str) -> list[Path]:
        """Every path of ``run`` (re-run once per path), depth first."""
        paths: list[Path] = []
        self._replay, self._forks, self.what = [], 0, what
        with driving(self):
            while True:
                result = self._run(run)
                paths.append(Path(tuple(self._decisions), result))
                nxt = list(self._decisions)
                while nxt and not nxt[-1][1]:
                    nxt.pop()
                if not nxt:
                    return paths
                if len(paths) >= self.max_paths:
                    raise TooManyPaths(f"{what} has more than {self.max_paths} paths (branches on noisy values); "
                                       "trace it with fewer queries or raise max_paths", operation="paths")
                nxt[-1] = (nxt[-1][0], False)
                self._replay = nxt


def driving(driver: Driver) -> AbstractContextManager[Driver]:
    """Make ``driver`` the one symbolic conditions ask while the block runs."""
    return scoped(_state, "driver", driver)


def current() -> Driver:
    """The driver of the trace in progress."""
    d = getattr(_state, "driver", None)
    if d is None:
        raise untraceable("a symbolic value was used outside the trace that made it", "bool")
    return d
