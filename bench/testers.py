"""Benchmark of the statistical testers: ``python -m bench.testers [--quick] [--only ...] [--seed N]``.

1. One StatDP-style test (noisy max, m = 5, claimed eps 0.7, pair [1]*5 / [0,2,2,2,2],
   event {0}, 5e5 samples per side, 200 thinning draws) done two ways in the same run:
   the StatDP way (one Python call per sample with numpy's Generator, then a scalar
   Fisher test per thinning draw) and ours (numba batch sampler, vectorised test).
   Target: at least 20x faster.
2. DP-Sniper-style lower bounds at eps = 0.1 (confidence 0.9) against DP-Sniper's
   logged values: Laplace >= 0.0968 in under 20 s, ReportNoisyMax1 >= 0.0923,
   SVT1 >= 0.0858, NoisyHist2 (true eps 10) > 5 (DP-Sniper: 4.60, capped near ln 100).

Timings are wall-clock on this machine and include numba compilation only where said.
``--quick`` is a smoke run: 5e4 samples per side and one timed run of ours in (1), and
a twentieth of each n_final in (2) (the targets are for the full sizes).
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
from scipy.stats import hypergeom

from bench.common import markdown_table
from hybrid.testers.events import SetEvent
from hybrid.testers.features import IDENTITY
from hybrid.testers.fisher import thinned_pvalues, thinning_uniforms
from hybrid.testers.sniper import SniperTester
from samplers import catalogue
from samplers.compile import compile_sampler

X, XP, EPS_CLAIM, N = (1, 1, 1, 1, 1), (0, 2, 2, 2, 2), 0.7, 500_000


def statdp_way(test_eps: float, seed: int, n: int = N) -> tuple[float, float]:
    """The reference procedure: per-sample Python sampling, scalar Fisher tests over thinning draws."""
    prng = np.random.default_rng(seed)

    def noisy_max_v1a(queries: list[int], epsilon: float) -> int:
        noisy = np.asarray(queries, dtype=np.float64) + prng.laplace(scale=2.0 / epsilon, size=len(queries))
        return int(np.argmax(noisy))

    t = time.perf_counter()
    cx = sum(noisy_max_v1a(list(X), EPS_CLAIM) == 0 for _ in range(n))
    cy = sum(noisy_max_v1a(list(XP), EPS_CLAIM) == 0 for _ in range(n))
    cx, cy = max(cx, cy), min(cx, cy)
    ps = []
    for _ in range(200):
        k = prng.binomial(cx, math.exp(-test_eps))
        ps.append(hypergeom.sf(k - 1, 2 * n, n, k + cy))
    return float(np.mean(ps)), time.perf_counter() - t


def ours(sampler, test_eps: float, seed: int, n: int = N) -> tuple[float, float]:
    event = SetEvent(IDENTITY, (0,))
    t = time.perf_counter()
    cx = int(event.mask(sampler.sample(X, n, seed)).sum())
    cy = int(event.mask(sampler.sample(XP, n, seed + 1)).sum())
    cx, cy = max(cx, cy), min(cx, cy)
    p = float(thinned_pvalues(cx, cy, n, n, test_eps, thinning_uniforms(seed))[0])
    return p, time.perf_counter() - t


def bench_statdp(seed: int, n: int = N, reps: int = 3) -> None:
    sampler = compile_sampler(catalogue.get("report_noisy_max1"), eps=EPS_CLAIM)
    t = time.perf_counter()
    sampler.warm_up()
    compile_s = time.perf_counter() - t
    rows = []
    for test_eps in (0.6, 0.8):
        p_ref, t_ref = statdp_way(test_eps, seed, n)
        runs = [ours(sampler, test_eps, seed, n) for _ in range(reps)]
        p_our, t_our = runs[0][0], min(r[1] for r in runs)
        rows.append([test_eps, f"{t_ref:.3f}", f"{p_ref:.3g}", f"{t_our:.4f}", f"{p_our:.3g}",
                     f"{t_ref / t_our:.1f}x", ">= 20x"])
    print(f"StatDP-style test, noisy max m=5, {n} samples per side, 200 thinning draws "
          f"(compile {compile_s:.2f} s; ours: best of {reps})\n")
    print(markdown_table(["test eps", "StatDP way s", "StatDP way p", "ours s", "ours p", "speed-up", "target"],
                         rows))


SUITE = [  # (name, params, n_final, target, DP-Sniper's logged bound)
    ("laplace", {}, 100_000_000, 0.0968, 0.0968),
    ("report_noisy_max1", {}, 100_000_000, 0.0923, 0.0923),
    ("svt1", {}, 200_000_000, 0.0858, 0.0858),
    ("noisy_hist2", {}, 20_000_000, 5.0, 4.6020),
]


def bench_sniper(seed: int, only: set[str] | None, shrink: int = 1) -> None:
    rows = []
    for name, params, n_final, target, logged in SUITE:
        if only and name not in only:
            continue
        n_final //= shrink
        sampler = compile_sampler(catalogue.get(name), **params)
        sampler.warm_up()
        t = time.perf_counter()
        r = SniperTester(sampler, n_final=n_final, seed=seed).run()
        dt = time.perf_counter() - t
        ok = r.eps_lcb >= target if name != "noisy_hist2" else r.eps_lcb > target
        if name == "laplace":
            ok = ok and dt < 20
        rows.append([name, f"{r.eps_lcb:.4f}", f"{r.eps_hat:.4f}", f"{target:.4f}", f"{logged:.4f}",
                     f"{r.attack.c:.3g}", f"{n_final:.0e}", f"{dt:.1f}", "yes" if ok else "NO"])
    print("DP-Sniper-style lower bounds at eps = 0.1, confidence 0.9 (logistic regression)\n")
    print(markdown_table(["mechanism", "lower bound", "estimate", "target", "DP-Sniper", "level c", "n_final",
                          "time s", "pass"], rows))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--only", default="", help="comma-separated: statdp and/or sniper mechanism names")
    ap.add_argument("--quick", action="store_true", help="smaller sample sizes (a smoke run)")
    args = ap.parse_args()
    only = {s for s in args.only.split(",") if s}
    if not only or "statdp" in only:
        bench_statdp(args.seed, n=N // 10 if args.quick else N, reps=1 if args.quick else 3)
    if not only or only - {"statdp"}:
        if not only or "statdp" in only:
            print()
        bench_sniper(args.seed, only - {"statdp"} or None, shrink=20 if args.quick else 1)


if __name__ == "__main__":
    main()
