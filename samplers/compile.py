"""Compile programs to numba samplers, with an on-disk kernel cache.

The generated source is written to ``<cache>/dphybrid_k_<hash>.py`` (the hash is of
the source, so identical structures share a kernel) and imported from there, so numba's
own ``cache=True`` stores the machine code beside it: a second process skips the JIT.
The cache directory is ``$DPHYBRID_CACHE_DIR`` or ``~/.cache/dphybrid/kernels`` (a temporary
folder where neither is writable).

:meth:`Sampler.counts` counts outputs with the fused kernel (drawing and counting in one
pass, see :mod:`samplers.codegen`) when the histograms are no larger than the samples'
array would be, and otherwise draws the samples block by block and counts their distinct rows
exactly (:mod:`samplers.row_tally`): the same counts either way, and no array of all samples.

The kernel is serial and releases the GIL; a call with ``threads`` threads (default: numba's
thread count, which ``--threads`` and the suite runner set) runs that many calls at once, each
on its own stride of chunks (:func:`_in_threads`).

Large programs run on :mod:`samplers.interpreter` instead: one kernel compiled once for every
program, slower per sample, drawing exactly the same samples (bit for bit) for the same seed.
``kernel="auto"`` (the default, or ``$DPHYBRID_KERNEL``) picks it when the generated kernel's
forecast compile time exceeds :data:`INTERPRET_ABOVE` seconds or the program has more than
:data:`INTERPRET_NODES` nodes; ``"generated"`` and ``"interpreter"`` force either.

Under a time limit (:mod:`samplers.deadline`) a kernel that is not cached yet is
compiled in a forked child, which fills the disk cache and is killed if it overruns:
numba's compiler cannot be interrupted in-process.  A kernel whose forecast compile
time (:func:`jit_forecast`) is far beyond the time left is refused before starting.
"""

from __future__ import annotations

import hashlib
import importlib.util
import multiprocessing
import os
import sys
import tempfile
import math
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import ModuleType
from typing import Any, Callable, Sequence

import numba
import numpy as np

from samplers import deadline, numba_cache
from samplers import interpreter
from samplers.codegen import CHUNK, Kernel, cdf_layout, generate, kernel_of
from samplers.counts import decode_counts
from samplers.errors import ParameterError
from samplers.memory import allowed_bytes, check_fits
from samplers.lang.ir import Program
from samplers.lang.mechanism import Mechanism
from samplers.rng import seed_u64
from samplers.row_tally import RowTally

_loaded: dict[str, ModuleType] = {}
_lock = threading.Lock()
# Forecast of numba's compile time from the kernel's source lines, fitted on catalogue
# kernels on 2 busy cores (noisy max m = 5: 99 lines, 3 s; RAPPOR m = 50: 835 lines,
# 35 s; m = 100: 1501 lines, 230 s): a fixed cost, then linear, then quadratic growth.
JIT_FIXED = 2.0
JIT_PER_LINE = 0.02
JIT_QUADRATIC_LINES = 700
JIT_REFUSE = 3.0  # refuse outright when the forecast exceeds the time left this many times
# The interpreter's compile time (once per machine: its disk cache serves every program), measured
# like the constants above (2.7 s cold on 2 busy cores; bench.kernels); the generated kernel samples 2
# to 10 times faster, so "auto" keeps it up to a forecast of INTERPRET_ABOVE.
INTERPRETER_JIT = 4.0
INTERPRET_ABOVE = 30.0  # "auto": the interpreter runs programs whose generated kernel needs longer to compile
INTERPRET_NODES = 4000  # "auto": and programs this large, whose source is not even generated
KERNELS = ("auto", "generated", "interpreter")
KERNEL_ENV = "DPHYBRID_KERNEL"


def jit_forecast(source: str) -> float:
    """Rough seconds numba needs to compile a kernel of this source (see the constants above)."""
    lines = source.count("\n")
    return JIT_FIXED + JIT_PER_LINE * lines * (1 + (lines / JIT_QUADRATIC_LINES) ** 2)


def cache_dir() -> Path:
    """Where generated kernels and their compiled code live (:func:`samplers.numba_cache.kernel_folder`)."""
    path = numba_cache.kernel_folder()
    path.mkdir(parents=True, exist_ok=True)
    return path


def _load(source: str) -> ModuleType:
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
        _loaded[digest] = module
        return module


def _on_disk(fn: Any) -> bool:
    """Whether numba's disk cache already holds some compiled version of this kernel (its index file;
    False where numba keeps no such file)."""
    index = getattr(getattr(fn._cache, "_cache_file", None), "_index_path", None)
    return index is not None and os.path.exists(index)


def _compile_in_time(fn: Any, args: tuple, name: str, forecast: float) -> None:
    """Compile ``fn`` for ``args`` within the deadline in force (see the module docstring)."""
    left = deadline.remaining()
    if left == math.inf or fn.signatures or _on_disk(fn):
        return
    if forecast > JIT_REFUSE * left:
        raise deadline.TimeLimitReached(
            f"compiling the {name} sampler needs about {forecast:.0f} s, far more than the {left:.1f} s "
            f"left of the time budget of {deadline.budget():g} s")
    try:
        ctx = multiprocessing.get_context("fork")
    except ValueError:  # pragma: no cover - no fork on this platform: compile in-process
        return
    signature = tuple(numba.typeof(a) for a in args)
    child = ctx.Process(target=fn.compile, args=(signature,), daemon=True)
    child.start()
    child.join(left)
    if child.is_alive():
        child.kill()
        child.join()
        raise deadline.TimeLimitReached(f"while compiling the {name} sampler (numba JIT)")
    # the child filled the disk cache; if it failed, compiling in-process shows why


# The fused kernel's histograms: at least this many slots are always fine (4 MiB); beyond, they may
# hold as many slots as the array of samples they replace would hold values.
FUSED_MIN_SLOTS = 1 << 19
PAD = 8  # slots between two threads' histograms: no cache line shared (8 bytes a slot)
PIECE_CHUNKS = 1 << 11  # chunks the fused kernel draws between two looks at the clock (2^25 samples)
PIECE_VALUES = 1 << 27  # values the array's kernel draws between two looks at the clock (a second or two a core)
BLOCK_BYTES = 64 << 20  # a block of samples counted row by row (RowTally): at least one chunk a thread
BLOCK_SHARE = 4  # and at most this share of the memory allowed


class Sampler:
    """Draws batches of outputs of one traced program with a numba kernel."""

    def __init__(self, program: Program, kernel: str | None = None) -> None:
        """``kernel``: "auto", "generated" or "interpreter" (see the module docstring; default
        ``$DPHYBRID_KERNEL``, else "auto")."""
        self.program = program
        choice = kernel_choice(kernel)
        self.lowered: interpreter.Lowered | None = None  # the interpreter's arrays when it runs the program
        if choice == "generated" or (choice == "auto" and len(program.nodes) <= INTERPRET_NODES):
            self.kernel: Kernel = generate(program)
            if choice == "generated" or jit_forecast(self.kernel.source) <= INTERPRET_ABOVE:
                self._module = _load(self.kernel.source)
                return
        self.lowered = interpreter.lower(program)
        self.kernel = kernel_of(program, "", cdf_layout(program)[0])
        self._no_ints, self._no_floats = np.zeros((0, self.arity), dtype=np.int64), np.zeros((0, self.arity))

    @property
    def interpreted(self) -> bool:
        """Whether :mod:`samplers.interpreter` runs this program (else its generated kernel)."""
        return self.lowered is not None

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

    def sample(self, x: Sequence[int], n: int, seed: int, *, threads: int | None = None,
               columns: int | None = None) -> np.ndarray:
        """``n`` independent outputs on input ``x``: shape ``(n,)`` or ``(n, arity)``.

        The same ``(x, n, seed)`` gives the same array whatever ``threads`` is (default:
        numba's thread count), and a smaller ``n`` gives a prefix of a larger one.  ``columns``
        (continuous tuple outputs only): keep only the first ``columns`` components, shape
        ``(n, columns)``, the same values as the full array's first columns, in that much memory.
        """
        xs, s = self._arguments(x, n, seed, threads)
        width = self.arity if columns is None else self._columns(columns)
        check_fits(int(n) * width * 8, f"{n} samples of {width} value{'s' * (width > 1)}", "ask for fewer samples")
        out = np.empty((int(n), width), dtype=self.dtype)
        if n:
            self._draw(xs, int(n), s, out, 0, -(-int(n) // CHUNK), _workers(n, threads))
        return out if self.program.tuple_output else out[:, 0]

    def _columns(self, columns: int) -> int:
        """``columns`` if the kernel can keep only that many first components (ParameterError if not)."""
        if not self.kernel.output_float:
            raise ParameterError("columns: only continuous outputs can be drawn in part")
        if isinstance(columns, bool) or not isinstance(columns, (int, np.integer)) or not 1 <= columns <= self.arity:
            raise ParameterError(f"columns: the first 1..{self.arity} components of the output, got {columns!r}")
        return int(columns)

    def _draw(self, xs: np.ndarray, n: int, s: np.uint64, out: np.ndarray, first: int, stop: int,
              workers: int) -> None:
        """Draw the chunks ``first .. stop - 1`` into ``out``, whose row 0 is sample ``first * CHUNK``, in
        pieces of about :data:`PIECE_VALUES` values, so a time limit can stop a long run."""
        nothing, base = np.zeros(0, dtype=np.int64), np.int64(first * CHUNK)  # no histogram: write every sample
        piece = max(1, PIECE_VALUES // (CHUNK * self.arity) // workers) * workers
        for start in range(first, stop, piece):
            if start > first:
                deadline.check(f"after {start * CHUNK:,} of {n:,} samples")
            end = min(stop, start + piece)
            self._run(lambda c, step: (xs, np.int64(n), s, out, nothing, base, c, end, step), workers, start)

    def counts(self, x: Sequence[int], n: int, seed: int, *, threads: int | None = None,
               memory: float | None = None) -> dict[Any, int]:
        """The count of each output among ``sample(x, n, seed)``: exactly the dictionary
        :func:`samplers.counts.output_counts` makes of that array (same outputs, counts and order),
        whatever ``threads`` is.  Integer outputs only (ValueError for continuous ones).

        Drawn and counted in one pass, with no array of samples, when the outputs' range (from
        the IR) is small enough (see :meth:`uses_fused_counts`); otherwise drawn block by block
        and counted exactly by :class:`samplers.row_tally.RowTally`, in memory for one block and
        the distinct outputs: at most ``memory`` bytes (default: what is available), else TooLarge.
        """
        if self.kernel.output_float:
            raise ValueError("counts per output need discrete (integer) samples")
        xs, s = self._arguments(x, n, seed, threads)
        if not self.uses_fused_counts(n, threads):
            return self._tallied_counts(xs, int(n), s, threads, memory)
        return self._fused_counts(xs, int(n), s, threads)

    def _tallied_counts(self, xs: np.ndarray, n: int, s: np.uint64, threads: int | None,
                        memory: float | None) -> dict[Any, int]:
        """:meth:`counts` block by block (whole chunks, a multiple of the threads when memory allows), rows
        tallied exactly."""
        chunks, workers = -(-n // CHUNK), _workers(n, threads)
        room = min(BLOCK_BYTES, allowed_bytes(memory) / BLOCK_SHARE)  # the rest for the table of distinct outputs
        per_block = min(chunks, max(1, int(room // (CHUNK * 8 * self.arity)) // workers * workers or 1))
        workers = min(workers, per_block)
        block_bytes = per_block * CHUNK * 8 * self.arity
        what = f"-n {n:,} samples of {self.name}"
        check_fits(block_bytes, f"{what}: a block of {per_block} x {CHUNK:,} samples", "raise --memory", limit=memory)
        block = np.empty((per_block * CHUNK, self.arity), dtype=np.int64)
        tally = RowTally(self.arity, what, None if memory is None else memory - block_bytes)
        for first in range(0, chunks, per_block):
            if first:
                deadline.check(f"after {first * CHUNK:,} of {n:,} samples")
            stop = min(chunks, first + per_block)
            self._draw(xs, n, s, block, first, stop, workers)
            tally.add(block[: min(n, stop * CHUNK) - first * CHUNK])
        return tally.counts(rows=self.program.tuple_output)

    def _fused_counts(self, xs: np.ndarray, n: int, s: np.uint64, threads: int | None) -> dict[Any, int]:
        """:meth:`counts` by the fused kernel, one histogram per thread (see the module docstring)."""
        codes = self.kernel.codes
        chunks, workers = -(-n // CHUNK), _workers(n, threads)
        hist = np.zeros((workers, codes + 1 + PAD), dtype=np.int64)
        nothing = np.zeros((0, self.arity), dtype=np.int64)  # no array of samples
        for first in range(0, chunks, PIECE_CHUNKS):  # in pieces, so a time limit can stop a long run
            if first:
                deadline.check(f"after {first * CHUNK:,} of {n:,} samples")
            stop = min(chunks, first + PIECE_CHUNKS)
            self._run(lambda start, step: (xs, np.int64(n), s, nothing, hist[start - first], np.int64(0), start, stop,
                                           step), workers, first)
        total = hist[:, : codes + 1].sum(axis=0)
        if total[codes]:
            raise AssertionError(f"the {self.name} sampler drew {total[codes]} outputs outside the range its "
                                 f"IR records (a bug in dphybrid's range analysis)")
        return decode_counts(total[:codes], self.kernel.digits, rows=self.program.tuple_output)

    def uses_fused_counts(self, n: int, threads: int | None = None) -> bool:
        """Whether :meth:`counts` draws and counts in one pass: integer outputs whose codes the
        histograms (one per thread) hold in no more memory than the samples' array, or than
        ``FUSED_MIN_SLOTS`` slots."""
        if self.kernel.digits is None:
            return False
        slots = _workers(n, threads) * (self.kernel.codes + 1 + PAD)
        return slots <= max(int(n) * self.arity, FUSED_MIN_SLOTS)

    def warm_up(self) -> None:
        """Trigger compilation (or the cache load) now rather than at the first sample: one kernel
        (one signature) draws both the samples and the fused counts."""
        self.sample(tuple(self.program.domain.lo), 1, 0)

    def _arguments(self, x: Sequence[int], n: int, seed: int, threads: int | None) -> tuple[np.ndarray, np.uint64]:
        """The kernels' input vector and seed, after checking every argument."""
        xs = np.asarray(self.program.domain.check(x), dtype=np.int64)
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
            raise ParameterError(f"the number of samples must be a non-negative integer, got {n!r}")
        s = seed_u64(seed)
        if threads is not None and not 1 <= threads <= numba.config.NUMBA_NUM_THREADS:
            raise ParameterError(f"threads must lie in 1..{numba.config.NUMBA_NUM_THREADS} (the threads numba "
                                 f"can use), got {threads}")
        return xs, s

    def _run(self, args: Callable[[int, int], tuple], workers: int, first: int = 0) -> None:
        """The kernel (compiled in time first) on ``workers`` threads: worker ``t`` draws the chunks
        ``first + t, first + t + workers, ...`` with the arguments ``args(first + t, workers)``:
        ``(x, n, seed, out, hist, base, first, stop, step)``, completed here for the kernel that runs.

        Under a time limit a timer sets the kernels' ``halt`` flag at the deadline: they stop before
        their next sample, and :class:`samplers.deadline.TimeLimitReached` is raised here."""
        halt = np.zeros(1, dtype=np.int64)
        if self.lowered is None:
            fn, forecast = self._module.kernel, jit_forecast(self.kernel.source)

            def call(*a: Any) -> tuple:
                return (a[0], self.kernel.tables, *a[1:], halt)
        else:
            fn, forecast, program = interpreter.kernel, INTERPRETER_JIT, self.lowered.arguments()

            def call(*a: Any) -> tuple:  # out split into the integer and the float array, the other one empty
                out = a[3]
                pair = (out, self._no_floats) if out.dtype == np.int64 else (self._no_ints, out)
                return (*program, a[0], self.kernel.tables, *a[1:3], *pair, *a[4:], halt)
        _compile_in_time(fn, call(*args(first, workers)), self.name, forecast)
        left = deadline.remaining()
        timer = None if left == math.inf else threading.Timer(max(0.0, left), halt.fill, (1,))
        if timer is not None:
            timer.daemon = True
            timer.start()
        try:
            _in_threads([lambda t=t: fn(*call(*args(first + t, workers))) for t in range(workers)])
        finally:
            if timer is not None:
                timer.cancel()
        if halt[0]:
            raise deadline.TimeLimitReached(f"time budget of {deadline.budget():g} s reached while drawing the "
                                            f"{self.name} samples")


def _workers(n: int, threads: int | None) -> int:
    """Threads that draw ``n`` samples: one per chunk, at most ``threads`` (default numba's count)."""
    return max(1, min(-(-int(n) // CHUNK), threads or numba.get_num_threads()))


def _in_threads(calls: list[Callable[[], Any]]) -> None:
    """Run the calls (kernels that release the GIL) at once, one thread each (the first in this
    thread); the first exception raised is raised here, after every call has ended."""
    if len(calls) == 1:
        calls[0]()
        return
    with ThreadPoolExecutor(len(calls) - 1) as pool:
        futures = [pool.submit(c) for c in calls[1:]]
        try:
            calls[0]()
        finally:
            errors = [f.exception() for f in futures]
    for e in errors:
        if e is not None:
            raise e


def kernel_choice(kernel: str | None = None) -> str:
    """``kernel``, else ``$DPHYBRID_KERNEL``, else "auto"; ParameterError for anything but :data:`KERNELS`."""
    choice = kernel if kernel is not None else os.environ.get(KERNEL_ENV, "").strip() or "auto"
    if choice not in KERNELS:
        where = "kernel" if kernel is not None else KERNEL_ENV
        raise ParameterError(f"{where}={choice!r}: the sampler's kernel is one of {', '.join(KERNELS)}")
    return choice


def compile_sampler(mech: Mechanism | Program | Callable[..., Any], *, kernel: str | None = None,
                    **params: Any) -> Sampler:
    """A numba sampler for a mechanism (traced with ``params``), an already traced program, or a
    plain function in StatDP's contract (traced by :mod:`samplers.plain`); ``kernel`` as :class:`Sampler`."""
    from samplers.plain import as_program

    return Sampler(as_program(mech, **params), kernel)
