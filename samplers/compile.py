"""Compile programs to numba samplers, with an on-disk kernel cache.

The generated source is written to ``<cache>/dphybrid_k_<hash>.py`` (the hash is of
the source, so identical structures share a kernel) and imported from there, so numba's
own ``cache=True`` stores the machine code beside it: a second process skips the JIT.
The cache directory is ``$DPHYBRID_CACHE_DIR`` or ``~/.cache/dphybrid/kernels``.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any, Callable, Sequence

import numba
import numpy as np

from samplers.codegen import Kernel, generate
from samplers.errors import ParameterError
from samplers.lang.ir import Program
from samplers.lang.mechanism import Mechanism
from samplers.rng import seed_u64

_loaded: dict[str, Callable[..., None]] = {}
_lock = threading.Lock()


def cache_dir() -> Path:
    """Where generated kernels and their compiled code live."""
    env = os.environ.get("DPHYBRID_CACHE_DIR")
    path = Path(env) if env else Path.home() / ".cache" / "dphybrid" / "kernels"
    path.mkdir(parents=True, exist_ok=True)
    return path


def _load(source: str) -> Callable[..., None]:
    digest = hashlib.sha256(source.encode()).hexdigest()[:20]
    with _lock:
        if digest in _loaded:
            return _loaded[digest]
        name = f"dphybrid_k_{digest}"
        path = cache_dir() / f"{name}.py"
        if not path.exists() or path.read_text() != source:
            fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
            with os.fdopen(fd, "w") as f:
                f.write(source)
            os.replace(tmp, path)
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        _loaded[digest] = module.kernel
        return module.kernel


class Sampler:
    """Draws batches of outputs of one traced program with a numba kernel."""

    def __init__(self, program: Program) -> None:
        self.program = program
        self.kernel: Kernel = generate(program)
        self._fn = _load(self.kernel.source)

    @property
    def name(self) -> str:
        return self.program.name

    @property
    def domain(self) -> Any:
        return self.program.domain

    @property
    def neighbours(self) -> Any:
        return self.program.neighbours

    @property
    def arity(self) -> int:
        return self.kernel.arity

    @property
    def dtype(self) -> type:
        return np.float64 if self.kernel.output_float else np.int64

    def sample(self, x: Sequence[int], n: int, seed: int, *, threads: int | None = None) -> np.ndarray:
        """``n`` independent outputs on input ``x``: shape ``(n,)`` or ``(n, arity)``.

        The same ``(x, n, seed)`` gives the same array whatever ``threads`` is (default:
        numba's thread count), and a smaller ``n`` gives a prefix of a larger one.
        """
        xs = np.asarray(self.program.domain.check(x), dtype=np.int64)
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
            raise ParameterError(f"the number of samples must be a non-negative integer, got {n!r}")
        s = seed_u64(seed)
        if threads is not None and not 1 <= threads <= numba.config.NUMBA_NUM_THREADS:
            raise ParameterError(f"threads must lie in 1..{numba.config.NUMBA_NUM_THREADS} (the threads numba "
                                 f"can use), got {threads}")
        out = np.empty((int(n), self.arity), dtype=self.dtype)
        if n:
            previous = numba.get_num_threads()
            if threads is not None:
                numba.set_num_threads(int(threads))
            try:
                self._fn(xs, self.kernel.tables, np.int64(n), s, out)
            finally:
                numba.set_num_threads(previous)
        return out if self.program.tuple_output else out[:, 0]

    def warm_up(self) -> None:
        """Trigger compilation (or the cache load) now rather than at the first sample."""
        x = tuple(self.program.domain.lo)
        self.sample(x, 1, 0)


def compile_sampler(mech: Mechanism | Program, **params: Any) -> Sampler:
    """A numba sampler for a mechanism (traced with ``params``) or an already traced program."""
    program = mech if isinstance(mech, Program) else mech.trace(**params)
    if isinstance(mech, Program) and params:
        raise ParameterError("parameters cannot be given with an already traced program")
    return Sampler(program)
