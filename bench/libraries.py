"""Draw rates of the DP libraries' mechanisms: ``python -m bench.libraries [--quick]``.

Each adapter of :mod:`samplers.libraries` draws a batch of outputs through its library
(OpenDP: compositions or vector calls; diffprivlib: one batched ``randomise`` call where
its code allows, else one call per draw) and, where a draw costs a library call, in
chunks over the cores; the table gives draws per second and how they were drawn,
against numpy drawing the same kind of noise in one vectorised call in the same run
(the baseline: what a library could reach), and for chunked adapters the rate with one
process.  A second table times ``estimate`` (the DP-Sniper-style attack, 3e5 outputs in
all) on OpenDP's randomised response (k = 4, p = 0.7) and diffprivlib's Laplace.  A
library that is not installed gets a row saying so.
"""

from __future__ import annotations

import argparse
import importlib.util
import time
from contextlib import contextmanager
from typing import Iterator

import numpy as np

from bench.common import markdown_table

BASELINES = {  # numpy's own vectorised draw of the same law, per adapter
    "randomized_response": lambda rng, n: rng.choice(4, size=n, p=[0.7, 0.1, 0.1, 0.1]),
    "laplace": lambda rng, n: rng.laplace(0.0, 2.0, n),
    "geometric": lambda rng, n: rng.geometric(0.4, n) - rng.geometric(0.4, n),
    "binary": lambda rng, n: rng.random(n) < 0.73,
    "noisy_max": lambda rng, n: (rng.exponential(1.0, (n, 2)) + [0, 1]).argmax(axis=1),
    "gaussian": lambda rng, n: rng.normal(0.0, 1.0, n),
    "gaussian_analytic": lambda rng, n: rng.normal(0.0, 1.0, n),
    "exponential": lambda rng, n: rng.choice(3, size=n, p=[0.2, 0.4, 0.4]),
}


ESTIMATES = [("opendp:randomized_response", {"k": "4", "p": "0.7"}), ("diffprivlib:laplace", {"epsilon": "0.5"})]
ESTIMATE_SAMPLES = 300_000


@contextmanager
def one_process() -> Iterator[None]:
    """Chunked adapters draw their chunks in this process only (the single-core baseline)."""
    import samplers.library_draws as draws

    saved = draws.workers
    draws.workers = lambda: 1
    try:
        yield
    finally:
        draws.workers = saved


def _rate(box, x, n: int) -> float:
    t = time.perf_counter()
    box.sample(x, n, 0)
    return n / (time.perf_counter() - t)


def estimates() -> list[list[str]]:
    """``estimate`` on the issue's two targets: seconds, outputs drawn, the bound."""
    from hybrid.testers.testing import sniper_estimate
    from samplers.libraries import library_mechanism

    rows = []
    for name, params in ESTIMATES:
        if importlib.util.find_spec(name.split(":")[0]) is None:
            rows.append([name, "not installed", "", "", ""])
            continue
        box = library_mechanism(name, params)
        t = time.perf_counter()
        res = sniper_estimate(box, samples=ESTIMATE_SAMPLES, seed=0)
        dt = time.perf_counter() - t
        drawn = res.extra["outputs_drawn"]
        rows.append([name, f"{dt:.1f}", f"{drawn:,}", f"{drawn / dt:,.0f}", f"{res.eps_lower:.3f} (claimed {box.claimed_eps:.3f})"])
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="10^4 draws per adapter instead of 10^5")
    args = ap.parse_args(argv)
    from samplers.libraries import LIBRARY, library_mechanism
    from samplers.library_draws import workers

    n = 10_000 if args.quick else 100_000
    rows = []
    for name in LIBRARY:
        library, kind = name.split(":")
        if importlib.util.find_spec(library) is None:
            rows.append([name, "not installed", "", "", "", ""])
            continue
        box = library_mechanism(name, {"k": "4", "p": "0.7"} if kind == "randomized_response" else {})
        x = box.domain.lo
        box.sample(x, 10, 0)  # build compositions and caches first
        box.sample(x, 4 * 8192, 1)  # and start the worker processes
        rate = _rate(box, x, n)
        with one_process():
            alone = f"{_rate(box, x, n):,.0f}" if box.parallel else ""
        rng = np.random.default_rng(0)
        t = time.perf_counter()
        BASELINES[kind](rng, n)
        base = n / (time.perf_counter() - t)
        how = f"chunks over {workers()} processes" if box.parallel else "one batched call"
        rows.append([name, f"{rate:,.0f}", how, alone, f"{base:,.0f}", f"{base / rate:,.0f}x"])
    print("## DP libraries' draw rates\n")
    print(markdown_table(["adapter", "draws/s", "drawn as", "draws/s in 1 process", "numpy draws/s",
                          "numpy / library"], rows))
    print(f"\n## estimate on library mechanisms ({ESTIMATE_SAMPLES:,} outputs)\n")
    print(markdown_table(["adapter", "seconds", "outputs drawn", "outputs/s", "eps lower bound"], estimates()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
