"""A test's own plain functions as a file on disk (the CLI names them as file.py:alg), imported too."""

from __future__ import annotations

import importlib.util
from types import ModuleType


def written_module(directory, name: str, source: str) -> ModuleType:
    """``source`` written to ``directory/name.py`` and imported; the module's ``PATH`` is that file."""
    path = directory / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.PATH = path
    return mod
