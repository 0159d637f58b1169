"""The mechanism language: write a mechanism once, trace it to a typed IR.

>>> from samplers.lang import mechanism, ints, replace_one, flip
>>> @mechanism(domain=ints(lo=0, hi=1, size="n"), neighbours=replace_one)
... def rr(x, *, n=2, lam="1/4"):
...     return tuple(xi ^ flip(lam) for xi in x)
>>> rr.trace(n=3).arity
3
"""

from samplers.lang.domain import Domain, ints
from samplers.lang.exact import exact, fraction_str
from samplers.lang.ir import BOTTOM, Node, Program
from samplers.lang.loop import scan
from samplers.lang.mechanism import Mechanism, mechanism
from samplers.lang.neighbours import (
    AllDiffer,
    Monotone,
    Neighbours,
    OneDiffer,
    ReplaceOne,
    all_differ,
    custom,
    decreasing,
    increasing,
    one_differ,
    replace_one,
)
from samplers.lang.trace import (
    Sym,
    all_of,
    any_of,
    argmax,
    categorical,
    clamp,
    discrete_laplace,
    exponential,
    flip,
    gaussian,
    ite,
    laplace,
    maximum,
    minimum,
    two_sided_geometric,
    uniform,
)

__all__ = [
    "BOTTOM", "AllDiffer", "Domain", "Mechanism", "Monotone", "Neighbours", "Node", "OneDiffer", "Program",
    "ReplaceOne", "Sym", "all_differ", "all_of", "any_of", "argmax", "categorical", "clamp",
    "custom", "decreasing", "discrete_laplace", "exact", "exponential", "flip", "fraction_str", "gaussian",
    "increasing", "ints", "ite", "laplace", "maximum", "mechanism", "minimum", "one_differ", "replace_one",
    "scan", "two_sided_geometric", "uniform",
]
