"""End-to-end search against exhaustive verification and against testing alone.

For each discrete catalogue mechanism (REFERENCE.md's parameters where it has them):
the hybrid search's time to a certified eps within 1e-3 (without its optional global
step), exhaustive global verification over every neighbour pair (the exact level), and
testing alone (the StatDP-style lower bound at confidence 0.95 and its time), side by side.  Then the main
job's cold and warm start, and the large noisy max (m=8, n=3) where exhaustive
verification is the slow way.

Run: ``python -m bench.search [--quick] [--big]``.
"""

from __future__ import annotations

import argparse
import itertools
import math
import tempfile
import time
from typing import Any

from bench.common import best_time, machine, markdown_table, run_python
from hybrid.formats import lower_str
from hybrid.inputs import pattern_pairs
from hybrid.searcher.search import search
from hybrid.testers.testing import statdp_interval
from samplers import catalogue
from samplers.compile import compile_sampler
from verifiers.backends import get_backend
from verifiers.base import neighbour_pairs
from verifiers.epsilon import eps_lower

CASES: list[tuple[str, dict[str, Any]]] = [
    ("rr", dict(n=4, lam="1/5")),
    ("kary_rr", dict(k=4, p="7/10")),
    ("trunc_geom", dict(m=2, a="1/2")),
    ("rr_count", dict(n=4, lam="1/5")),
    ("noisy_max_geom", dict(m=5, n=2, a="1/2")),
    ("noisy_max_geom", dict(m=3, n=2, a="1/2")),
    ("noisy_max_geom_value", dict(m=3)),
    ("above_threshold_geom", dict(L=2)),
    ("above_threshold_geom", dict(L=4)),
    ("histogram_geom", dict(m=3)),
    ("histogram_geom_wrong_scale", dict(m=3)),
    ("geo_sample", dict(eps=0.1, n=5)),
    ("one_time_rappor", dict(h=4, m=20)),
    ("svt_geom", dict(L=3)),
    ("isvt3_geom", dict(L=3)),
]


def _label(name: str, params: dict[str, Any]) -> str:
    return name + ("" if not params else " " + " ".join(f"{k}={v}" for k, v in params.items()))


def compare(quick: bool) -> list[list[Any]]:
    rows = []
    for name, params in CASES[:5] if quick else CASES:
        program = catalogue.get(name).trace(**params)
        compile_sampler(program).warm_up()  # JIT outside the timings (the start-up rows measure it)
        t = time.perf_counter()
        res = search(program, global_check=False)
        t_search = time.perf_counter() - t
        t = time.perf_counter()
        g = get_backend(program).global_epsilon()
        t_global = time.perf_counter() - t
        t = time.perf_counter()
        st = statdp_interval(compile_sampler(program), samples=500_000, precision=0.01)
        t_stat = time.perf_counter() - t
        width = res.bracket[1] - res.bracket[0] if res.bracket else math.nan
        rows.append([_label(name, params), lower_str(res.eps_lower), f"{width:.1e}", t_search,
                     lower_str(g.eps_lower), g.pairs, t_global, lower_str(st.eps_lower, 3), t_stat,
                     "yes" if res.ratio == g.ratio else f"no ({res.ratio} vs {g.ratio})"])
    return rows


_MAIN_JOB = """
import json, time
t0 = time.perf_counter()
from hybrid.searcher.search import search
from samplers import catalogue
r = search(catalogue.get("noisy_max_geom"))
print(json.dumps({"seconds": time.perf_counter() - t0, "ratio": str(r.ratio)}))
"""


def start_up() -> list[list[Any]]:
    """``dphybrid search noisy_max_geom`` in fresh processes: cold caches, then warm."""
    with tempfile.TemporaryDirectory() as d:
        env = {"DPHYBRID_CACHE_DIR": d + "/k", "NUMBA_CACHE_DIR": d + "/n"}
        cold, warm = run_python(_MAIN_JOB, env), run_python(_MAIN_JOB, env)
    return [["cold (empty kernel cache)", cold["seconds"], cold["ratio"]],
            ["warm (kernels cached)", warm["seconds"], warm["ratio"]]]


def big(measure_global: bool) -> list[list[Any]]:
    """noisy max m=8, n=3: search against the best pattern witness and exhaustive verification."""
    program = catalogue.get("noisy_max_geom").trace(m=8, n=3)
    compile_sampler(program).warm_up()
    exact = get_backend(program)
    t = time.perf_counter()
    res = search(program)
    t_search = time.perf_counter() - t
    best_pattern = max(exact.pair_epsilon(p.x, p.x_prime)[0]
                       for p in pattern_pairs(program.domain, program.neighbours))
    rows = [["hybrid search", lower_str(res.eps_lower), t_search],
            ["best StatDP pattern pair (exact)", lower_str(eps_lower(best_pattern)), ""]]
    pairs = sum(1 for _ in neighbour_pairs(program))
    if measure_global:
        t = time.perf_counter()
        g = exact.global_epsilon()
        rows.append([f"exhaustive: {pairs} neighbour pairs", f"{g.eps_lower:.6f}", time.perf_counter() - t])
    else:  # project from the sweep preparation and a sample of pairs
        t = time.perf_counter()
        exact.prepare_sweep()
        prep = time.perf_counter() - t
        sample = list(itertools.islice(neighbour_pairs(program), 0, None, max(1, pairs // 300)))
        per_pair = best_time(lambda: [exact.pair_epsilon(x, xp) for x, xp in sample], repeat=1) / len(sample)
        rows.append([f"exhaustive: {pairs} neighbour pairs (projected)", "", prep + per_pair * pairs])
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="the first few mechanisms only")
    ap.add_argument("--big", action="store_true", help="measure (not project) exhaustive m=8 verification")
    args = ap.parse_args()
    print(f"Hybrid search ({machine()})\n")
    print(markdown_table(
        ["mechanism", "search eps >=", "bracket width", "search s", "exact eps", "pairs", "exhaustive s",
         "testing alone: eps >= (95%)", "testing s", "search = exact"], compare(args.quick)))
    print("\n`dphybrid search noisy_max_geom` end to end (including imports and JIT)\n")
    print(markdown_table(["start", "seconds", "certified ratio"], start_up()))
    print("\nnoisy_max_geom m=8, n=3 (6.6e4 inputs)\n")
    print(markdown_table(["method", "certified eps >=", "seconds"], big(args.big)))


if __name__ == "__main__":
    main()
