"""``dphybrid test``: is the mechanism eps-DP?  A statistical test, never a certificate."""

from __future__ import annotations

import argparse

from hybrid.cli import argtypes
from hybrid.cli.common import emit_json, time_limited
from hybrid.cli.progress import progress_reporter
from hybrid.cli.tester_args import DEFAULT_SAMPLES, add_tester_args, positive_samples, print_witness, resolve_sampler, samples_text
from hybrid.formats import eps_text, lower_str, value_to_json


def register(subs: argparse._SubParsersAction) -> None:
    p = subs.add_parser("test", help="statistically test eps-DP (StatDP test, DP-Sniper attack or audit)")
    add_tester_args(p, "statdp: samples per input of the test (500000; black boxes 100000); sniper: outputs "
                       "drawn by the whole attack (10^7; black boxes 300000); audit: runs (10^6; black boxes 10^5)")
    p.add_argument("--eps", type=argtypes.epsilon, required=True, help="the eps to test (e.g. 0.7 or 7/10)")
    p.add_argument("--method", choices=sorted(DEFAULT_SAMPLES), default="statdp", help="tester (default statdp)")
    p.add_argument("--alpha", type=argtypes.probability, default=0.05,
                   help="significance level: statdp rejects when p <= alpha; sniper and audit bounds "
                        "hold with confidence 1 - alpha (default 0.05)")
    p.set_defaults(run=time_limited(run))


def run(args: argparse.Namespace) -> int:
    eps = float(args.eps)  # the testers work in floats
    sampler = resolve_sampler(args)  # first: a bad name is reported before the testers are imported
    from hybrid.testers.testing import audit_test, sniper_estimate, statdp_test

    n = positive_samples(args, args.method, sampler)
    with progress_reporter(quiet=args.json) as report:
        if args.method == "statdp":
            res = statdp_test(sampler, eps, samples=n, alpha=args.alpha, seed=args.seed, progress=report)
        elif args.method == "sniper":
            res = sniper_estimate(sampler, samples=n, confidence=1 - args.alpha, seed=args.seed, progress=report)
        else:
            res = audit_test(sampler, samples=n, beta=args.alpha, seed=args.seed, progress=report)
    out = res.to_json()
    violation = out.get("violation", res.eps_lower > args.eps)
    out["eps_tested"], out["violation"] = value_to_json(args.eps), violation
    if args.json:
        emit_json(out)
        return 0
    verdict = (f"NOT {eps_text(args.eps)}-DP (statistical evidence)" if violation
               else f"no evidence against {eps_text(args.eps)}-DP")
    print(f"{out['mechanism']}: {verdict}  [method {res.method}, seed {res.seed}, {samples_text(res, n)}]")
    if res.method == "statdp":
        print(f"  p-value {out['p_value']:.4g} at eps = {eps_text(args.eps)} (alpha {args.alpha:g})")
    else:
        print(f"  eps >= {lower_str(res.eps_lower, 4)} with confidence {res.confidence:g}")
    print_witness(res)
    return 0
