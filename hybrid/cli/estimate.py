"""``dphybrid estimate``: a statistical lower bound on eps with its witness and confidence."""

from __future__ import annotations

import argparse
import math

from hybrid.cli.common import emit_json, time_limited
from hybrid.cli.progress import progress_reporter
from hybrid.cli.tester_args import add_tester_args, positive_samples, print_witness, resolve_sampler
from hybrid.sniper import CLASSIFIERS
from hybrid.testing import sniper_estimate, statdp_interval
from hybrid.transforms import NAMES
from samplers.errors import ParameterError


def register(subs: argparse._SubParsersAction) -> None:
    p = subs.add_parser("estimate", help="statistical lower bound on eps (DP-Sniper attack or StatDP bisection)")
    add_tester_args(p, "sniper: outputs drawn by the whole attack, every stage and input (10^7; black boxes "
                       "300000); statdp: samples per input of each test (500000; black boxes 100000)")
    p.add_argument("--method", choices=("sniper", "statdp"), default="sniper", help="estimator (default sniper)")
    p.add_argument("--confidence", type=float, default=0.9, help="confidence of the bound (default 0.9)")
    p.add_argument("--classifier", choices=CLASSIFIERS, default="logistic", help="sniper classifier")
    p.add_argument("--transform", choices=NAMES, default="auto", help="sniper feature transform")
    p.add_argument("--precision", type=float, default=0.01, help="statdp bisection precision (default 0.01)")
    p.set_defaults(run=time_limited(run))


def run(args: argparse.Namespace) -> int:
    if not 0 < args.confidence < 1:
        raise ParameterError(f"--confidence must lie in (0, 1), got {args.confidence}")
    if not args.precision > 0:
        raise ParameterError(f"--precision must be positive, got {args.precision}")
    sampler = resolve_sampler(args)
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
    c = res.candidate
    lo, hi = c.stat_interval if c else (0.0, math.inf)
    print(f"{res.to_json()['mechanism']}: eps >= {res.eps_lower:.4f} with confidence {res.confidence:g} "
          f"[method {res.method}, seed {res.seed}, {n} samples]")
    if res.method == "statdp":
        print(f"  statistical interval [{lo:.4f}, {hi:.4f}]")
    else:
        print(f"  point estimate {res.extra['eps_hat']:.4f} at level c = {res.extra['c']:g}")
    print_witness(res)
    return 0
