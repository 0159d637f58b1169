"""SMT verifier benchmark: ``python -m bench.smt [--quick] [--repeat N] [--json]``.

1. FAIER's noisy max, m = 5 (``noisy_max5_witness``): the FAIER-shaped HMM (243 input
   states, 243 noisy-value states) compiled from the mechanism language over the whole
   domain, then the query for the witness pair [1,1,1,1,1] / [0,2,2,2,2] built and
   decided at c = 288/73 (UNSAT) and just below it (SAT).  Query construction is
   compared with FAIER's published 160 s, and the whole decision with the enumerate
   backend deciding the same pair in this run.
2. FAIER's Pufferfish instances (the shipped model files): load (compile the mechanism,
   build the conditioned priors) and decide at the reference ratio bounds; each should
   take under 1 s.  Baseline in the same run: the same checks with every parameter fixed
   to 1/2, decided by exact enumeration of the observations (no z3), i.e. the cost of
   one prior against the cost of the proof for every prior.

Timings are the best of ``--repeat`` runs (wall clock, seconds); ``--quick`` is one run.
The exit code is 1 if a verdict differs from the reference.
"""

from __future__ import annotations

import argparse
import json
import time
from fractions import Fraction
from typing import Any, Callable

from bench.common import markdown_table
from samplers import catalogue
from verifiers.enumerate import Enumerator
from verifiers.smt.hmm_compile import START, hmm_from_program
from verifiers.smt.pufferfish import check_instance, load_model
from verifiers.smt.backend import SmtBackend, decide

FAIER_BUILD_SECONDS = 160.0  # FAIER: building the SMT query for 5-query discrete noisy max
WITNESS = ((1, 1, 1, 1, 1), (0, 2, 2, 2, 2))
LEVEL = Fraction(288, 73)
BELOW = LEVEL - Fraction(1, 10**9)

# model -> [(c, expected status)]  (REFERENCE values, issue 8)
PUFFERFISH = {
    "geometric_dp": [(Fraction(2), "holds"), (Fraction(1999, 1000), "violated")],
    "geometric_contagious": [(Fraction(2), "violated"), (Fraction(4), "holds")],
    "geometric_independent": [(Fraction(2), "holds")],
    "noisy_max_independent": [(Fraction(2), "holds")],
    "noisy_max_contagious": [(Fraction(2), "violated"), (Fraction(4), "holds")],
}


def best(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    """The fastest of ``repeat`` runs and the last result."""
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), out


def noisy_max(repeat: int) -> dict[str, Any]:
    program = catalogue.get("noisy_max_geom").trace(m=5)
    compile_s, (hmm, dec) = best(lambda: hmm_from_program(program, split_before=("argmax",)), repeat)
    x, xp = (hmm.state_index[(0, p, START)] for p in WITNESS)
    rows = {}
    for label, c in (("288/73", LEVEL), ("288/73 - 1e-9", BELOW)):
        _, v = best(lambda: decide(hmm, {x: Fraction(1)}, {xp: Fraction(1)}, c, dec.steps), repeat)
        rows[label] = {"status": v.status, "build_s": v.build_seconds, "solve_s": v.solve_seconds,
                       "ratio": str(v.ratio) if v.ratio is not None else None}

    def enumerate_pair() -> Any:
        ref = Enumerator(program)
        return ref.exists_violation(*WITNESS, LEVEL), ref.exists_violation(*WITNESS, BELOW), ref.pair_epsilon(*WITNESS)

    def smt_pair() -> Any:  # the smt backend: compile over the two inputs only, then both queries
        smt = SmtBackend(program)
        return smt.exists_violation(*WITNESS, LEVEL), smt.exists_violation(*WITNESS, BELOW)

    enum_s, (at, below, (ratio, _)) = best(enumerate_pair, repeat)
    pair_s, (s_at, s_below) = best(smt_pair, repeat)
    smt_total = compile_s + sum(r["build_s"] + r["solve_s"] for r in rows.values())
    build = compile_s + max(r["build_s"] for r in rows.values())
    return {
        "states": len(hmm.states), "transitions": sum(len(r) for r in hmm.trans),
        "compile_s": compile_s, "queries": rows, "query_construction_s": build,
        "faier_build_s": FAIER_BUILD_SECONDS, "speedup_vs_faier": FAIER_BUILD_SECONDS / build,
        "enumerate_s": enum_s, "smt_over_enumerate": smt_total / enum_s,
        "smt_backend_pair_s": pair_s, "smt_backend_over_enumerate": pair_s / enum_s,
        "agree": rows["288/73"]["status"] == "unsat" and at is None and rows["288/73 - 1e-9"]["status"] == "sat"
        and below is not None and rows["288/73 - 1e-9"]["ratio"] == str(ratio) == "288/73"
        and s_at is None and s_below == below,
    }


def pufferfish(repeat: int) -> list[dict[str, Any]]:
    out = []
    for name, cases in PUFFERFISH.items():
        load_s, inst = best(lambda: load_model(name), repeat)
        fixed = inst.substitute({n: Fraction(1, 2) for n in inst.params})
        for c, expected in cases:
            check_s, r = best(lambda: check_instance(inst, c), repeat)
            point_s, _ = best(lambda: check_instance(fixed, c, encoding="enumerated"), repeat)
            out.append({
                "model": name, "c": str(c), "status": r.status, "expected": expected, "queries": r.queries,
                "load_s": load_s, "check_s": check_s, "total_s": load_s + check_s,
                "under_1s": load_s + check_s < 1.0, "one_prior_s": point_s,
                "all_priors_over_one": check_s / point_s if point_s else None,
                "witness_params": {k: str(v) for k, v in (r.witness.verdict.params or {}).items()} if r.witness else None,
            })
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.smt", description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3, help="best of N runs (default 3)")
    ap.add_argument("--quick", action="store_true", help="one run of everything (--repeat 1)")
    ap.add_argument("--json", action="store_true", help="print the measurements as JSON")
    args = ap.parse_args(argv)
    repeat = 1 if args.quick else args.repeat
    nm, pf = noisy_max(repeat), pufferfish(repeat)
    ok = nm["agree"] and all(r["status"] == r["expected"] for r in pf)
    if args.json:
        print(json.dumps({"noisy_max5": nm, "pufferfish": pf}, indent=2))
        return 0 if ok else 1
    print(f"Noisy max m=5, FAIER-shaped HMM: {nm['states']} states, {nm['transitions']} transitions "
          f"(best of {repeat})\n")
    print(markdown_table(
        ["c", "status", "build s", "solve s", "witness ratio"],
        [[label, r["status"], f"{r['build_s']:.3f}", f"{r['solve_s']:.3f}", r["ratio"] or "-"]
         for label, r in nm["queries"].items()]))
    print()
    print(markdown_table(["step", "seconds", "against", "ratio"], [
        ["compile from the language (all 243 inputs)", f"{nm['compile_s']:.3f}", "", ""],
        ["query construction (compile + build)", f"{nm['query_construction_s']:.3f}",
         f"FAIER {nm['faier_build_s']:.0f} s", f"{nm['speedup_vs_faier']:.0f}x faster"],
        ["enumerate backend, same pair and c values", f"{nm['enumerate_s']:.3f}",
         "full-model smt / enumerate", f"{nm['smt_over_enumerate']:.1f} (agree: {nm['agree']})"],
        ["smt backend (compile the pair only, both c)", f"{nm['smt_backend_pair_s']:.3f}",
         "smt backend / enumerate", f"{nm['smt_backend_over_enumerate']:.1f}"],
    ]))
    print("\nPufferfish instances (load + check at the reference bounds; p=1/2: one prior, enumerated)\n")
    rows = []
    for r in pf:
        ok_status = r["status"] if r["status"] == r["expected"] else f"{r['status']} (expected {r['expected']})"
        ratio = f"{r['all_priors_over_one']:.1f}" if r["all_priors_over_one"] else "-"
        params = ", ".join(f"{k}={v}" for k, v in (r["witness_params"] or {}).items())
        rows.append([r["model"], r["c"], ok_status, r["queries"], f"{r['load_s']:.3f}", f"{r['check_s']:.3f}",
                     "yes" if r["under_1s"] else "NO", f"{r['one_prior_s']:.3f}", ratio, params or "-"])
    print(markdown_table(["Pufferfish instance", "c", "status", "queries", "load s", "check s", "<1 s",
                          "p=1/2 s", "all/one", "synthesised"], rows))
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
