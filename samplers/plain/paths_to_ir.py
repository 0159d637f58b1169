"""The explored paths of a plain function as the outputs of one IR program.

The paths form a tree: the runs agree on their first k decisions until one forks on a
condition node, so at each fork the output is ``ite(cond, <true subtree>, <false
subtree>)`` -- the same lazily branching form the catalogue's hand-written mechanisms
have.  Each path's return value is read as code returns it: a number or bool (one
output, bools as 0/1), a list / tuple / 1-D array (one output per element; paths that
return fewer elements, e.g. a sparse vector that stopped early, are padded with BOTTOM),
None (BOTTOM: nothing released).  Padding must not merge outputs that Python tells apart:
a path returning ``[1]`` and one returning ``[1, None]`` would both be ``(1, ⊥)``, and a
privacy proof about the merged output says nothing about the function's (which reveals
the path).  Such results are refused, as are a number on one path and a list on another,
and a list on one path and a tuple (or an array) on another: the type tells them apart.
So does the type of a number: an output (or element) that is a bool on one path and an
int or a float on another (``True`` / ``1`` / ``1.0``) is refused, and so is ``-0.0`` on
one path where another may return ``0.0`` (equal numbers, yet ``repr`` and
``math.copysign`` tell them apart): the outputs of the traced program are numbers
compared by value.  NaN, which equals nothing (itself included), is refused as an output,
and so is an infinite constant (the exact backends read outputs as rationals).
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from samplers.errors import UntraceableError
from samplers.lang import trace as lang
from samplers.lang.float64 import is_negative_zero
from samplers.lang.ir import BOTTOM
from samplers.lang.trace import Sym
from samplers.plain.dispatch import scalar
from samplers.plain.forking import Path
from samplers.plain.symbolic import SymArray, floating, numeric_kind

_SEQUENCES = (list, tuple, SymArray, np.ndarray)
_TYPES = {"b": "a bool", "i": "an int", "f": "a float"}  # numpy's kinds of the numbers a function may return


def _component(v: Any, name: str) -> Any:
    v = scalar(v)
    if v is None:
        return BOTTOM
    if isinstance(v, float) and math.isnan(v):
        raise UntraceableError(f"{name} returns NaN: outputs are compared by value and NaN equals nothing, itself "
                               "included; return None (nothing released) or a number instead", operation="return")
    if isinstance(v, float) and math.isinf(v):
        raise UntraceableError(f"{name} returns {v}: the engine's outputs are finite numbers; return None (nothing "
                               "released) or a finite number instead", operation="return")
    if isinstance(v, Sym) or isinstance(v, (int, float)):  # bool is an int: True -> 1 (one type per output)
        return int(v) if isinstance(v, bool) else v
    raise UntraceableError(f"{name} returns a {type(v).__name__}; outputs are numbers, bools, None, "
                           "or a flat list / tuple / array of them", operation="return")


def check_result(result: Any, name: str) -> None:
    """Raise UntraceableError (without a site yet) if ``result`` is not an output code may return."""
    flat = _flat(result, name)
    if flat is None:
        _component(result, name)


class Frozen(tuple):
    """A sequence result as a tuple, with the type of container the function returned."""

    container: str


def freeze(result: Any) -> Any:
    """A checked result as it is now: a run's list may be changed later (a buffer kept between
    calls, a mutable default argument), and each path must keep what its run returned."""
    if isinstance(result, np.ndarray) and result.ndim == 0:
        return result[()]
    if not isinstance(result, _SEQUENCES):
        return result
    out = Frozen(result)
    out.container = "array" if isinstance(result, (np.ndarray, SymArray)) else type(result).__name__
    return out


def _flat(result: Any, name: str) -> list | None:
    """The components of a sequence result, or None for a scalar."""
    if isinstance(result, np.ndarray) and result.ndim == 0:
        return None
    if isinstance(result, _SEQUENCES):
        return [_component(v, name) for v in result]
    return None


def signature(result: Any) -> Any:
    """What a run returned, comparable between runs: symbolic values by node, the rest by value."""
    if isinstance(result, _SEQUENCES) and not (isinstance(result, np.ndarray) and result.ndim == 0):
        return tuple(signature(v) for v in result)
    v = scalar(result)
    return ("node", v.id) if isinstance(v, Sym) else (type(v).__name__, repr(v))  # repr: -0.0 is not 0.0


def merge(paths: Sequence[Path], name: str) -> tuple[list[Any], bool]:
    """The output values (Syms or constants) of the whole tree, and whether the output is a tuple."""
    flats = [_flat(p.result, name) for p in paths]
    tuple_output = any(f is not None for f in flats)
    if tuple_output:
        _distinct_when_padded(paths, flats, name)
        rows = [f if f is not None else ([] if p.result is None else [_component(p.result, name)])
                for f, p in zip(flats, paths)]
        width = max(len(r) for r in rows)
        if width == 0:
            raise UntraceableError(f"{name} returns only empty sequences", operation="return")
        rows = [r + [BOTTOM] * (width - len(r)) for r in rows]
    else:
        rows = [[_component(p.result, name)] for p in paths]
        width = 1
    _same_types(paths, name, tuple_output)
    return [_tree(paths, rows, 0, j) for j in range(width)], tuple_output


def _distinct_when_padded(paths: Sequence[Path], flats: Sequence[list | None], name: str) -> None:
    """Refuse results that padding with BOTTOM would merge (see the module docstring)."""
    containers = sorted({p.result.container for p in paths if isinstance(p.result, Frozen)})
    if len(containers) > 1:
        raise UntraceableError(f"{name} returns a {containers[0]} on some paths and a {containers[1]} on others: "
                               "the type tells the paths apart; return one type on every path", operation="return")
    nones = [p for p, f in zip(paths, flats) if f is None]
    if any(scalar(p.result) is not None for p in nones):
        raise UntraceableError(f"{name} returns a number on some paths and a list on others; return the same "
                               "shape on every path", operation="return")
    seqs = [f for f in flats if f is not None]
    padded = bool(nones) or len({len(f) for f in seqs}) > 1
    if padded and any(v is BOTTOM for f in seqs for v in f):
        raise UntraceableError(f"{name} returns a list holding None on some path and a list of another length "
                               "(or None) on another: padded with ⊥ to one length, they could not be told apart",
                               operation="return")
    if nones and any(not f for f in seqs):
        raise UntraceableError(f"{name} returns None on some path and an empty list on another: both would be "
                               "all ⊥", operation="return")


def _same_types(paths: Sequence[Path], name: str, tuple_output: bool) -> None:
    """Refuse an output (or element) whose type or sign of zero tells paths apart (see the module docstring)."""
    columns: dict[int, list] = {}
    for p in paths:
        for j, v in enumerate(p.result if isinstance(p.result, Frozen) else [p.result]):
            if scalar(v) is not None:
                columns.setdefault(j, []).append(scalar(v))
    for j, vals in columns.items():
        what = f"{name} returns" + (f", as element {j} of its result," if tuple_output else "")
        types = sorted({_TYPES[numeric_kind(v)] for v in vals})
        if len(types) > 1:
            raise UntraceableError(f"{what} {types[0]} on some paths and {types[1]} on others: the caller can tell "
                                   "them apart by type; return one type on every path (e.g. float(...))",
                                   operation="return")
        if any(is_negative_zero(v) for v in vals) and any(_may_be_zero(v) and not is_negative_zero(v) for v in vals):
            raise UntraceableError(f"{what} -0.0 on some paths and 0.0 (or a value that may be 0.0) on others: "
                                   "the caller can tell them apart (repr, math.copysign); return 0.0 on every "
                                   "path", operation="return")


def _may_be_zero(v: Any) -> bool:
    """True for a float that is 0.0 or -0.0, or a symbolic float whose range holds 0."""
    if isinstance(v, Sym):
        return floating(v) and v.node.lo <= 0 <= v.node.hi
    return isinstance(v, float) and v == 0


def _tree(paths: Sequence[Path], rows: Sequence[list], depth: int, j: int) -> Any:
    """Component ``j`` over the paths that share their first ``depth`` decisions."""
    if len(paths) == 1:
        return rows[0][j]
    cond = paths[0].decisions[depth][0]
    split = next(k for k, p in enumerate(paths) if not p.decisions[depth][1])  # depth-first: True runs come first
    yes = _tree(paths[:split], rows[:split], depth + 1, j)
    no = _tree(paths[split:], rows[split:], depth + 1, j)
    return lang.ite(Sym(cond), yes, no)
