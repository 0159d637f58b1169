"""Plots of results (matplotlib, the optional ``plot`` extra)."""

from __future__ import annotations

import math
from typing import Any, Sequence

from hybrid.formats import lower_str, upper_str
from samplers.errors import DPHybridError


def _pyplot() -> Any:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise DPHybridError("plots need matplotlib: pip install 'dphybrid[plot]'") from None
    return plt


def _save(plt: Any, fig: Any, path: str) -> None:
    """Write the figure; an unwritable path is a one-line error, not a traceback."""
    fig.tight_layout()
    try:
        fig.savefig(path, dpi=120)
    except OSError as e:
        raise DPHybridError(f"cannot write the plot {path}: {e.strerror or e}") from None
    finally:
        plt.close(fig)


def search_plot(result: dict[str, Any], path: str) -> None:
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
                references: dict[str, Sequence[float | None]], path: str, title: str) -> None:
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
