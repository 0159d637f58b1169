"""``dphybrid verify``: exact global epsilon of a mechanism, or a proof / refutation of eps-DP.

``--input-range LO..HI`` narrows the declared domain to a box first (a mechanism with
continuous noise over ``{0,1,2}^3`` rather than its whole domain); with continuous noise
the level is a rigorous enclosure (``ratio_enclosure``), finite outputs only.
"""

from __future__ import annotations

import argparse
from typing import Any

from hybrid.cli import argtypes
from hybrid.cli.common import add_mechanism_args, add_time_budget, emit_json, no_result, resolve, time_limited
from hybrid.cli.progress import progress_reporter
from hybrid.cli.render import cut_text, pair_text, params_text
from hybrid.formats import (enclosure_str, eps_text, lower_str, output_str, params_to_json, ratio_lower_str,
                            upper_str, value_to_json, witness_to_json)
from verifiers.bdd.bitblast import DEFAULT_NODE_BUDGET
from verifiers.ratio import ratio_str
from verifiers.verify import Verification, restricted, verify


def register(subs: argparse._SubParsersAction) -> None:
    p = subs.add_parser("verify", help="exact global epsilon over all neighbour pairs (or prove --eps)")
    add_mechanism_args(p)
    p.add_argument("--backend", default="auto",
                   help="exact backend: auto, bdd, enumerate, smt or continuous (default auto)")
    p.add_argument("--input-range", type=argtypes.int_range, metavar="LO..HI", default=None,
                   help="verify only inputs with every coordinate in LO..HI (e.g. 0..2)")
    p.add_argument("--eps", type=argtypes.epsilon, default=None,
                   help="prove or refute eps-DP (natural log; 7/10 is exactly seven tenths)")
    p.add_argument("--precision", type=argtypes.precision, default=None,
                   help="also bisect eps with the decision oracle to this width")
    p.add_argument("--node-budget", type=argtypes.positive_int, default=DEFAULT_NODE_BUDGET,
                   help=f"BDD node budget (default {DEFAULT_NODE_BUDGET})")
    p.add_argument("--reorder", action="store_true", help="dynamic BDD variable reordering while building")
    add_time_budget(p)
    p.set_defaults(run=time_limited(run))


def _remedy(limit: dict[str, int]) -> str:
    if "bdd_nodes" in limit:
        return "raise --node-budget or try --backend enumerate"
    if "domain_points" in limit:
        return "narrow the domain with --input-range LO..HI"
    return "raise --time-budget or narrow the domain with --input-range LO..HI"


def to_json(v: Verification, mech: Any, params: dict[str, Any], precision: float | None) -> dict[str, Any]:
    """The JSON result of a verification (fields as in DESIGN.md)."""
    r = v.result
    out: dict[str, Any] = {
        "mechanism": mech.name, "params": params_to_json(params), "status": v.status,
        "backend": v.backend, "certified": r is not None, "domain": v.program.domain.describe(),
    }
    if v.library is not None:
        out.update(bdd_library=v.library, bdd_nodes=v.bdd_nodes)
    if r is not None and (r.complete or r.x is not None):
        enclosed = hasattr(r.ratio, "hi")  # continuous noise: the level is an enclosure
        out.update(
            ratio=ratio_str(r.ratio.lo if enclosed else r.ratio), eps_lower=value_to_json(r.eps_lower),
            eps_upper=value_to_json(r.eps_upper) if r.complete else None,
            witness=witness_to_json(mech.name, params, r.x, r.x_prime, [] if r.output is None else [r.output])
            if r.x is not None else None,
            pairs=r.pairs,
        )
        if enclosed:
            out.update(ratio_enclosure=r.ratio.to_json(), refined=r.decided)
    else:
        out.update(ratio=None, eps_lower=None, eps_upper=None, witness=None, pairs=0 if r is None else r.pairs)
    if v.status != "ok":
        out.update(limit=v.limit, limits_hit=[v.stopped or f"{k} budget of {n}" for k, n in v.limit.items()])
    claimed = mech.claimed_eps(**params)
    out["claimed_eps"] = value_to_json(claimed)
    out["eps"] = value_to_json(v.eps)
    out["proved_dp"] = v.proved_dp
    out["precision"] = precision
    if v.bisection is not None:
        b = v.bisection
        out["bisection"] = {"lo": b.lo, "hi": b.hi, "queries": b.queries}
    out["timings"] = {k: round(t, 6) for k, t in v.timings.items()}
    return out


def run(args: argparse.Namespace) -> int:
    mech, params = resolve(args)
    program = mech.trace(**params)
    if args.input_range is not None:
        program = restricted(program, *args.input_range)
    with progress_reporter(quiet=args.json) as say:
        say(f"compiling {mech.name}")
        v = verify(program, backend=args.backend, eps=args.eps, precision=args.precision, progress=say,
                   **({"node_budget": args.node_budget, "reorder": args.reorder}
                      if args.backend in ("auto", "bdd") else {}))
    data = to_json(v, mech, params, args.precision)
    if args.json:
        emit_json(data)
    if data["ratio"] is None and v.status != "ok":  # nothing to print but the one no-result sentence
        return no_result(data["limits_hit"][0], _remedy(data["limit"]))
    if not args.json:
        _print(data, v)
    return 0


def _print(d: dict[str, Any], v: Verification) -> None:
    lib = f" ({d['bdd_library']}, {d['bdd_nodes']} BDD nodes)" if "bdd_library" in d else ""
    print(f"{d['mechanism']} {params_text(d['params'])}: backend {d['backend']}{lib}")
    if d["status"] == "time_limit":
        print(f"  stopped: {d['limits_hit'][0]}")
        print(f"  best pair so far: e^eps >= {ratio_lower_str(d['ratio'])}, eps >= {lower_str(d['eps_lower'])} "
              f"(certified lower bound; {d['pairs']} neighbour pairs examined, nothing proved about the rest)")
        if d["proved_dp"] is False:
            print(f"  {eps_text(v.eps)}-DP is violated (this pair)")
        return
    r = v.result
    eps = f"[{lower_str(d['eps_lower'])}, {upper_str(d['eps_upper'])}]"
    if "ratio_enclosure" in d:
        print(f"  e^eps in {enclosure_str(*d['ratio_enclosure'], digits=15)} (rigorous enclosure), eps in {eps} "
              f"over {d['pairs']} neighbour pairs of {d['domain']}")
    else:
        print(f"  exact e^eps = {d['ratio']}, eps in {eps} "
              f"over {d['pairs']} neighbour pairs")
    if r.x is not None:
        print(f"  witness {pair_text(r.x, r.x_prime)}, output {cut_text(output_str(r.output))}")
    if d["eps"] is not None:
        verdict = {True: "holds (proved)", False: "is violated (witness above)", None: "undecided"}[d["proved_dp"]]
        print(f"  {eps_text(v.eps)}-DP {verdict}")
    if "bisection" in d:
        b = d["bisection"]
        print(f"  bisection with the decision oracle: eps in [{lower_str(b['lo'])}, {upper_str(b['hi'])}] "
              f"({b['queries']} queries)")
    print("  timings: " + ", ".join(f"{k} {t:.3f} s" for k, t in d["timings"].items()))
