"""Plots of results (matplotlib, a dependency of the package).

:func:`plot_path` checks a plot's path before any work is done: its extension names
the format (PNG, PDF or SVG; a path without one gets ``.png``, and the path written is
the one reported), its folder exists, and a file already there is overwritten only if
it is an image of that format (a results file is never clobbered by a plot).
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any, Sequence

from hybrid.formats import lower_str, upper_str
from samplers.errors import DPHybridError

# the formats we write, each with the leading bytes of a file of that format
FORMATS = {".png": (b"\x89PNG",), ".pdf": (b"%PDF",), ".svg": (b"<?xml", b"<svg")}


def plot_path(path: str) -> Path:
    """The path a plot will be written to, checked (see the module docstring)."""
    p = Path(path)
    if not p.name or path.endswith(os.sep):
        raise DPHybridError(f"plot path {path!r} names no file")
    if not p.suffix:
        p = p.with_name(p.name + ".png")
    suffix = p.suffix.lower()
    if suffix not in FORMATS:
        raise DPHybridError(f"plot {path}: unknown image format {p.suffix!r} (use one of {', '.join(FORMATS)})")
    folder = p.parent if str(p.parent) else Path(".")
    if not folder.is_dir():
        raise DPHybridError(f"cannot write the plot {p}: no folder {folder}")
    if p.exists() or p.is_symlink():
        if not p.is_file():
            raise DPHybridError(f"cannot write the plot {p}: it exists and is not a regular file")
        if not _starts_with(p, FORMATS[suffix]):
            raise DPHybridError(f"refusing to overwrite {p}: it is not a {suffix[1:].upper()} image")
    elif not os.access(folder, os.W_OK):
        raise DPHybridError(f"cannot write the plot {p}: folder {folder} is not writable")
    _pyplot()  # matplotlib missing is an error now, not after the work
    return p


def _starts_with(p: Path, magics: tuple[bytes, ...]) -> bool:
    try:
        with p.open("rb") as f:
            head = f.read(64).lstrip()
    except OSError as e:
        raise DPHybridError(f"cannot write the plot {p}: {e.strerror or e}") from None
    return any(head.startswith(m) for m in magics)


def _pyplot() -> Any:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise DPHybridError("plots need matplotlib (a dependency of dphybrid): pip install 'matplotlib>=3.7'") from None
    return plt


def _save(plt: Any, fig: Any, path: str | Path) -> None:
    """Write the figure in the format its extension names; an unwritable path is a one-line error."""
    fig.tight_layout()
    try:
        fig.savefig(path, dpi=120, format=Path(path).suffix.lower().lstrip(".") or "png")
    except OSError as e:
        raise DPHybridError(f"cannot write the plot {path}: {e.strerror or e}") from None
    finally:
        plt.close(fig)


def search_plot(result: dict[str, Any], path: str | Path) -> None:
    """The tester's p-value versus eps, with the statistical interval and the certified bracket."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4))
    curve = sorted(result.get("pvalue_curve") or [])
    if curve:
        ax.plot([e for e, _ in curve], [p for _, p in curve], "o-", color="tab:blue", label="StatDP-style p-value")
    ax.axhline(0.05, color="grey", ls=":", lw=1, label="alpha = 0.05")
    stat = result.get("stat_interval")
    if stat and all(isinstance(v, (int, float)) and math.isfinite(v) for v in stat):
        ax.axvspan(stat[0], stat[1], color="tab:blue", alpha=0.15, label="statistical interval")
    bracket = result.get("bracket")
    if bracket and all(isinstance(v, (int, float)) and math.isfinite(v) for v in bracket):
        ax.axvspan(bracket[0], max(bracket[1], bracket[0] + 1e-4), color="tab:red", alpha=0.4,
                   label=f"certified bracket [{lower_str(bracket[0], 4)}, {upper_str(bracket[1], 4)}]")
    low = result.get("eps_lower")
    if isinstance(low, (int, float)) and math.isfinite(low):
        ax.axvline(low, color="tab:red", lw=1.5, label=f"certified eps >= {lower_str(low)} (ratio {result.get('ratio')})")
    claimed = result.get("claimed_eps")
    if claimed is not None:
        ax.axvline(claimed, color="black", ls="--", lw=1, label=f"claimed eps = {claimed:g}")
    ax.set_xlabel("epsilon")
    ax.set_ylabel("p-value")
    ax.set_ylim(-0.02, 1.02)
    ax.set_title(f"{result['mechanism']}: testing and certified epsilon")
    ax.legend(fontsize=8, loc="center right")
    _save(plt, fig, path)


def bounds_plot(names: Sequence[str], ours: Sequence[float], claimed: Sequence[float | None],
                references: dict[str, Sequence[float | None]], path: str | Path, title: str) -> None:
    """Bars of our lower bounds per entry against claimed eps and published bounds."""
    plt = _pyplot()
    import numpy as np

    k = len(names)
    width = 0.8 / (1 + len(references))
    fig, ax = plt.subplots(figsize=(max(7, 0.5 * k + 3), 4.5))
    xs = np.arange(k)
    finite = [v if v is not None and math.isfinite(v) else np.nan for v in ours]
    ax.bar(xs, finite, width, label="dphybrid lower bound", color="tab:red")
    for j, (label, vals) in enumerate(references.items(), start=1):
        ax.bar(xs + j * width, [np.nan if v is None else v for v in vals], width, label=label, alpha=0.7)
    for i, c in enumerate(claimed):
        if c is not None:
            ax.plot([i - width / 2, i + (len(references) + 0.5) * width], [c, c], "k--", lw=1)
    ax.set_xticks(xs + width * len(references) / 2)
    ax.set_xticklabels(names, rotation=60, ha="right", fontsize=7)
    ax.set_ylabel("epsilon")
    ax.set_yscale("symlog", linthresh=0.1)
    ax.set_title(title)
    ax.legend(fontsize=8)
    _save(plt, fig, path)
