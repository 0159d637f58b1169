"""Where compiled code is cached: beside the package or in the home, else a private temporary folder.

numba stores a ``cache=True`` function's machine code beside its module (``__pycache__``)
or in its user-wide folder; where neither is writable (an installed, read-only package run
by a user without a writable home) it refuses to define the function at import ("cannot
cache function '_splitmix': no locator available").  :func:`ensure` then points numba at
a fresh temporary folder, and :func:`kernel_folder` does the same for our generated
kernels: slower first runs, never a crash.
"""

from __future__ import annotations

import functools
import os
import sys
import tempfile
from pathlib import Path

_fallback: Path | None = None


def _writable(folder: Path) -> bool:
    """Whether files can be created in ``folder`` (made if missing); tried, not asked (root passes os.access)."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            return True
    except OSError:
        return False


def fallback() -> Path:
    """This process's private temporary cache folder (made once)."""
    global _fallback
    if _fallback is None:
        _fallback = Path(tempfile.mkdtemp(prefix="dphybrid-cache-"))
    return _fallback


@functools.cache
def ensure() -> None:
    """Give numba a writable cache folder unless it has one (call before numba compiles anything; the
    folders are tried once per process)."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return
    if _writable(Path(__file__).parent / "__pycache__") or _writable(Path.home() / ".cache" / "numba"):
        return
    os.environ["NUMBA_CACHE_DIR"] = str(fallback() / "numba")
    if "numba" in sys.modules:  # numba read its configuration at import: tell it too
        sys.modules["numba"].config.CACHE_DIR = os.environ["NUMBA_CACHE_DIR"]


def kernel_folder() -> Path:
    """Where generated kernels live: ``$DPHYBRID_CACHE_DIR``, ``~/.cache/dphybrid/kernels``, else a temporary folder."""
    env = os.environ.get("DPHYBRID_CACHE_DIR")
    path = Path(env) if env else Path.home() / ".cache" / "dphybrid" / "kernels"
    return path if _writable(path) else fallback() / "kernels"
