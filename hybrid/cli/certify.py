"""``dphybrid certify``: exact ratios of witnesses found by testing."""

from __future__ import annotations

import argparse
from typing import Any

from hybrid.cli import argtypes
from hybrid.cli.common import add_json_flag, add_time_budget, emit_json, no_result, time_limited
from hybrid.cli.progress import progress_reporter
from hybrid.cli.render import event_text, pair_text, params_text
from hybrid.formats import (delta_text, enclosure_str, eps_text, exact_str, lower_str, proved_upper_str,
                            ratio_lower_str, upper_str)

REJECTED = 1  # exit status of a well-formed proof file whose claim does not check (bad input is 2)


def register(subs: argparse._SubParsersAction) -> None:
    p = subs.add_parser("certify", help="certify witness files (ours, StatDP's, exported attacks) exactly, "
                                        "or re-check a proof file")
    p.add_argument("file", metavar="FILE", help="witness or result JSON, a StatDP result list, or a proof file "
                                                "('dphybrid prove --out')")
    p.add_argument("--mechanism", help="the mechanism of a StatDP result list (StatDP's do not name it)")
    p.add_argument("--eps", type=argtypes.epsilon, default=None,
                   help="claimed violation of eps-DP to check (e.g. 1.3 or 13/10)")
    p.add_argument("--backend", default="auto", help="exact backend: auto, enumerate, bdd, smt")
    add_json_flag(p)
    add_time_budget(p)
    p.set_defaults(run=time_limited(run))


def run(args: argparse.Namespace) -> int:
    from hybrid.searcher.certify import WitnessFileError, certify_file
    from hybrid.searcher.proof_file import is_proof, recheck
    from samplers.readers import read_json

    data = read_json(args.file, error=WitnessFileError)
    if is_proof(data):
        return _proof(recheck(data, args.file), args.json)
    with progress_reporter(quiet=args.json) as say:
        say(f"certifying the witnesses of {args.file} exactly")
        found = certify_file(args.file, backend=args.backend, mechanism=args.mechanism, claimed_eps=args.eps)
    certs = [c.to_json() for c in found]
    # P(E | x) = 0 exactly: the ratio is 0 whatever x' does, and the event certifies nothing
    vacuous = [c.get("ratio_enclosure") is None and c["ratio"] == "0" for c in certs]
    if args.json:
        emit_json(certs[0] if len(certs) == 1 else certs)
    else:
        _print(found, certs, vacuous)
    if all(vacuous):
        return no_result("the event never occurs under x (probability 0), so it certifies nothing",
                         "give an event that x can produce")
    return 0


def _print(found: list[Any], certs: list[dict[str, Any]], vacuous: list[bool]) -> None:
    for cert, c, empty in zip(found, certs, vacuous):
        w = c["witness"]
        print(f"{c['mechanism']} {params_text(c['params'])}: {pair_text(w['x'], w['x_prime'])} ({c['source']})")
        print(f"  event: {event_text(w['event'])}")
        if "ratio_enclosure" in c:  # continuous noise: rigorous enclosures
            print(f"  P(E | x) in {enclosure_str(*c['p_x'])}, P(E | x') in {enclosure_str(*c['p_x_prime'])}: "
                  f"certified ratio >= {ratio_lower_str(c['ratio'])}, eps >= {lower_str(c['eps_lower'])} (this "
                  f"event's ln ratio is at most {upper_str(c['ln_ratio_upper'])}; {c['backend']} backend)")
        elif empty:
            print(f"  P(E | x) = 0, P(E | x') = {exact_str(c['p_x_prime'])}: the event never occurs under x, "
                  "so it certifies nothing")
        else:
            print(f"  P(E | x) = {exact_str(c['p_x'])}, P(E | x') = {exact_str(c['p_x_prime'])}: "
                  f"exact ratio {exact_str(c['ratio'])} (ln in [{lower_str(c['eps_lower'])}, {upper_str(c['ln_ratio_upper'])}]), "
                  f"so eps >= {lower_str(c['eps_lower'])} ({c['backend']} backend)")
        if c["claimed_eps"] is not None:
            verdict = "holds" if c["violation_holds"] else "does NOT hold"
            print(f"  claimed violation of {eps_text(cert.witness.claimed_eps)}-DP: {verdict}")


def _proof(check: dict, as_json: bool) -> int:
    """A proof file's re-check: confirmed (exit 0) or rejected and why (exit :data:`REJECTED`)."""
    status = 0 if check["confirmed"] else REJECTED
    if as_json:
        emit_json(check)
        return status
    head = f"{check['mechanism']} {params_text(check['params'])}: proof by the {check['rule']} rule"
    if check["confirmed"]:
        print(f"{head} confirmed: eps <= {proved_upper_str(check['eps_upper'], check['eps'])}{delta_text(check['delta'])} "
              f"for every input of {check['domain']} ({check['file']})")
    else:
        print(f"{head} REJECTED: {check['problem']} ({check['file']})")
    return status
