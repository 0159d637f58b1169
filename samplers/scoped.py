"""A thread-local value set for the duration of a block.

The tracer's current builder (:func:`samplers.lang.trace.tracing`) and the path driver
of a plain-Python trace (:func:`samplers.plain.forking.driving`) are both such values:
set on entry, the previous one restored on exit, so traces nest and threads do not mix.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Iterator, TypeVar

T = TypeVar("T")


@contextmanager
def scoped(state: threading.local, name: str, value: T) -> Iterator[T]:
    """Set ``state.<name>`` to ``value`` while the block runs, then restore what was there."""
    previous = getattr(state, name, None)
    setattr(state, name, value)
    try:
        yield value
    finally:
        setattr(state, name, previous)
