"""``dphybrid prove``: eps-DP proved for every input of the declared domain, or why not.

The prover's rules (:data:`verifiers.prover.prove.RULES`) are tried under the time
budget; only a proof its rule's independent checker confirmed is reported, with the
smallest eps found (at most ``--eps`` when given).  ``--out`` saves it as a proof file,
which ``dphybrid certify FILE`` re-checks.
"""

from __future__ import annotations

import argparse
from fractions import Fraction
from typing import Any

from hybrid.cli import argtypes
from hybrid.cli.common import add_mechanism_args, emit_json, resolve, time_limited
from hybrid.cli.render import params_text
from samplers.errors import ParameterError

DEFAULT_TIME_BUDGET = 60.0


def register(subs: argparse._SubParsersAction) -> None:
    p = subs.add_parser("prove", help="prove eps-DP for every input (proof rules, independently re-checked)")
    add_mechanism_args(p)
    p.add_argument("--eps", type=argtypes.epsilon, default=None,
                   help="the eps to prove (default: the smallest eps a rule proves)")
    p.add_argument("--delta", type=argtypes.delta, default=None,
                   help="with --eps: prove (eps, delta)-DP, delta in [0, 1] (e.g. 1e-5 or 1/1000): a proof "
                        "counts only when its delta at eps is at most this")
    p.add_argument("--every-n", action="store_true",
                   help="prove eps-DP for every input size n >= 1 (a mechanism written with the loop construct "
                        "scan; the proof's argument: docs/proofs.md)")
    p.add_argument("--out", metavar="FILE", help="save the proof as JSON (re-check it with 'dphybrid certify FILE')")
    p.add_argument("--time-budget", type=argtypes.positive, default=DEFAULT_TIME_BUDGET, metavar="SECONDS",
                   help=f"time for all proof rules together (default {DEFAULT_TIME_BUDGET:g}); a rule it stops "
                        "gives no proof and says so")
    p.set_defaults(run=time_limited(run))


def run(args: argparse.Namespace) -> int:
    from hybrid.formats import params_to_json
    from hybrid.searcher.proof_file import covered, out_path, write
    from verifiers.prover.proof import Proof
    from verifiers.prover.prove import prove

    if args.delta is not None and args.eps is None:
        raise ParameterError("--delta needs --eps: delta is claimed at an eps")
    mech, params = resolve(args)
    out = out_path(args.out) if args.out is not None else None  # checked before the work ('' names no file)
    program = mech.trace(**params)
    claim = None if args.eps is None else Fraction(args.eps)
    found = prove(program, claim, delta=args.delta, time_budget=float(args.time_budget), every_n=args.every_n)
    proved = isinstance(found, Proof)
    data: dict[str, Any] = {
        "mechanism": mech.name, "params": params_to_json(params), "eps": None if claim is None else float(claim),
        "delta": None if args.delta is None else float(args.delta),
        "every_n": args.every_n, "proved": proved, "proof": found.to_json() if proved else None,
        "no_proof": [] if proved else [n.to_json() for n in found],
    }
    if proved and out is not None:
        write(out, found, program)
        data["written"] = str(out)
    if args.json:
        emit_json(data)
    else:
        _print(data, covered(mech, params, program, args.every_n), args.eps, args.delta)
    return 0


def _print(d: dict[str, Any], domain: str, eps: Any, delta: Any) -> None:
    from hybrid.formats import delta_text, eps_text, proved_upper_str

    head = f"{d['mechanism']} {params_text(d['params'])}"
    if d["proved"]:
        p = d["proof"]
        exact = f"e^eps = {p['ratio']}, " if "ratio" in p else ""
        print(f"{head}: {exact}eps <= {proved_upper_str(p['eps_upper'], p['eps'])}{delta_text(p['delta'])} proved for "
              f"every input of {domain} by the {p['rule']} rule, confirmed by its independent checker")
        print(f"  {p['solver']}")
        if "written" in d:
            print(f"  proof written to {d['written']} (re-check: dphybrid certify {d['written']})")
        return
    claim = f" of {eps_text(eps)}-DP" if eps is not None else ""
    if delta is not None:
        claim = f" of ({eps_text(eps)}, {eps_text(delta)})-DP"
    print(f"{head}: no proof{claim}")
    for n in d["no_proof"]:
        where = f" [{n['where']}]" if n["where"] else ""
        print(f"  {n['rule'] or 'prover'}: {n['reason']}{where}")
    if not d["no_proof"]:
        print("  no proof rule is registered")
