"""Reports of suite results: a table (markdown, HTML or JSON) and a bar plot of bounds.

Each row says what was established about one entry: the certified lower bound and its
exact ratio, the proved upper bound (a proof rule's, or an exhaustive global check's), delta at
the claimed eps where the search reports it (certified lower, proved upper; and the claimed
delta, which the verdict is then about), the statistical interval, the verdict (proved, refuted, certified bound,
statistical only, error), the witness and the time; and, where the suite declares
reference values, how they compare (exact levels from REFERENCE.md, DP-Sniper's and
StatDP's published outcomes).
"""

from __future__ import annotations

import html
import json
import math
from typing import Any, Sequence

from hybrid.formats import delta_str, lower_str, ratio_lower_str, result_upper_str, upper_str
from verifiers.ratio import parse_ratio


def _num(v: Any) -> float | None:
    if v is None:
        return None
    if v == "inf":
        return math.inf
    return float(v)


def verdict(row: dict[str, Any]) -> str:
    """One word or two on what the row established."""
    if row["status"] != "ok":
        return row["status"]
    r = row["result"]
    if r.get("certified"):
        if r.get("refuted"):
            return "refuted (certified)"
        if r.get("proved_dp"):
            return "proved"
        return "certified bound"
    return "refuted (statistical)" if r.get("refuted") else "statistical only"


def timed_out(row: dict[str, Any]) -> bool:
    """Whether the time budget (a safety limit) cut the row's search short: its result may then
    depend on the machine's speed and load, not only on its counts and seed."""
    return any("time budget" in str(lim) for lim in (row.get("result") or {}).get("limits_hit") or [])


def _compare(ref: dict[str, Any], r: dict[str, Any], verdict_: str) -> dict[str, str]:
    out: dict[str, str] = {}
    ours = _num(r.get("eps_lower"))
    if "exact_ratio" in ref:
        want = parse_ratio(str(ref["exact_ratio"]))
        got = None if r.get("ratio") is None else parse_ratio(r["ratio"])
        out["exact"] = f"{ref['exact_ratio']} " + ("✓" if got == want else f"✗ (got {r.get('ratio')})")
    if "dpsniper" in ref and ours is not None:
        out["DP-Sniper"] = f"{ref['dpsniper']:.4f} " + ("✓" if ours >= ref["dpsniper"] else "✗")
    if "dp" in ref:
        refuted = verdict_.startswith("refuted")
        agrees = refuted != bool(ref["dp"])
        out["StatDP"] = ("DP" if ref["dp"] else "not DP") + (" ✓" if agrees else " ✗")
    if "refuted" in ref:
        out["expected"] = ("refuted" if ref["refuted"] else "not refuted") + (
            " ✓" if bool(r.get("refuted")) == bool(ref["refuted"]) else " ✗")
    return out


def _fmt(v: Any, digits: int = 4) -> str:
    if v is None:
        return ""
    if v == "inf" or v == math.inf:
        return "inf"
    if isinstance(v, (int, float)):
        return f"{v:.{digits}f}"
    return str(v)


def table(rows: Sequence[dict[str, Any]]) -> tuple[list[str], list[dict[str, str]]]:
    """Column names and one dict of cell strings per result row."""
    refs: list[str] = []
    out = []
    for row in rows:
        entry = row["entry"]
        r = row.get("result") or {}
        v = verdict(row)
        cmp = _compare(entry.get("reference", {}), r, v) if row["status"] == "ok" else {}
        refs += [k for k in cmp if k not in refs]
        stat = r.get("stat_interval")
        w = r.get("witness") or {}
        ratio = r.get("ratio")
        if ratio is not None and ratio != "inf" and len(ratio) > 24:  # a long one's value, rounded down (a bound)
            ratio = "≥" + ratio_lower_str(ratio, 6)
        cells = {
            "mechanism": entry["mechanism"],
            "params": " ".join([f"{k}={val}" for k, val in entry.get("params", {}).items()] + _grown(r)),
            "claimed eps": _fmt(entry.get("claimed_eps"), 3),
            "eps lower bound": lower_str(r.get("eps_lower"), 4),
            "proved upper": result_upper_str(r, 4)
            if r.get("eps_upper") is not None else "",
            "exact ratio": ratio or "",
            "statistical interval": f"[{lower_str(stat[0], 4)}, {upper_str(stat[1], 4)}]" if stat else "",
            "verdict": (v + (" (time budget reached)" if timed_out(row) else "")) if row["status"] == "ok"
            else f"{v}: {row.get('error', '')}",
            "witness": f"{w.get('x')} vs {w.get('x_prime')}" if w else "",
            "time s": f"{row.get('elapsed', 0):.1f}",
            **_delta_cells(entry, r),
            **cmp,
        }
        out.append(cells)
    cols = ["mechanism", "params", "claimed eps", "eps lower bound", "proved upper", "exact ratio", "statistical interval",
            "verdict", "witness", "time s"] + refs
    if any(DELTA_COLUMNS[1] in c for c in out):  # only suites with delta at a claim show the columns
        cols[3:3] = list(DELTA_COLUMNS)
    return cols, out


DELTA_COLUMNS = ("claimed delta", "delta at claimed eps")


def _delta_cells(entry: dict[str, Any], r: dict[str, Any]) -> dict[str, str]:
    """The claimed delta and ``[certified lower, proved upper]`` delta at the claimed eps, for a
    result that reports delta (an empty end: no bound that way)."""
    if "delta_upper" not in r:
        return {}
    lo, up = r.get("delta_lower"), r.get("delta_upper")
    claimed = entry.get("claimed_delta")
    return {DELTA_COLUMNS[0]: "" if claimed is None else str(claimed),
            DELTA_COLUMNS[1]: f"[{'' if lo is None else delta_str(lo, up=False)}, "
                              f"{'' if up is None else delta_str(up, up=True)}]"}


def _grown(r: dict[str, Any]) -> list[str]:
    """The parameters a search grew (an input length): the witness holds at ``L=5 (grown from 2)``."""
    asked, at = r.get("params") or {}, (r.get("witness") or {}).get("params") or {}
    return [f"{k}={v} (grown from {asked[k]})" for k, v in at.items() if k in asked and asked[k] != v]


def markdown(rows: Sequence[dict[str, Any]], title: str = "") -> str:
    cols, cells = table(rows)
    lines = [f"## {title}", ""] if title else []
    lines += ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(c.get(k, "").replace("|", "\\|") for k in cols) + " |" for c in cells]
    lines += ["", summary(rows)]
    return "\n".join(lines)


def html_report(rows: Sequence[dict[str, Any]], title: str = "dphybrid results") -> str:
    cols, cells = table(rows)
    head = "".join(f"<th>{html.escape(c)}</th>" for c in cols)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(c.get(k, ''))}</td>" for k in cols) + "</tr>" for c in cells)
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
            "<style>body{font-family:sans-serif}table{border-collapse:collapse}"
            "td,th{border:1px solid #ccc;padding:3px 6px;font-size:13px}</style></head><body>"
            f"<h1>{html.escape(title)}</h1><table><tr>{head}</tr>{body}</table>"
            f"<p>{html.escape(summary(rows))}</p></body></html>")


def json_report(rows: Sequence[dict[str, Any]]) -> str:
    cols, cells = table(rows)
    return json.dumps({"columns": cols, "rows": cells, "summary": summary(rows)}, indent=2)


# the reference fields an entry may declare: the column comparing it, and what a match means
REFERENCE_COLUMNS = {"exact_ratio": ("exact", "the exact ratio"), "dpsniper": ("DP-Sniper", "at least DP-Sniper's bound"),
                     "dp": ("StatDP", "StatDP's verdict"), "refuted": ("expected", "the expected verdict")}


def reference_checks(rows: Sequence[dict[str, Any]]) -> dict[str, tuple[int, int]]:
    """Per reference column: (entries whose result matches it, entries declaring it); an entry
    that failed or has no bound to compare counts as a mismatch."""
    out: dict[str, tuple[int, int]] = {}
    for row in rows:
        ref = row["entry"].get("reference", {})
        cmp = _compare(ref, row.get("result") or {}, verdict(row)) if row["status"] == "ok" else {}
        for field, (column, _) in REFERENCE_COLUMNS.items():
            if field in ref:
                hits, total = out.get(column, (0, 0))
                out[column] = (hits + cmp.get(column, "").endswith("✓"), total + 1)
    return out


def summary(rows: Sequence[dict[str, Any]]) -> str:
    """Counts of verdicts, of results matching each reference, of rows the time budget cut short, and total time."""
    counts: dict[str, int] = {}
    for row in rows:
        counts[verdict(row)] = counts.get(verdict(row), 0) + 1
    total = sum(row.get("elapsed", 0.0) for row in rows)
    parts = ", ".join(f"{n} {k}" for k, n in counts.items())
    means = dict(REFERENCE_COLUMNS.values())
    checks = "".join(f"; {means[column]} on {hits} of {n}" for column, (hits, n) in reference_checks(rows).items())
    cut = sum(timed_out(row) for row in rows)
    cut_text = f"; {cut} cut short by the time budget (their bounds depend on the machine)" if cut else ""
    return f"{len(rows)} entries: {parts}{checks}{cut_text}; {total:.1f} s of entry time."


def plot(rows: Sequence[dict[str, Any]], path: str, title: str = "dphybrid lower bounds") -> None:
    """Bars of our lower bounds against the claimed eps and any published bounds."""
    from hybrid.suites.plots import bounds_plot

    bounds_plot(*plot_data(rows), path, title)


def plot_data(rows: Sequence[dict[str, Any]]) -> tuple[list[str], list[float | None], list[float | None],
                                                        dict[str, list[float | None]]]:
    """What :func:`plot` draws: labels, our lower bounds, the claims and the published bounds."""
    ours = [_num((r.get("result") or {}).get("eps_lower")) for r in rows]
    claimed = [r["entry"].get("claimed_eps") for r in rows]
    refs: dict[str, list[float | None]] = {}
    if any("dpsniper" in r["entry"].get("reference", {}) for r in rows):
        refs["DP-Sniper"] = [r["entry"].get("reference", {}).get("dpsniper") for r in rows]
    if any("exact_ratio" in r["entry"].get("reference", {}) for r in rows):
        refs["exact level"] = [_log(r["entry"].get("reference", {}).get("exact_ratio")) for r in rows]
    return plot_labels(rows), ours, claimed, refs


def plot_labels(rows: Sequence[dict[str, Any]]) -> list[str]:
    """One label per row: the mechanism, with the parameters in which entries of that mechanism
    differ (``rr(lam=1/4)``), then their claims if still alike, then their positions."""
    entries = [row["entry"] for row in rows]

    def label(e: dict[str, Any], claims: bool) -> str:
        same = [o for o in entries if o["mechanism"] == e["mechanism"]]
        params = e.get("params", {})
        parts = [f"{k}={v}" for k, v in params.items()
                 if any(o.get("params", {}).get(k) != v for o in same)]
        if claims and e.get("claimed_eps") is not None:
            parts.append(f"claim {e['claimed_eps']:g}")
        return e["mechanism"] + (f"({', '.join(parts)})" if parts else "")

    labels = [label(e, False) for e in entries]
    labels = [label(e, True) if labels.count(t) > 1 else t for e, t in zip(entries, labels)]
    return [f"{t} #{i + 1}" if labels.count(t) > 1 else t for i, t in enumerate(labels)]


def _log(ratio: Any) -> float | None:
    if ratio is None:
        return None
    r = parse_ratio(str(ratio))
    return math.inf if r == math.inf else (math.log(r) if r > 0 else None)
