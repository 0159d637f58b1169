"""Abridge a JSON document for the docs: ``dphybrid ... --json | python -m bench.abridge``.

Reads one JSON value on stdin and prints it with every key kept, one top-level key a
line, each value compact; a list of lists or objects longer than ``--keep`` items (default 1)
keeps its first items and then ``"..."``, at any depth (lists of numbers or strings stay whole).  Nothing is rewritten otherwise, so what is left
is the command's own output.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any


def abridge(value: Any, keep: int) -> Any:
    """``value`` with every list of containers cut to its first ``keep`` items plus ``"..."``."""
    if isinstance(value, dict):
        return {k: abridge(v, keep) for k, v in value.items()}
    if isinstance(value, list):
        if len(value) <= keep or not any(isinstance(v, (dict, list)) for v in value):
            return [abridge(v, keep) for v in value]
        return [abridge(v, keep) for v in value[:keep]] + ["..."]
    return value


def render(value: Any) -> str:
    """An object as one key a line (compact values); anything else compact."""
    compact = {"separators": (", ", ": "), "ensure_ascii": False}
    if not isinstance(value, dict):
        return json.dumps(value, **compact)
    lines = [f" {json.dumps(k)}: {json.dumps(v, **compact)}" for k, v in value.items()]
    return "{" + ",\n".join(lines).lstrip() + "}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.abridge", description=__doc__.splitlines()[0])
    ap.add_argument("--keep", type=int, default=1, help="items kept of each longer list (default 1)")
    args = ap.parse_args(argv)
    print(render(abridge(json.load(sys.stdin), args.keep)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
