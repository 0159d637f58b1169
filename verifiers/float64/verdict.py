"""The float-level verdict of a search: a certified lower bound on eps for what numpy computes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

INF = float("inf")
NUMPY = "numpy's samplers"


@dataclass
class FloatAudit:
    """``eps_lower`` (None: no bound), whether it is ``certified``, its ``witness`` and, when there is
    no certified bound, the ``reason``; ``model``: whose float64 sampler was audited."""

    eps_lower: float | None
    certified: bool
    witness: dict[str, Any] | None
    reason: str | None = None
    model: str = NUMPY

    def to_json(self) -> dict[str, Any]:
        low = "inf" if self.eps_lower == INF else self.eps_lower
        return {"float_eps_lower": low, "float_certified": self.certified, "float_witness": self.witness,
                "float_note": self.reason, "float_model": self.model}


def not_modelled(reason: str, model: str = NUMPY) -> FloatAudit:
    return FloatAudit(None, False, None, reason, model)
