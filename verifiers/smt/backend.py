"""SMT decisions with z3: "is there an observation sequence o with P(o|pi) > c P(o|tau)?".

This is FAIER's Algorithm 1 (Liu, Wang and Zhang, "Verifying Pufferfish privacy in
hidden Markov models").  Two encodings, chosen by :func:`decide`:

* ``symbolic`` (constant models): the observation sequence ``o_0 .. o_{k-1}`` is a
  vector of integer variables, each forward value ``alpha_t(s)`` a real variable
  defined by an ``ite`` chain over the alphabet (the ``Select`` of FAIER), for both
  initial distributions.  Every branch multiplies the predicted weight by a constant
  emission probability, so the query stays linear (QF_LIRA) and z3 decides it.
* ``enumerated`` (parametric models): integer observations, ``ite`` and nonlinear
  arithmetic do not mix (z3 then answers unknown, as FAIER's run on its Ex. 5 did), so
  the observation sequences of nonzero probability are enumerated with the exact
  forward algorithm and each becomes a pure polynomial constraint over the parameters,
  sent to ``SolverFor("QF_NRA")`` (nlsat, complete for real arithmetic).

Initial weights need not be normalised: ``P(o|w) = forward_w(o) / sum(w)``, and the
query is cross-multiplied, ``N(o) Z_tau > c D(o) Z_pi`` with ``Z_pi, Z_tau > 0``.
``c`` is an exact rational (a ``RealVal`` built from numerator and denominator).
SAT gives the observation sequence and the parameter values, which are checked again
in exact rational arithmetic before being reported; UNSAT is a proof for that ``k``;
a timeout gives ``unknown``, a result and never an exception here.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Mapping, Sequence

import z3

from samplers import deadline
from samplers.errors import ParameterError, SolverUnknown
from samplers.lang.ir import Program
from verifiers.base import Distribution, ExactBackend, Output
from verifiers.smt.hmm import HMM, Param, Weights, total
from verifiers.smt.hmm_compile import START, Decoder, hmm_from_program
from verifiers.smt.poly import Entry, Poly, substitute, to_z3, variables
from verifiers.ratio import Ratio, ratio
from verifiers.z3_timeout import Z3_MAX_MS, bounded_ms

SAT, UNSAT, UNKNOWN = "sat", "unsat", "unknown"
ENCODINGS = ("auto", "symbolic", "enumerated")


def rational(c: Fraction) -> z3.ArithRef:
    """An exact z3 rational constant (never a Python float)."""
    c = Fraction(c)
    return z3.RealVal(f"{c.numerator}/{c.denominator}")


@dataclass
class Verdict:
    """The answer to one query: ``sat`` with a witness, ``unsat`` (proved), or ``unknown``."""

    status: str
    k: int
    observation: tuple[int, ...] | None = None  # symbol indices of the witness sequence
    params: dict[str, Fraction] | None = None  # exact parameter values of the witness
    approx_params: dict[str, str] | None = None  # decimal values when only algebraic ones were found
    ratio: Ratio | None = None  # P(o|pi) / P(o|tau) at the witness, exact
    reason: str = ""
    queries: int = 0
    build_seconds: float = 0.0
    solve_seconds: float = 0.0
    encoding: str = ""


@dataclass
class _Query:
    hmm: HMM
    num: Weights
    den: Weights
    c: Fraction
    k: int
    timeout_ms: int | None
    params: dict[str, Param]
    nonneg: list[Entry]
    rlimit: int | None = None

    def solver(self, logic: str | None = None) -> z3.Solver:
        s = z3.SolverFor(logic) if logic else z3.Solver()
        ms = bounded_ms(self.timeout_ms)  # the command's time budget bounds every z3 call too
        if ms is not None:
            s.set("timeout", ms)
        if self.rlimit is not None:
            s.set("rlimit", self.rlimit)
        return s

    def exact_ratio(self, obs: Sequence[int], values: Mapping[str, Fraction]) -> Ratio:
        """``P(obs|num) / P(obs|den)`` with the parameters fixed to ``values``, exactly."""
        hmm = self.hmm.substitute(values)
        num = {s: substitute(v, values) for s, v in self.num.items()}
        den = {s: substitute(v, values) for s, v in self.den.items()}
        return ratio(normalised(hmm, num, obs), normalised(hmm, den, obs))


def normalised(hmm: HMM, w: Weights, obs: Sequence[int]) -> Fraction:
    """``P(obs)`` under constant initial weights ``w``, normalised by their total."""
    return Fraction(hmm.probability(w, obs)) / Fraction(total(w))


def timeout_ms(seconds: float) -> int:
    """A per-query timeout in z3's unit: whole milliseconds, at least 1, at most 2^32 - 1."""
    if not 0 < seconds <= Z3_MAX_MS / 1000:
        raise ParameterError(f"the z3 timeout must be a number of seconds in (0, {Z3_MAX_MS // 1000}], got {seconds}")
    return max(1, int(seconds * 1000))


def decide(
    hmm: HMM,
    num: Weights,
    den: Weights,
    c: Fraction,
    k: int,
    *,
    timeout: float | None = None,
    encoding: str = "auto",
    params: Mapping[str, Param] | None = None,
    assume_nonneg: Sequence[Entry] = (),
    rlimit: int | None = None,
) -> Verdict:
    """Is there a length-``k`` observation sequence (and parameter values) with ``P(o|num) > c P(o|den)``?

    ``timeout`` is in seconds per solver call and ``rlimit`` a z3 resource limit per
    call (deterministic, unlike a timeout); None means no limit.  ``encoding`` is
    ``auto`` (symbolic for constant models, enumerated otherwise), ``symbolic`` or
    ``enumerated`` (see the module docstring).  ``params`` are the parameters and
    their ranges (default: the HMM's); ``assume_nonneg`` lists further polynomials
    that valid parameter values keep nonnegative (a prior's weights).
    """
    if encoding not in ENCODINGS:
        raise ParameterError(f"unknown encoding {encoding!r} (known: {', '.join(ENCODINGS)})")
    if k < 1:
        raise ParameterError(f"the observation length k must be at least 1, got {k}")
    c = Fraction(c)
    if c < 0:
        raise ParameterError(f"the ratio bound c must be nonnegative, got {c}")
    params = dict(hmm.params if params is None else params)
    unknown = variables((*num.values(), *den.values(), *assume_nonneg, *hmm.entries())) - set(params)
    if unknown:
        raise ParameterError(f"undeclared parameter(s) {', '.join(sorted(unknown))}")
    parametric = hmm.parametric or any(isinstance(v, Poly) for v in (*num.values(), *den.values()))
    if encoding == "auto":
        encoding = "enumerated" if parametric else "symbolic"
    if encoding == "symbolic" and parametric:
        raise ParameterError(
            "the symbolic observation encoding needs a constant model: integer observations with ite "
            "and nonlinear parameter arithmetic make z3 answer unknown; use the enumerated encoding"
        )
    ms = None if timeout is None else timeout_ms(timeout)
    q = _Query(hmm, dict(num), dict(den), c, k, ms, params, [v for v in assume_nonneg if isinstance(v, Poly)], rlimit)
    v = _symbolic(q) if encoding == "symbolic" else _enumerated(q)
    v.encoding = encoding
    return v


# -- the symbolic encoding (FAIER's Algorithm 1) --------------------------------------------


class _Consts:
    """z3 rational constants, built once per value."""

    def __init__(self) -> None:
        self._cache: dict[Fraction, z3.ArithRef] = {}

    def __call__(self, v: Fraction) -> z3.ArithRef:
        r = self._cache.get(v)
        if r is None:
            r = self._cache[v] = rational(v)
        return r


def _select(w: z3.ArithRef, branches: list[tuple[int, z3.ArithRef]]) -> z3.ArithRef:
    """``ite(w == o1, v1, ite(w == o2, v2, ... 0))``: FAIER's Select over the alphabet."""
    out: z3.ArithRef = z3.RealVal(0)
    for o, v in reversed(branches):
        out = z3.If(w == o, v, out)
    return out


def _forward_terms(q: _Query, init: Weights, w: list[z3.ArithRef], tag: str,
                   q_: _Consts, out: list[z3.BoolRef]) -> z3.ArithRef:
    """Forward variables ``alpha_t(s)`` for one initial distribution; returns sum_s alpha_{k-1}(s)."""
    hmm = q.hmm
    alpha: dict[int, z3.ArithRef] = {}
    gamma: dict[int, z3.ArithRef] = {s: q_(Fraction(v)) for s, v in init.items()}
    for t in range(q.k):
        if t > 0:
            terms: dict[int, list[z3.ArithRef]] = {}
            for s, a in alpha.items():
                for j, p in hmm.trans[s].items():
                    terms.setdefault(j, []).append(a if p == 1 else q_(p) * a)
            gamma = {j: (ts[0] if len(ts) == 1 else z3.Sum(ts)) for j, ts in terms.items()}
        alpha = {}
        for s, g in gamma.items():
            row = hmm.emit[s]
            var = z3.Real(f"{tag}_{t}_{s}")
            out.append(var == _select(w[t], [(o, g if e == 1 else q_(e) * g) for o, e in sorted(row.items())]))
            alpha[s] = var
    return z3.Sum(list(alpha.values())) if alpha else z3.RealVal(0)


def _symbolic(q: _Query) -> Verdict:
    t0 = time.perf_counter()
    q_ = _Consts()
    w = [z3.Int(f"o_{t}") for t in range(q.k)]
    cons: list[z3.BoolRef] = [z3.And(0 <= x, x < len(q.hmm.symbols)) for x in w]
    p_num = _forward_terms(q, q.num, w, "a", q_, cons)
    p_den = _forward_terms(q, q.den, w, "b", q_, cons)
    z_num, z_den = Fraction(total(q.num)), Fraction(total(q.den))
    cons.append(p_num * q_(z_den) > q_(q.c * z_num) * p_den)
    s = q.solver()
    s.add(cons)
    t1 = time.perf_counter()
    res = s.check()
    deadline.check("while z3 decided a query")
    t2 = time.perf_counter()
    v = Verdict(UNKNOWN, q.k, queries=1, build_seconds=t1 - t0, solve_seconds=t2 - t1)
    if res == z3.unsat:
        v.status = UNSAT
    elif res == z3.sat:
        m = s.model()
        obs = tuple(m.eval(x, model_completion=True).as_long() for x in w)
        r = ratio(normalised(q.hmm, q.num, obs), normalised(q.hmm, q.den, obs))
        if r > q.c:
            v.status, v.observation, v.ratio, v.params = SAT, obs, r, {}
        else:  # never trust a model the exact arithmetic does not confirm
            v.reason = f"z3 model {obs} failed the exact check (ratio {r})"
    else:
        v.reason = s.reason_unknown()
    return v


# -- the enumerated encoding (parametric models, QF_NRA) --------------------------------------


def _side_constraints(q: _Query, env: dict[str, z3.ArithRef]) -> list[z3.BoolRef]:
    """Parameter ranges, positive normalisers and nonnegative parametric entries."""
    cons: list[z3.BoolRef] = []
    for name, p in q.params.items():
        x = env[name]
        if p.lo is not None:
            cons.append(x > rational(p.lo) if p.lo_open else x >= rational(p.lo))
        if p.hi is not None:
            cons.append(x < rational(p.hi) if p.hi_open else x <= rational(p.hi))
    for w in (q.num, q.den):
        cons.append(to_z3(total(w), env) > 0)
    nonneg = {v for v in (*q.hmm.entries(), *q.num.values(), *q.den.values(), *q.nonneg) if isinstance(v, Poly)}
    cons.extend(to_z3(v, env) >= 0 for v in nonneg)
    return cons


def _feasible(q: _Query, values: Mapping[str, Fraction], goal: Entry) -> bool:
    """The exact check of a candidate witness: in range, a valid model, and ``goal > 0``."""
    if not all(p.contains(values[n]) for n, p in q.params.items()):
        return False
    if any(substitute(total(w), values) <= 0 for w in (q.num, q.den)):
        return False
    entries = (*q.hmm.entries(), *q.num.values(), *q.den.values(), *q.nonneg)
    if any(substitute(v, values) < 0 for v in entries if isinstance(v, Poly)):
        return False
    return substitute(goal, values) > 0


def _witness_values(q: _Query, model: z3.ModelRef, env: dict[str, z3.ArithRef],
                    goal: Entry) -> tuple[dict[str, Fraction] | None, dict[str, str]]:
    """Exact rational parameter values from a z3 model (algebraic ones approximated and rechecked)."""
    vals = {n: model.eval(x, model_completion=True) for n, x in env.items()}
    approx = {n: (v.as_decimal(20) if z3.is_algebraic_value(v) else str(v)) for n, v in vals.items()}
    for prec in (12, 24, 48, 96):
        cand = {}
        for n, v in vals.items():
            r = v.approx(prec) if z3.is_algebraic_value(v) else v
            cand[n] = Fraction(r.numerator_as_long(), r.denominator_as_long())
        if _feasible(q, cand, goal):
            return cand, approx
        if not any(z3.is_algebraic_value(v) for v in vals.values()):
            break
    return None, approx


def _enumerated(q: _Query) -> Verdict:
    t0 = time.perf_counter()
    hmm = q.hmm
    seq_num = hmm.sequences(q.num, q.k)
    seq_den = hmm.sequences(q.den, q.k)
    z_num, z_den = total(q.num), total(q.den)
    env = {n: z3.Real(n) for n in q.params}
    side = _side_constraints(q, env)
    v = Verdict(UNSAT, q.k)
    seen: set[Any] = set()
    solve = 0.0
    reasons = []
    for obs in sorted(seq_num):  # where P(o|num) = 0 the goal is -c D Z_num <= 0 for valid parameters
        goal = seq_num[obs] * z_den - q.c * seq_den.get(obs, Fraction(0)) * z_num
        if goal in seen or (not isinstance(goal, Poly) and goal <= 0):
            continue
        seen.add(goal)
        s = q.solver("QF_NRA")
        s.add(side)
        s.add(to_z3(goal, env) > 0)
        t1 = time.perf_counter()
        res = s.check()
        deadline.check("while z3 decided a query")
        solve += time.perf_counter() - t1
        v.queries += 1
        if res == z3.sat:
            values, approx = _witness_values(q, s.model(), env, goal)
            v.status, v.observation = SAT, obs
            if values is not None:
                v.params = values
                v.ratio = q.exact_ratio(obs, values)
            else:
                v.approx_params = approx
            break
        if res == z3.unknown:
            v.status = UNKNOWN
            reasons.append(s.reason_unknown())
    if v.status == UNKNOWN:
        v.reason = "; ".join(sorted(set(reasons)))
    v.solve_seconds = solve
    v.build_seconds = time.perf_counter() - t0 - solve
    return v


# -- the smt exact backend for programs of the language -----------------------------------


class SmtBackend(ExactBackend):
    """The ``smt`` backend: programs compiled to layered HMMs, violations decided by z3.

    ``distribution`` is the exact forward algorithm over the compiled model;
    ``exists_violation`` is one FAIER query with point-mass initial distributions on
    ``x`` and ``x'`` (raises :class:`SolverUnknown` when z3 stops at the timeout).
    """

    name = "smt"

    def __init__(self, program: Program, *, timeout: float | None = None, rlimit: int | None = None) -> None:
        super().__init__(program)
        self.timeout, self.rlimit = timeout, rlimit
        self._models: dict[tuple, tuple[HMM, Decoder]] = {}

    def model(self, points: Sequence[tuple[int, ...]]) -> tuple[HMM, Decoder]:
        """The program's layered HMM over ``points`` (cached)."""
        key = tuple(sorted(set(points)))
        if key not in self._models:
            if len(self._models) > 64:
                self._models.clear()
            self._models[key] = hmm_from_program(self.program, key)
        return self._models[key]

    @staticmethod
    def state(hmm: HMM, x: tuple[int, ...]) -> int:
        return hmm.state_index[(0, x, START)]

    def distribution(self, x: Sequence[int]) -> Distribution:
        a = self.check_input(x)
        hmm, dec = self.model([a])
        out: Distribution = {}
        for obs, p in hmm.sequences({self.state(hmm, a): Fraction(1)}, dec.steps).items():
            o = dec(hmm.decode(obs))
            out[o] = out.get(o, Fraction(0)) + p
        return out

    def decide(self, x: Sequence[int], xp: Sequence[int], c: Fraction) -> tuple[Verdict, Decoder, HMM]:
        """The full z3 verdict for ``P(o|x) > c P(o|x')``."""
        a, b = self.check_input(x), self.check_input(xp)
        hmm, dec = self.model([a, b])
        v = decide(hmm, {self.state(hmm, a): Fraction(1)}, {self.state(hmm, b): Fraction(1)},
                   Fraction(c), dec.steps, timeout=self.timeout, rlimit=self.rlimit)
        return v, dec, hmm

    def exists_violation(self, x: Sequence[int], xp: Sequence[int], c: Fraction) -> Output | None:
        v, dec, hmm = self.decide(x, xp, c)
        if v.status == UNKNOWN:
            raise SolverUnknown(f"z3 did not decide P(o|{list(x)}) > {c} P(o|{list(xp)}): {v.reason or 'unknown'}")
        return dec(hmm.decode(v.observation)) if v.status == SAT else None
