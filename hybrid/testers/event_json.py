"""Reading any event back from its JSON form, exported classifier attacks included.

Kept apart from ``events`` because an attack is itself an event built on the
transforms, which build on ``events``: reading all shapes needs all of them.
"""

from __future__ import annotations

from typing import Any

from hybrid.testers.attack import Attack
from hybrid.testers.events import Event, Product, SetEvent, Threshold
from hybrid.testers.features import IDENTITY, Feature, MalformedEvent, value_from_json


def event_from_json(obj: Any) -> Event:
    """Inverse of ``Event.to_json``, attacks included."""
    if isinstance(obj, list):
        return SetEvent(IDENTITY, tuple(value_from_json(v) for v in obj))
    if not isinstance(obj, dict):
        raise MalformedEvent(f"an event must be a list of outputs or an object, got {obj!r}")
    if "attack" in obj:
        return Attack.from_json(obj)
    if "all" in obj:
        if not isinstance(obj["all"], list) or not obj["all"]:
            raise MalformedEvent("a product event needs a non-empty list under 'all'")
        return Product(tuple(event_from_json(p) for p in obj["all"]))
    if "feature" not in obj:
        raise MalformedEvent(f"unrecognised event {obj!r}")
    feature = Feature.from_json(obj["feature"])
    if "in" in obj:
        if not isinstance(obj["in"], list):
            raise MalformedEvent("'in' must be a list of values")
        return SetEvent(feature, tuple(value_from_json(v) for v in obj["in"]))
    for key, below in (("below", True), ("at_least", False)):
        if key in obj:
            try:
                alpha = float(obj[key])
            except (TypeError, ValueError, OverflowError):
                raise MalformedEvent(f"threshold {obj[key]!r:.40} is not a number") from None
            if isinstance(obj[key], int) and alpha != obj[key]:  # rounding would move the threshold
                raise MalformedEvent(f"threshold {obj[key]!r:.40} is not exactly a double; write it as one")
            return Threshold(feature, alpha, below)
    raise MalformedEvent(f"event {obj!r} has none of 'in', 'below', 'at_least'")
