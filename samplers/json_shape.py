"""The shape of a JSON document a user hands us, declared as data and checked in one pass.

A file we read back (a proof file) is a contract: :func:`check` refuses a key the shape
does not define, a missing key, a value of the wrong JSON type and a number that is not
exact and finite, with a one-line message naming where it is (``evidence.paths[0].cost``),
so the code that reads the document afterwards meets no surprise.  A shape is

* ``str``, ``int``, ``bool``: a value of that JSON type (an ``int`` is never a bool);
* :data:`RATIONAL`: an exact finite number as :func:`samplers.lang.exact.exact` reads it
  (``"p/q"``, an integer, a decimal whose double is finite): never NaN, ``"inf"``, ``1/0``
  or ``1e400``;
* :data:`NAT`: a non-negative JSON integer; :data:`OBJECT`: any object; :data:`ANY`: any value;
* a dict ``{key: shape}``: an object with exactly these keys (``"key?"``: optional);
* a one-element list ``[shape]``: a list of values of that shape;
* :class:`Map` ``(shape)``: an object keyed by non-negative integers written as text (node
  ids, input coordinates), each value of that shape;
* :class:`Nullable` ``(shape)``: ``null`` or that shape;
* a function ``f(value, where)``: a check of its own, raising the caller's error.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from samplers.errors import DPHybridError, ParameterError
from samplers.lang.exact import exact
from samplers.numerals import is_integer
from samplers.readers import short_repr

RATIONAL = "rational"
NAT = "natural"
OBJECT = "object"
ANY = "any"
_TYPES = {str: "a string", int: "an integer", bool: "true or false"}


@dataclass(frozen=True)
class Map:
    """An object keyed by non-negative integers written as text, each value of ``value``'s shape."""

    value: Any


@dataclass(frozen=True)
class Nullable:
    """``null`` or a value of ``shape``."""

    shape: Any


def check(shape: Any, v: Any, where: str, *, error: type[DPHybridError]) -> None:
    """Raise ``error`` naming ``where`` unless ``v`` has ``shape`` (see the module docstring)."""
    if shape is ANY:
        return
    if isinstance(shape, Nullable):
        if v is not None:
            check(shape.shape, v, where, error=error)
    elif shape is RATIONAL:
        try:
            exact(v, what=where)
        except ParameterError as e:
            raise error(str(e)) from None
    elif shape is NAT or isinstance(shape, type):
        kind = int if shape is NAT else shape  # str, int or bool
        if isinstance(v, bool) != (kind is bool) or not isinstance(v, kind) or (shape is NAT and v < 0):
            what = "a non-negative integer" if shape is NAT else _TYPES[kind]
            raise error(f"{where} must be {what}, got {short_repr(v)}")
    elif shape is OBJECT:
        _object(v, where, error)
    elif isinstance(shape, list):
        if not isinstance(v, list):
            raise error(f"{where} must be a list, got {short_repr(v)}")
        for i, item in enumerate(v):
            check(shape[0], item, f"{where}[{i}]", error=error)
    elif isinstance(shape, Map):
        _object(v, where, error)
        for k, item in v.items():
            if not (is_integer(k) and int(k) >= 0 and str(int(k)) == k):
                raise error(f"{where}: key {short_repr(k)} is not a non-negative integer")
            check(shape.value, item, f"{where}[{k!r}]", error=error)
    elif isinstance(shape, dict):
        _fields(shape, v, where, error)
    else:
        shape(v, where)


def _object(v: Any, where: str, error: type[DPHybridError]) -> None:
    if not isinstance(v, dict):
        raise error(f"{where} must be an object, got {short_repr(v)}")


def _fields(shape: dict[str, Any], v: Any, where: str, error: type[DPHybridError]) -> None:
    _object(v, where, error)
    keys = {k.rstrip("?"): k.endswith("?") for k in shape}
    unknown = sorted(set(v) - set(keys))
    if unknown:
        raise error(f"{where}: unknown key {short_repr(unknown[0])} (known: {', '.join(keys)})")
    for key, optional in keys.items():
        if key not in v:
            if optional:
                continue
            raise error(f"{where}: missing key {key!r}")
        check(shape[key + "?" if optional else key], v[key], f"{where}.{key}", error=error)

