"""``dphybrid list``: the built-in mechanisms with their parameters and domains."""

from __future__ import annotations

import argparse

from hybrid.cli.common import add_json_flag, emit_json
from hybrid.formats import params_to_json
from samplers import catalogue
from verifiers.backends import choose


def register(subs: argparse._SubParsersAction) -> None:
    p = subs.add_parser("list", help="list the built-in mechanisms")
    add_json_flag(p)
    p.set_defaults(run=run)


def describe(mech) -> dict:
    program = mech.trace()
    return {
        "name": mech.name,
        "aliases": list(mech.aliases),
        "params": params_to_json(mech.params()),
        "domain": program.domain.describe(),
        "neighbours": program.neighbours.name,
        "exact": not program.continuous,
        "backend": choose(program),
        "claimed_eps": mech.claimed_eps(),
        "summary": mech.summary,
    }


def run(args: argparse.Namespace) -> int:
    rows = [describe(m) for m in catalogue.mechanisms()]
    if args.json:
        emit_json(rows)
        return 0
    for r in rows:
        params = " ".join(f"{k}={v}" for k, v in r["params"].items())
        kind = "exact" if r["exact"] else "rigorous enclosures"
        print(f"{r['name']:<28} {params}")
        print(f"{'':<28} domain {r['domain']}, {r['neighbours']}, {kind}")
        print(f"{'':<28} {r['summary']}")
    return 0
