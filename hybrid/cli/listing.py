"""``dphybrid list``: every mechanism name a command accepts.

Three kinds of name: the catalogue's mechanisms (with parameters, domain and whether an
exact backend applies), their aliases (StatDP's and DP-Sniper's names, accepted wherever
the mechanism's own name is), and the DP libraries' mechanisms wrapped as black boxes
(``opendp:laplace``, ...), which only the testers run (``test``, ``estimate``) and whose
results are statistical; each says whether its library is installed.
"""

from __future__ import annotations

import argparse
import importlib.util
import inspect
from typing import Any

from hybrid.cli.common import add_json_flag
from samplers.errors import install_hint

BLACK_BOX_COMMANDS = ("test", "estimate")  # the commands that accept a library black box


def register(subs: argparse._SubParsersAction) -> None:
    p = subs.add_parser("list", help="list every mechanism name: the catalogue, aliases and library black boxes")
    add_json_flag(p)
    p.set_defaults(run=run)


def describe(mech: Any) -> dict[str, Any]:
    """A catalogue mechanism: parameters, domain, neighbours, exact or not, default backend."""
    from hybrid.formats import params_to_json
    from verifiers.backends import choose

    program = mech.trace()
    return {
        "kind": "catalogue",
        "name": mech.name,
        "aliases": aliases(mech),
        "params": params_to_json(mech.params()),
        "domain": program.domain.describe(),
        "neighbours": program.neighbours.name,
        "exact": not program.continuous,
        "backend": choose(program),
        "claimed_eps": mech.claimed_eps(),
        "summary": mech.summary,
    }


def aliases(mech: Any) -> list[str]:
    """The mechanism's other names (one differing from its name only in case is not another name)."""
    return [a for a in dict.fromkeys(mech.aliases) if a.lower() != mech.name.lower()]


def describe_library(name: str, entry: Any) -> dict[str, Any]:
    """A library black box: its library, whether that is installed, its default parameters."""
    library = name.split(":", 1)[0]
    defaults = {k: p.default for k, p in inspect.signature(entry.make).parameters.items()}
    doc = inspect.getdoc(entry.make) or ""
    return {
        "kind": "library",
        "name": name,
        "library": library,
        "installed": importlib.util.find_spec(library) is not None,
        "extra": f"dphybrid[{library}]",
        "params": defaults,
        "exact": False,
        "commands": list(BLACK_BOX_COMMANDS),
        "summary": doc.splitlines()[0].replace("``", "") if doc else "",
    }


def rows() -> list[dict[str, Any]]:
    """Every name a user can pass: catalogue mechanisms, then aliases, then library black boxes."""
    from samplers import catalogue
    from samplers.libraries import LIBRARY

    mechs = catalogue.mechanisms()
    out = [describe(m) for m in mechs]
    out += [{"kind": "alias", "name": a, "alias_of": m.name} for m in mechs for a in aliases(m)]
    out += [describe_library(name, entry) for name, entry in LIBRARY.items()]
    return out


def run(args: argparse.Namespace) -> int:
    listed = rows()
    if args.json:
        from hybrid.cli.common import emit_json

        emit_json(listed)
        return 0
    by_kind: dict[str, list[dict[str, Any]]] = {"catalogue": [], "alias": [], "library": []}
    for r in listed:
        by_kind[r["kind"]].append(r)
    print("Catalogue mechanisms (every command; exact backends where the noise is discrete):")
    for r in by_kind["catalogue"]:
        params = " ".join(f"{k}={v}" for k, v in r["params"].items())
        kind = "exact" if r["exact"] else "continuous noise: certified by rigorous enclosures"
        print(f"  {r['name']:<28} {params}")
        print(f"  {'':<28} domain {r['domain']}, {r['neighbours']}, {kind}")
        print(f"  {'':<28} {r['summary']}")
    print("\nAliases (accepted wherever the mechanism's name is):")
    for r in by_kind["alias"]:
        print(f"  {r['name']:<28} alias of {r['alias_of']}")
    commands = " and ".join(f"'dphybrid {c}'" for c in BLACK_BOX_COMMANDS)
    print(f"\nLibrary black boxes (statistical only: {commands}; never certified):")
    for r in by_kind["library"]:
        params = " ".join(f"{k}={v}" for k, v in r["params"].items())
        state = "installed" if r["installed"] else f"not installed: {install_hint(r['library'])}"
        print(f"  {r['name']:<28} {params}")
        print(f"  {'':<28} {r['library']} ({state})")
        print(f"  {'':<28} {r['summary']}")
    print("\nAny Python callable is a black box too, through samplers.blackbox (Python API only).")
    return 0
