"""Hidden Markov models with exact (possibly parametric) entries, as FAIER uses them.

A mechanism is a hidden Markov model: hidden states (data sets, noisy values,
a noisy threshold), a transition matrix, an emission matrix over an observation
alphabet, and an initial distribution that encodes what an attacker knows (a prior
conditioned on a secret).  Entries are exact rationals or polynomials in named
parameters with declared ranges (:class:`Param`), so a prior known only up to ``p``
or a noise parameter left symbolic is one model, not a family of them.

:meth:`HMM.probability` is the exact forward algorithm; :meth:`HMM.sequences` gives
every observation sequence of a length with its probability.  Initial distributions
are weight vectors that need not be normalised: the probability of an observation
sequence under weights ``w`` is ``forward(w) / sum(w)``, which is how Pufferfish's
conditioned priors stay polynomial.  :func:`instance_from_dict` reads the JSON / YAML
model file format (see ``verifiers/smt/models/*.json``).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Hashable, Iterable, Mapping, Sequence

from samplers.errors import ParameterError
from samplers.readers import as_list, as_object, short_repr
from verifiers.smt.poly import Entry, Poly, parse_entry, substitute, variables

Weights = dict[int, Entry]  # state index -> (unnormalised) initial weight


@dataclass(frozen=True)
class Param:
    """A named parameter ranging over an interval (each end open or closed, or unbounded)."""

    name: str
    lo: Fraction | None = None
    hi: Fraction | None = None
    lo_open: bool = False
    hi_open: bool = False

    def contains(self, v: Fraction) -> bool:
        if self.lo is not None and (v < self.lo or (self.lo_open and v == self.lo)):
            return False
        return not (self.hi is not None and (v > self.hi or (self.hi_open and v == self.hi)))

    def __str__(self) -> str:
        lo = "-inf" if self.lo is None else str(self.lo)
        hi = "inf" if self.hi is None else str(self.hi)
        return f"{'(' if self.lo_open or self.lo is None else '['}{lo}, {hi}{')' if self.hi_open or self.hi is None else ']'}"


_RANGE = re.compile(r"^\s*([\[(])\s*([^,]+?)\s*,\s*([^,]+?)\s*([\])])\s*$")


def parse_param(name: str, text: str) -> Param:
    """``Param`` from an interval like ``"(0, 1)"``, ``"[0, 1]"``, ``"(0, 1/2]"``."""
    if not re.fullmatch(r"[A-Za-z_]\w*", name):
        raise ParameterError(f"parameter name {name!r} is not an identifier")
    m = _RANGE.match(str(text))
    if not m:
        raise ParameterError(f"parameter {name}: range {text!r} is not an interval like (0, 1) or [0, 1]")
    lo_b, lo_t, hi_t, hi_b = m.groups()

    def end(t: str, unbounded: tuple[str, ...]) -> Fraction | None:
        return None if t in unbounded else parse_entry(t, set(), what=f"parameter {name} range")

    lo, hi = end(lo_t, ("-inf",)), end(hi_t, ("inf", "+inf"))
    if lo is not None and hi is not None and (lo > hi or (lo == hi and (lo_b == "(" or hi_b == ")"))):
        raise ParameterError(f"parameter {name}: the range {text} is empty")
    return Param(name, lo, hi, lo_b == "(", hi_b == ")")


def _row(row: Mapping[int, Any]) -> dict[int, Entry]:
    """A sparse row with exact entries (ints become Fractions, zeros are dropped)."""
    return {j: (v if isinstance(v, Poly) else Fraction(v)) for j, v in row.items() if v != 0}


class HMM:
    """States, symbols, sparse transition and emission rows with exact entries.

    ``trans[s]`` and ``emit[s]`` map successor-state / symbol indices to entries;
    every row sums to 1 identically (as a polynomial) and constant entries lie in
    [0, 1].  Parametric entries must be nonnegative over the parameter ranges; the
    SMT queries assume this as a constraint rather than trusting it.
    """

    def __init__(
        self,
        states: Sequence[Hashable],
        symbols: Sequence[Hashable],
        trans: Sequence[Mapping[int, Entry]],
        emit: Sequence[Mapping[int, Entry]],
        params: Mapping[str, Param] | None = None,
        *,
        name: str = "hmm",
    ) -> None:
        self.states = tuple(states)
        self.symbols = tuple(symbols)
        self.name = name
        self.params = dict(params or {})
        self.state_index = {s: i for i, s in enumerate(self.states)}
        self.symbol_index = {o: i for i, o in enumerate(self.symbols)}
        if len(self.state_index) != len(self.states) or len(self.symbol_index) != len(self.symbols):
            raise ParameterError(f"{name}: states and symbols must be distinct")
        if len(trans) != len(self.states) or len(emit) != len(self.states):
            raise ParameterError(f"{name}: every state needs a transition row and an emission row")
        self.trans = tuple(_row(row) for row in trans)
        self.emit = tuple(_row(row) for row in emit)
        self._validate()

    def _validate(self) -> None:
        used = variables(v for row in self.trans + self.emit for v in row.values())
        unknown = used - set(self.params)
        if unknown:
            raise ParameterError(f"{self.name}: undeclared parameter(s) {', '.join(sorted(unknown))}")
        for kind, rows, width in (("transition", self.trans, len(self.states)), ("emission", self.emit, len(self.symbols))):
            for s, row in enumerate(rows):
                where = f"{self.name}: {kind} row of state {self.states[s]!r}"
                if any(not 0 <= j < width for j in row):
                    raise ParameterError(f"{where} has an index out of range")
                bad = [v for v in row.values() if type(v) is Fraction and not 0 <= v.numerator <= v.denominator]
                if bad:
                    raise ParameterError(f"{where}: {bad[0]} is not a probability")
                total = exact_sum(row.values())
                if total != 1:
                    raise ParameterError(f"{where} sums to {total}, not 1")

    @property
    def parametric(self) -> bool:
        """True when some entry depends on a parameter."""
        return any(isinstance(v, Poly) for row in self.trans + self.emit for v in row.values())

    def entries(self) -> list[Entry]:
        """Every nonzero transition and emission entry."""
        return [v for row in self.trans + self.emit for v in row.values()]

    def predict(self, alpha: Mapping[int, Entry]) -> dict[int, Entry]:
        """``gamma(s') = sum_s alpha(s) T(s, s')``: one transition step of a weight vector."""
        out: dict[int, Entry] = {}
        for s, a in alpha.items():
            for j, t in self.trans[s].items():
                out[j] = out.get(j, Fraction(0)) + a * t
        return {j: v for j, v in out.items() if v != 0}

    def observe(self, gamma: Mapping[int, Entry], o: int) -> dict[int, Entry]:
        """``alpha(s) = gamma(s) E(s, o)``: condition a weight vector on emitting symbol ``o``."""
        out = {}
        for s, g in gamma.items():
            e = self.emit[s].get(o)
            if e is not None:
                v = g * e
                if v != 0:
                    out[s] = v
        return out

    def forward(self, init: Mapping[int, Entry], obs: Sequence[int]) -> dict[int, Entry]:
        """The forward vector after ``obs`` (symbol indices), from initial weights ``init``."""
        alpha: dict[int, Entry] = dict(init)
        for t, o in enumerate(obs):
            alpha = self.observe(alpha if t == 0 else self.predict(alpha), o)
        return alpha

    def probability(self, init: Mapping[int, Entry], obs: Sequence[int]) -> Entry:
        """Unnormalised ``P(obs)`` under weights ``init`` (divide by :func:`total` to normalise)."""
        return total(self.forward(init, obs))

    def sequences(self, init: Mapping[int, Entry], k: int) -> dict[tuple[int, ...], Entry]:
        """Every length-``k`` observation sequence of nonzero (unnormalised) probability."""
        layer: dict[tuple[int, ...], dict[int, Entry]] = {(): dict(init)}
        for t in range(k):
            nxt: dict[tuple[int, ...], dict[int, Entry]] = {}
            for prefix, alpha in layer.items():
                gamma = alpha if t == 0 else self.predict(alpha)
                for o in sorted({o for s in gamma for o in self.emit[s]}):
                    a = self.observe(gamma, o)
                    if a:
                        nxt[prefix + (o,)] = a
            layer = nxt
        return {seq: total(a) for seq, a in layer.items()}

    def substitute(self, values: Mapping[str, Any]) -> "HMM":
        """The model with some parameters fixed to rational values (others may be given too)."""
        rest = {n: p for n, p in self.params.items() if n not in values}
        return HMM(
            self.states, self.symbols,
            [{j: substitute(v, values) for j, v in row.items()} for row in self.trans],
            [{o: substitute(v, values) for o, v in row.items()} for row in self.emit],
            rest, name=self.name,
        )

    def decode(self, obs: Sequence[int]) -> tuple[Hashable, ...]:
        """Symbol indices as symbols."""
        return tuple(self.symbols[o] for o in obs)


def exact_sum(values: Iterable[Entry]) -> Entry:
    """The exact sum of rationals or polynomials (rationals summed over one common denominator)."""
    values = list(values)
    if all(isinstance(v, Fraction) for v in values):
        den = math.lcm(*(v.denominator for v in values)) if values else 1
        return Fraction(sum(v.numerator * (den // v.denominator) for v in values), den)
    return sum(values, Fraction(0))


def total(weights: Mapping[int, Entry]) -> Entry:
    """The sum of a weight vector (the normaliser of an initial distribution)."""
    return exact_sum(weights.values())


@dataclass
class InitialPair:
    """Two initial weight vectors to compare, e.g. a prior conditioned on each side of a secret."""

    name: str
    pi: Weights
    tau: Weights
    info: dict[str, Any] = field(default_factory=dict)  # e.g. {"x": ..., "x_prime": ...} or secrets


@dataclass
class Instance:
    """An HMM with the initial pairs to check and the observation length ``k`` to check at."""

    name: str
    hmm: HMM
    pairs: list[InitialPair]
    k: int
    description: str = ""
    decode: Any = None  # observation symbols -> a mechanism output (compiled models), or None
    nonneg: list[Entry] = field(default_factory=list)  # e.g. prior weights: must be >= 0 for valid parameters
    params: dict[str, Param] = field(default_factory=dict)  # defaults to the HMM's parameters

    def __post_init__(self) -> None:
        self.params = {**self.hmm.params, **self.params}
        used = variables(v for p in self.pairs for w in (p.pi, p.tau) for v in w.values()) | variables(self.nonneg)
        unknown = used - set(self.params)
        if unknown:
            raise ParameterError(f"{self.name}: undeclared parameter(s) {', '.join(sorted(unknown))}")

    def substitute(self, values: Mapping[str, Any]) -> "Instance":
        """The instance with some parameters fixed (each value must lie in its range)."""
        for n, v in values.items():
            if n not in self.params:
                raise ParameterError(f"{self.name} has no parameter {n!r} (parameters: {', '.join(self.params) or 'none'})")
            if not self.params[n].contains(Fraction(v)):
                raise ParameterError(f"parameter {n} = {v} is outside its range {self.params[n]}")
        pairs = [
            InitialPair(p.name, {s: substitute(w, values) for s, w in p.pi.items()},
                        {s: substitute(w, values) for s, w in p.tau.items()}, p.info)
            for p in self.pairs
        ]
        rest = {n: p for n, p in self.params.items() if n not in values}
        return Instance(self.name, self.hmm.substitute(values), pairs, self.k, self.description, self.decode,
                        [substitute(v, values) for v in self.nonneg], rest)


def _params_from(d: Mapping[str, Any]) -> dict[str, Param]:
    params = as_object(d.get("params") or {}, "params", error=ParameterError)
    return {n: parse_param(n, r) for n, r in params.items()}


def _weights(row: Any, where: str, params: set[str], index: Mapping[Hashable, int]) -> dict[int, Entry]:
    if not isinstance(row, Mapping):
        raise ParameterError(f"{where} must map names to probabilities")
    out: dict[int, Entry] = {}
    for key, text in row.items():
        if str(key) not in index:
            raise ParameterError(f"{where}: unknown name {key!r}")
        v = parse_entry(text, params, what=f"{where}[{key}]")
        if v != 0:
            out[index[str(key)]] = v
    return out


def _label(v: Any, what: str) -> str:
    """A state or symbol name: text or a number (read as its text), nothing nested."""
    if isinstance(v, (str, int, float)) and not isinstance(v, bool):
        return str(v)
    raise ParameterError(f"{what} must be a name or a number, got {short_repr(v)}")


def hmm_from_dict(d: Mapping[str, Any], *, name: str = "hmm") -> HMM:
    """An HMM from the file format's ``states / symbols / transitions / emissions / params``."""
    params = _params_from(d)
    missing = [k for k in ("states", "symbols", "transitions", "emissions") if k not in d]
    if missing:
        raise ParameterError(f"{name}: an HMM needs states, symbols, transitions and emissions (missing {missing[0]})")
    states = [_label(s, f"{name}: a state") for s in as_list(d["states"], f"{name}: states", error=ParameterError)]
    symbols = [_label(o, f"{name}: a symbol") for o in as_list(d["symbols"], f"{name}: symbols", error=ParameterError)]
    trans = as_object(d["transitions"], f"{name}: transitions", error=ParameterError)
    emit = as_object(d["emissions"], f"{name}: emissions", error=ParameterError)
    s_index = {s: i for i, s in enumerate(states)}
    o_index = {o: i for i, o in enumerate(symbols)}
    names = set(params)
    rows_t, rows_e = [], []
    for s in states:
        if s not in trans or s not in emit:
            raise ParameterError(f"{name}: state {s!r} needs a transition row and an emission row")
        rows_t.append(_weights(trans[s], f"{name}: transitions[{s}]", names, s_index))
        rows_e.append(_weights(emit[s], f"{name}: emissions[{s}]", names, o_index))
    return HMM(states, symbols, rows_t, rows_e, params, name=name)


def instance_from_dict(d: Mapping[str, Any]) -> Instance:
    """An :class:`Instance` from a model file of kind ``hmm``: an HMM plus named initial pairs."""
    name = str(d.get("name", "hmm"))
    hmm = hmm_from_dict(d, name=name)
    index = hmm.state_index
    names = set(hmm.params)
    pairs = []
    for i, p in enumerate(as_list(d.get("pairs") or [], f"{name}: pairs", error=ParameterError)):
        p = as_object(p, f"{name}: pairs[{i}]", error=ParameterError)
        label = str(p.get("name", f"pair {i}"))
        if "pi" not in p or "tau" not in p:
            raise ParameterError(f"{name}: pair {label!r} needs initial weights pi and tau")
        pi = _weights(p["pi"], f"{name}: {label}: pi", names, index)
        tau = _weights(p["tau"], f"{name}: {label}: tau", names, index)
        for side, w in (("pi", pi), ("tau", tau)):
            if not w:
                raise ParameterError(f"{name}: {label}: {side} has no positive weight")
            if any(not isinstance(v, Poly) and v < 0 for v in w.values()):
                raise ParameterError(f"{name}: {label}: {side} has a negative weight")
        pairs.append(InitialPair(label, pi, tau, {"secrets": [label]}))
    if not pairs:
        raise ParameterError(f"{name}: no initial pairs to check")
    k = d.get("k", 1)
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ParameterError(f"{name}: k must be a positive integer, got {k!r}")
    return Instance(name, hmm, pairs, k, str(d.get("description", "")))
