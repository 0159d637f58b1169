"""Benchmark of the exact verifiers: the BDD backend against the enumerator and Dice.

``python -m bench.verify [--quick]`` prints one table per task.  Every BDD time
includes tracing the mechanism, bit-blasting it and counting (nothing is cached across
rows); the enumerator runs the same question in the same process.  Dice's times are
the published ones (REFERENCE.md, Oakley, Holtzen and Oprea), on other hardware.

Tasks (targets on a 2-core machine in parentheses):
- RR privacy bound, restricted inputs x = 1^n, x' = 1^(n-1) 0, max over all 2^n
  outputs (n = 20 < 0.1 s, n = 100 < 5 s);
- RR exhaustive: all 2^n x 2^n probabilities, then the global epsilon over all
  n 2^n ordered neighbour pairs and 2^n outputs, i.e. n 4^n triples (n = 10 < 10 s);
- discrete noisy max m = 5, n = 2: exact global epsilon (< 2 s), one witness ratio (< 10 ms);
- above threshold: the ratio of the L-query witness for L = 2..40 (< 1 s in all);
- BDD sizes and the speed-up over the enumerator as the mechanism grows.
"""

from __future__ import annotations

import argparse
import time
from typing import Any, Callable

from bench.common import markdown_table
from samplers import catalogue
from verifiers.bdd.backend import BDDBackend
from verifiers.enumerate import Enumerator

DICE_RR_RESTRICTED = {5: 0.024, 10: 0.052, 15: 1.29, 20: 53.9}
DICE_RR_EXHAUSTIVE = {8: 8.1, 10: 63.2 + 11.0}


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    t = time.perf_counter()
    value = fn()
    return time.perf_counter() - t, value


def fresh(name: str, **params: Any):
    """An untraced program: clear the mechanism's trace cache so tracing is timed too."""
    mech = catalogue.get(name)
    mech._traces.clear()
    return mech.trace(**params)


def ratio_str(base: float | None, ours: float) -> str:
    return "-" if base is None else f"{base / ours:,.1f}x"


def table(title: str, head: list[str], rows: list[list[str]]) -> None:
    print(f"\n## {title}\n")
    print(markdown_table(head, rows))


def rr_restricted(ns: list[int], enum_max: int) -> None:
    rows = []
    for n in ns:
        x, xp = (1,) * n, (1,) * (n - 1) + (0,)

        def bdd():
            b = BDDBackend(fresh("rr", n=n, lam="1/4"))
            return b.pair_epsilon(x, xp)[0], b.size

        t, (r, size) = timed(bdd)
        te = timed(lambda: Enumerator(fresh("rr", n=n, lam="1/4")).pair_epsilon(x, xp))[0] if n <= enum_max else None
        dice = DICE_RR_RESTRICTED.get(n)
        rows.append([str(n), str(r), str(size), f"{t:.4f}", "-" if te is None else f"{te:.3f}",
                     ratio_str(te, t), "-" if dice is None else f"{dice}", ratio_str(dice, t)])
    table("RR privacy bound, restricted inputs (lam = 1/4)",
          ["n", "e^eps", "BDD nodes", "bdd s", "enumerate s", "speed-up", "Dice s", "vs Dice"], rows)


def rr_exhaustive(ns: list[int], enum_max: int) -> None:
    rows = []
    for n in ns:
        def bdd():
            b = BDDBackend(fresh("rr", n=n, lam="1/4"))
            t_table, tab = timed(b.table)
            t_glob, g = timed(b.global_epsilon)
            return tab, g, t_table, t_glob

        t, (tab, g, t_table, t_glob) = timed(bdd)
        te = None
        if n <= enum_max:
            def enum():
                e = Enumerator(fresh("rr", n=n, lam="1/4"))
                for x in e.program.domain.points():
                    e.distribution(x)
                return e.global_epsilon()
            te = timed(enum)[0]
        dice = DICE_RR_EXHAUSTIVE.get(n)
        rows.append([str(n), f"{tab.numerators.size:,}", f"{g.pairs * len(tab.outputs):,}", str(g.ratio),
                     f"{t_table:.3f}", f"{t_glob:.3f}", f"{t:.3f}", "-" if te is None else f"{te:.2f}",
                     ratio_str(te, t), "-" if dice is None else f"{dice}", ratio_str(dice, t)])
    table("RR exhaustive (lam = 1/4): every probability, then the global epsilon",
          ["n", "probabilities", "triples", "e^eps", "table s", "global s", "bdd total s",
           "enumerate s", "speed-up", "Dice s", "vs Dice"], rows)


def noisy_max() -> None:
    x, xp = (1,) * 5, (0, 2, 2, 2, 2)

    def witness(cls):
        return cls(fresh("noisy_max_geom", m=5, n=2, a="1/2")).witness_ratio(x, xp, [1])

    def glob(cls):
        b = cls(fresh("noisy_max_geom", m=5, n=2, a="1/2"))
        return b.global_epsilon(), getattr(b, "size", None)

    rows = []
    tw, r = timed(lambda: witness(BDDBackend))
    tew, _ = timed(lambda: witness(Enumerator))
    rows.append(["one witness ratio", str(r), f"{tw * 1000:.1f} ms", f"{tew * 1000:.1f} ms", ratio_str(tew, tw)])
    tg, (g, size) = timed(lambda: glob(BDDBackend))
    teg, _ = timed(lambda: glob(Enumerator))
    rows.append([f"global epsilon ({g.pairs} pairs, sorted x; {size} BDD nodes)", str(g.ratio),
                 f"{tg:.3f} s", f"{teg:.3f} s", ratio_str(teg, tg)])
    table("Discrete noisy max m = 5, n = 2, a = 1/2", ["task", "e^eps", "bdd", "enumerate", "speed-up"], rows)


def above_threshold(L_max: int) -> None:
    def witness_ratios(cls) -> list[Any]:
        out = []
        for L in range(2, L_max + 1):
            b = cls(fresh("above_threshold_geom", L=L))
            out.append(b.witness_ratio((0,) * (L - 1) + (1,), (1,) * (L - 1) + (0,), [(0,) * (L - 1) + (1,)]))
        return out

    t, ratios = timed(lambda: witness_ratios(BDDBackend))
    te, ref = timed(lambda: witness_ratios(Enumerator))
    assert ratios == ref
    last = ratios[-1]
    table(f"Above threshold: the L-query witness ratio for L = 2..{L_max}",
          ["L range", "ratio at L=2", f"ratio at L={L_max}", "bdd s (all)", "enumerate s (all)", "speed-up"],
          [[f"2..{L_max}", str(ratios[0]), f"{float(last):.4g}", f"{t:.3f}", f"{te:.3f}", ratio_str(te, t)]])


def growth(ms: list[int]) -> None:
    rows = []
    for m in ms:
        def run(cls):
            b = cls(fresh("noisy_max_geom", m=m, n=2, a="1/2"))
            return b.global_epsilon(), getattr(b, "size", None)

        t, (g, size) = timed(lambda: run(BDDBackend))
        te, (ge, _) = timed(lambda: run(Enumerator))
        assert g.ratio == ge.ratio
        rows.append([str(m), str(g.ratio), str(g.pairs), str(size), f"{t:.3f}", f"{te:.3f}", ratio_str(te, t)])
    table("Growth: noisy max global epsilon, m queries in 0..2",
          ["m", "e^eps", "pairs", "BDD nodes", "bdd s", "enumerate s", "speed-up"], rows)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m bench.verify", description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smaller sizes (a smoke run)")
    args = ap.parse_args(argv)
    BDDBackend(fresh("rr", n=2)).global_epsilon()  # import and initialise dd once, outside the timings
    if args.quick:
        rr_restricted([5, 10, 20], enum_max=10)
        rr_exhaustive([6], enum_max=6)
        above_threshold(10)
        growth([3])
        return
    rr_restricted([5, 10, 15, 20, 50, 100, 200], enum_max=15)
    rr_exhaustive([8, 10], enum_max=8)
    noisy_max()
    above_threshold(40)
    growth([3, 4, 5, 6])


if __name__ == "__main__":
    main()
