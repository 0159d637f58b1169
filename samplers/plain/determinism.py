"""Checks that the explored runs are what the function computes on every call.

Path forking assumes that a run is decided by its decisions alone.  Randomness that
does not come from ``prng`` and state kept between calls break that, and then the
traced program is not the function.  Two checks catch what they can: every path is run
again, in reverse order, and must branch the same way and return the same values; and
the global generators a function may draw from instead of ``prng`` (numpy's legacy
``np.random.*`` functions, Python's ``random`` module) must not have moved during the
trace, which catches any use of them, even one that happens not to change a result.
"""

from __future__ import annotations

import random
from typing import Any, Callable, Sequence

import numpy as np

from samplers.errors import UntraceableError
from samplers.plain.forking import Driver, Path
from samplers.plain.paths_to_ir import signature


def global_generators() -> tuple:
    """The states of numpy's global generator and of Python's ``random`` module, comparable."""
    kind, key, pos, has_gauss, gauss = np.random.get_state()
    return random.getstate(), (kind, key.tobytes(), pos, has_gauss, gauss)


def check_runs(driver: Driver, paths: Sequence[Path], run: Callable[[], Any], before: tuple, name: str) -> None:
    """Raise :class:`UntraceableError` unless every path replays to the same result and the
    global generators are where they were before the trace (``before``)."""
    _untouched(before, name)
    for path in reversed(paths):
        if signature(driver.replay(path, run)) != signature(path.result):
            raise UntraceableError(f"{name} returned something else when run again on the same path: "
                                   "it uses randomness other than prng (np.random, random) or state kept "
                                   "between calls, which tracing cannot see", operation="determinism")
    _untouched(before, name)


def _untouched(before: tuple, name: str) -> None:
    if global_generators() != before:
        raise UntraceableError(f"{name} draws from numpy's global generator (np.random.*) or Python's random "
                               "module, which tracing cannot see; draw from prng instead", operation="randomness")
