"""The built-in mechanisms, addressable by name or alias.

Importing this package registers every module's mechanisms; :func:`get` finds one by
name (or a StatDP / DP-Sniper alias), :func:`names` lists them.
"""

from __future__ import annotations

import difflib

from samplers.errors import UnknownMechanism
from samplers.lang.mechanism import Mechanism
from samplers.numerals import short_text

_REGISTRY: dict[str, Mechanism] = {}
_ALIASES: dict[str, str] = {}


def register(mech: Mechanism) -> Mechanism:
    """Add a mechanism to the catalogue (used as a decorator after ``@mechanism``)."""
    for key in dict.fromkeys(k.lower() for k in (mech.name, *mech.aliases)):
        if key in _ALIASES:
            raise ValueError(f"catalogue name {key!r} registered twice")
        _ALIASES[key] = mech.name
    _REGISTRY[mech.name] = mech
    return mech


def get(name: str) -> Mechanism:
    """The catalogue mechanism called ``name`` (case-insensitive; aliases accepted)."""
    key = _ALIASES.get(name.lower())
    if key is None:
        close = dict.fromkeys(_ALIASES[c] for c in difflib.get_close_matches(name.lower(), list(_ALIASES), n=5))
        hint = f"; did you mean {', '.join(list(close)[:3])}?" if close else ""
        raise UnknownMechanism(f"unknown mechanism {short_text(repr(name))}{hint} (see 'dphybrid list')")
    return _REGISTRY[key]


def names() -> list[str]:
    """Every catalogue mechanism's name, in registration order."""
    return list(_REGISTRY)


def mechanisms() -> list[Mechanism]:
    return list(_REGISTRY.values())


# Registration happens on import; keep these imports last.
from samplers.catalogue import checkdp, continuous, discrete, gaussian, rappor, svt_geom  # noqa: E402,F401
