"""``np.asarray`` / ``np.array`` of symbolic values while a function is traced.

numpy has no dispatch protocol for these two (``__array__`` must return real memory), yet
StatDP's code starts with ``np.asarray(queries, dtype=np.float64)``.  While a trace runs,
:func:`converting` puts wrappers in their place on the numpy module: a call whose data
holds symbolic values gets a :class:`~samplers.plain.symbolic.SymArray` of the same
values (every other call goes to numpy unchanged).  A dtype is honoured where that is
exact: float64 of integers within +-2^53 (the same numbers), an integer or bool type of
values that are already integers or 0/1; anything else is refused at the user's line.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Any, Iterator

import numpy as np

from samplers.lang.ir import FLOAT
from samplers.lang.trace import Sym
from samplers.plain.site import untraceable
from samplers.plain.symbolic import SymArray

EXACT_FLOAT = 2**53  # integers of at most this size are float64 values exactly
_lock = threading.Lock()
_active = 0
_ORIGINAL = {"asarray": np.asarray, "array": np.array}


def _symbolic(a: Any) -> bool:
    if isinstance(a, SymArray):
        return True
    return isinstance(a, (list, tuple)) and any(isinstance(v, (Sym, SymArray)) for v in a)


def _cast(v: Any, kind: str, name: str) -> Any:
    if not isinstance(v, Sym):
        return np.asarray(v).astype(name).item() if kind else v
    node = v.node
    if kind == "f" and name == "float64":
        if node.kind == FLOAT or max(abs(node.lo), abs(node.hi)) <= EXACT_FLOAT:
            return v
    elif kind in "iu" and node.kind != FLOAT and np.iinfo(name).min <= node.lo and node.hi <= np.iinfo(name).max:
        return v
    elif kind == "b" and node.is_bool:
        return v
    raise untraceable(f"np.asarray(..., dtype={name}) of symbolic values is not exact (values {node.lo}..{node.hi})",
                      "np.asarray")


def _convert(name: str) -> Any:
    original = _ORIGINAL[name]

    def convert(a: Any, dtype: Any = None, *args: Any, **kwargs: Any) -> Any:
        if not _symbolic(a):
            return original(a, dtype, *args, **kwargs)
        items = a.items if isinstance(a, SymArray) else list(a)
        if any(isinstance(v, SymArray) for v in items):
            raise untraceable(f"np.{name} of nested arrays of symbolic values (only 1-D arrays are traced)",
                              f"np.{name}")
        if dtype is None or np.dtype(dtype) == np.dtype(object):
            return SymArray(items)
        dt = np.dtype(dtype)
        return SymArray(_cast(v, dt.kind, dt.name) for v in items)

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
