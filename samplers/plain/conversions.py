"""``np.asarray`` / ``np.array`` of symbolic values while a function is traced.

numpy has no dispatch protocol for these two (``__array__`` must return real memory), yet
StatDP's code starts with ``np.asarray(queries, dtype=np.float64)``.  While a trace runs,
:func:`converting` puts wrappers in their place on the numpy module: a call whose data
holds symbolic values gets a :class:`~samplers.plain.symbolic.SymArray` of the same
values (every other call goes to numpy unchanged).  A dtype (float64, int64 or bool) is
honoured where that is exact (:func:`~samplers.plain.dispatch.cast`); anything else,
dtype=object included, is refused at the user's line.  As in numpy, ``np.asarray`` of an
array is that array when no conversion is needed, and ``np.array`` copies unless told not to.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Any, Iterator

import numpy as np

from samplers.lang.trace import Sym
from samplers.plain.dispatch import cast, traced_dtype
from samplers.plain.site import untraceable
from samplers.plain.symbolic import SymArray

_lock = threading.Lock()
_active = 0
_ORIGINAL = {"asarray": np.asarray, "array": np.array}


def _symbolic(a: Any) -> bool:
    if isinstance(a, SymArray):
        return True
    return isinstance(a, (list, tuple)) and any(isinstance(v, (Sym, SymArray)) for v in a)


def _convert(name: str) -> Any:
    original = _ORIGINAL[name]

    def convert(a: Any, dtype: Any = None, *args: Any, **kwargs: Any) -> Any:
        if not _symbolic(a):
            return original(a, dtype, *args, **kwargs)
        copy = kwargs.pop("copy", name == "array")
        if args or kwargs:
            raise untraceable(f"np.{name} of symbolic values takes only a dtype (and copy)", f"np.{name}")
        what = f"np.{name}(..., dtype={None if dtype is None else np.dtype(dtype).name})"
        dt = None if dtype is None else traced_dtype(dtype, what)
        if isinstance(a, SymArray) and not copy:  # numpy returns the array itself when no conversion is needed
            if dt is None or (a.known_dtype is not None and dt == a.known_dtype):  # (np.dtype(None) is float64)
                return a
            if a.known_dtype is None:  # numpy copies or not, depending on a dtype the tracer cannot tell
                return a.shared_with(SymArray((cast(v, dt, what) for v in a.items), dt))
        items = a.items if isinstance(a, SymArray) else list(a)
        if any(isinstance(v, SymArray) for v in items):
            raise untraceable(f"np.{name} of nested arrays of symbolic values (only 1-D arrays are traced)",
                              f"np.{name}")
        known = a.known_dtype if isinstance(a, SymArray) and dt is None else dt
        return SymArray(items if dt is None else (cast(v, dt, what) for v in items), known)

    convert.__doc__ = original.__doc__
    return convert


_WRAPPERS = {name: _convert(name) for name in _ORIGINAL}


@contextmanager
def converting() -> Iterator[None]:
    """numpy's ``asarray`` and ``array`` take symbolic data while the block runs (nested and threaded uses count)."""
    global _active
    with _lock:
        if _active == 0:
            for name, fn in _WRAPPERS.items():
                setattr(np, name, fn)
        _active += 1
    try:
        yield
    finally:
        with _lock:
            _active -= 1
            if _active == 0:
                for name, fn in _ORIGINAL.items():
                    setattr(np, name, fn)
