"""``dphybrid pufferfish``: check eps-Pufferfish privacy (or DP) of an HMM model file with z3.

``MODEL`` is a model file (JSON, or YAML with pyyaml) of kind ``hmm``, ``pufferfish``
or ``dp``, or the name of a shipped example (``--list``).  Exactly one of ``--eps``
(sound: a violation is claimed at the upper end of the rational bracket of e^eps,
privacy at the lower end), ``--c`` (an exact rational ratio bound) or ``--precision``
(bisection on eps with SMT as the oracle).  ``--k`` increases the observation length
up to K and reports the largest length proved.  Undecided queries (the per-query
``--timeout``) give status ``unknown``.
"""

from __future__ import annotations

import argparse
import time
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from hybrid.cli import argtypes
from hybrid.cli.common import add_json_flag, add_time_budget, emit_json, no_result, parse_params, time_limited
from hybrid.cli.progress import progress_reporter
from hybrid.formats import eps_text, exact_str, lower_str, output_str, output_to_json, upper_str, value_to_json
from samplers.errors import ParameterError, SolverUnknown
from samplers.lang.exact import exact, fraction_str
from verifiers.epsilon import eps_lower, exp_bracket
from verifiers.smt.hmm import Instance
from verifiers.ratio import ratio_str

if TYPE_CHECKING:
    from verifiers.smt.pufferfish import Check, CheckResult


def register(subs: argparse._SubParsersAction) -> None:
    p = subs.add_parser("pufferfish", help="check eps-Pufferfish privacy / DP of an HMM model with z3")
    p.add_argument("model", metavar="MODEL", nargs="?", help="model file, or a shipped example's name")
    goal = p.add_mutually_exclusive_group()
    goal.add_argument("--eps", type=argtypes.epsilon,
                      help="check eps-Pufferfish privacy (natural log; 7/10 is exactly seven tenths)")
    goal.add_argument("--c", dest="ratio", metavar="C", help="check the exact ratio bound C (e.g. 1999/1000)")
    goal.add_argument("--precision", type=argtypes.precision,
                      help="bisect eps to this precision with SMT as the oracle")
    p.add_argument("--k", type=argtypes.positive_int, help="check observation lengths up to K (models with loops)")
    p.add_argument("--timeout", type=argtypes.positive, default=60.0,
                   help="seconds per z3 query (default 60; at most about 49 days, z3's limit)")
    p.add_argument("--encoding", default="auto", help="SMT encoding: auto, symbolic or enumerated (default auto)")
    p.add_argument("-p", "--param", action="append", default=[], metavar="NAME=VALUE",
                   help="fix a model parameter to an exact value (repeatable)")
    p.add_argument("--list", action="store_true", help="list the shipped example models")
    add_json_flag(p)
    add_time_budget(p)
    p.set_defaults(run=time_limited(run))


def _symbol(s: Any) -> Any:
    return s if isinstance(s, str) else output_to_json(s)


def witness_json(inst: Instance, check: Check) -> dict[str, Any]:
    """The JSON form of a violating check: pair, order, observation, parameters, exact ratio."""
    v = check.verdict
    symbols = inst.hmm.decode(v.observation)
    out: dict[str, Any] = {"pair": check.pair.name, "order": check.order, **value_to_json(check.pair.info),
                           "observation": [_symbol(s) for s in symbols]}
    if inst.decode is not None:
        out["mechanism"] = inst.hmm.name
        out["event"] = [output_to_json(inst.decode(symbols))]
    out["params"] = value_to_json(v.params or {})
    if v.approx_params:
        out["approx_params"] = v.approx_params
    if v.ratio is not None:
        out["ratio"] = ratio_str(v.ratio)
        out["eps_lower"] = eps_lower(v.ratio)
    return out


def _describe_witness(inst: Instance, check: Check) -> list[str]:
    v = check.verdict
    symbols = inst.hmm.decode(v.observation)
    num, den = check.pair.name.split(" / ", 1) if " / " in check.pair.name else ("pi", "tau")
    if check.order == "tau/pi":
        num, den = den, num
    lines = [f"  witness: P(o | {num}) > c P(o | {den})",
             f"  observation: {' '.join(output_str(s) if not isinstance(s, str) else s for s in symbols)}"]
    if inst.decode is not None:
        lines[-1] += f"  (output {output_str(inst.decode(symbols))})"
    if v.params:
        lines.append("  parameters: " + ", ".join(f"{n} = {fraction_str(x)}" for n, x in v.params.items()))
    if v.approx_params:
        lines.append("  parameters (algebraic): " + ", ".join(f"{n} ~ {x}" for n, x in v.approx_params.items()))
    if v.ratio is not None:
        lines.append(f"  exact ratio at the witness: {exact_str(ratio_str(v.ratio))} "
                     f"(eps >= {lower_str(eps_lower(v.ratio), 9)})")
    return lines


def _result_json(inst: Instance, results: list[CheckResult], status: str) -> dict[str, Any]:
    last = results[-1]
    reasons = sorted({ch.verdict.reason for r in results for ch in r.checks if ch.verdict.reason})
    proved = [r.k for r in results if r.status == "holds"]
    out: dict[str, Any] = {
        "model": inst.name, "backend": "smt", "status": status, "c": fraction_str(last.c), "k": last.k,
        "largest_k_proved": max(proved) if proved else None,
        "checks": sum(len(r.checks) for r in results), "queries": sum(r.queries for r in results),
        "witness": witness_json(inst, last.witness) if last.witness else None,
    }
    if reasons:
        out["unknown_reasons"] = reasons
    return out


def _check(inst: Instance, c: Fraction, args: argparse.Namespace) -> list[CheckResult]:
    kw = dict(timeout=args.timeout, encoding=args.encoding)
    k_max = inst.k if args.k is None else args.k
    with progress_reporter(quiet=args.json) as say:
        say(f"checking {inst.name} at c = {exact_str(c)} with z3")
        return _pufferfish().check_lengths(inst, c, k_max, k_min=min(inst.k, k_max), **kw).results


def _fix_params(inst: Instance, items: list[str]) -> Instance:
    values = {n: exact(v, what=f"parameter {n}") for n, v in parse_params(items).items()}
    return inst.substitute(values) if values else inst


def _pufferfish() -> Any:
    """The z3-backed module, imported on use (z3's import is slow for the other commands)."""
    import verifiers.smt.pufferfish as pf

    return pf


def run(args: argparse.Namespace) -> int:
    pf = _pufferfish()
    load_model, shipped_models = pf.load_model, pf.shipped_models
    if args.list:
        shipped = [(name, load_model(name).description) for name in shipped_models()]
        if args.json:
            emit_json([{"name": name, "description": text} for name, text in shipped])
        for name, text in shipped if not args.json else []:
            print(f"{name:<24} {text}")
        return 0
    if args.model is None:
        raise ParameterError("give a MODEL file (or --list for the shipped examples)")
    if args.eps is None and args.ratio is None and args.precision is None:
        raise ParameterError("give one of --eps, --c or --precision")
    from verifiers.smt.backend import timeout_ms

    timeout_ms(args.timeout)  # z3's range, checked before the model is loaded
    t0 = time.perf_counter()
    inst = _fix_params(load_model(args.model), args.param)
    load = time.perf_counter() - t0
    if args.precision is not None:
        return _bisect(inst, args, load)
    if args.ratio is not None:
        c = exact(args.ratio, what="--c")
        if c < 0:
            raise ParameterError(f"--c must be nonnegative, got {args.ratio}")
        results = _check(inst, c, args)
        status = results[-1].status
    else:
        c_lo, c_hi = exp_bracket(args.eps)
        results = _check(inst, c_hi, args)
        status = results[-1].status
        if status == "holds":  # no violation above e^eps: prove privacy below it
            results = _check(inst, c_lo, args)
            status = {"violated": "inconclusive"}.get(results[-1].status, results[-1].status)
    seconds = time.perf_counter() - t0
    out = _result_json(inst, results, status)
    out["eps"] = value_to_json(args.eps)
    out["timings"] = {"load": load, "check": seconds - load}
    if args.json:
        emit_json(out)
        return _status(status, out.get("unknown_reasons"))
    what = f"e^({eps_text(args.eps)})" if args.eps is not None else out["c"]
    print(f"{inst.name}: {status} at c = {what} (k = {out['k']}, {out['checks']} checks, "
          f"{out['queries']} queries, {seconds:.3f} s)")
    if out["largest_k_proved"] is not None and args.k is not None:
        print(f"  proved for every observation length up to k = {out['largest_k_proved']}")
    if results[-1].witness:
        print("\n".join(_describe_witness(inst, results[-1].witness)))
    for reason in out.get("unknown_reasons", []):
        print(f"  unknown: {reason}")
    return _status(status, out.get("unknown_reasons"))


def _status(status: str, reasons: list[str] | None) -> int:
    """0, or the no-result exit when the solver decided nothing."""
    if status != "unknown":
        return 0
    return no_result(f"z3 decided nothing ({(reasons or ['unknown'])[0]})", "raise --timeout or lower --k")


def _bisect(inst: Instance, args: argparse.Namespace, load: float) -> int:
    t0 = time.perf_counter()
    kw = dict(timeout=args.timeout, encoding=args.encoding)
    try:
        with progress_reporter(quiet=args.json) as say:
            say(f"bisecting the level of {inst.name} with z3")
            b = _pufferfish().bisect_instance(inst, args.precision, k=args.k, **kw)
        status, reason = "bracketed", None
    except SolverUnknown as e:
        b, status, reason = None, "unknown", str(e)
    seconds = time.perf_counter() - t0
    out: dict[str, Any] = {"model": inst.name, "backend": "smt", "status": status, "precision": args.precision,
                           "k": inst.k if args.k is None else args.k}
    if b is not None:
        out.update(eps_lower=b.lo, eps_upper=value_to_json(b.hi), queries=b.queries,
                   witness=witness_json(inst, b.witness) if b.witness else None)
        if b.witness and b.witness.verdict.ratio is not None:
            out["ratio"] = ratio_str(b.witness.verdict.ratio)
    else:
        out["reason"] = reason
    out["timings"] = {"load": load, "bisect": seconds}
    if args.json:
        emit_json(out)
    elif b is None:
        print(f"{inst.name}: unknown ({reason})")
    if b is None:
        return _status(status, [str(reason)])
    if args.json:
        return 0
    print(f"{inst.name}: eps in [{lower_str(b.lo, 9)}, {upper_str(b.hi, 9)}] (certified bracket, precision {args.precision}, "
          f"{b.queries} oracle calls, {seconds:.3f} s)")
    if b.witness:
        print("\n".join(_describe_witness(inst, b.witness)))
    return 0
