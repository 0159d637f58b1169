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
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from samplers.errors import UntraceableError
from samplers.lang import trace as lang
from samplers.lang.ir import BOTTOM
from samplers.lang.trace import Sym
from samplers.plain.dispatch import scalar
from samplers.plain.forking import Path
from samplers.plain.symbolic import SymArray

_SEQUENCES = (list, tuple, SymArray, np.ndarray)


def _component(v: Any, name: str) -> Any:
    v = scalar(v)
    if v is None:
        return BOTTOM
    if isinstance(v, Sym) or isinstance(v, (int, float)):  # bool is an int: True -> 1
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
    return ("node", v.id) if isinstance(v, Sym) else (type(v).__name__, v)


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


def _tree(paths: Sequence[Path], rows: Sequence[list], depth: int, j: int) -> Any:
    """Component ``j`` over the paths that share their first ``depth`` decisions."""
    if len(paths) == 1:
        return rows[0][j]
    cond = paths[0].decisions[depth][0]
    split = next(k for k, p in enumerate(paths) if not p.decisions[depth][1])  # depth-first: True runs come first
    yes = _tree(paths[:split], rows[:split], depth + 1, j)
    no = _tree(paths[split:], rows[split:], depth + 1, j)
    return lang.ite(Sym(cond), yes, no)
