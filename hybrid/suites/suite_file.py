"""Suites: lists of (mechanism, parameters, claim, precision, budget) to run together.

A suite is a TOML or JSON file (the built-in ones live in ``hybrid/suites/builtin/``):

.. code-block:: toml

    name = "mine"
    [defaults]            # optional: applied to every entry
    precision = 1e-3
    budget = 600          # seconds per entry: a safety limit, never what decides a result
    samples = 20000000    # testers' sample budget, a count: it decides the result (optional)
    time_limit = 1500     # the runner's hard limit in seconds (optional; default 2 * budget + 30)
    [[entry]]
    cost = 5              # optional: expected cost relative to the others (default 1); see below
    mechanism = "noisy_max_geom"
    params = { m = 5, a = "1/2" }
    claimed_eps = 1.0     # optional
    claimed_delta = 1e-5  # optional, with claimed_eps: the claim is (eps, delta)-DP ("1/1000" stays exact)
    reference = { exact_ratio = "288/73" }   # optional published/known values
    [[entry]]             # a plain function in StatDP's contract, alg(prng, queries, epsilon, ...)
    mechanism = "algorithms.py:svt"           # a file relative to the suite file, or module:alg
    params = { epsilon = 0.5, N = 1 }
    size = 5              # the queries' inputs (StatDP's defaults when absent)
    domain = "-10..10"    # or [-10, 10]
    neighbours = "all_differ"

Results are decided by counts (``samples``, and the search's other count budgets), so
an entry gives the same bound on any machine, busy or not; ``budget`` only stops an
entry that overruns, and the row then says so in ``limits_hit``.

``cost`` only orders the work: the runner starts the costliest entries first (longest
processing time first), so a long entry does not start last and leave the other workers
idle at the end; it changes no result.

Every entry gets a stable ``id`` (given, or derived from mechanism, parameters and
claim) that results are keyed by, so an interrupted run can resume.
"""

from __future__ import annotations

import dataclasses
import json
import math
import tomllib
from dataclasses import dataclass, field
from importlib import resources
from fractions import Fraction
from pathlib import Path
from typing import Any

from hybrid.searcher.budget import MAX_PRECISION, MAX_SAMPLES
from samplers.errors import DPHybridError, ParameterError, UnknownMechanism
from samplers.lang.exact import fraction_str
from samplers.numerals import read_error_text, short_text
from samplers.readers import short_repr
from verifiers.ratio import parse_ratio

BUILTIN = ("discrete", "statdp", "dpsniper", "checkdp", "continuous60")
DEFAULT_PRECISION = 1e-3
DEFAULT_BUDGET = 600.0  # seconds: a safety limit per entry
MAX_SECONDS = 7 * 24 * 3600.0  # budgets and limits beyond a week are typos (1e300, inf)
HARD_LIMIT_FACTOR = 2.0  # the default hard limit: twice the entry's budget plus a grace period
GRACE = 30.0
SEED_BOUND = 2**64


class SuiteError(DPHybridError):
    """A suite file is missing, malformed or names an unknown mechanism/parameter."""


@dataclass(frozen=True)
class Entry:
    """One job of a suite."""

    id: str
    mechanism: str
    params: dict[str, Any] = field(default_factory=dict)
    claimed_eps: float | None = None
    claimed_delta: float | str | None = None  # a float, or an exact rational as "p/q"
    precision: float = DEFAULT_PRECISION
    budget: float = DEFAULT_BUDGET  # seconds, a safety limit
    seed: int = 0
    samples: int | None = None  # the testers' sample budget (None: the search's default)
    reference: dict[str, Any] = field(default_factory=dict)
    time_limit: float | None = None  # seconds after which the runner kills the entry (None: the default)
    inputs: dict[str, Any] = field(default_factory=dict)  # size, domain, neighbours of a plain function
    cost: float = 1.0  # expected cost relative to other entries: the costliest start first (no effect on results)

    def resolve(self) -> Any:
        """The entry's mechanism: a catalogue one, or its plain function with the entry's inputs."""
        from samplers.plain import resolve

        return resolve(self.mechanism, **self.inputs)

    @property
    def hard_limit(self) -> float:
        """Seconds after which the runner kills the entry's process."""
        return self.time_limit if self.time_limit is not None else self.budget * HARD_LIMIT_FACTOR + GRACE

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "mechanism": self.mechanism, "params": self.params,
                "claimed_eps": self.claimed_eps, "precision": self.precision,
                "budget": self.budget, "seed": self.seed, "samples": self.samples, "reference": self.reference,
                "time_limit": self.time_limit, **({"inputs": self.inputs} if self.inputs else {}),
                **({"claimed_delta": self.claimed_delta} if self.claimed_delta is not None else {}),
                **({"cost": self.cost} if self.cost != 1 else {})}

    def with_overrides(self, precision: float | None = None, budget: float | None = None,
                       time_limit: float | None = None, delta: float | str | None = None) -> "Entry":
        """This entry with the given fields replaced (the suite command's flags), each checked; a
        ``delta`` replaces the claimed delta of an entry that claims an eps (others have no claim)."""
        changes: dict[str, Any] = {}
        if delta is not None and self.claimed_eps is not None:
            changes["claimed_delta"] = check_claimed_delta(delta, self.claimed_eps, "--delta")
        if precision is not None:
            changes["precision"] = check_precision(precision, "--precision")
        if budget is not None:
            changes["budget"] = check_seconds(budget, "--time-budget")
        if time_limit is not None:
            changes["time_limit"] = check_seconds(time_limit, "--time-limit")
        return dataclasses.replace(self, **changes)


@dataclass(frozen=True)
class Suite:
    name: str
    entries: tuple[Entry, ...]
    description: str = ""


def _entry_id(mech: str, params: dict[str, Any], claimed: float | None, delta: float | str | None) -> str:
    parts = [mech] + [f"{k}={params[k]}" for k in sorted(params)]
    if claimed is not None:
        parts.append(f"claim={claimed:g}")
    if delta is not None:
        parts.append(f"delta={delta:g}" if isinstance(delta, float) else f"delta={delta}")
    return " ".join(parts)


def _number(v: Any, what: str) -> float:
    """A finite float (nan, inf and integers beyond a double are refused)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise SuiteError(f"{what} must be a number, got {short_repr(v)}")
    try:
        x = float(v)
    except OverflowError:
        x = math.inf
    if not math.isfinite(x):
        raise SuiteError(f"{what} must be a finite number, got {short_repr(v)}")
    return x


def _in_range(v: Any, what: str, most: float) -> float:
    x = _number(v, what)
    if not 0 < x <= most:
        raise SuiteError(f"{what} must be in (0, {most:g}], got {short_repr(v)}")
    return x


def check_precision(v: Any, what: str = "precision") -> float:
    """A bracket width: a finite number in (0, 1]."""
    return _in_range(v, what, MAX_PRECISION)


def check_seconds(v: Any, what: str) -> float:
    """A time budget or limit: a finite number of seconds in (0, one week]."""
    return _in_range(v, what, MAX_SECONDS)


def check_claimed_eps(v: Any, what: str = "claimed_eps") -> float | None:
    """None, or a finite non-negative epsilon."""
    if v is None:
        return None
    x = _number(v, what)
    if x < 0:
        raise SuiteError(f"{what} must be non-negative, got {short_repr(v)}")
    return x


def check_claimed_delta(v: Any, claimed_eps: float | None, what: str = "claimed_delta") -> float | str | None:
    """None, or a delta in [0, 1] claimed beside an eps: a number (a float) or an exact rational
    ``"p/q"`` (kept as that text, so the search compares with it exactly)."""
    from verifiers.prover.proof import check_delta

    if v is None:
        return None
    if claimed_eps is None:
        raise SuiteError(f"{what} needs claimed_eps: delta is claimed at an eps")
    if isinstance(v, bool) or not isinstance(v, (int, float, str, Fraction)):
        raise SuiteError(f"{what} must be a number in [0, 1] or a rational \"p/q\", got {short_repr(v)}")
    try:
        q = check_delta(v, what)
    except DPHybridError as e:
        raise SuiteError(str(e)) from None
    return fraction_str(q) if isinstance(v, (str, Fraction)) else float(v)


_REFERENCE_TYPES = {"exact_ratio": str, "dpsniper": float, "dp": bool, "refuted": bool,
                    "dpsniper_name": str, "statdp_name": str}


def check_reference(ref: Any, what: str) -> dict[str, Any]:
    """A table of known values to compare against, each of the type the report reads."""
    if not isinstance(ref, dict):
        raise SuiteError(f"{what} must be a table")
    for key, value in ref.items():
        kind = _REFERENCE_TYPES.get(key)
        if kind is float:
            _number(value, f"{what}.{key}")
        elif kind is not None and not isinstance(value, kind):
            raise SuiteError(f"{what}.{key} must be a {kind.__name__}, got {short_repr(value)}")
    if "exact_ratio" in ref and not _is_ratio(ref["exact_ratio"]):
        raise SuiteError(f"{what}.exact_ratio must be a ratio such as \"288/73\" or \"inf\", "
                         f"got {short_repr(ref['exact_ratio'])}")
    return dict(ref)


def _is_ratio(text: str) -> bool:
    try:
        return parse_ratio(text) >= 0
    except DPHybridError:
        return False


def _inputs(raw: dict[str, Any], spec: str, where: str) -> dict[str, Any]:
    """``size``, ``domain`` and ``neighbours`` of a plain function's entry, checked."""
    from samplers.plain import is_function_spec

    given = {k: raw[k] for k in ("size", "domain", "neighbours") if k in raw}
    if given and not is_function_spec(spec):
        raise SuiteError(f"{where}: {sorted(given)[0]} applies to a file.py:alg or module:alg function; "
                         "a catalogue mechanism declares its own inputs (use params)")
    size = given.get("size")
    if size is not None and (isinstance(size, bool) or not isinstance(size, int) or size < 1):
        raise SuiteError(f"{where}: size must be a positive integer, got {size!r}")
    domain = given.get("domain")
    if isinstance(domain, str) and ".." in domain:
        domain = domain.split("..", 1)
        try:
            domain = [int(v) for v in domain]
        except ValueError:
            pass
    if domain is not None:
        if not (isinstance(domain, list) and len(domain) == 2 and all(isinstance(v, int) and not isinstance(v, bool)
                                                                    for v in domain) and domain[0] <= domain[1]):
            raise SuiteError(f"{where}: domain must be \"LO..HI\" or [LO, HI] with integers LO <= HI, "
                             f"got {given['domain']!r}")
        given["domain"] = tuple(domain)
    if "neighbours" in given and not isinstance(given["neighbours"], str):
        raise SuiteError(f"{where}: neighbours must be a name such as \"all_differ\"")
    return given


def _located(spec: str, base: Path | None) -> str:
    """A ``file.py:alg`` spec with the file relative to the suite's folder made absolute."""
    where, sep, attr = spec.rpartition(":")
    if base is None or not sep or not where.endswith(".py") or Path(where).is_absolute():
        return spec
    return f"{(base / where).resolve()}:{attr}"


def _entry(raw: Any, defaults: dict[str, Any], where: str, base: Path | None = None) -> Entry:
    if not isinstance(raw, dict):
        raise SuiteError(f"{where}: an entry must be a table, got {short_repr(raw)}")
    raw = {**defaults, **raw}
    known = {"id", "mechanism", "params", "claimed_eps", "claimed_delta", "precision", "budget", "seed", "samples", "reference",
             "time_limit", "size", "domain", "neighbours", "cost"}
    extra = sorted(set(raw) - known)
    if extra:
        raise SuiteError(f"{where}: unknown field {extra[0]!r} (known: {', '.join(sorted(known))})")
    if "mechanism" not in raw:
        raise SuiteError(f"{where}: missing 'mechanism'")
    from samplers.plain import is_function_spec, neighbours_named, resolve  # the tracer: only for suites read
    from samplers.plain.load import check_spec

    given_spec = str(raw["mechanism"])
    spec = _located(given_spec, base)
    inputs = _inputs(raw, spec, where)
    budget = check_seconds(raw.get("budget", DEFAULT_BUDGET), f"{where}: budget")
    limit = raw.get("time_limit")
    limit = None if limit is None else check_seconds(limit, f"{where}: time_limit")
    params = raw.get("params", {})
    if not isinstance(params, dict):
        raise SuiteError(f"{where}: params must be a table")
    try:
        if is_function_spec(spec):  # the user's code runs in the entry's own process: its failure is a row
            check_spec(spec)
            if "neighbours" in inputs:
                neighbours_named(inputs["neighbours"])
            name = spec
        else:
            mech = resolve(spec, **inputs)
            mech.params(**params)  # validates names and types now, not halfway through a run
            name = mech.name
    except (UnknownMechanism, ParameterError) as e:  # said with the entry's place in the file
        raise SuiteError(f"{where}: {e}") from None
    claimed = check_claimed_eps(raw.get("claimed_eps"), f"{where}: claimed_eps")
    delta = check_claimed_delta(raw.get("claimed_delta"), claimed, f"{where}: claimed_delta")
    reference = check_reference(raw.get("reference", {}), f"{where}: reference")
    precision = check_precision(raw.get("precision", DEFAULT_PRECISION), f"{where}: precision")
    seed, samples = raw.get("seed", 0), raw.get("samples")
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < SEED_BOUND:
        raise SuiteError(f"{where}: seed must be an integer in [0, 2^64), got {short_repr(seed)}")
    if samples is not None and (isinstance(samples, bool) or not isinstance(samples, int)
                                or not 1000 <= samples <= MAX_SAMPLES):
        raise SuiteError(f"{where}: samples must be an integer from 1000 to {MAX_SAMPLES:.0e}")
    cost = _number(raw.get("cost", 1.0), f"{where}: cost")
    if cost <= 0:
        raise SuiteError(f"{where}: cost must be positive, got {short_repr(raw['cost'])}")
    given_id = raw.get("id")
    if given_id is not None and (not isinstance(given_id, str) or not given_id.strip()):
        raise SuiteError(f"{where}: id must be a non-empty string, got {short_repr(given_id)}")
    return Entry(id=given_id or _entry_id(given_spec if name == spec else name, params, claimed, delta),
                 mechanism=name, params=dict(params), claimed_eps=claimed, claimed_delta=delta,
                 precision=precision, budget=budget, seed=seed, samples=samples, reference=reference,
                 time_limit=limit, inputs={k: list(v) if isinstance(v, tuple) else v for k, v in inputs.items()},
                 cost=cost)


def parse_suite(data: Any, name: str, base: Path | None = None) -> Suite:
    """A suite from its parsed TOML/JSON content (``base``: the folder its file paths are relative to)."""
    if not isinstance(data, dict):
        raise SuiteError(f"suite {name}: the top level must be a table")
    defaults = data.get("defaults", {})
    if not isinstance(defaults, dict):
        raise SuiteError(f"suite {name}: defaults must be a table")
    raw_entries = data.get("entry", data.get("entries"))
    if not isinstance(raw_entries, list) or not raw_entries:
        raise SuiteError(f"suite {name}: no entries (use [[entry]] tables)")
    entries = tuple(_entry(e, defaults, f"suite {name}, entry {i + 1}", base) for i, e in enumerate(raw_entries))
    ids = [e.id for e in entries]
    dup = next((i for i in ids if ids.count(i) > 1), None)
    if dup is not None:
        raise SuiteError(f"suite {name}: two entries have the id {dup!r}; give them distinct ids")
    for key in ("name", "description"):
        if not isinstance(data.get(key, ""), str):
            raise SuiteError(f"suite {name}: {key} must be a string, got {short_repr(data[key])}")
    return Suite(data.get("name", name), entries, data.get("description", ""))


def load_suite(name_or_path: str) -> Suite:
    """A built-in suite by name, or a suite file (``.toml`` or ``.json``)."""
    if name_or_path in BUILTIN:
        text = resources.files("hybrid.suites").joinpath("builtin").joinpath(f"{name_or_path}.toml").read_text()
        return parse_suite(tomllib.loads(text), name_or_path)
    path = Path(name_or_path)
    if not path.is_file():
        raise SuiteError(f"no suite named {short_text(repr(name_or_path))} (built-in: {', '.join(BUILTIN)}) and no such file")
    try:
        text = path.read_text()
        data = json.loads(text) if path.suffix == ".json" else tomllib.loads(text)
    except (OSError, ValueError) as e:  # UnicodeDecodeError, JSON and TOML errors, integers beyond the limit
        raise SuiteError(f"cannot read suite {path}: {short_text(read_error_text(e), 200)}") from None
    except RecursionError:
        raise SuiteError(f"cannot read suite {path}: nested too deeply") from None
    return parse_suite(data, path.stem, path.parent)
