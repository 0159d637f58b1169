"""Certified bounds for continuous noise: DP-Sniper's suite, global levels, Gaussian delta.

1. DP-Sniper's 20 mechanisms at eps = 0.1 with its inputs (``hybrid/suites/builtin/dpsniper.toml``):
   ``search`` with its default count budgets (a time budget per entry as a safety limit);
   the certified bound against DP-Sniper's published (statistical) bound, against our own
   one-sided statistical bound from the same run (the StatDP-style test inside the search), and
   against the true level where the literature gives one (a certified bound above it
   would be a bug);
2. ``verify`` over the inputs ``{0,1,2}^3`` (three queries) for the finite-output mechanisms:
   the global level's enclosure and its time;
3. the Gaussian mechanism's certified delta(eps) against Balle and Wang's analytic formula
   (50-digit mpmath) at three (sigma, eps) points;
4. the float-level audit (``search --float``'s stage, :mod:`verifiers.float64`) on plain numpy
   functions: the certified float64 bound, whether its witness is robust, and its time.

Run: ``python -m bench.continuous [--quick] [--budget SECONDS]``.
"""

from __future__ import annotations

import argparse
import math
import time
import tomllib
from importlib import resources
from typing import Any

import mpmath
import numpy as np

from bench.common import machine, markdown_table
from hybrid.formats import lower_str
from hybrid.searcher.search import search
from samplers import catalogue
from samplers.compile import compile_sampler
from samplers.plain import statdp
from verifiers.continuous.approx_dp import threshold_delta
from verifiers.continuous.backend import ContinuousBackend
from verifiers.float64.witness import audit
from verifiers.verify import restricted, verify

# True levels at the suite's parameters where the literature gives them (an upper bound on
# any certified bound; None: not eps-DP, or no closed form known).
TRUE_EPS: dict[str, float | None] = {
    "laplace": 0.1, "noisy_hist1": 0.1, "noisy_hist2": 10.0, "report_noisy_max1": 0.1,
    "report_noisy_max2": 0.1, "report_noisy_max3": 0.25, "report_noisy_max4": math.inf, "svt1": 0.1,
    "svt2": 0.1, "svt4": 0.175, "svt5": math.inf, "laplace_parallel": 0.1, "prefix_sum": 1.0,
    "numerical_svt": 0.1,
}
FINITE = ("report_noisy_max1", "report_noisy_max2", "svt1", "svt2", "svt4", "svt5", "svt6")
GAUSSIAN_POINTS = ((1.0, 0.5), (2.0, 0.1), (0.5, 1.0))


def _fmt(v: Any) -> str:
    """A published or true value to 4 decimals (our certified bounds go through ``lower_str``)."""
    return "inf" if v in ("inf", math.inf) else f"{v:.4f}"


def suite(quick: bool, budget: float) -> tuple[list[list[Any]], int, int]:
    entries = tomllib.loads(resources.files("hybrid.suites").joinpath("builtin").joinpath("dpsniper.toml").read_text())["entry"]
    if quick:
        entries = [e for e in entries if e["mechanism"] in ("laplace", "report_noisy_max1", "svt1", "prefix_sum")]
    rows, certified, beaten = [], 0, 0
    for e in entries:
        name, params = e["mechanism"], e["params"]
        compile_sampler(catalogue.get(name).trace(**params)).warm_up()  # JIT outside the timing
        t = time.perf_counter()
        r = search(name, params, time_budget=budget)
        seconds = time.perf_counter() - t
        d = r.to_json()
        eps = math.inf if d["eps_lower"] == "inf" else d["eps_lower"]
        ref = e["reference"]["dpsniper"]
        truth = TRUE_EPS.get(name)
        certified += bool(r.certified)
        beaten += bool(r.certified and eps >= ref)
        width = r.bracket[1] - r.bracket[0] if r.certified and r.bracket and r.bracket[1] != math.inf else None
        rows.append([f"{e['reference']['dpsniper_name']} (`{name}`)", lower_str(eps, 4), "yes" if r.certified else "no",
                     _fmt(ref), "yes" if eps >= ref else "no",
                     f">= {lower_str(d['stat_interval'][0], 3)}" if d["stat_interval"] else "-",
                     "-" if truth is None else _fmt(truth),
                     "-" if truth is None else ("yes" if eps <= truth else "NO"),
                     "-" if width is None else f"{width:.1e}", f"{seconds:.1f}"])
    return rows, certified, beaten


def global_levels(quick: bool) -> list[list[Any]]:
    rows = []
    for name in FINITE[:2] if quick else FINITE:
        program = restricted(catalogue.get(name).trace(eps=0.1, n=3), 0, 2)
        t = time.perf_counter()
        v = verify(program, precision=1e-3)
        seconds = time.perf_counter() - t
        g = v.result
        rows.append([name, g.pairs, f"[{g.eps_lower:.6f}, {g.eps_upper:.6f}]",
                     f"{g.eps_upper - g.eps_lower:.1e}" if g.eps_upper != math.inf else "-",
                     f"{list(g.x)} vs {list(g.x_prime)}" if g.x is not None else "-", f"{seconds:.2f}"])
    return rows


def gaussian() -> list[list[Any]]:
    mpmath.mp.dps = 50
    rows = []
    for sigma, eps in GAUSSIAN_POINTS:
        b = ContinuousBackend(catalogue.get("gaussian_mechanism").trace(sigma=sigma))
        t = time.perf_counter()
        d = threshold_delta(b, (1,), (0,), eps)
        seconds = time.perf_counter() - t
        s, e = mpmath.mpf(sigma), mpmath.mpf(eps)
        truth = mpmath.ncdf(1 / (2 * s) - e * s) - mpmath.exp(e) * mpmath.ncdf(-1 / (2 * s) - e * s)
        lo = mpmath.mpf(d.lo.numerator) / d.lo.denominator
        rows.append([sigma, eps, mpmath.nstr(lo, 15), mpmath.nstr(truth, 15), mpmath.nstr(truth - lo, 3),
                     "yes" if 0 <= truth - lo < 1e-6 else "NO", f"{seconds:.2f}"])
    return rows


def _textbook(prng: Any, queries: Any, epsilon: float) -> Any:
    return queries[0] + prng.laplace(scale=1 / epsilon)


def _loc(prng: Any, queries: Any, epsilon: float) -> Any:
    return prng.laplace(queries[0], 1 / epsilon)


def _gauss(prng: Any, queries: Any, epsilon: float) -> Any:
    return queries[0] + prng.normal(0.0, 1 / epsilon)


def _rnm_value(prng: Any, queries: Any, epsilon: float) -> Any:
    noisy = [q + prng.exponential(scale=2 / epsilon) for q in queries]
    return noisy[int(np.argmax(noisy))]


def float_level() -> list[list[Any]]:
    """The audit on x = (1, 0, ...), x' = (0, 0, ...) at eps = 0.1 (times exclude tracing)."""
    rows = []
    for name, fn, size in (("x + laplace(1/eps)", _textbook, 1), ("laplace(x, 1/eps)", _loc, 1),
                           ("x + normal(0, 1/eps)", _gauss, 1), ("noisy max value, exponential(2/eps)", _rnm_value, 3)):
        prog = statdp(fn, size=size, domain=(0, 1), neighbours="one_differ").trace(epsilon=0.1)
        x, xp = (1,) + (0,) * (size - 1), (0,) * size
        t = time.perf_counter()
        a = audit(prog, [(x, xp), (xp, x)])
        rows.append([name, lower_str(a.eps_lower) if a.eps_lower is not None else "none", a.certified,
                     a.witness["robust"] if a.witness else "", f"{time.perf_counter() - t:.2f}"])
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="four suite entries and two global sweeps")
    ap.add_argument("--budget", type=float, default=300.0,
                    help="search time budget per entry, a safety limit (default 300 s)")
    args = ap.parse_args()
    rows, certified, beaten = suite(args.quick, args.budget)
    print(f"DP-Sniper's suite at eps = 0.1 ({machine()}; `search` with --time-budget {args.budget:g} per entry, "
          f"kernels compiled before timing): **{certified} of {len(rows)} certified, {beaten} at least "
          "DP-Sniper's bound**\n")
    print(markdown_table(["mechanism", "certified eps >=", "certified", "DP-Sniper eps >=", "at least DP-Sniper's",
                          "our statistical bound (one-sided)", "true eps", "<= true eps", "bracket width", "entry s"], rows))
    print("\nGlobal level over inputs {0,1,2}^3 (n = 3 queries, eps = 0.1), `dphybrid verify NAME -p n=3 "
          "--input-range 0..2`\n")
    print(markdown_table(["mechanism", "neighbour pairs", "eps in", "width", "witness", "seconds"],
                         global_levels(args.quick)))
    print("\nGaussian mechanism (sensitivity 1): certified delta(eps) lower bound (best threshold event) against "
          "Balle and Wang's analytic formula (50-digit mpmath)\n")
    print(markdown_table(["sigma", "eps", "certified delta >=", "analytic delta", "difference", "within 1e-6",
                          "seconds"], gaussian()))
    print("\nFloat-level audit (numpy's float64 samplers, eps = 0.1, x = (1, 0, ...), x' = (0, 0, ...))\n")
    print(markdown_table(["program", "float64 eps >=", "certified", "robust witness", "seconds"], float_level()))


if __name__ == "__main__":
    main()
