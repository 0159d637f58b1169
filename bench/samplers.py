"""Sampler throughput: numba kernels against numpy-vectorised and per-sample Python code.

For each mechanism: outputs per second of our compiled kernel (1 thread, all threads),
of a numpy-vectorised implementation (the DP-Sniper way), of a per-sample Python loop
using numpy's Generator (the StatDP way), the ratios, and the JIT time of a cold start
and of a second process that loads the kernel from the disk cache.

Run: ``python -m bench.samplers [--quick]``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from typing import Callable

import numba
import numpy as np

from bench.common import best_time, machine, markdown_table, run_python
from samplers import catalogue
from samplers.compile import compile_sampler
from samplers.lang.ir import BOTTOM_CODE

EPS = 0.1


# -- baselines: the same mechanisms written directly in numpy / plain Python -------------
def _geom(rng: np.random.Generator, a: float, size) -> np.ndarray:
    """Two-sided geometric noise P(z) ~ a^|z| as a difference of two geometric draws."""
    return rng.geometric(1 - a, size) - rng.geometric(1 - a, size)


def nmg_numpy(x, n, rng, a=0.5, top=2):
    noisy = np.clip(np.asarray(x) + _geom(rng, a, (n, len(x))), 0, top)
    return np.argmax(noisy + 0.5 * rng.random((n, len(x))), axis=1) + 1  # jitter: uniform ties


def nmg_python(x, rng, a=0.5, top=2):
    noisy = [min(max(v + int(rng.geometric(1 - a)) - int(rng.geometric(1 - a)), 0), top) for v in x]
    best = max(noisy)
    return int(rng.choice([i for i, v in enumerate(noisy) if v == best])) + 1


def rnm_numpy(x, n, rng):
    return np.argmax(np.asarray(x) + rng.laplace(scale=2 / EPS, size=(n, len(x))), axis=1)


def rnm_python(x, rng):
    return int(np.argmax(np.asarray(x) + rng.laplace(scale=2 / EPS, size=len(x))))


def svt_numpy(x, n, rng, c=1, T=0.5):
    rho = rng.laplace(scale=2 / EPS, size=(n, 1))
    above = np.asarray(x) + rng.laplace(scale=4 * c / EPS, size=(n, len(x))) >= T + rho
    done_before = np.cumsum(above, axis=1) - above >= c
    return np.where(done_before, BOTTOM_CODE, above.astype(np.int64))


def svt_python(x, rng, c=1, T=0.5):
    rho = rng.laplace(scale=2 / EPS)
    out, count = [], 0
    for q in x:
        if q + rng.laplace(scale=4 * c / EPS) >= T + rho:
            out.append(1)
            count += 1
            if count >= c:
                break
        else:
            out.append(0)
    return out


def tg_numpy(x, n, rng, a=0.5, top=10):
    return np.clip(x[0] + _geom(rng, a, n), 0, top)


def tg_python(x, rng, a=0.5, top=10):
    return min(max(x[0] + int(rng.geometric(1 - a)) - int(rng.geometric(1 - a)), 0), top)


CASES: list[tuple[str, str, dict, tuple, Callable, Callable]] = [
    ("discrete noisy max (m=5)", "noisy_max_geom", {}, (0, 2, 2, 2, 2), nmg_numpy, nmg_python),
    ("Laplace noisy max (m=5)", "report_noisy_max1", {"eps": EPS}, (1, 1, 1, 1, 1), rnm_numpy, rnm_python),
    ("SVT1 (10 queries)", "svt1", {"eps": EPS}, (0, 1, 2, 1, 0, 1, 2, 1, 0, 1), svt_numpy, svt_python),
    ("truncated geometric (m=10)", "trunc_geom", {"m": 10}, (3,), tg_numpy, tg_python),
]

_STARTUP = """
import json, time
t0 = time.perf_counter()
from samplers import catalogue
from samplers.compile import compile_sampler
t1 = time.perf_counter()
s = compile_sampler(catalogue.get({name!r}), **{params!r})
s.warm_up()
t2 = time.perf_counter()
print(json.dumps({{"import": t1 - t0, "start": t2 - t1}}))
"""


def startup_times(name: str, params: dict) -> tuple[dict, dict]:
    """(cold, cached) start of a fresh process: imports, then compile + first sample."""
    with tempfile.TemporaryDirectory() as d:
        env = {"DPHYBRID_CACHE_DIR": d + "/k", "NUMBA_CACHE_DIR": d + "/n"}
        code = _STARTUP.format(name=name, params=params)
        return run_python(code, env), run_python(code, env)


def measure(quick: bool) -> list[list]:
    n_fast = 2_000_000 if quick else 10_000_000
    n_numpy = 500_000 if quick else 2_000_000
    n_python = 5_000 if quick else 20_000
    threads = numba.config.NUMBA_NUM_THREADS
    rows = []
    for label, name, params, x, numpy_impl, python_impl in CASES:
        sampler = compile_sampler(catalogue.get(name), **params)
        sampler.warm_up()
        rate1 = n_fast / best_time(lambda: sampler.sample(x, n_fast, 1, threads=1))
        rate_all = n_fast / best_time(lambda: sampler.sample(x, n_fast, 1, threads=threads))
        rng = np.random.default_rng(0)
        rate_np = n_numpy / best_time(lambda: numpy_impl(x, n_numpy, rng))
        rate_py = n_python / best_time(lambda: [python_impl(x, rng) for _ in range(n_python)], repeat=1)
        cold, cached = startup_times(name, params)
        rows.append([label, rate1, rate_all, rate_np, rate_py, rate_all / rate_np, rate_all / rate_py,
                     cold["start"], cached["start"], cached["import"]])
    return rows


END_TO_END = 20_000_000
CHUNK = 2_000_000  # the numpy baseline draws in chunks (all at once would need gigabytes)


def numpy_counts(x, n: int, rng: np.random.Generator) -> np.ndarray:
    """The numpy baseline end to end: discrete noisy max drawn vectorised, counted with np.bincount."""
    counts = np.zeros(len(x) + 1, dtype=np.int64)
    for start in range(0, n, CHUNK):
        counts += np.bincount(nmg_numpy(x, min(CHUNK, n - start), rng), minlength=len(x) + 1)
    return counts


def end_to_end(n: int = END_TO_END) -> list:
    """``dphybrid sample`` of ``n`` discrete noisy max draws, in a fresh process (imports, cached kernel
    load, drawing and counting in one pass, JSON), against the numpy baseline drawing and counting as
    many; with the split the command reports of its best run (kernel load, draw + count)."""
    x = (0, 2, 2, 2, 2)
    cmd = [sys.executable, "-m", "hybrid.cli", "sample", "noisy_max_geom", "--input", ",".join(map(str, x)),
           "-n", str(n), "--json"]
    subprocess.run(cmd, capture_output=True, check=True)  # fills the kernel cache
    runs = []
    for _ in range(2):
        t = time.perf_counter()
        out = subprocess.run(cmd, capture_output=True, check=True, text=True).stdout
        runs.append((time.perf_counter() - t, json.loads(out)["timings"]))
    t_cli, timings = min(runs, key=lambda r: r[0])
    rng = np.random.default_rng(0)
    t_np = best_time(lambda: numpy_counts(x, n, rng), repeat=2)
    return ["dphybrid sample, discrete noisy max (m=5)", n, n / t_cli, n / t_np, t_np / t_cli,
            t_cli, timings["compile"], timings["sample"]]


END_TO_END_HEADERS = ["command", "outputs", "end to end /s", "numpy draw + count /s", "x numpy", "wall s",
                      "kernel load s", "draw + count s"]

HEADERS = ["mechanism", "numba 1 thread /s", "numba all threads /s", "numpy vectorised /s",
           "Python loop /s", "x numpy", "x Python loop", "JIT cold s", "cached start s", "import s"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smaller sample sizes")
    ap.add_argument("--end-to-end", action="store_true", help="only the end-to-end sample command")
    args = ap.parse_args()
    print(f"End to end (one process, outputs per second; {machine()})\n")
    print(markdown_table(END_TO_END_HEADERS, [end_to_end()]) + "\n")
    if args.end_to_end:
        return
    rows = measure(args.quick)
    print(f"Sampler throughput (outputs per second; {machine()}, {numba.config.NUMBA_NUM_THREADS} numba threads)\n")
    print(markdown_table(HEADERS, rows))


if __name__ == "__main__":
    main()
