"""JSON forms of the values dphybrid reports: outputs, parameters, ratios, epsilons.

Exact values stay exact: rationals are ``"p/q"`` strings, ratios ``"p/q"`` or
``"inf"``; the halted output BOTTOM is the string ``"bottom"``.  JSON has no NaN or
infinity, so :func:`json_safe` writes infinities as ``"inf"`` / ``"-inf"`` and NaN
(a statistic that does not exist) as ``null``.
"""

from __future__ import annotations

import math
from decimal import MAX_EMAX, MIN_EMIN, ROUND_CEILING, ROUND_FLOOR, ROUND_HALF_EVEN, Context, Decimal, localcontext
from fractions import Fraction
from typing import Any, Mapping

from samplers.errors import DPHybridError, ParameterError
from samplers.lang.exact import exact, fraction_str
from samplers.numerals import short_text
from samplers.lang.ir import BOTTOM, BOTTOM_CODE, INT64_MAX


def _is_bottom(o: Any) -> bool:
    """BOTTOM itself, NaN (bottom in float sampler arrays), the int64 array code or its JSON form."""
    if isinstance(o, float):
        return math.isnan(o)
    if isinstance(o, str):
        return o == "bottom"
    return o is BOTTOM or (not isinstance(o, bool) and o == BOTTOM_CODE)


def output_to_json(o: Any) -> Any:
    """An output (int, float, BOTTOM or a tuple of them; also raw sampler values) as JSON."""
    if isinstance(o, (tuple, list)):
        return [output_to_json(v) for v in o]
    if _is_bottom(o):
        return "bottom"
    return o if isinstance(o, float) else int(o)


def output_from_json(v: Any) -> Any:
    """Inverse of :func:`output_to_json` for discrete outputs: only ``"bottom"`` is BOTTOM."""
    if isinstance(v, list):
        return tuple(output_from_json(e) for e in v)
    if v == "bottom":
        return BOTTOM
    if isinstance(v, bool) or not isinstance(v, int):
        raise DPHybridError(f"an output must be an integer, 'bottom' or a list of them, got {short_text(repr(v))}")
    if not BOTTOM_CODE < v <= INT64_MAX:
        raise DPHybridError(f"output value {short_text(str(v))} is outside the range of program values "
                            f"({BOTTOM_CODE + 1}..{INT64_MAX}); a halted output is written \"bottom\"")
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
    """A compact human-readable output, exact: ``3``, ``(0, 1, ⊥)``, ``0.25`` (JSON forms too)."""
    if isinstance(o, (tuple, list)):
        return "(" + ", ".join(output_str(v) for v in o) + ")"
    if _is_bottom(o):
        return "⊥"
    return number_str(o) if isinstance(o, float) else str(int(o))


def _directed(v: Any, digits: int, rounding: str) -> str:
    if v is None:
        return ""
    if isinstance(v, str):
        return v
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    d = Decimal(v)  # exact; the context holds every digit kept (the default 28 fail from 1e22 on)
    ctx = Context(prec=max(1, d.adjusted()) + digits + 2, Emax=MAX_EMAX, Emin=MIN_EMIN)
    return str(d.quantize(Decimal(1).scaleb(-digits), rounding=rounding, context=ctx))


def lower_str(v: Any, digits: int = 6) -> str:
    """A lower bound for people to read: rounded down, so the printed bound stays sound."""
    return _directed(v, digits, ROUND_FLOOR)


NEAR_DECIMAL = Fraction(1, 10**9)  # relative distance above a short decimal shown in full


def upper_str(v: Any, digits: int = 6) -> str:
    """An upper bound for people to read: rounded up."""
    return _directed(v, digits, ROUND_CEILING)


def proved_upper_str(upper: Any, exact_eps: Any = None, digits: int = 6) -> str:
    """A proved upper bound for people: a proof's exact rational eps when its decimal ends
    within ``digits`` places (``7/40`` as ``0.175``); the float rounded up in full when the
    exact eps lies just above such a decimal (a float parameter's binary value: 1.75 times
    the double nearest 0.1 shows as ``0.17500000000000002``, not as ``0.175001``, and never as
    ``0.175``, which would be below it); else the float rounded up to ``digits`` places."""
    if isinstance(exact_eps, str) and "/" in exact_eps or isinstance(exact_eps, Fraction):
        q = Fraction(exact_eps)
        scaled = q * 10**digits
        if scaled.denominator == 1:
            return format(Decimal(scaled.numerator).scaleb(-digits).normalize(), "f")
        below = Fraction(math.floor(scaled), 10**digits)
        if below > 0 and q - below <= below * NEAR_DECIMAL and isinstance(upper, float) and upper >= q:
            return repr(upper)
    return upper_str(upper, digits)


def result_upper_str(r: dict[str, Any], digits: int = 6) -> str:
    """A result's ``eps_upper`` for people (:func:`proved_upper_str`), with the proof's exact eps
    only when the upper end is the proof's (a global verification's may be smaller)."""
    from_proof = str(r.get("upper_source") or "").startswith("proof")
    return proved_upper_str(r["eps_upper"], (r.get("proof") or {}).get("eps") if from_proof else None, digits)


def delta_text(delta: Any) -> str:
    """``, delta <= ...`` (rounded up) for an (eps, delta) proof, nothing for pure DP (delta 0).

    ``delta`` is a proof JSON's: a float, or ``"p/q"`` / ``"0"`` for an exact one."""
    value = Fraction(delta) if isinstance(delta, str) else delta
    return f", delta <= {delta_str(value, up=True)}" if value else ""


def delta_str(delta: Any, *, up: bool, digits: int = 6) -> str:
    """A delta for people: ``digits`` significant digits (deltas are tiny), rounded up for an upper
    bound and down for a lower one; ``delta`` a float, a Fraction or ``"p/q"``."""
    value = Fraction(delta) if isinstance(delta, str) else delta
    ctx = Context(prec=digits, rounding=ROUND_CEILING if up else ROUND_FLOOR)
    return str(ctx.divide(Decimal(value.numerator), Decimal(value.denominator)) if isinstance(value, Fraction)
               else ctx.plus(Decimal(value)))


def witness_to_json(mechanism: str, params: Mapping[str, Any], x: Any, x_prime: Any, event: Any) -> dict[str, Any]:
    """``{mechanism, params, x, x_prime, event}``; the event is a list of outputs."""
    return {
        "mechanism": mechanism, "params": params_to_json(params), "x": list(x),
        "x_prime": list(x_prime), "event": [output_to_json(o) for o in event],
    }


def inputs_to_json(program: Any) -> dict[str, Any]:
    """``{"inputs": {size, domain, neighbours}}`` for a traced plain function, else ``{}``: a witness
    carries the inputs its function was traced with (a catalogue mechanism declares its own)."""
    inputs = getattr(program, "_meta", {}).get("inputs")
    return {"inputs": dict(inputs)} if inputs else {}


INPUT_KEYS = ("size", "domain", "neighbours")


def mechanism_from_json(name: Any, inputs: Any = None, *, error: type[DPHybridError]) -> Any:
    """The mechanism a file names (inverse of :func:`inputs_to_json`): a catalogue name, or a plain
    function's ``file.py:alg`` / ``module:alg`` rebuilt with the ``inputs`` it was traced with.

    A bad name or input setting is ``error``; a function that cannot be loaded (its file gone, no
    such function in it) is :class:`~samplers.errors.UnknownMechanism`."""
    from samplers.plain import is_function_spec
    from samplers.plain import resolve as resolve_mechanism

    if not isinstance(name, str):
        raise error(f"the mechanism must be a name, got {short_text(repr(name))}")
    if inputs is None:
        return resolve_mechanism(name)  # a catalogue name, or a plain function's module:alg / file.py:alg
    if not is_function_spec(name):
        raise error(f"inputs apply to a file.py:alg or module:alg function; {name} declares its own")
    if not isinstance(inputs, dict) or set(inputs) - set(INPUT_KEYS):
        raise error(f"inputs must be an object with keys among {', '.join(INPUT_KEYS)}, "
                    f"got {short_text(repr(inputs))}")
    settings = dict(inputs)
    if "domain" in settings:
        dom = settings["domain"]
        if not (isinstance(dom, list) and len(dom) == 2):
            raise error(f"inputs: domain must be [lo, hi], got {short_text(repr(dom))}")
        settings["domain"] = tuple(dom)
    try:
        return resolve_mechanism(name, **settings)
    except ParameterError as e:
        raise error(f"inputs: {e}") from None


def json_safe(v: Any) -> Any:
    """``v`` with every float infinity as ``"inf"`` / ``"-inf"`` and NaN as ``None`` (valid JSON)."""
    if isinstance(v, float):
        if math.isnan(v):
            return None
        return v if math.isfinite(v) else ("inf" if v > 0 else "-inf")
    if isinstance(v, dict):
        return {k: json_safe(e) for k, e in v.items()}
    if isinstance(v, (list, tuple)):
        return [json_safe(e) for e in v]
    return v


def eps_value(v: Any, what: str = "eps") -> float | Fraction:
    """A finite non-negative epsilon from a number or text.

    A rational (``"7/10"`` or a Fraction) stays exact, as parameters do; a decimal is a
    float, taken at its exact binary value by the exact backends.
    """
    try:
        q = exact(v, what=what)  # refuses NaN, infinities, booleans, text that is no number, 1e-400
    except ParameterError as e:
        raise ParameterError(f"{what} must be a finite non-negative number ({str(e).removeprefix(what + ': ')})") from None
    if q < 0:
        raise ParameterError(f"{what} must be a finite non-negative number, got {short_text(repr(v))}")
    if isinstance(v, Fraction) or (isinstance(v, str) and "/" in v):
        return q
    return float(v)


def eps_text(v: float | Fraction) -> str:
    """An epsilon for a person: ``7/10`` for a rational, ``0.7`` for a float."""
    return fraction_str(v) if isinstance(v, Fraction) else f"{v:g}"


def delta_value(v: Any, what: str = "delta") -> float | Fraction:
    """A claimed delta in [0, 1] from a number or text (:func:`verifiers.prover.proof.check_delta`):
    a rational stays exact, a decimal is a float, as :func:`eps_value` reads an eps."""
    from verifiers.prover.proof import check_delta

    q = check_delta(v, what)
    return q if isinstance(v, Fraction) or (isinstance(v, str) and "/" in v) else float(v)


def float_at_most(v: float | Fraction) -> float:
    """The largest double not above ``v``: a claim compared with double bounds, soundly.

    A certified double bound ``b > float_at_most(c)`` implies ``b > c``, and privacy
    proved at ``float_at_most(c) <= c`` implies privacy at ``c``.
    """
    f = float(v)
    return math.nextafter(f, -math.inf) if Fraction(f) > v else f


def ratio_display(text: Any, digits: int = 12) -> str:
    """A ratio string for people: exact when short, else its value to ``digits`` significant
    digits, rounded to nearest (mark it approximate; :func:`ratio_lower_str` for a bound)."""
    return _ratio_text(text, digits, ROUND_HALF_EVEN)


def ratio_lower_str(text: Any, digits: int = 12) -> str:
    """A certified lower bound on a ratio for people: exact when short, else rounded down."""
    return _ratio_text(text, digits, ROUND_FLOOR)


def ratio_upper_str(text: Any, digits: int = 12) -> str:
    """An upper bound on a ratio for people: exact when short, else rounded up."""
    return _ratio_text(text, digits, ROUND_CEILING)


def exact_str(value: Any, limit: int = 64) -> str:
    """An exact rational (``"p/q"`` or a Fraction) for people: itself when at most ``limit``
    characters, else ``≈`` its value to 12 digits."""
    text = fraction_str(Fraction(value)) if isinstance(value, (Fraction, int)) else str(value)
    return text if len(text) <= limit else "≈" + ratio_display(text)


def enclosure_str(lo: Any, hi: Any, digits: int = 12) -> str:
    """``[lo, hi]`` for people, each end exact when short, else rounded outwards."""
    return f"[{ratio_lower_str(lo, digits)}, {ratio_upper_str(hi, digits)}]"


def _ratio_text(text: Any, digits: int, rounding: str) -> str:
    if isinstance(text, (Fraction, int)) and not isinstance(text, bool):
        text = fraction_str(Fraction(text))
    if not isinstance(text, str) or text == "inf" or len(text) <= 24:
        return str(text)
    from verifiers.ratio import parse_ratio

    r = parse_ratio(text)
    with localcontext() as ctx:  # decimal division rounds correctly in the context's direction
        ctx.prec, ctx.rounding, ctx.Emax, ctx.Emin = digits, rounding, MAX_EMAX, MIN_EMIN
        text = str(Decimal(r.numerator) / Decimal(r.denominator))
    mantissa, e, exponent = text.partition("E")
    if "." in mantissa:  # 3.70370370370E+58 as 3.7037037037e+58: rounding zeros say nothing
        mantissa = mantissa.rstrip("0").rstrip(".")
    return mantissa + ("e" + exponent if e else "")


def number_str(v: Any) -> str:
    """A float for people, exactly: the shortest text that reads back as the same double
    (``2``, ``0.5``, ``-inf``), whatever its type (numpy scalars included)."""
    if isinstance(v, str):
        return v
    f = float(v)
    if math.isinf(f):
        return "inf" if f > 0 else "-inf"
    text = repr(f)
    return text[:-2] if text.endswith(".0") else text
