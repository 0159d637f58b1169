"""Plain Python mechanisms, as StatDP writes them, traced into the mechanism language's IR.

>>> import numpy as np
>>> from samplers.plain import statdp
>>> def noisy_max(prng, queries, epsilon):
...     return (np.asarray(queries) + prng.laplace(scale=2 / epsilon, size=len(queries))).argmax()
>>> statdp(noisy_max, size=3).trace(epsilon=0.5).arity
1

A recording generator stands in for ``prng`` (:mod:`~samplers.plain.generator`),
symbolic numbers and arrays follow numpy's protocols (:mod:`~samplers.plain.symbolic`,
:mod:`~samplers.plain.dispatch`), a branch on a symbolic condition forks the run
(:mod:`~samplers.plain.forking`), and the explored paths become one program
(:mod:`~samplers.plain.paths_to_ir`).  What cannot be traced raises
:class:`~samplers.errors.UntraceableError` naming the user's file and line.
"""

from __future__ import annotations

from typing import Any

from samplers.errors import TooManyPaths, UntraceableError
from samplers.plain.forking import MAX_PATHS
from samplers.plain.function import NEIGHBOURS, PlainMechanism, neighbours_named, statdp
from samplers.plain.load import is_function_spec, load_function


def resolve(name: str, **settings: Any) -> Any:
    """A catalogue mechanism by name, or ``file.py:alg`` / ``module:alg`` as a :class:`PlainMechanism`.

    ``settings`` (``size``, ``domain``, ``neighbours``) apply to functions only; None keeps the default.
    """
    from samplers import catalogue

    if not is_function_spec(name):
        return catalogue.get(name)
    given = {k: v for k, v in settings.items() if v is not None}
    return statdp(load_function(name), name=name.rpartition(":")[2], **given)


__all__ = ["MAX_PATHS", "NEIGHBOURS", "PlainMechanism", "TooManyPaths", "UntraceableError", "is_function_spec",
           "load_function", "neighbours_named", "resolve", "statdp"]
