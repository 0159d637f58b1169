"""``dphybrid sample`` at large n and many samples (issue 30: ``noisy_hist1 -p n=10000 -n 1000000``
in under 10 s cold): wall time cold and warm, peak memory, and the draw rate per core against
numpy's ``Generator.laplace`` measured in the same run.

Each command runs in a fresh process: cold with empty kernel caches (``DPHYBRID_CACHE_DIR`` and
``NUMBA_CACHE_DIR`` in a new folder: numba compiles the kernel and the RNG), then warm with
the caches that run filled.  ``sample`` summarises a continuous output's first ``--top`` (20)
components and draws only their slice (exactly their joint law: 20 Laplace draws a sample, not
n), so memory and time stay small at any n; the table's draws are those it made.  The last line
compares the target with the cold run and with what drawing the whole output (``--top 0``) would
cost at the per-core rate of the whole program's sampler measured here.  Rates are per CPU second
(the drawing's CPU time, all threads), so a machine shared with other work gives the same rates;
the wall times are what this machine gave at the load printed.

Run: ``python -m bench.large_sample [--quick]`` (``--quick``: -n 10^5 only).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numba
import numpy as np

from bench.common import best_time, machine, markdown_table
from samplers import catalogue
from samplers.compile import compile_sampler

SIZES = (1000, 10_000)
SAMPLES = (100_000, 1_000_000)
TARGET = (10_000, 1_000_000, 10.0)  # n, -n, seconds cold
RATE_DRAWS = 20_000_000  # draws timed for each per-core rate


def run_command(n: int, samples: int, caches: str) -> dict:
    """``dphybrid sample noisy_hist1 -p n=N -n SAMPLES`` in a fresh process: wall, its own timings, peak RSS."""
    cmd = [sys.executable, "-m", "hybrid.cli", "sample", "noisy_hist1", "-p", f"n={n}", "-n", str(samples),
           "--input", ",".join(["1"] * n), "--time-budget", "900", "--json"]
    env = {**os.environ, "DPHYBRID_CACHE_DIR": caches + "/k", "NUMBA_CACHE_DIR": caches + "/n"}
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        t = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, text=True, env=env)
        _, status, usage = os.wait4(proc.pid, 0)  # this child's own peak memory
        wall = time.perf_counter() - t
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if proc.returncode:
            raise SystemExit(f"{' '.join(cmd[2:8])} failed: {err.read().strip()[-300:]}")
        res = json.loads(out.read())
        return {"wall": wall, **res["timings"], "drawn": res["drawn_components"], "rss_mib": usage.ru_maxrss / 1024}


def per_core_rates() -> tuple[float, float]:
    """Laplace draws per CPU second on one core: numpy's ``Generator.laplace`` and the sampler of
    ``noisy_hist1 -p n=10000`` (the kernel ``sample`` runs; one draw and one addition a coordinate),
    both in this thread, timed by its CPU clock."""
    rng = np.random.default_rng(1)
    block = 1_000_000
    numpy_rate = RATE_DRAWS / best_time(lambda: [rng.laplace(0.0, 10.0, block) for _ in range(RATE_DRAWS // block)],
                                        clock=time.thread_time)
    n = TARGET[0]
    sampler = compile_sampler(catalogue.get("noisy_hist1"), n=n)
    sampler.warm_up()
    x = (1,) * n
    ours = RATE_DRAWS / best_time(lambda: sampler.sample(x, RATE_DRAWS // n, 1, threads=1, columns=20),
                                  clock=time.thread_time)
    return numpy_rate, ours


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="-n 10^5 only")
    args = ap.parse_args()
    threads = numba.config.NUMBA_NUM_THREADS
    load0 = os.getloadavg()[0]
    numpy_rate, rate = per_core_rates()
    rows, target_cold = [], None
    for n in SIZES:
        for samples in SAMPLES[:1] if args.quick else SAMPLES:
            with tempfile.TemporaryDirectory() as d:
                runs = [("cold", run_command(n, samples, d)), ("warm", run_command(n, samples, d))]
            for kind, r in runs:
                draws = r["drawn"] * samples
                rows.append([f"sample noisy_hist1 -p n={n} -n {samples:,}", kind, r["wall"], r["compile"], r["sample"],
                             f"{draws:.3g}", r["rss_mib"], draws / max(r["wall"], 1e-9)])
                if (n, samples) == TARGET[:2] and kind == "cold":
                    target_cold = r
    print(f"dphybrid sample at large n ({machine()}, {threads} numba threads; load average {load0:.1f} at the "
          f"start, {os.getloadavg()[0]:.1f} at the end)\n")
    print(markdown_table(["command", "caches", "wall s", "compile s", "sample s", "draws", "peak MiB",
                          "draws per wall s"], rows) + "\n")
    print("draws: the Laplace draws made, the summarised components' (20) times -n.\n")
    print(markdown_table(["one core, Laplace draws", "draws per CPU second", "/ numpy"],
                         [["numpy Generator.laplace (baseline)", numpy_rate, 1.0],
                          [f"noisy_hist1 n={TARGET[0]} sampler, whole program", rate, rate / numpy_rate]]) + "\n")
    n, samples, target = TARGET
    whole = n * samples / (rate * threads)
    measured = ("not run (--quick)" if target_cold is None else
                f"{target_cold['wall']:.2f} s cold ({'met' if target_cold['wall'] < target else 'not met'}; "
                f"{target_cold['drawn'] * samples:.3g} draws)")
    print(f"Target `sample noisy_hist1 -p n={n} -n {samples:,}` cold in < {target:g} s: {measured}. Drawing the "
          f"whole output instead (--top 0, {n * samples:.3g} draws) at the whole program's {rate:.3g} draws /s per "
          f"core on {threads} cores would take at least {whole:.1f} s.")


if __name__ == "__main__":
    main()
