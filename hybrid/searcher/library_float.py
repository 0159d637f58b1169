"""``search --float`` on a library mechanism: its float-level verdict, the only certified one it can have.

A library mechanism is a black box to the real-number backends (``estimate`` and ``test`` give
statistical bounds on it); what can be certified is its float64 computation, where a model of it
exists (:data:`MODELS`): the result carries no real-number bound and says why, beside the float-level
audit.  Any other library mechanism, or one without ``--float``, is refused with the reason.
"""

from __future__ import annotations

import time
from typing import Callable

from hybrid.searcher.state import SearchResult
from samplers.errors import ParameterError
from samplers.libraries import LibraryBox
from verifiers.float64.verdict import FloatAudit


def _diffprivlib_laplace(box: LibraryBox) -> FloatAudit:
    from verifiers.float64.diffprivlib_laplace import audit

    dom = box.domain
    return audit(float(box.params["epsilon"]), ((x, xp) for x in dom.points() for xp in box.neighbours.of(x, dom)))


MODELS: dict[str, Callable[[LibraryBox], FloatAudit]] = {"diffprivlib:laplace": _diffprivlib_laplace}


def library_search(box: LibraryBox, *, float_semantics: bool, precision: float, seed: int) -> SearchResult:
    """The float-level audit of ``box`` as a search result (see the module docstring)."""
    if not float_semantics:
        raise ParameterError(f"{box.name} is a library black box: no exact backend reads it (estimate or test give a "
                             f"statistical bound); search --float audits the float64 sampler of "
                             f"{', '.join(MODELS)}")
    if box.name not in MODELS:
        raise ParameterError(f"{box.name}: no float-level model (modelled: {', '.join(MODELS)}); estimate or test "
                             "give a statistical bound")
    t0 = time.perf_counter()
    audit = MODELS[box.name](box)
    spent = time.perf_counter() - t0
    return SearchResult(mechanism=box.name, params=dict(box.params), certified=False, eps_lower=0.0, ratio=None,
                        witness=None, backend=None, precision=precision, seed=seed,
                        note="no real-number bound: a library black box (estimate or test give a statistical one)",
                        timings={"float": spent, "total": spent}, float_audit=audit)
