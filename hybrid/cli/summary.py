"""Human-readable summaries of results on a terminal (rich)."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from hybrid.formats import lower_str, ratio_display, upper_str


def _params(d: dict[str, Any]) -> str:
    return " ".join(f"{k}={v}" for k, v in d.items())


def print_search(r: dict[str, Any]) -> None:
    """The search result: verdict, bracket, witness, candidates, timings."""
    c = Console()
    c.print(f"[bold]{r['mechanism']}[/bold] {_params(r['params'])}")
    if r["certified"]:
        c.print(f"  certified: e^eps >= [bold]{ratio_display(r['ratio'])}[/bold], eps >= [bold]{lower_str(r['eps_lower'])}[/bold]"
                f" ({r['backend']} backend)")
        if r.get("ratio_enclosure"):
            lo, hi = (ratio_display(v) for v in r["ratio_enclosure"])
            c.print(escape(f"  the witness's ratio lies in [{lo}, {hi}] (rigorous enclosure)"))
        if r.get("bracket"):
            lo, hi = r["bracket"]
            event = (r.get("witness") or {}).get("event")
            if r.get("ratio_enclosure") and not isinstance(event, list):  # released values: one event's ratio
                c.print(f"  the witness event's eps in [{lower_str(lo)}, {upper_str(hi)}]")
            else:
                c.print(f"  best pair's eps in [{lower_str(lo)}, {upper_str(hi)}] (precision {r['precision']:g})")
    else:
        c.print(f"  statistical lower bound: eps >= [bold]{lower_str(r['eps_lower'])}[/bold] (not certified)")
    if r.get("stat_interval"):
        lo = r["stat_interval"][0]
        conf = r.get("stat_confidence")
        level = f"confidence {conf:g}, " if conf is not None else ""
        c.print(f"  testing alone: eps >= {lower_str(lo)} ({level}one-sided; not certified)")
    if r.get("eps_upper") is not None:
        c.print(f"  global verification: eps <= {upper_str(r['eps_upper'])}"
                + ("" if r.get("proved_dp") is None else f", proved {r['claimed_eps']:g}-DP: {r['proved_dp']}"))
    if r.get("claimed_eps") is not None and r.get("refuted") is not None:
        verdict = "[red]refuted[/red]" if r["refuted"] else "not refuted"
        c.print(f"  claim eps = {r['claimed_eps']:g}: {verdict}")
    w = r.get("witness")
    if w:
        c.print(f"  witness: x = {w['x']}, x' = {w['x_prime']}, event = {w['event']}")
    if r.get("note"):
        c.print(f"  {r['note']}")
    if r.get("growth"):
        t = Table("length", "ratio", "eps >=", "x", "x'", "output", title="witness family")
        for g in r["growth"]:
            key = next(k for k in g if k not in ("ratio", "eps_lower", "x", "x_prime", "output"))
            t.add_row(str(g[key]), g["ratio"], lower_str(g["eps_lower"]), str(g["x"]), str(g["x_prime"]), str(g["output"]))
        c.print(t)
    cands = [k for k in r.get("candidates", []) if "ratio" in k]
    if cands:
        t = Table("x", "x'", "origin", "certified ratio", title="candidate pairs certified")
        for k in cands[:8]:
            t.add_row(str(k["x"]), str(k["x_prime"]), k.get("origin", k.get("proposed_by", "")),
                      ratio_display(k["ratio"]) if k["ratio"] else "not weighed")
        c.print(t)
    for lim in r.get("limits_hit", []):
        c.print(f"  [yellow]limit:[/yellow] {lim}")
    timings = ", ".join(f"{k} {v:.2f} s" for k, v in r.get("timings", {}).items())
    c.print(f"  {r.get('samples', 0):,} samples, {r.get('exact_queries', 0):,} exact queries; {timings}")
