"""Symbolic numbers and arrays that plain numpy-style code computes with.

:class:`Noisy` is a program value (a :class:`~samplers.lang.trace.Sym`: an IR node) that
behaves like a number: its operators go through numpy's ufunc protocol (so a numpy
scalar or array on either side dispatches here too), and ``bool()`` of it -- an ``if`` or
``while`` on a comparison -- forks the trace (:mod:`samplers.plain.forking`).  Turning
it into a Python ``float``/``int`` (which would lose the randomness) is refused with the
user's line, except for a 0/1 value (a comparison), which forks like ``bool()``.

:class:`SymArray` is a one-dimensional array of such values and plain numbers, with the
ndarray methods mechanism code uses (``argmax``, ``max``, ``sum``, ``cumsum``, ``clip``,
indexing, iteration).  Both implement ``__array_ufunc__`` and ``__array_function__``;
the handlers are in :mod:`samplers.plain.dispatch`.
"""

from __future__ import annotations

from typing import Any, Iterator

import numpy as np
from numpy.lib.mixins import NDArrayOperatorsMixin

from samplers.lang.ir import BOTTOM
from samplers.lang.trace import Sym
from samplers.plain.forking import current
from samplers.plain.site import untraceable


class Noisy(NDArrayOperatorsMixin, Sym):
    """A symbolic number in traced plain code (see the module docstring)."""

    __slots__ = ()
    __hash__ = object.__hash__

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        return dispatch.ufunc(ufunc, method, inputs, kwargs)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        return dispatch.function(func, args, kwargs)

    def __bool__(self) -> bool:
        node = self.node
        cond = self if node.is_bool else Noisy((Sym.__ne__(self, 0)).id)
        return current().decide(cond.id)

    def __float__(self) -> float:
        if self.node.is_bool:  # float(q > t): 0.0 or 1.0, one path each
            return float(bool(self))
        raise untraceable("a symbolic value (noise or a query) is converted to a Python float, which would "
                          "fix its value; keep it in arithmetic and comparisons", "float()")

    def __int__(self) -> int:
        if self.node.is_bool:  # int(q > t), count += int(...): 0 or 1, one path each
            return int(bool(self))
        raise untraceable("a symbolic value is converted to a Python int (int(), a range() bound, a list index "
                          "or a loop count); loop bounds and indices must not depend on noise or queries", "int()")

    __index__ = __int__

    def __round__(self, ndigits: int | None = None) -> Any:
        raise untraceable("round() of a symbolic value is not supported", "round()")

    def __complex__(self) -> complex:
        raise untraceable("a symbolic value is converted to a Python complex", "complex()")

    def __format__(self, spec: str) -> str:
        raise untraceable("a symbolic value is formatted as text (its value is not known while tracing)", "format")

    def __iter__(self) -> Iterator[Any]:
        raise untraceable("a symbolic number is not iterable", "iter()")


class SymArray(NDArrayOperatorsMixin):
    """A one-dimensional array of symbolic values and plain numbers (see the module docstring)."""

    __array_priority__ = 1000

    def __init__(self, items: Any) -> None:
        self.items = list(items)

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        return dispatch.ufunc(ufunc, method, inputs, kwargs)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        return dispatch.function(func, args, kwargs)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        if dtype is not None and np.dtype(dtype) != np.dtype(object) and any(isinstance(v, Sym) for v in self.items):
            raise untraceable(f"symbolic values are converted to a numpy {np.dtype(dtype).name} array "
                              "(np.asarray(queries, dtype=...) fixes their values); drop the dtype", "np.asarray")
        out = np.empty(len(self.items), dtype=object)
        out[:] = self.items
        return out if dtype is None else out.astype(dtype)

    def __repr__(self) -> str:
        return f"SymArray({self.items!r})"

    # -- container protocol ----------------------------------------------------------
    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self) -> Iterator[Any]:
        return iter(self.items)

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, slice):
            return SymArray(self.items[key])
        return self.items[_index(key)]

    def __setitem__(self, key: Any, value: Any) -> None:
        if isinstance(key, slice):
            idx = range(len(self.items))[key]
            vals = list(value) if isinstance(value, (SymArray, list, tuple, np.ndarray)) else [value] * len(idx)
            if len(vals) != len(idx):
                raise untraceable(f"cannot assign {len(vals)} values to a slice of {len(idx)}", "slice assignment")
            for i, v in zip(idx, vals):
                self.items[i] = v
        else:
            self.items[_index(key)] = value

    def __bool__(self) -> bool:
        if len(self.items) != 1:
            raise untraceable("the truth value of an array of several values is ambiguous (use .any() or .all())",
                              "bool(array)")
        return bool(self.items[0])

    @property
    def shape(self) -> tuple[int]:
        return (len(self.items),)

    @property
    def size(self) -> int:
        return len(self.items)

    ndim = 1
    dtype = np.dtype(object)

    def tolist(self) -> list:
        return list(self.items)

    def copy(self) -> "SymArray":
        return SymArray(self.items)

    def astype(self, dtype: Any, copy: bool = True) -> "SymArray":
        return dispatch.astype(self, dtype)

    # -- reductions and friends, as numpy's functions -------------------------------
    def argmax(self, axis: None = None) -> Any:
        return np.argmax(self, axis=axis)

    def argmin(self, axis: None = None) -> Any:
        return np.argmin(self, axis=axis)

    def max(self, axis: None = None) -> Any:
        return np.max(self, axis=axis)

    def min(self, axis: None = None) -> Any:
        return np.min(self, axis=axis)

    def sum(self, axis: None = None) -> Any:
        return np.sum(self, axis=axis)

    def cumsum(self, axis: None = None) -> Any:
        return np.cumsum(self, axis=axis)

    def clip(self, a_min: Any = None, a_max: Any = None) -> Any:
        return np.clip(self, a_min, a_max)

    def any(self) -> Any:
        return np.any(self)

    def all(self) -> Any:
        return np.all(self)


def _index(key: Any) -> int:
    if isinstance(key, Sym):
        raise untraceable("an array is indexed by a symbolic value; indices must not depend on noise or queries",
                          "indexing")
    if isinstance(key, (int, np.integer)) and not isinstance(key, bool):
        return int(key)
    raise untraceable(f"index {key!r} is not supported (only integers and slices)", "indexing")


def wrap(v: Any) -> Any:
    """A language value as plain code sees it: Sym -> Noisy, BOTTOM kept, numbers kept."""
    if isinstance(v, Sym) and not isinstance(v, Noisy):
        return Noisy(v.id)
    return v


__all__ = ["BOTTOM", "Noisy", "SymArray", "wrap"]

from samplers.plain import dispatch  # noqa: E402  (the handlers use the classes above)
