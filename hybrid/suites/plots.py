"""Plots of results (matplotlib, a dependency of the package).

:func:`plot_path` checks a plot's path before any work is done: its extension names
the format (PNG, PDF or SVG; a path without one gets ``.png``, and the path written is
the one reported), its folder exists, and a file already there is overwritten only if
dphybrid wrote it: an image of that format carrying :data:`MARK` in its metadata (a user's
own picture, or a results file, is never clobbered by a plot).
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any, Sequence

from hybrid.formats import lower_str, ratio_lower_str, upper_str
from hybrid.out_files import writable
from samplers.errors import DPHybridError

# the formats we write, each with the leading bytes of a file of that format
FORMATS = {".png": (b"\x89PNG",), ".pdf": (b"%PDF",), ".svg": (b"<?xml", b"<svg")}
MARK = "dphybrid plot"  # written into each plot's metadata (PNG Software, PDF and SVG Creator)
_METADATA_KEY = {".png": "Software", ".pdf": "Creator", ".svg": "Creator"}
MAX_PLOT_BYTES = 64 * 2**20  # a larger file is no plot of ours, and is not read to find out


def plot_path(path: str) -> Path:
    """The path a plot will be written to, checked (see the module docstring)."""
    p = Path(path)
    if not p.name or path.endswith(os.sep):
        raise DPHybridError(f"plot path {path!r} names no file")
    if not p.suffix:
        if Path(path).exists() or Path(path).is_symlink():
            raise DPHybridError(f"plot path {path} exists and names no image format (end it in "
                                f"{', '.join(FORMATS)})")
        p = p.with_name(p.name + ".png")
    suffix = p.suffix.lower()
    if suffix not in FORMATS:
        raise DPHybridError(f"plot {path}: unknown image format {p.suffix!r} (use one of {', '.join(FORMATS)})")
    writable(p, "the plot", lambda q: _ours(q, FORMATS[suffix]), f"a {suffix[1:].upper()} plot dphybrid wrote")
    _pyplot()  # matplotlib missing is an error now, not after the work
    return p


def _ours(p: Path, magics: tuple[bytes, ...]) -> bool:
    """An image of the format that carries our mark (a plot an earlier run wrote)."""
    try:
        if p.stat().st_size > MAX_PLOT_BYTES:
            return False
        data = p.read_bytes()
    except OSError as e:
        raise DPHybridError(f"cannot write the plot {p}: {e.strerror or e}") from None
    return any(data.lstrip().startswith(m) for m in magics) and MARK.encode() in data


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
        suffix = Path(path).suffix.lower() or ".png"
        fig.savefig(path, dpi=120, format=suffix.lstrip("."), bbox_inches="tight",
                    metadata={_METADATA_KEY[suffix]: MARK})
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
        ax.axvline(low, color="tab:red", lw=1.5, label=f"certified eps >= {lower_str(low)} (ratio >= {ratio_lower_str(result.get('ratio'))})")
    claimed = result.get("claimed_eps")
    if claimed is not None:
        ax.axvline(claimed, color="black", ls="--", lw=1, label=f"claimed eps = {claimed:g}")
    ax.set_xlabel("epsilon")
    ax.set_ylabel("p-value")
    ax.set_ylim(-0.02, 1.02)
    ax.set_title(f"{result['mechanism']}: testing and certified epsilon")
    ax.legend(fontsize=8, loc="center right")
    _save(plt, fig, path)


def bounds_plot(names: Sequence[str], ours: Sequence[float | None], claimed: Sequence[float | None],
                references: dict[str, Sequence[float | None]], path: str | Path, title: str) -> None:
    """Write :func:`bounds_figure` to ``path``."""
    _save(_pyplot(), bounds_figure(names, ours, claimed, references, title), path)


def bounds_figure(names: Sequence[str], ours: Sequence[float | None], claimed: Sequence[float | None],
                  references: dict[str, Sequence[float | None]], title: str) -> Any:
    """Bars of our lower bounds per entry against claimed eps (dashes) and published bounds.

    An infinite value is a hatched bar capped above every finite one and marked "inf"; a
    missing one (None, NaN) is no bar; a zero is marked "0".  The axis shows every bar.
    """
    plt = _pyplot()
    series = {"dphybrid lower bound": list(ours), **{k: list(v) for k, v in references.items()}}
    values = [v for vals in series.values() for v in vals if _present(v)] + [c for c in claimed if c is not None]
    finite = [v for v in values if math.isfinite(v)]
    cap = 1.5 * max([*finite, 0.1])  # where an infinite bar stops
    k, width = len(names), 0.8 / len(series)
    fig, ax = plt.subplots(figsize=(max(7.0, 0.6 * k + 3), 4.5))
    colours = ["tab:red", "tab:blue", "tab:orange", "tab:green", "tab:purple"]
    for j, (label, vals) in enumerate(series.items()):
        shown = [(i + (j - (len(series) - 1) / 2) * width, v) for i, v in enumerate(vals) if _present(v)]
        if not shown:
            continue
        bars = ax.bar([x for x, _ in shown], [cap if math.isinf(v) else v for _, v in shown], width, label=label,
                      color=colours[j % len(colours)], alpha=1.0 if j == 0 else 0.7)
        for bar, (x, v) in zip(bars, shown):
            if math.isinf(v):
                bar.set_hatch("//")
            if math.isinf(v) or v == 0:  # a capped bar, or one too flat to see
                ax.annotate("inf" if v else "0", (x, cap if v else 0.0), xytext=(0, 2), textcoords="offset points",
                            ha="center", va="bottom", fontsize=7)
    dash_label: str | None = "claimed eps"
    for i, c in enumerate(claimed):
        if c is not None:
            ax.hlines(min(c, cap), i - 0.45, i + 0.45, colors="black", linestyles="--", lw=1, label=dash_label)
            dash_label = None  # one legend entry
    ax.set_xticks(range(k))
    ax.set_xticklabels(names, rotation=60, ha="right", fontsize=7)
    ax.set_xlim(-0.6, k - 0.4)
    ax.set_ylabel("epsilon")
    ax.set_yscale("symlog", linthresh=0.1)
    ax.set_ylim(min([0.0, *finite]), cap * 1.8)  # room above the capped bars for their "inf"
    ax.set_title(title)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
    return fig


def _present(v: float | None) -> bool:
    """A value to draw a bar for: not missing, not NaN, not -inf (no level is below 0)."""
    return v is not None and not math.isnan(v) and v != -math.inf
