"""Pufferfish privacy (Kifer and Machanavajjhala) checked with SMT, after FAIER.

A Pufferfish instance is (S, Q, Theta): data entries with finite values, a
parametrised prior family Theta (a product of factors, each a table over some entries
with polynomial weights), secret pairs Q given as predicates on data sets, and a
mechanism of the language applied to a statistic of the data set.  For each secret
``s`` the prior conditioned on ``s`` becomes an initial weight vector over the
mechanism's input states, ``w_s(x) = sum of P(D) over data sets D with s(D) and
statistic(D) = x``, built symbolically; the conditioning's normaliser is left to the
cross-multiplied SMT query (:mod:`verifiers.smt.backend`), so everything stays polynomial.
eps-Pufferfish holds when no observation sequence has ``P(o|s_i) > e^eps P(o|s_j)``
for any secret pair, in either order, for any prior in Theta.

Plain DP is the special case :func:`dp_instance`: secrets are the inputs themselves,
point masses on each neighbour pair.  :func:`load_model` reads model files of kind
``hmm``, ``pufferfish`` and ``dp`` (JSON, or YAML when pyyaml is installed).
"""

from __future__ import annotations

import ast
import itertools
import math
import time
from dataclasses import dataclass, field
from fractions import Fraction
from importlib import resources
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from samplers import catalogue, deadline
from samplers.errors import DomainError, ParameterError, SolverUnknown
from samplers.lang.ir import Program
from samplers.numerals import read_error_text
from samplers.readers import as_int, as_list, as_object, check_depth, parse_json, read_text, short_repr
from verifiers.epsilon import Bisection, bisect_epsilon
from verifiers.smt.hmm import HMM, InitialPair, Instance, Param, exact_sum, instance_from_dict, parse_param
from verifiers.smt.hmm_compile import START, hmm_from_distribution, hmm_from_program
from verifiers.smt.poly import Entry, Poly, parse_entry
from verifiers.smt.backend import SAT, UNKNOWN, Verdict, decide

MODELS = "verifiers.smt.models"  # package data: the shipped example model files

# -- predicates and statistics over data sets -----------------------------------------------

_ALLOWED = (
    ast.Expression, ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare, ast.IfExp, ast.Name, ast.Load,
    ast.Constant, ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod, ast.USub, ast.UAdd, ast.Not,
    ast.And, ast.Or, ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE,
)


def data_expression(text: str, names: Iterable[str], what: str) -> Callable[[Mapping[str, int]], int]:
    """An integer/boolean expression over data entries (``"John == 1"``, ``"John + Alice"``)."""
    if not isinstance(text, str):
        raise ParameterError(f"{what}: expected an expression, got {text!r}")
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        raise ParameterError(f"{what}: {text!r} is not an expression") from None
    known = set(names)
    for node in ast.walk(tree):
        if not isinstance(node, _ALLOWED):
            raise ParameterError(f"{what}: {type(node).__name__} is not allowed in {text!r}")
        if isinstance(node, ast.Name) and node.id not in known:
            raise ParameterError(f"{what}: unknown data entry {node.id!r} (entries: {', '.join(sorted(known))})")
        if isinstance(node, ast.Constant) and not isinstance(node.value, int):
            raise ParameterError(f"{what}: only integer constants are allowed in {text!r}")
    code = compile(tree, f"<{what}>", "eval")
    return lambda data: int(eval(code, {"__builtins__": {}}, dict(data)))  # noqa: S307 (whitelisted AST)


# -- Pufferfish specifications ----------------------------------------------------------------


@dataclass
class Factor:
    """One factor of the prior: a joint table over some entries (weights sum to 1)."""

    entries: tuple[str, ...]
    table: dict[tuple[int, ...], Entry]


@dataclass
class Mechanism:
    """The mechanism applied to the statistic: a catalogue program and how to compile it."""

    program: Program
    split_before: tuple[str, ...] = ()
    one_step: bool = False

    def compile(self, inputs: Iterable[tuple[int, ...]]) -> tuple[HMM, Any]:
        if self.one_step:
            return hmm_from_distribution(self.program, inputs)
        return hmm_from_program(self.program, inputs, split_before=self.split_before)


@dataclass
class PufferfishSpec:
    """(S, Q, Theta) with a mechanism on a statistic; :meth:`instance` builds the HMM check."""

    name: str
    entries: dict[str, tuple[int, ...]]
    params: dict[str, Param]
    prior: list[Factor]
    secrets: list[tuple[str, str]]
    statistic: list[str]
    mechanism: Mechanism
    description: str = ""

    def data_sets(self) -> list[tuple[dict[str, int], Entry]]:
        """Every data set of nonzero prior weight, with its weight (a polynomial in the parameters)."""
        covered = [e for f in self.prior for e in f.entries]
        missing = sorted(set(self.entries) - set(covered))
        dup = sorted({e for e in covered if covered.count(e) > 1})
        if missing or dup:
            raise ParameterError(f"{self.name}: every entry must be in exactly one prior factor "
                                 f"(missing: {missing or 'none'}, repeated: {dup or 'none'})")
        out = []
        for rows in itertools.product(*(f.table.items() for f in self.prior)):
            data: dict[str, int] = {}
            weight: Entry = Fraction(1)
            for f, (values, w) in zip(self.prior, rows):
                data.update(zip(f.entries, values))
                weight = weight * w
            if weight != 0:
                out.append((data, weight))
        return out

    def instance(self) -> Instance:
        program = self.mechanism.program
        stats = [data_expression(s, self.entries, f"{self.name}: statistic[{i}]") for i, s in enumerate(self.statistic)]
        if len(stats) != program.domain.size:
            raise ParameterError(f"{self.name}: the statistic has {len(stats)} coordinates, "
                                 f"{program.name} takes {program.domain.size}")
        weighted = []
        for data, w in self.data_sets():
            x = tuple(f(data) for f in stats)
            try:
                program.domain.check(x)
            except DomainError as e:
                raise ParameterError(f"{self.name}: statistic of {data} is outside {program.name}'s domain: {e}") from None
            weighted.append((data, x, w))
        hmm, dec = self.mechanism.compile(sorted({x for _, x, _ in weighted}))
        pairs = []
        for i, (si, sj) in enumerate(self.secrets):
            preds = [data_expression(s, self.entries, f"{self.name}: secret {s!r}") for s in (si, sj)]
            sides: list[dict[int, Entry]] = [{}, {}]
            for data, x, w in weighted:
                for side, pred in zip(sides, preds):
                    if pred(data):
                        s = hmm.state_index[(0, x, START)]
                        side[s] = side.get(s, Fraction(0)) + w
            for side, s in zip(sides, (si, sj)):
                side_total = exact_sum(side.values())
                if side_total == 0:
                    raise ParameterError(f"{self.name}: secret {s!r} has probability 0 under every prior")
            pairs.append(InitialPair(f"{si} / {sj}", {k: v for k, v in sides[0].items() if v != 0},
                                     {k: v for k, v in sides[1].items() if v != 0}, {"secrets": [si, sj]}))
        nonneg = [w for f in self.prior for w in f.table.values() if isinstance(w, Poly)]
        return Instance(self.name, hmm, pairs, dec.steps, self.description, dec, nonneg, dict(self.params))


def dp_instance(
    program: Program,
    pairs: Iterable[tuple[Sequence[int], Sequence[int]]] | None = None,
    *,
    mechanism: Mechanism | None = None,
    name: str | None = None,
) -> Instance:
    """Plain DP as Pufferfish: point masses on each neighbour pair (default: every pair of the domain)."""
    mech = mechanism or Mechanism(program)
    if pairs is None:
        seen: set[tuple] = set()
        todo = []
        for x, xp in program.neighbours.pairs(program.domain):
            if (xp, x) not in seen:
                seen.add((x, xp))
                todo.append((x, xp))
    else:
        todo = []
        for x, xp in pairs:
            a, b = program.domain.check(x), program.domain.check(xp)
            if not program.neighbours.contains(a, b):
                raise DomainError(f"{list(a)} and {list(b)} are not {program.neighbours.name} neighbours")
            todo.append((a, b))
    if not todo:
        raise ParameterError(f"{program.name}: no neighbour pairs to check")
    hmm, dec = mech.compile(sorted({p for pair in todo for p in pair}))
    state = lambda x: hmm.state_index[(0, x, START)]  # noqa: E731
    init = [InitialPair(f"{list(x)} / {list(xp)}", {state(x): Fraction(1)}, {state(xp): Fraction(1)},
                        {"x": list(x), "x_prime": list(xp)}) for x, xp in todo]
    return Instance(name or f"{program.name} (DP)", hmm, init, dec.steps,
                    f"differential privacy of {program.name} over {program.neighbours.name} neighbours", dec)


# -- checking -----------------------------------------------------------------------------------


@dataclass
class Check:
    """One query: a pair in one order (``pi/tau`` asks P(o|pi) > c P(o|tau))."""

    pair: InitialPair
    order: str
    verdict: Verdict


@dataclass
class CheckResult:
    """The answer for a whole instance at one ``c`` and one length ``k``."""

    status: str  # "violated", "holds" or "unknown"
    c: Fraction
    k: int
    checks: list[Check] = field(default_factory=list)
    witness: Check | None = None
    seconds: float = 0.0

    @property
    def queries(self) -> int:
        return sum(ch.verdict.queries for ch in self.checks)


def check_instance(
    inst: Instance,
    c: Fraction,
    *,
    k: int | None = None,
    timeout: float | None = None,
    encoding: str = "auto",
    rlimit: int | None = None,
    exhaustive: bool = False,
) -> CheckResult:
    """Decide every pair of ``inst`` in both orders at ratio bound ``c`` and length ``k``.

    ``timeout`` (seconds) and ``rlimit`` (z3 resource units) limit each solver call.
    Stops at the first violation unless ``exhaustive``.  ``violated`` needs one SAT
    check, ``holds`` needs every check UNSAT; anything else is ``unknown``.
    """
    k = inst.k if k is None else k
    t0 = time.perf_counter()
    res = CheckResult("holds", Fraction(c), k)
    for pair in inst.pairs:
        for order, num, den in (("pi/tau", pair.pi, pair.tau), ("tau/pi", pair.tau, pair.pi)):
            v = decide(inst.hmm, num, den, c, k, timeout=timeout, encoding=encoding,
                       params=inst.params, assume_nonneg=inst.nonneg, rlimit=rlimit)
            check = Check(pair, order, v)
            res.checks.append(check)
            if v.status == SAT and res.witness is None:
                res.status, res.witness = "violated", check
                if not exhaustive:
                    res.seconds = time.perf_counter() - t0
                    return res
            elif v.status == UNKNOWN and res.status == "holds":
                res.status = "unknown"
    res.seconds = time.perf_counter() - t0
    return res


@dataclass
class LengthResult:
    """Checks for k = k_min .. k_max, stopping at the first violation."""

    results: list[CheckResult]

    @property
    def status(self) -> str:
        return self.results[-1].status

    @property
    def largest_k_proved(self) -> int | None:
        """The largest k such that every length up to it was proved private (None if none)."""
        best = None
        for r in self.results:
            if r.status != "holds":
                break
            best = r.k
        return best


def check_lengths(inst: Instance, c: Fraction, k_max: int, *, k_min: int | None = None, **kw: Any) -> LengthResult:
    """Increase the observation length from ``k_min`` (default ``inst.k``) to ``k_max``."""
    k_min = inst.k if k_min is None else k_min
    if k_max < k_min:
        raise ParameterError(f"--k {k_max} is below the model's observation length {k_min}")
    results = []
    for k in range(k_min, k_max + 1):
        deadline.check(f"checking observation length {k} of {inst.name}")
        results.append(check_instance(inst, c, k=k, **kw))
        if results[-1].status != "holds":
            break
    return LengthResult(results)


def bisect_instance(inst: Instance, precision: float, *, k: int | None = None, **kw: Any) -> Bisection:
    """Certified eps bracket ``[lo, hi]`` of width ``precision`` with SMT as the oracle.

    Raises :class:`SolverUnknown` if some query is undecided (a timeout).
    """

    def oracle(c: Fraction) -> Check | None:
        r = check_instance(inst, c, k=k, **kw)
        if r.status == "unknown":
            raise SolverUnknown(f"z3 did not decide {inst.name} at c = {c}")
        return r.witness

    return bisect_epsilon(oracle, 0.0, math.inf, precision)


# -- model files ------------------------------------------------------------------------------


def _object(v: Any, where: str) -> dict[str, Any]:
    return as_object(v, where, error=ParameterError)


def _list(v: Any, where: str) -> list[Any]:
    return as_list(v, where, error=ParameterError)


def _mechanism_from(d: Any, where: str) -> Mechanism:
    if not isinstance(d, Mapping) or not isinstance(d.get("name"), str):
        raise ParameterError(f"{where}: mechanism must be an object with a catalogue name")
    mech = catalogue.get(d["name"])
    params = _object(d.get("params") or {}, f"{where}: mechanism params")
    params = {k: v if isinstance(v, (int, str)) else str(v) for k, v in params.items()}
    compile_as = d.get("compile", "layered")
    if compile_as not in ("layered", "distribution"):
        raise ParameterError(f"{where}: compile must be 'layered' or 'distribution', got {short_repr(compile_as)}")
    split = _list(d.get("split_before") or [], f"{where}: mechanism split_before")
    if not all(isinstance(op, str) for op in split):
        raise ParameterError(f"{where}: split_before must list operation names, got {short_repr(split)}")
    return Mechanism(mech.trace(**params), tuple(split), compile_as == "distribution")


def _entry_values(v: Any, name: str) -> tuple[int, ...]:
    if isinstance(v, list) and v and all(isinstance(e, int) and not isinstance(e, bool) for e in v):
        return tuple(v)
    raise ParameterError(f"entry {name!r}: values must be a nonempty list of integers, got {short_repr(v)}")


def _factor(d: Any, entries: Mapping[str, tuple[int, ...]], params: set[str], where: str) -> Factor:
    if isinstance(d, Mapping) and "entry" in d and "law" in d:
        names: tuple[str, ...] = (str(d["entry"]),)
        law = _object(d["law"], f"{where}: law")
        rows = [((as_int(k, f"{where}: law value", error=ParameterError),), w) for k, w in law.items()]
    elif isinstance(d, Mapping) and "entries" in d and "table" in d:
        names = tuple(str(e) for e in _list(d["entries"], f"{where}: entries"))
        rows = []
        for row in _list(d["table"], f"{where}: table"):
            if not (isinstance(row, list) and len(row) == 2):
                raise ParameterError(f"{where}: a table row is [values, weight], got {short_repr(row)}")
            vals = row[0] if isinstance(row[0], list) else [row[0]]
            rows.append((tuple(as_int(v, f"{where}: table value", error=ParameterError) for v in vals), row[1]))
    else:
        raise ParameterError(f"{where}: a prior factor is {{entry, law}} or {{entries, table}}")
    for n in names:
        if n not in entries:
            raise ParameterError(f"{where}: unknown entry {n!r}")
    table: dict[tuple[int, ...], Entry] = {}
    for vals, w in rows:
        if len(vals) != len(names) or any(v not in entries[n] for v, n in zip(vals, names)):
            raise ParameterError(f"{where}: row {list(vals)} does not fit entries {list(names)}")
        table[vals] = parse_entry(w, params, what=f"{where}[{list(vals)}]")
    if any(not isinstance(w, Poly) and w < 0 for w in table.values()):
        raise ParameterError(f"{where}: negative prior weight")
    if exact_sum(table.values()) != 1:
        raise ParameterError(f"{where}: the weights sum to {exact_sum(table.values())}, not 1")
    return Factor(names, table)


def spec_from_dict(d: Mapping[str, Any]) -> PufferfishSpec:
    """A :class:`PufferfishSpec` from a model file of kind ``pufferfish``."""
    name = str(d.get("name", "pufferfish"))
    params = {n: parse_param(n, r) for n, r in _object(d.get("params") or {}, f"{name}: params").items()}
    entries = {str(n): _entry_values(v, n) for n, v in _object(d.get("entries") or {}, f"{name}: entries").items()}
    if not entries:
        raise ParameterError(f"{name}: no data entries")
    prior = [_factor(f, entries, set(params), f"{name}: prior[{i}]")
             for i, f in enumerate(_list(d.get("prior") or [], f"{name}: prior"))]
    secrets = []
    for s in _list(d.get("secrets") or [], f"{name}: secrets"):
        if not (isinstance(s, list) and len(s) == 2 and all(isinstance(e, str) for e in s)):
            raise ParameterError(f"{name}: each secret pair is a list of two predicates, got {short_repr(s)}")
        secrets.append((s[0], s[1]))
    if not secrets:
        raise ParameterError(f"{name}: no secret pairs")
    stat = d.get("statistic")
    stat = [stat] if isinstance(stat, str) else _list(stat or [], f"{name}: statistic")
    return PufferfishSpec(name, entries, params, prior, secrets, stat,
                          _mechanism_from(d.get("mechanism"), name), str(d.get("description", "")))


def _input_pairs(pairs: Any, where: str) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    """A ``dp`` model's ``pairs``: a list of ``[x, x']``, each a list of integers."""
    def point(v: Any) -> tuple[int, ...]:
        if isinstance(v, list) and v and all(isinstance(a, int) and not isinstance(a, bool) for a in v):
            return tuple(v)
        raise ParameterError(f"{where}: an input of pairs must be a nonempty list of integers, got {short_repr(v)}")

    if not isinstance(pairs, list) or not pairs:
        raise ParameterError(f"{where}: pairs must be \"all\" or a nonempty list of [x, x'], got {short_repr(pairs)}")
    out = []
    for p in pairs:
        if not (isinstance(p, list) and len(p) == 2):
            raise ParameterError(f"{where}: each of pairs must be [x, x'], got {short_repr(p)}")
        out.append((point(p[0]), point(p[1])))
    return out


def instance_from_model(d: Mapping[str, Any]) -> Instance:
    """An :class:`Instance` from a parsed model file of any kind."""
    if not isinstance(d, Mapping):
        raise ParameterError("a model file must hold an object")
    kind = d.get("kind", "hmm")
    if kind == "hmm":
        return instance_from_dict(d)
    if kind == "pufferfish":
        return spec_from_dict(d).instance()
    if kind == "dp":
        mech = _mechanism_from(d.get("mechanism"), str(d.get("name", "dp")))
        name = str(d.get("name", "dp"))
        pairs = d.get("pairs", "all")
        inst = dp_instance(mech.program, None if pairs == "all" else _input_pairs(pairs, name),
                           mechanism=mech, name=name)
        inst.description = str(d.get("description", inst.description))
        return inst
    raise ParameterError(f"unknown model kind {kind!r} (known: hmm, pufferfish, dp)")


def shipped_models() -> list[str]:
    """Names of the example model files shipped in :data:`MODELS`."""
    return sorted(p.name[:-5] for p in resources.files(MODELS).iterdir() if p.name.endswith(".json"))


def load_model(path: str | Path) -> Instance:
    """Read a model file (JSON, or YAML with pyyaml) or a shipped example by name."""
    p = Path(path)
    if not p.exists() and not p.is_symlink():
        shipped = resources.files(MODELS) / f"{path}.json"
        if not shipped.is_file():
            raise ParameterError(f"no model file {str(path)!r} (shipped examples: {', '.join(shipped_models())})")
        text, suffix = shipped.read_text(encoding="utf-8"), ".json"
    else:
        text, suffix = read_text(p, error=ParameterError), p.suffix.lower()
    if suffix in (".yaml", ".yml"):
        data = _yaml(text, str(path))
    else:
        data = parse_json(text, str(path), error=ParameterError)
    return instance_from_model(data)


def _yaml(text: str, where: str) -> Any:
    try:
        import yaml
    except ImportError:
        raise ParameterError("YAML model files need pyyaml (pip install pyyaml); JSON needs nothing") from None
    class NoAliases(yaml.SafeLoader):
        """YAML without anchors and aliases: a few lines of aliases can expand to billions of values."""

        def compose_node(self, parent: Any, index: Any) -> Any:
            if self.check_event(yaml.AliasEvent):
                raise yaml.YAMLError("aliases (*name) are not allowed in model files")
            return super().compose_node(parent, index)

    try:
        data = yaml.load(text, Loader=NoAliases)  # noqa: S506 (a SafeLoader)
    except yaml.YAMLError as e:
        raise ParameterError(f"{where}: not valid YAML ({str(e).splitlines()[0]})") from None
    except RecursionError:
        raise ParameterError(f"{where}: nested too deeply to read") from None
    except ValueError as e:  # an integer beyond Python's int-string limit
        raise ParameterError(f"{where}: cannot read a value ({read_error_text(e)})") from None
    return check_depth(data, where, error=ParameterError)


__all__ = [
    "Check", "CheckResult", "Factor", "LengthResult", "Mechanism", "PufferfishSpec", "bisect_instance",
    "check_instance", "check_lengths", "data_expression", "dp_instance", "load_model", "shipped_models",
    "spec_from_dict",
]
