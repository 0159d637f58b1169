"""Suites: lists of (mechanism, parameters, claim, precision, budget) to run together.

A suite is a TOML or JSON file (the built-in ones live in ``hybrid/suites/``):

.. code-block:: toml

    name = "mine"
    [defaults]            # optional: applied to every entry
    precision = 1e-3
    budget = 600          # seconds per entry: a safety limit, never what decides a result
    samples = 20000000    # testers' sample budget, a count: it decides the result (optional)
    [[entry]]
    mechanism = "noisy_max_geom"
    params = { m = 5, a = "1/2" }
    claimed_eps = 1.0     # optional
    reference = { exact_ratio = "288/73" }   # optional published/known values

Results are decided by counts (``samples``, and the search's other count budgets), so
an entry gives the same bound on any machine, busy or not; ``budget`` only stops an
entry that overruns, and the row then says so in ``limits_hit``.

Every entry gets a stable ``id`` (given, or derived from mechanism, parameters and
claim) that results are keyed by, so an interrupted run can resume.
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from samplers import catalogue
from samplers.errors import DPHybridError

BUILTIN = ("discrete", "statdp", "dpsniper")
DEFAULT_PRECISION = 1e-3
DEFAULT_BUDGET = 600.0  # seconds: a safety limit per entry


class SuiteError(DPHybridError):
    """A suite file is missing, malformed or names an unknown mechanism/parameter."""


@dataclass(frozen=True)
class Entry:
    """One job of a suite."""

    id: str
    mechanism: str
    params: dict[str, Any] = field(default_factory=dict)
    claimed_eps: float | None = None
    precision: float = DEFAULT_PRECISION
    budget: float = DEFAULT_BUDGET  # seconds, a safety limit
    seed: int = 0
    samples: int | None = None  # the testers' sample budget (None: the search's default)
    reference: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "mechanism": self.mechanism, "params": self.params,
                "claimed_eps": self.claimed_eps, "precision": self.precision,
                "budget": self.budget, "seed": self.seed, "samples": self.samples, "reference": self.reference}


@dataclass(frozen=True)
class Suite:
    name: str
    entries: tuple[Entry, ...]
    description: str = ""


def _entry_id(mech: str, params: dict[str, Any], claimed: float | None) -> str:
    parts = [mech] + [f"{k}={params[k]}" for k in sorted(params)]
    if claimed is not None:
        parts.append(f"claim={claimed:g}")
    return " ".join(parts)


def _number(v: Any, what: str) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise SuiteError(f"{what} must be a number, got {v!r}")
    return float(v)


def _entry(raw: Any, defaults: dict[str, Any], where: str) -> Entry:
    if not isinstance(raw, dict):
        raise SuiteError(f"{where}: an entry must be a table, got {raw!r}")
    raw = {**defaults, **raw}
    known = {"id", "mechanism", "params", "claimed_eps", "precision", "budget", "seed", "samples", "reference"}
    extra = sorted(set(raw) - known)
    if extra:
        raise SuiteError(f"{where}: unknown field {extra[0]!r} (known: {', '.join(sorted(known))})")
    if "mechanism" not in raw:
        raise SuiteError(f"{where}: missing 'mechanism'")
    mech = catalogue.get(str(raw["mechanism"]))
    params = raw.get("params", {})
    if not isinstance(params, dict):
        raise SuiteError(f"{where}: params must be a table")
    mech.params(**params)  # validates names and types now, not halfway through a run
    claimed = raw.get("claimed_eps")
    claimed = None if claimed is None else _number(claimed, f"{where}: claimed_eps")
    reference = raw.get("reference", {})
    if not isinstance(reference, dict):
        raise SuiteError(f"{where}: reference must be a table")
    precision = _number(raw.get("precision", DEFAULT_PRECISION), f"{where}: precision")
    budget = _number(raw.get("budget", DEFAULT_BUDGET), f"{where}: budget")
    if precision <= 0 or budget <= 0:
        raise SuiteError(f"{where}: precision and budget must be positive")
    seed, samples = raw.get("seed", 0), raw.get("samples")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise SuiteError(f"{where}: seed must be an integer")
    if samples is not None and (isinstance(samples, bool) or not isinstance(samples, int) or samples < 1000):
        raise SuiteError(f"{where}: samples must be an integer of at least 1000")
    return Entry(id=str(raw.get("id") or _entry_id(mech.name, params, claimed)), mechanism=mech.name,
                 params=dict(params), claimed_eps=claimed, precision=precision, budget=budget,
                 seed=seed, samples=samples, reference=dict(reference))


def parse_suite(data: Any, name: str) -> Suite:
    """A suite from its parsed TOML/JSON content."""
    if not isinstance(data, dict):
        raise SuiteError(f"suite {name}: the top level must be a table")
    defaults = data.get("defaults", {})
    if not isinstance(defaults, dict):
        raise SuiteError(f"suite {name}: defaults must be a table")
    raw_entries = data.get("entry", data.get("entries"))
    if not isinstance(raw_entries, list) or not raw_entries:
        raise SuiteError(f"suite {name}: no entries (use [[entry]] tables)")
    entries = tuple(_entry(e, defaults, f"suite {name}, entry {i + 1}") for i, e in enumerate(raw_entries))
    ids = [e.id for e in entries]
    dup = next((i for i in ids if ids.count(i) > 1), None)
    if dup is not None:
        raise SuiteError(f"suite {name}: two entries have the id {dup!r}; give them distinct ids")
    return Suite(str(data.get("name", name)), entries, str(data.get("description", "")))


def load_suite(name_or_path: str) -> Suite:
    """A built-in suite by name, or a suite file (``.toml`` or ``.json``)."""
    if name_or_path in BUILTIN:
        text = resources.files("hybrid.suites").joinpath(f"{name_or_path}.toml").read_text()
        return parse_suite(tomllib.loads(text), name_or_path)
    path = Path(name_or_path)
    if not path.is_file():
        raise SuiteError(f"no suite named {name_or_path!r} (built-in: {', '.join(BUILTIN)}) and no such file")
    try:
        text = path.read_text()
        data = json.loads(text) if path.suffix == ".json" else tomllib.loads(text)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, tomllib.TOMLDecodeError) as e:
        raise SuiteError(f"cannot read suite {path}: {e}") from None
    return parse_suite(data, path.stem)
