"""``dphybrid estimate``: a statistical lower bound on eps with its witness and confidence."""

from __future__ import annotations

import argparse

from hybrid.cli import argtypes
from hybrid.cli.common import emit_json, time_limited
from hybrid.cli.progress import progress_reporter
from hybrid.cli.tester_args import (
    add_tester_args,
    positive_samples,
    print_witness,
    resolve_sampler,
    samples_text,
)
from hybrid.formats import lower_str
from hybrid.testers.options import CLASSIFIERS, TRANSFORMS


def register(subs: argparse._SubParsersAction) -> None:
    p = subs.add_parser("estimate", help="statistical lower bound on eps (DP-Sniper attack or StatDP bisection)")
    add_tester_args(p, "sniper: outputs drawn by the whole attack, every stage and input (10^7; black boxes "
                       "300000); statdp: samples per input of each test (500000; black boxes 100000)")
    p.add_argument("--method", choices=("sniper", "statdp"), default="sniper", help="estimator (default sniper)")
    p.add_argument("--confidence", type=argtypes.probability, default=0.9, help="confidence of the bound (default 0.9)")
    p.add_argument("--classifier", choices=CLASSIFIERS, default="logistic", help="sniper classifier")
    p.add_argument("--transform", choices=TRANSFORMS, default="auto", help="sniper feature transform")
    p.add_argument("--precision", type=argtypes.precision, default=0.01, help="statdp bisection precision (default 0.01)")
    p.set_defaults(run=time_limited(run))


def run(args: argparse.Namespace) -> int:
    sampler = resolve_sampler(args)  # first: a bad name is reported before the testers are imported
    from hybrid.testers.testing import sniper_estimate, statdp_interval

    with progress_reporter(quiet=args.json) as report:
        if args.method == "sniper":
            n = positive_samples(args, "sniper", sampler)
            res = sniper_estimate(sampler, samples=n, confidence=args.confidence, seed=args.seed, progress=report,
                                  classifier=args.classifier, transform=args.transform)
        else:
            n = positive_samples(args, "statdp", sampler)
            res = statdp_interval(sampler, samples=n, alpha=1 - args.confidence, precision=args.precision,
                                  seed=args.seed, progress=report)
    if args.json:
        emit_json(res.to_json())
        return 0
    print(f"{res.to_json()['mechanism']}: eps >= {lower_str(res.eps_lower, 4)} with confidence {res.confidence:g} "
          f"[method {res.method}, seed {res.seed}, {samples_text(res, n)}]")
    if res.method == "statdp":
        lo, hi = res.extra["bisection"]
        print(f"  StatDP bisection: largest eps rejected {lo:.4f}, smallest not rejected {hi:.4f} "
              f"(separate tests at level {1 - res.confidence:g}: not a confidence interval)")
    else:
        print(f"  point estimate {res.extra['eps_hat']:.4f} at level c = {res.extra['c']:g}")
    print_witness(res)
    return 0
