"""Symbolic numbers and arrays that plain numpy-style code computes with.

:class:`Noisy` is a program value (a :class:`~samplers.lang.trace.Sym`: an IR node) that
behaves like a number: its operators go through numpy's ufunc protocol (so a numpy
scalar or array on either side dispatches here too), and ``bool()`` of it -- an ``if`` or
``while`` on a comparison -- forks the trace (:mod:`samplers.plain.forking`).  Turning
it into a Python ``float``/``int`` (which would lose the randomness) is refused with the
user's line, except for a 0/1 value (a comparison), which forks like ``bool()``.  It
cannot be hashed: a dict or set would look it up by identity, not by value.
:class:`NoisyBool` marks the values numpy holds as booleans (comparisons, logical
operations), on which some numpy operations differ from integer ones (``+`` is a
logical or, ``~`` a logical not).  Every other symbolic value is a float where its node
is a float one, else an integer: :func:`numeric_kind` is the type the caller receives.

:class:`SymArray` is a one-dimensional array of such values and plain numbers, with the
ndarray methods mechanism code uses (``argmax``, ``max``, ``sum``, ``cumsum``, ``clip``,
indexing, iteration).  As in numpy, a slice is a view (writes go through to the array it
was taken from) and ``np.asarray`` of an array is that array; an element assignment
numpy would convert (a float into an integer array truncates, a number into a boolean
array becomes a bool) is refused, and so is a write into the ``queries`` argument (the
caller's data) or into an array that may or may not share memory with another.  Both
classes implement ``__array_ufunc__`` and ``__array_function__``; the handlers are in
:mod:`samplers.plain.dispatch`.
"""

from __future__ import annotations

from typing import Any, Iterator

import numpy as np
from numpy.lib.mixins import NDArrayOperatorsMixin

from samplers.lang.ir import BOTTOM, FLOAT
from samplers.lang.trace import Sym
from samplers.plain.forking import current
from samplers.plain.site import untraceable


class Noisy(NDArrayOperatorsMixin, Sym):
    """A symbolic number in traced plain code (see the module docstring)."""

    __slots__ = ()

    def __hash__(self) -> int:
        raise untraceable("a symbolic value is hashed (a dict key, a set member, `in` a set or dict): Python would "
                          "look it up by identity, not by value; compare it with == in a list instead", "hash")

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

    def __str__(self) -> str:
        raise untraceable("a symbolic value is turned into text (str(), print): its value is not known while "
                          "tracing", "str()")

    def __iter__(self) -> Iterator[Any]:
        raise untraceable("a symbolic number is not iterable", "iter()")


class NoisyBool(Noisy):
    """A symbolic value numpy holds as a boolean: a comparison or a logical operation."""

    __slots__ = ()


def boolean(v: Any) -> bool:
    """True for the values numpy computes with as booleans."""
    return isinstance(v, (bool, np.bool_, NoisyBool))


def floating(v: Any) -> bool:
    """True for floating-point values (plain or symbolic)."""
    return isinstance(v, (float, np.floating)) or (isinstance(v, Sym) and v.node.kind == FLOAT)


def numeric_kind(v: Any) -> str:
    """numpy's kind of a single value: "b" (boolean), "f" (floating), "i" (integer) or "O" (anything else)."""
    if boolean(v):
        return "b"
    if floating(v):
        return "f"
    return "i" if isinstance(v, (int, np.integer, Sym)) else "O"


def promoted(kinds: Any) -> str:
    """numpy's kind of an array holding values of these kinds: bool < int < float ("O" if any is not a number)."""
    kinds = set(kinds)
    return "O" if "O" in kinds else next((k for k in "fib" if k in kinds), "O")


def as_kind(v: Any, kind: str) -> Any:
    """A number as an array of numpy's ``kind`` holds it: a bool stored among numbers is 0/1, an int among
    floats a float (``v * 1.0``, which rounds as numpy's conversion does); anything else unchanged."""
    if kind == "f" and not floating(v) and numeric_kind(v) in "bi":
        return Noisy(Sym.__mul__(v, 1.0).id) if isinstance(v, Sym) else float(v)
    if kind in "iu" and boolean(v):
        return Noisy(v.id) if isinstance(v, Sym) else int(v)
    return v


class _Buffer:
    """The elements an array and its views share, and why writing them is refused ("" when allowed)."""

    __slots__ = ("items", "unwritable")

    def __init__(self, items: list, unwritable: str) -> None:
        self.items, self.unwritable = items, unwritable


class SymArray(NDArrayOperatorsMixin):
    """A one-dimensional array of symbolic values and plain numbers (see the module docstring).

    ``dtype`` is numpy's dtype where the tracer knows it (the queries, draws, an explicit
    conversion), else None.  A view holds its base's buffer and the positions it sees.
    """

    __array_priority__ = 1000

    def __init__(self, items: Any, dtype: Any = None, *, writable: str = "") -> None:
        items = list(items)
        self.known_dtype = None if dtype is None else np.dtype(dtype)
        # one kind for all elements, as numpy's array has: np.array([q, 0.5])[0] is a float
        kind = self.known_dtype.kind if dtype is not None else promoted(numeric_kind(v) for v in items)
        items = [as_kind(v, kind) for v in items] if kind in "iuf" else items
        self._buffer = _Buffer(items, writable)  # ``writable``: why element assignment is refused
        self._where: range | None = None  # positions in the buffer (a view), or None: all of it

    @property
    def unwritable(self) -> str:
        """Why element assignment is refused ("" when it is allowed), for this array and all its views."""
        return self._buffer.unwritable

    @property
    def items(self) -> list:
        """The elements, in order (the list itself for an array that is not a view)."""
        return self._buffer.items if self._where is None else [self._buffer.items[i] for i in self._where]

    def view(self, key: slice) -> "SymArray":
        """``self[key]``: a view sharing this array's elements, as numpy's basic slicing gives."""
        out = SymArray((), self.known_dtype)
        out._buffer, out._where = self._buffer, self._positions()[key]
        return out

    def shared_with(self, other: "SymArray") -> "SymArray":
        """Mark ``other`` and this array as maybe sharing memory in numpy (writes to either, or to a
        view of either, refused)."""
        why = ("it may share memory with another array (np.asarray(a, dtype=...) returns a itself when the dtype "
               "is a's own, which the tracer cannot always tell); assign into a .copy()")
        for buffer in (self._buffer, other._buffer):
            buffer.unwritable = buffer.unwritable or why
        return other

    def _positions(self) -> range:
        return range(len(self._buffer.items)) if self._where is None else self._where

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        return dispatch.ufunc(ufunc, method, inputs, kwargs)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        return dispatch.function(func, args, kwargs)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        # reached through numpy's own np.asarray / np.asanyarray (imported with `from numpy import ...`, which
        # the tracer does not replace): an object array, whose element writes, dtype and arithmetic are not
        # those of the int64 / float64 / bool array numpy would make
        raise untraceable("symbolic values are made into a numpy array by a function the tracer does not replace "
                          "(`from numpy import asarray`, np.asanyarray, ...); write np.asarray(...) or "
                          "np.array(...)", "np.asarray")

    def __repr__(self) -> str:
        return f"SymArray({self.items!r})"

    # -- container protocol ----------------------------------------------------------
    def __len__(self) -> int:
        return len(self._buffer.items) if self._where is None else len(self._where)

    def __iter__(self) -> Iterator[Any]:
        return iter(self.items)

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, slice):
            return self.view(key)
        return self._buffer.items[self._position(key)]

    def __setitem__(self, key: Any, value: Any) -> None:
        if self.unwritable:
            raise untraceable(f"an element of this array is assigned, but {self.unwritable}", "item assignment")
        if isinstance(key, slice):
            where = self._positions()[key]
            vals = list(value) if isinstance(value, (SymArray, list, tuple, np.ndarray)) else [value] * len(where)
            if len(vals) != len(where):
                raise untraceable(f"cannot assign {len(vals)} values to a slice of {len(where)}", "slice assignment")
            new = [self._stored(self._buffer.items[i], v) for i, v in zip(where, vals)]
            for i, v in zip(where, new):
                self._buffer.items[i] = v
        else:
            i = self._position(key)
            self._buffer.items[i] = self._stored(self._buffer.items[i], value)

    def _position(self, key: Any) -> int:
        return self._positions()[_index(key)]

    def _stored(self, old: Any, new: Any) -> Any:
        """``new`` as numpy stores it in place of ``old``; refused where numpy would change its value."""
        new = dispatch.scalar(new)
        if numeric_kind(new) == "O" or new is None:
            raise untraceable(f"a {type(new).__name__} is assigned to an array element", "item assignment")
        kind = self.known_dtype.kind if self.known_dtype is not None else numeric_kind(dispatch.scalar(old))
        if kind == "b" and not boolean(new):
            raise untraceable("a number is assigned into a boolean array: numpy would store bool(value); "
                              "compare it (value != 0) or build a number array", "item assignment")
        if kind in "iu" and floating(new):
            raise untraceable("a floating-point value is assigned into an integer array: numpy would truncate it; "
                              "make the array float first (np.asarray(queries, dtype=np.float64))", "item assignment")
        if kind not in "biuf":
            raise untraceable("an element is assigned into an array whose numpy dtype the tracer cannot tell",
                              "item assignment")
        return as_kind(new, kind)  # a bool stored in a number array is 0 or 1, an int in a float array a float

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

    @property
    def dtype(self) -> np.dtype:
        """numpy's dtype of the array, where the tracer knows it (code that reads it would otherwise branch
        on a made-up one)."""
        if self.known_dtype is None:
            raise untraceable("the dtype of an array of symbolic values is read, but the tracer cannot tell it "
                              "(it knows the queries', the draws' and an explicit conversion's)", "dtype")
        return self.known_dtype

    def tolist(self) -> list:
        return list(self.items)

    def copy(self) -> "SymArray":
        return SymArray(self.items, self.known_dtype)

    def astype(self, dtype: Any, copy: bool = True) -> "SymArray":
        if not copy and self.known_dtype is not None and self.known_dtype == np.dtype(dtype):
            return self
        if not copy:
            raise untraceable("astype(..., copy=False) of an array whose numpy dtype the tracer cannot tell "
                              "(numpy may return the array itself)", "astype")
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


def wrap(v: Any, as_boolean: bool = False) -> Any:
    """A language value as plain code sees it: Sym -> Noisy (NoisyBool if ``as_boolean``), the rest kept."""
    if isinstance(v, Sym) and (as_boolean or not isinstance(v, Noisy)):
        return NoisyBool(v.id) if as_boolean else Noisy(v.id)
    return v


__all__ = ["BOTTOM", "Noisy", "NoisyBool", "SymArray", "as_kind", "boolean", "floating", "numeric_kind", "promoted",
           "wrap"]

from samplers.plain import dispatch  # noqa: E402  (the handlers use the classes above)
