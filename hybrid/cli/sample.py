"""``dphybrid sample``: draw outputs with the numba sampler and count them."""

from __future__ import annotations

import argparse
import heapq
import time
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from hybrid.cli import argtypes
from hybrid.cli.common import add_mechanism_args, add_time_budget, emit_json, parse_input, resolve, time_limited
from hybrid.cli.isolation import memory_limit
from hybrid.cli.progress import progress_reporter
from hybrid.cli.render import vector_text
from hybrid.formats import output_str, output_to_json, params_to_json
from samplers.lang.ir import FLOAT
from samplers.lang.slicing import output_prefix
from samplers.memory import check_fits
from samplers.lang.exact import fraction_str
from verifiers.backends import get_backend
from verifiers.base import refuse_continuous

if TYPE_CHECKING:
    import numpy as np

    from samplers.lang.ir import Program


def register(subs: argparse._SubParsersAction) -> None:
    p = subs.add_parser("sample", help="sample a mechanism and count its outputs")
    add_mechanism_args(p)
    p.add_argument("--input", required=True, help="input vector, e.g. 1,1,1,1,1")
    p.add_argument("-n", "--samples", type=argtypes.sample_count, default=1_000_000, help="number of samples")
    p.add_argument("--seed", type=argtypes.seed, default=0, help="random seed in [0, 2^64) (default 0)")
    p.add_argument("--threads", type=argtypes.positive_int, default=None, help="numba threads (default: all)")
    p.add_argument("--exact", action="store_true",
                   help="also show exact probabilities and a chi-square test against them")
    p.add_argument("--top", type=argtypes.nonnegative_int, default=20, metavar="K",
                   help="list only the K most frequent outputs, or the first K components of a continuous "
                        "output, text and JSON (default 20; 0 lists all)")
    add_time_budget(p)
    p.set_defaults(run=time_limited(run))


def _float_summary(samples: np.ndarray) -> list[dict[str, Any]]:
    import numpy as np

    cols = samples.reshape(len(samples), -1)
    out = []
    for j in range(cols.shape[1]):
        col = cols[:, j]
        finite = col[~np.isnan(col)]
        q = [float(v) for v in np.quantile(finite, [0.05, 0.5, 0.95])] if len(finite) else [None] * 3
        with np.errstate(over="ignore"):  # a scale like 1e300 overflows the variance: it is inf, as printed
            out.append({"component": j, "bottom": int(np.isnan(col).sum()),
                        "mean": float(np.mean(finite)) if len(finite) else None,
                        "std": float(np.std(finite)) if len(finite) else None,
                        "q05": q[0], "median": q[1], "q95": q[2]})
    return out


def run(args: argparse.Namespace) -> int:
    mech, params = resolve(args)  # a bad name or parameter is reported before the heavy imports
    from samplers.compile import compile_sampler  # numba, scipy: loaded by the commands that use them

    program = mech.trace(**params)
    x = program.domain.check(parse_input(args.input))
    if args.exact:  # refuse continuous noise up front: --exact compares counts with exact probabilities
        refuse_continuous(program, "exact")
    backend = get_backend(program) if args.exact else None
    continuous = program.output_kind == FLOAT
    columns = min(program.arity, args.top or program.arity)  # continuous: the components summarised
    drawn, drawn_x = _summarised_slice(program, x, columns) if continuous else (program, x)
    sampler = compile_sampler(drawn)  # generates the kernel's source; numba compiles it at the warm-up
    memory = memory_limit(args.memory)  # --memory, $DPHYBRID_MEMORY: the samples and tables kept fit in it
    if continuous:  # the columns kept, then a column's copies for its quantiles
        check_fits(8 * args.samples * (columns + 2), f"-n {args.samples} samples of {columns} of the "
                   f"{mech.name} output's components", "lower -n/--samples or --top", limit=memory)
    with progress_reporter(quiet=args.json) as say:
        say(f"compiling the {mech.name} sampler")
        t0 = time.perf_counter()
        sampler.warm_up()
        t1 = time.perf_counter()
        say(f"drawing {args.samples:,} samples")
        cpu = time.process_time()  # every thread's: how many cores the drawing kept busy
        if continuous:
            kept = columns if program.tuple_output else None
            samples = sampler.sample(drawn_x, args.samples, args.seed, threads=args.threads, columns=kept)
        else:
            counts = sampler.counts(x, args.samples, args.seed, threads=args.threads, memory=memory)
        t2, cpu = time.perf_counter(), time.process_time() - cpu
    result: dict[str, Any] = {
        "mechanism": mech.name, "params": params_to_json(params), "x": list(x),
        "n": args.samples, "seed": args.seed,
        "timings": {"compile": round(t1 - t0, 4), "sample": round(t2 - t1, 4), "sample_cpu": round(cpu, 4)},
    }
    if continuous:
        result["components"] = program.arity
        result["drawn_components"] = drawn.arity
        result["summary"] = _float_summary(samples)
        _print(args, result)
        return 0
    exact = backend.distribution(x) if backend is not None else None
    rows = _top_rows(counts, exact, args.top)
    result["distinct_outputs"] = len(set(counts) | set(exact or {}))
    result["counts"] = [
        {"output": output_to_json(o), "count": c, "frequency": c / args.samples,
         **({} if p is None else {"exact": fraction_str(p)})}
        for o, c, p in rows
    ]
    if exact is not None:
        from samplers.gof import goodness_of_fit  # scipy.stats: seconds to import, only for --exact

        g = goodness_of_fit(counts, exact)
        result["chi2"] = {"statistic": g.statistic, "dof": g.dof, "pvalue": g.pvalue}
    _print(args, result, rows)
    return 0


def _summarised_slice(program: Program, x: tuple[int, ...], columns: int) -> tuple[Program, tuple[int, ...]]:
    """The program that draws the ``columns`` components summarised, and its input.

    A continuous output is summarised component by component, on its first ``columns``: the slice
    computing them (:func:`samplers.lang.slicing.output_prefix`) has exactly the program's joint law
    on them and draws only what they read (``noisy_hist1`` at n = 10,000: 20 Laplace draws a sample,
    not 10,000).  Its values are not those of the whole program's first components under the same
    seed (the generator's stream skips no draws); ``--top 0`` draws the whole program.
    """
    if not program.tuple_output or columns >= program.arity:
        return program, x
    sliced, inputs = output_prefix(program, columns)
    if len(sliced.nodes) >= len(program.nodes):
        return program, x
    return sliced, tuple(x[i] for i in inputs)


def _top_rows(counts: dict[Any, int], exact: dict[Any, Fraction] | None, top: int) -> list[tuple]:
    """``(output, count, exact probability or None)`` of the ``top`` most frequent outputs (0: all).

    Ranked by count, then exact probability, then output, so the listing is deterministic.
    """
    keys = set(counts) | set(exact or {})
    prob = (lambda o: exact.get(o, Fraction(0))) if exact is not None else (lambda o: Fraction(0))

    def rank(o: Any) -> tuple:
        return (-counts.get(o, 0), -prob(o), o if isinstance(o, tuple) else (o,))

    chosen = sorted(keys, key=rank) if not top or top >= len(keys) else heapq.nsmallest(top, keys, key=rank)
    return [(o, counts.get(o, 0), None if exact is None else prob(o)) for o in chosen]


def _print(args: argparse.Namespace, result: dict[str, Any], rows: list | None = None) -> None:
    if args.json:
        emit_json(result)
        return
    t = result["timings"]
    print(f"{result['mechanism']} on x = {vector_text(result['x'])}: {result['n']} samples, seed {result['seed']} "
          f"(compile {t['compile']:.2f} s, sample {t['sample']:.3f} s)")
    if "summary" in result:
        for s in result["summary"]:
            if s["mean"] is None:
                print(f"  component {s['component']}: bottom in every sample")
                continue
            print(f"  component {s['component']}: mean {s['mean']:.4g}, std {s['std']:.4g}, "
                  f"5%..95% [{s['q05']:.4g}, {s['q95']:.4g}], bottom {s['bottom']}")
        hidden = result["components"] - len(result["summary"])
        if hidden > 0:
            print(f"  ... {hidden} more components (--top {args.top}: the first ones; --top 0 lists all)")
        return
    for o, c, p in rows or []:
        line = f"  {output_str(o):>12}  {c:>10}  {c / result['n']:.6f}"
        if p is not None:
            line += f"  exact {fraction_str(p)} = {float(p):.6f}"
        print(line)
    hidden = result["distinct_outputs"] - len(rows or [])
    if hidden > 0:
        print(f"  ... {hidden} more outputs (--top {args.top}: the most frequent first; --top 0 lists all)")
    if "chi2" in result:
        c = result["chi2"]
        print(f"  chi-square vs exact: statistic {c['statistic']:.2f}, dof {c['dof']}, p-value {c['pvalue']:.3g}")
