"""``dphybrid accuracy``: exact (alpha, beta)-accuracy over the whole domain."""

from __future__ import annotations

import argparse
import time
from typing import Any

from hybrid.cli.common import add_mechanism_args, add_time_budget, emit_json, resolve, time_limited
from hybrid.cli.progress import progress_reporter
from hybrid.formats import params_to_json, value_to_json
from samplers.errors import ParameterError
from samplers.lang.exact import exact, fraction_str
from samplers.numerals import short_text
from verifiers.accuracy import accuracy, tightest_alpha
from verifiers.backends import get_backend
from verifiers.base import refuse_continuous


def register(subs: argparse._SubParsersAction) -> None:
    p = subs.add_parser("accuracy", help="exact min over inputs of P(|M(x) - f(x)| <= alpha)")
    add_mechanism_args(p)
    group = p.add_mutually_exclusive_group(required=True)
    group.add_argument("--alpha", help="error tolerance alpha (an integer)")
    group.add_argument("--beta", help="failure probability: find the tightest alpha (e.g. 1/10)")
    p.add_argument("--backend", default="auto", help="exact backend: auto, bdd or enumerate")
    add_time_budget(p)
    p.set_defaults(run=time_limited(run))


def _alpha(text: str) -> int:
    a = exact(text, what="--alpha")
    if a < 0 or a.denominator != 1:
        raise ParameterError(f"--alpha must be a non-negative integer, got {short_text(text)}")
    return int(a)


def run(args: argparse.Namespace) -> int:
    mech, params = resolve(args)
    t0 = time.perf_counter()
    program = mech.trace(**params)
    refuse_continuous(program, args.backend if args.backend != "auto" else "exact")
    backend = get_backend(program, args.backend)
    with progress_reporter(quiet=args.json) as say:
        say(f"accuracy of {mech.name} over {program.domain.count():,} inputs ({backend.name} backend)")
        result = (accuracy(backend, _alpha(args.alpha)) if args.alpha is not None
                  else tightest_alpha(backend, args.beta))
    data: dict[str, Any] = {
        "mechanism": mech.name, "params": params_to_json(params), "backend": backend.name,
        "target": "noiseless output", "alpha": value_to_json(result.alpha),
        "probability": fraction_str(result.probability), "probability_float": float(result.probability),
        "beta": fraction_str(result.beta), "worst_inputs": [list(x) for x in result.worst],
        "inputs": result.inputs, "certified": True,
        "timings": {"accuracy": round(time.perf_counter() - t0, 6)},
    }
    if args.json:
        emit_json(data)
        return 0
    print(f"{mech.name}: min over {data['inputs']} inputs of P(|M(x) - f(x)| <= {data['alpha']}) "
          f"= {data['probability']} = {data['probability_float']:.9g} (beta = {data['beta']})")
    worst = data["worst_inputs"]
    print(f"  worst inputs: {', '.join(map(str, worst[:8]))}{' ...' if len(worst) > 8 else ''}")
    return 0
