"""Kernels that loop, not unroll: compile time against the program's size, and sampling speed.

The generated kernel (:mod:`samplers.codegen`) unrolls the program, so numba's compile time grows
with it; the interpreter (:mod:`samplers.interpreter`) is one kernel compiled once for every
program.  Two tables, each measured in this run (``bench.large_sample`` measures ``dphybrid sample``
at large n end to end):

- compile time of ``noisy_hist1`` at n = 10 .. 10,000 in fresh processes, both kernels, with empty
  caches (cold) and with a cache filled by another run (for the interpreter: by another program);
  generated kernels whose forecast exceeds :data:`RUN_LIMIT` seconds are not compiled (forecast shown);
- sampling throughput, interpreter against generated kernel (1 thread, both compiled).

Run: ``python -m bench.kernels [--quick]``.
"""

from __future__ import annotations

import argparse
import tempfile

from bench.common import best_time, machine, markdown_table, run_python
from samplers import catalogue
from samplers.compile import compile_sampler, jit_forecast
from samplers.codegen import generate

SIZES = (10, 100, 1000, 10000)
RUN_LIMIT = 120.0  # seconds of forecast compile beyond which a generated kernel is not compiled here

_START = """
import json, time
t0 = time.perf_counter()
from samplers import catalogue
from samplers.compile import compile_sampler
p = catalogue.get({name!r}).trace(**{params!r})
t1 = time.perf_counter()
s = compile_sampler(p, kernel={kernel!r})
t2 = time.perf_counter()
s.warm_up()
t3 = time.perf_counter()
print(json.dumps({{"trace": t1 - t0, "prepare": t2 - t1, "compile": t3 - t2}}))
"""


def _start(name: str, params: dict, kernel: str, caches: str) -> dict:
    env = {"DPHYBRID_CACHE_DIR": caches + "/k", "NUMBA_CACHE_DIR": caches + "/n"}
    return run_python(_START.format(name=name, params=params, kernel=kernel), env)


def compile_rows(sizes: tuple[int, ...]) -> list[list]:
    """Per n: nodes, the generated kernel's forecast, cold and cached compile; the interpreter's
    preparation (lowering), cold compile, and compile with a cache another program filled."""
    rows = []
    for n in sizes:
        program = catalogue.get("noisy_hist1").trace(n=n)
        forecast = jit_forecast(generate(program).source)
        row: list = [n, len(program.nodes), forecast]
        if forecast <= RUN_LIMIT:
            with tempfile.TemporaryDirectory() as d:
                cold, cached = (_start("noisy_hist1", {"n": n}, "generated", d) for _ in range(2))
            row += [cold["compile"], cached["compile"]]
        else:
            row += ["not run", "not run"]
        with tempfile.TemporaryDirectory() as d:
            cold = _start("noisy_hist1", {"n": n}, "interpreter", d)
        with tempfile.TemporaryDirectory() as d:
            _start("svt1", {}, "interpreter", d)  # another program fills the interpreter's cache
            other = _start("noisy_hist1", {"n": n}, "interpreter", d)
        rows.append(row + [cold["prepare"], cold["compile"], other["compile"]])
    return rows


THROUGHPUT = [("noisy_max_geom", {}), ("histogram_geom", {"m": 10}), ("report_noisy_max1", {"n": 20}),
              ("svt1", {}), ("noisy_hist1", {"n": 20}), ("noisy_hist1", {"n": 100}), ("rappor", {"m": 20})]


def throughput_rows(samples: int) -> list[list]:
    """Samples per second on 1 thread, generated kernel and interpreter, and their ratio."""
    rows = []
    for name, params in THROUGHPUT:
        program = catalogue.get(name).trace(**params)
        x = tuple(program.domain.hi)
        rates = []
        for kernel in ("generated", "interpreter"):
            s = compile_sampler(program, kernel=kernel)
            s.warm_up()
            rates.append(samples / best_time(lambda: s.sample(x, samples, 1, threads=1)))
        label = name + "".join(f" {k}={v}" for k, v in params.items())
        rows.append([label, len(program.nodes), rates[0], rates[1], rates[1] / rates[0]])
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="sizes up to 1000, fewer samples")
    args = ap.parse_args()
    print(f"Compile time against n, noisy_hist1 (seconds, fresh processes; {machine()})\n")
    print(markdown_table(["n", "IR nodes", "generated: forecast", "generated: cold", "generated: cached",
                          "interpreter: lower", "interpreter: cold", "interpreter: cache of another program"],
                         compile_rows(SIZES[:3] if args.quick else SIZES)) + "\n")
    print(f"Sampling throughput (samples per second, 1 thread; {machine()})\n")
    print(markdown_table(["program", "IR nodes", "generated /s", "interpreter /s", "interpreter / generated"],
                         throughput_rows(200_000 if args.quick else 1_000_000)))


if __name__ == "__main__":
    main()
