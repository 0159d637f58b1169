"""Tracing plain Python mechanisms: ``python -m bench.plain [--quick]``.

How long path-forking tracing takes for StatDP-style functions (samplers/plain/examples.py),
with the paths it forks, against tracing the same mechanism written in the mechanism
language (its catalogue twin) in the same run.  Issue 21's goal: a 10-query sparse
vector traced in under 2 s.  Each trace is fresh (a new mechanism object: no cache).
"""

from __future__ import annotations

import argparse

from bench.common import best_time, markdown_table

CASES = [  # (example, twin, queries, plain parameters, twin parameters)
    ("svt", "svt1", 10, {}, {}),
    ("svt", "svt1", 10, {"N": 3}, {"c": 3}),
    ("svt", "svt1", 20, {"N": 2}, {"c": 2}),
    ("isvt4", "svt3", 10, {"N": 2}, {"c": 2}),
    ("noisy_max_laplace", "report_noisy_max1", 10, {}, {}),
]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="one run per case instead of three")
    args = ap.parse_args(argv)
    from samplers import catalogue
    from samplers.plain import examples, statdp

    repeat = 1 if args.quick else 3
    rows = []
    for name, twin, n, kw, tw in CASES:
        fn = getattr(examples, name)
        paths = statdp(fn, size=n).trace(**kw)._meta["paths"]
        plain = best_time(lambda: statdp(fn, size=n).trace(**kw), repeat)
        mech = catalogue.get(twin)
        lang = best_time(lambda: mech._trace(mech.params(n=n, **tw)), repeat)  # uncached: trace() caches
        shown = ", ".join(f"{k}={v}" for k, v in kw.items())
        rows.append([f"{name}({shown})" if shown else name, n, paths, f"{plain:.3f}", f"{lang:.3f}",
                     f"{plain / lang:.1f}x"])
    print("## Tracing plain Python (path forking)\n")
    print(markdown_table(["function", "queries", "paths", "trace s", "twin trace s", "ratio"], rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
