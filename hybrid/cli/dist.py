"""``dphybrid dist``: the exact output distribution of a mechanism on one input.

With continuous noise (finite outputs only) each probability is a rigorous enclosure
``[lo, hi]`` with exact end points (the continuous backend).
"""

from __future__ import annotations

import argparse
from typing import Any

from hybrid.cli.common import (
    add_mechanism_args,
    add_time_budget,
    emit_json,
    parse_input,
    resolve,
    time_limited,
)
from hybrid.cli.progress import progress_reporter
from hybrid.formats import enclosure_str, output_str, output_to_json, params_to_json
from samplers.lang.exact import fraction_str
from samplers.lang.ir import INT
from samplers.memory import check_fits
from samplers.numerals import count_text
from verifiers.backends import get_backend
from verifiers.base import output_order
from verifiers.continuous.enclosure import Enclosure

DIST_BYTES_PER_OUTPUT = 300  # an output, its exact probability and its line of text


def register(subs: argparse._SubParsersAction) -> None:
    p = subs.add_parser("dist", help="exact output distribution on one input")
    add_mechanism_args(p)
    p.add_argument("--input", required=True, help="input vector, e.g. 0,2,2,2,2")
    p.add_argument("--backend", default="auto", help="exact backend (default: auto)")
    add_time_budget(p)
    p.set_defaults(run=time_limited(run))


def run(args: argparse.Namespace) -> int:
    mech, params = resolve(args)
    program = mech.trace(**params)
    backend = get_backend(program, args.backend)  # refuses continuous noise first
    if program.output_kind == INT:  # released real values have no distribution to list (the backend says so)
        check_fits(program.output_space * DIST_BYTES_PER_OUTPUT,
                   f"a distribution over up to {count_text(program.output_space)} outputs",
                   "use 'dphybrid verify' or 'dphybrid sample' for a mechanism this large")
    x = backend.check_input(parse_input(args.input))
    with progress_reporter(quiet=args.json) as say:
        say(f"computing the distribution of {mech.name} on {list(x)} ({backend.name} backend)")
        dist = backend.distribution(x)
    items = sorted(dist.items(), key=lambda kv: output_order(kv[0]))
    if args.json:
        emit_json({
            "mechanism": mech.name,
            "params": params_to_json(params),
            "x": list(x),
            "backend": backend.name,
            "distribution": [{"output": output_to_json(o), "probability": _json(p)} for o, p in items],
        })
        return 0
    print(f"P(output | x = {list(x)}) for {mech.name} ({backend.name} backend)")
    for o, p in items:
        if isinstance(p, Enclosure):
            print(f"  {output_str(o):>12}  in {enclosure_str(p.lo, p.hi, 15)}")
        else:
            print(f"  {output_str(o):>12}  {fraction_str(p):>24}  {float(p):.9g}")
    return 0


def _json(p: Any) -> Any:
    """An exact probability as ``"p/q"``, an enclosure as ``["lo", "hi"]``."""
    return p.to_json() if isinstance(p, Enclosure) else fraction_str(p)
