"""The draws of one layer that give an output double: an interval of ``k``, found by bisection.

The output of draw ``k`` is ``g(v)`` for the layer's noise value ``v``, with ``g`` a monotone float64
map; the model lets draw ``k`` give any value in ``bounds(k) = [lo(k), hi(k)]``, whose ends are
monotone in ``k`` in the same direction.  So the draws that *may* give ``o`` (``lo(k) <= o <= hi(k)``)
form an interval, and so do the draws that *surely* give it (``lo(k) = hi(k) = o``): each is cut
out by two monotone predicates.  An empty interval comes with its proof: the two adjacent draws
whose possible outputs lie strictly on either side of ``o`` (or the layer's end draw).
"""

from __future__ import annotations

from typing import Callable

from verifiers.float64.chains import OutputMap
from verifiers.float64.numpy_draws import Layer


def _first(lo: int, hi: int, pred: Callable[[int], bool]) -> int:
    """The smallest ``k`` in ``[lo, hi)`` with ``pred(k)`` (pred false then true), else ``hi``."""
    while lo < hi:
        mid = (lo + hi) // 2
        if pred(mid):
            hi = mid
        else:
            lo = mid + 1
    return lo


def output_bounds(layer: Layer, m: OutputMap, k: int) -> tuple[float, float]:
    """The smallest and largest output the model allows for draw ``k``."""
    a, b = layer.bounds(k)
    return (m.g(a), m.g(b)) if m.increasing else (m.g(b), m.g(a))


def _cut(layer: Layer, m: OutputMap, o: float, end: int, sure: bool) -> range:
    def lo_(k: int) -> float:
        return output_bounds(layer, m, k)[0]

    def hi_(k: int) -> float:
        return output_bounds(layer, m, k)[1]

    a = layer.lo
    up = layer.increasing == m.increasing  # output ends non-decreasing in k
    if up and sure:
        start, stop = _first(a, end, lambda k: lo_(k) >= o), _first(a, end, lambda k: hi_(k) > o)
    elif up:
        start, stop = _first(a, end, lambda k: hi_(k) >= o), _first(a, end, lambda k: lo_(k) > o)
    elif sure:
        start, stop = _first(a, end, lambda k: hi_(k) <= o), _first(a, end, lambda k: lo_(k) < o)
    else:
        start, stop = _first(a, end, lambda k: lo_(k) <= o), _first(a, end, lambda k: hi_(k) < o)
    return range(start, max(start, stop))


def possible(layer: Layer, m: OutputMap, o: float) -> range:
    """The draws of the layer that may give ``o`` (a non-zero finite double)."""
    return _cut(layer, m, o, layer.hi, sure=False)


def sure(layer: Layer, m: OutputMap, o: float) -> range:
    """The draws of the layer that give ``o`` on their first try, whatever ``log`` the model allows."""
    return _cut(layer, m, o, layer.sure_hi, sure=True)


def gap_proof(layer: Layer, m: OutputMap, o: float, empty: range) -> dict:
    """Why no draw of the layer gives ``o``: the adjacent draws around it and their possible outputs."""
    around = [k for k in (empty.start - 1, empty.start) if layer.lo <= k < layer.hi]
    return {"layer": layer.name, "draws": [layer.lo, layer.hi],
            "around": [{"k": k, "outputs": [v.hex() for v in output_bounds(layer, m, k)]} for k in around]}
