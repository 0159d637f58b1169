"""Checks that the explored runs are what the function computes on every call.

Path forking assumes that a run is decided by its decisions alone.  Randomness that
does not come from ``prng`` and state kept between calls break that, and then the
traced program is not the function.  Two checks catch what they can: every path is run
again, in reverse order, and must branch the same way and return the same values; and
the global generators a function may draw from instead of ``prng`` (numpy's legacy
``np.random.*`` functions, Python's ``random`` module) must not have moved during the
trace, which catches any use of them, even one that happens not to change a result.
A generator of the function's own (``np.random.default_rng()``, ``random.Random()``, ...)
is refused when it is made (:func:`refusing_own_generators`); one made before the trace
is left to the replay check.
"""

from __future__ import annotations

import random
import threading
from contextlib import contextmanager
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from samplers.errors import UntraceableError
from samplers.plain.forking import Driver, Path
from samplers.plain.paths_to_ir import signature
from samplers.plain.site import untraceable


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


_GENERATORS = [(np.random, name) for name in ("default_rng", "Generator", "RandomState", "PCG64", "PCG64DXSM",
                                              "MT19937", "Philox", "SFC64")] + \
              [(random, name) for name in ("Random", "SystemRandom")]
_guard_lock = threading.Lock()
_guard_users = 0
_tracing = threading.local()  # depth of refusing_own_generators() blocks in this thread


class _Refused:
    """A generator class or factory as its module has it, except that the tracing thread may not call it.

    ``isinstance``, ``issubclass``, subclassing and attributes go to the real one, so other threads and
    code that only inspects it see no difference."""

    def __init__(self, module: Any, name: str) -> None:
        self.real, self.name = getattr(module, name), f"{'np.random' if module is np.random else 'random'}.{name}"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if getattr(_tracing, "depth", 0):
            raise untraceable(f"{self.name}() makes a generator of the function's own, whose draws tracing "
                              "cannot see; draw from prng instead", "randomness")
        return self.real(*args, **kwargs)

    def __instancecheck__(self, obj: Any) -> bool:
        return isinstance(obj, self.real)

    def __subclasscheck__(self, cls: type) -> bool:
        return issubclass(cls, self.real)

    def __mro_entries__(self, bases: tuple) -> tuple:
        return (self.real,)

    def __getattr__(self, name: str) -> Any:
        if name == "real":  # not yet set (a copy made without __init__)
            raise AttributeError(name)
        return getattr(self.real, name)


@contextmanager
def refusing_own_generators() -> Iterator[None]:
    """While the block runs, this thread may not make a generator (see the module docstring); the
    modules get their own back when the last such block in any thread ends."""
    global _guard_users
    with _guard_lock:
        if _guard_users == 0:
            for module, name in _GENERATORS:
                setattr(module, name, _Refused(module, name))
        _guard_users += 1
    _tracing.depth = getattr(_tracing, "depth", 0) + 1
    try:
        yield
    finally:
        _tracing.depth -= 1
        with _guard_lock:
            _guard_users -= 1
            if _guard_users == 0:
                for module, name in _GENERATORS:
                    setattr(module, name, getattr(module, name).real)
