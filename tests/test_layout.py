"""The package arrows: which module may import which (read from the source with ast).

- ``samplers`` imports neither ``verifiers`` nor ``hybrid``; ``verifiers`` never imports ``hybrid``.
- ``verifiers``: a room (``bdd``, ``smt``, ``continuous``, ``enumerate``, ``prover``) imports
  only the shared core and itself; the core imports no backend, except the dispatch
  (``verifiers.backends``), which is how the rest of the code reaches a backend by name.
- ``hybrid``: ``cli -> suites -> searcher -> testers -> shared modules``, never upwards:
  testers import no searcher/suites/cli, the searcher no suites/cli, suites no cli,
  and the shared top-level modules none of the four.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
VERIFIER_ROOMS = ("bdd", "smt", "continuous", "enumerate", "prover")
DISPATCH = {"verifiers.backends"}
HYBRID_RANK = {"cli": 4, "suites": 3, "searcher": 2, "testers": 1}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path) -> set[str]:
    """Every absolute module named by an import in the file (function-level ones too)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names)
    return found


def modules(package: str) -> list[tuple[str, set[str]]]:
    return [(module_name(p), imports_of(p)) for p in sorted((ROOT / package).rglob("*.py"))]


def room(name: str) -> str | None:
    """The backend room of a ``verifiers`` module, or None for the shared core."""
    parts = name.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in VERIFIER_ROOMS else None


def test_lower_packages_do_not_import_upwards() -> None:
    bad = [(m, i) for pkg, above in (("samplers", ("verifiers", "hybrid")), ("verifiers", ("hybrid",)))
           for m, imps in modules(pkg) for i in imps if i.split(".")[0] in above]
    assert bad == []


def test_verifier_backends_meet_only_in_the_core() -> None:
    bad = []
    for m, imps in modules("verifiers"):
        own = room(m)
        for i in imps:
            if not i.startswith("verifiers.") or room(i) is None or room(i) == own:
                continue
            if own is None and m in DISPATCH:
                continue
            bad.append((m, i))
    assert bad == []


def test_every_backend_room_exists() -> None:
    for name in VERIFIER_ROOMS:
        assert (ROOT / "verifiers" / name).is_dir() or (ROOT / "verifiers" / f"{name}.py").is_file()


def _hybrid_rank(name: str) -> int:
    parts = name.split(".")
    return HYBRID_RANK.get(parts[1], 0) if len(parts) > 1 else 0


@pytest.mark.parametrize("stage", ["testers", "searcher", "suites", "cli"])
def test_hybrid_stages_import_only_downwards(stage: str) -> None:
    bad = []
    for m, imps in modules(f"hybrid/{stage}"):
        for i in imps:
            parts = i.split(".")
            if parts[0] != "hybrid" or len(parts) < 2 or parts[1] == stage:
                continue
            if parts[1] in HYBRID_RANK and _hybrid_rank(i) >= HYBRID_RANK[stage]:
                bad.append((m, i))
    assert bad == []


def test_hybrid_shared_modules_import_no_stage() -> None:
    bad = [(m, i) for p in sorted((ROOT / "hybrid").glob("*.py")) if p.name != "__init__.py"
           for m, imps in [(module_name(p), imports_of(p))] for i in imps
           if i.split(".")[:2][-1] in HYBRID_RANK and i.startswith("hybrid.")]
    assert bad == []
