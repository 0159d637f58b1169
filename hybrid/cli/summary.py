"""Human-readable summaries of search results (rich; see :mod:`hybrid.cli.render` for the width)."""

from __future__ import annotations

from typing import Any

from rich.markup import escape

from hybrid.cli.render import CELL_CHARACTERS, console, cut_text, event_text, pair_text, params_text, table, vector_text
from hybrid.formats import delta_str, enclosure_str, lower_str, output_str, ratio_lower_str, result_upper_str, upper_str
from verifiers.float64.verdict import NUMPY

DELTA_DIGITS = 10  # significant digits of a delta at the claim, rounded in the sound direction
TABLE_EXACT = 64  # a table shows an exact ratio up to this many characters, else its value rounded down


def _table_ratio(text: Any) -> str:
    return text if isinstance(text, str) and len(text) <= TABLE_EXACT else ratio_lower_str(text)


def _event_cell(candidate: dict[str, Any]) -> str:
    """A candidate's event: the tester's or the tuned one (described), or the pair's best output."""
    if "event" in candidate:
        return cut_text(str(candidate["event"]), CELL_CHARACTERS)
    if candidate.get("output") is None:
        return ""
    return cut_text(f"output in {{{output_str(candidate['output'])}}}", CELL_CHARACTERS)


def interval_line(r: dict[str, Any], label: str = "") -> str:
    """``eps in [lower, upper]`` with the gap in percent of the upper end, and where the upper end is from."""
    lower, upper = r["eps_lower"], r["eps_upper"]
    up = result_upper_str(r)
    gap = "" if upper in (0, "inf") or lower == "inf" else f"gap {100 * (upper - lower) / upper:.2f}%; "
    source = r.get("upper_source") or "global verification"
    claim = "" if r.get("proved_dp") is None else f"; proved {r['claimed_eps']:g}-DP: {r['proved_dp']}"
    low = "lower certified" if r.get("certified") else "no certified lower bound"
    return f"  {label}eps in [{lower_str(lower)}, {up}] ({gap}{low}, upper by {source}{claim})"


def float_lines(r: dict[str, Any]) -> list[str]:
    """The float-level verdict (``search --float``): ``float64: eps >= ...`` and its witness, or why none."""
    label = f"float64 ({r.get('float_model') or NUMPY})"
    if r.get("float_eps_lower") is None:
        return [f"  {label}: no certified bound: {r.get('float_note')}"]
    w = r["float_witness"]
    how = f"robust: {w.get('robust_under', 'any log within 1 ulp')}" if w["robust"] \
        else "x's draws checked with this machine's log"
    lines = [f"  {label}: eps >= {lower_str(r['float_eps_lower'])} certified ({how})",
             f"    witness: x = {w['x']}, x' = {w['x_prime']}, output {w['output_hex']} ({w['output']!r})"]
    shown = w["draws_x"] if w["draws_x_joint"] else w["draws_x"][:3]
    draws = ", ".join(f"k = {d['k']} ({d['layer']})" for d in shown)
    more = f" of {w['draws_x_sure']} sure" if w["draws_x_sure"] > 1 else ""
    proof = w.get("proof_x_prime")
    reach = ("no draw reaches it from x' (proof_x_prime)" if w["draws_x_prime_possible"] == 0 and isinstance(proof, list)
             else f"no noise reaches it from x' ({proof['lemma']})" if w["draws_x_prime_possible"] == 0
             else f"at most {w['draws_x_prime_possible']} draws from x'")
    lines.append(f"    from x by draws {draws}{more}; {reach}")
    return lines


def delta_lines(r: dict[str, Any]) -> list[str]:
    """delta at the claimed eps (a result that reports it): certified below, proved above, as
    :func:`interval_line` says eps, and the pair and event of the lower bound."""
    if "delta_upper" not in r:
        return []
    at, lo, up = f"delta({r['claimed_eps']:g})", r["delta_lower"], r["delta_upper"]
    lo_s = None if lo is None else delta_str(lo, up=False, digits=DELTA_DIGITS)
    up_s = None if up is None else delta_str(up, up=True, digits=DELTA_DIGITS)
    no_proof = "no proof: " + "; ".join(r.get("delta_no_proof") or ["no rule proves delta here"])
    if lo_s is not None and up_s is not None:
        out = [f"{at} in [{lo_s}, {up_s}] (lower certified, upper by {r['delta_upper_source']})"]
    elif up_s is not None:
        out = [f"{at} <= {up_s} (upper by {r['delta_upper_source']}; no certified lower bound)"]
    elif lo_s is not None:
        out = [f"{at} >= {lo_s} (certified; {no_proof})"]
    else:
        out = [f"{at}: no bound ({no_proof})"]
    if lo_s is not None:
        w = r["delta_witness"]
        out.append(f"delta witness: x = {w['x']}, x' = {w['x_prime']}, event: {w['event']}")
    return out


def delta_claim_line(r: dict[str, Any]) -> str:
    """The verdict on an (eps, delta) claim, with the bound that decides it (rich markup)."""
    head = f"claim (eps, delta) = ({r['claimed_eps']:g}, {r['claimed_delta']:g}): "
    if r.get("refuted"):
        return head + (f"[red]refuted[/red] (certified delta >= "
                       f"{delta_str(r['delta_lower'], up=False, digits=DELTA_DIGITS)})"
                       if r.get("delta_lower") is not None else "[red]refuted[/red]")
    if r.get("proved_dp"):
        return head + f"proved (delta <= {delta_str(r['delta_upper'], up=True, digits=DELTA_DIGITS)})"
    return head + "neither refuted nor proved"


def print_search(r: dict[str, Any]) -> None:
    """The search result: verdict, bracket, witness, candidates, timings.

    The header names the parameters the witness holds at: a search that grew the input's
    length reports a witness at the grown length.
    """
    c = console()
    say = (lambda text: c.print(escape(text)))
    w = r.get("witness") or {}
    at = w.get("params") or r["params"]
    c.print(f"[bold]{escape(r['mechanism'])}[/bold] {escape(params_text(at))}")
    grown = {k: v for k, v in at.items() if r["params"].get(k, v) != v}
    if grown:
        say(f"  (the search grew {params_text({k: r['params'][k] for k in grown})} to {params_text(grown)}: "
            "the witness below holds there)")
    if r["certified"]:
        c.print(f"  certified: e^eps >= [bold]{escape(ratio_lower_str(r['ratio']))}[/bold], "
                f"eps >= [bold]{lower_str(r['eps_lower'])}[/bold] ({escape(str(r['backend']))} backend)")
        if r.get("ratio_enclosure"):
            say(f"  the witness's ratio lies in {enclosure_str(*r['ratio_enclosure'])} (rigorous enclosure)")
        if r.get("bracket"):
            lo, hi = r["bracket"]
            if r.get("ratio_enclosure") and not isinstance(w.get("event"), list):  # released values: one event's ratio
                say(f"  the witness event's eps in [{lower_str(lo)}, {upper_str(hi)}]")
            else:
                say(f"  best pair's eps in [{lower_str(lo)}, {upper_str(hi)}] (precision {r['precision']:g})")
    elif w:  # without a witness there is no bound (the no-result sentence follows on stderr)
        c.print(f"  statistical lower bound: eps >= [bold]{lower_str(r['eps_lower'])}[/bold] (not certified)")
    if r.get("stat_interval"):
        conf = r.get("stat_confidence")
        level = f"confidence {conf:g}, " if conf is not None else ""
        say(f"  testing alone: eps >= {lower_str(r['stat_interval'][0])} ({level}one-sided; not certified)")
    if r.get("eps_upper") is not None:
        say(interval_line(r, "real numbers: " if "float_certified" in r else ""))
    if "float_certified" in r:
        for line in float_lines(r):
            say(line)
    for n in r.get("no_proof") or [] if not r.get("proof") else []:
        say(f"  no proof by the {n['rule'] or 'prover'} rule: {n['reason']}" + (f" [{n['where']}]" if n["where"] else ""))
    if r.get("claimed_delta") is not None:
        c.print(f"  {delta_claim_line(r)}")
    elif r.get("claimed_eps") is not None and r.get("refuted") is not None:
        verdict = "[red]refuted[/red]" if r["refuted"] else "not refuted"
        c.print(f"  claim eps = {r['claimed_eps']:g}: {verdict}")
    for line in delta_lines(r):
        say(f"  {line}")
    if w:
        say(f"  witness: {pair_text(w['x'], w['x_prime'])}")
        say(f"  event: {event_text(w['event'])}")
    if r.get("note"):
        say(f"  {r['note']}")
    if r.get("growth"):
        t = table("length", "ratio", "eps >=", "x", "x'", "output", title="witness family")
        for g in r["growth"]:
            key = next(k for k in g if k not in ("ratio", "eps_lower", "x", "x_prime", "output"))
            t.add_row(*map(escape, (f"{key}={g[key]}", _table_ratio(g["ratio"]), lower_str(g["eps_lower"]),
                                    vector_text(g["x"]), vector_text(g["x_prime"]), cut_text(output_str(g["output"])))))
        c.print(t)
    cands = [k for k in r.get("candidates", []) if "ratio" in k]
    if cands:
        events = any("event" in k or "output" in k for k in cands)
        where = f" at {params_text(r['params'])}" if grown else ""
        t = table("x", "x'", "origin", "certified ratio", *(["event"] if events else []),
                  title=f"candidate pairs certified{where}")
        for k in cands[:8]:
            cells = [vector_text(k["x"]), vector_text(k["x_prime"]), k.get("origin", k.get("proposed_by", "")),
                     _table_ratio(k["ratio"]) if k["ratio"] else "not weighed"]
            t.add_row(*map(escape, cells + ([_event_cell(k)] if events else [])))
        c.print(t)
    for lim in r.get("limits_hit", []):
        c.print(f"  [yellow]limit:[/yellow] {escape(lim)}")
    timings = ", ".join(f"{k} {v:.2f} s" for k, v in r.get("timings", {}).items())
    say(f"  {r.get('samples', 0):,} samples, {r.get('exact_queries', 0):,} exact queries; {timings}")
