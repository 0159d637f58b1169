"""JSON forms of the values dphybrid reports: outputs, parameters, ratios.

Exact values stay exact: rationals are ``"p/q"`` strings, ratios ``"p/q"`` or
``"inf"``; the halted output BOTTOM is the string ``"bottom"``.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Mapping

from samplers.errors import DPHybridError
from samplers.lang.exact import fraction_str
from samplers.lang.ir import BOTTOM, BOTTOM_CODE


def output_to_json(o: Any) -> Any:
    """An output (int, float, BOTTOM or a tuple of them) as JSON."""
    if isinstance(o, (tuple, list)):
        return [output_to_json(v) for v in o]
    if isinstance(o, float):
        return "bottom" if math.isnan(o) else o
    if o == BOTTOM_CODE:
        return "bottom"
    return int(o)


def output_from_json(v: Any) -> Any:
    """Inverse of :func:`output_to_json` for discrete outputs."""
    if isinstance(v, list):
        return tuple(output_from_json(e) for e in v)
    if v == "bottom":
        return BOTTOM
    if isinstance(v, bool) or not isinstance(v, int):
        raise DPHybridError(f"an output must be an integer, 'bottom' or a list of them, got {v!r}")
    return v


def value_to_json(v: Any) -> Any:
    """A parameter or statistic: Fractions as ``"p/q"``, infinities as ``"inf"``."""
    if isinstance(v, Fraction):
        return fraction_str(v)
    if isinstance(v, float) and math.isinf(v):
        return "inf" if v > 0 else "-inf"
    if isinstance(v, (tuple, list)):
        return [value_to_json(e) for e in v]
    if isinstance(v, dict):
        return {k: value_to_json(e) for k, e in v.items()}
    return v


def params_to_json(params: Mapping[str, Any]) -> dict[str, Any]:
    return {k: value_to_json(v) for k, v in params.items()}


def output_str(o: Any) -> str:
    """A compact human-readable output: ``3``, ``(0, 1, ⊥)``."""
    if isinstance(o, (tuple, list)):
        return "(" + ", ".join(output_str(v) for v in o) + ")"
    if isinstance(o, float):
        return "⊥" if math.isnan(o) else f"{o:g}"
    return "⊥" if o == BOTTOM_CODE else str(int(o))


def witness_to_json(mechanism: str, params: Mapping[str, Any], x: Any, x_prime: Any, event: Any) -> dict[str, Any]:
    """``{mechanism, params, x, x_prime, event}``; the event is a list of outputs."""
    return {
        "mechanism": mechanism, "params": params_to_json(params), "x": list(x),
        "x_prime": list(x_prime), "event": [output_to_json(o) for o in event],
    }


def ratio_display(text: Any, digits: int = 12) -> str:
    """A ratio string for people: exact when short, else its value (or ``e^x`` beyond floats)."""
    if not isinstance(text, str) or text == "inf" or len(text) <= 24:
        return str(text)
    from verifiers.ratio import log_ratio, parse_ratio

    r = parse_ratio(text)
    try:
        return f"{float(r):.{digits}g}"
    except OverflowError:
        return f"e^{log_ratio(r):.{digits}g}"
