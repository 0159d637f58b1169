"""``dphybrid certify``: exact ratios of witnesses found by testing."""

from __future__ import annotations

import argparse

from hybrid.cli import argtypes
from hybrid.cli.common import add_json_flag, emit_json
from hybrid.cli.render import event_text, params_text
from hybrid.formats import (enclosure_str, eps_text, exact_str, lower_str, proved_upper_str, ratio_lower_str,
                            upper_str)


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
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from hybrid.searcher.certify import WitnessFileError, certify_file
    from hybrid.searcher.proof_file import is_proof, recheck
    from samplers.readers import read_json

    data = read_json(args.file, error=WitnessFileError)
    if is_proof(data):
        return _proof(recheck(data, args.file), args.json)
    found = certify_file(args.file, backend=args.backend, mechanism=args.mechanism, claimed_eps=args.eps)
    certs = [c.to_json() for c in found]
    if args.json:
        emit_json(certs[0] if len(certs) == 1 else certs)
        return 0
    for cert, c in zip(found, certs):
        w = c["witness"]
        print(f"{c['mechanism']} {params_text(c['params'])}: x = {w['x']}, x' = {w['x_prime']} ({c['source']})")
        print(f"  event: {event_text(w['event'])}")
        if "ratio_enclosure" in c:  # continuous noise: rigorous enclosures
            print(f"  P(E | x) in {enclosure_str(*c['p_x'])}, P(E | x') in {enclosure_str(*c['p_x_prime'])}: "
                  f"certified ratio >= {ratio_lower_str(c['ratio'])}, eps >= {lower_str(c['eps_lower'])} (this "
                  f"event's ln ratio is at most {upper_str(c['ln_ratio_upper'])}; {c['backend']} backend)")
        else:
            print(f"  P(E | x) = {exact_str(c['p_x'])}, P(E | x') = {exact_str(c['p_x_prime'])}: "
                  f"exact ratio {exact_str(c['ratio'])} (ln in [{lower_str(c['eps_lower'])}, {upper_str(c['ln_ratio_upper'])}]), "
                  f"so eps >= {lower_str(c['eps_lower'])} ({c['backend']} backend)")
        if c["claimed_eps"] is not None:
            verdict = "holds" if c["violation_holds"] else "does NOT hold"
            print(f"  claimed violation of {eps_text(cert.witness.claimed_eps)}-DP: {verdict}")
    return 0


def _proof(check: dict, as_json: bool) -> int:
    """A proof file's re-check: confirmed or rejected (and why)."""
    if as_json:
        emit_json(check)
        return 0
    head = f"{check['mechanism']} {params_text(check['params'])}: proof by the {check['rule']} rule"
    if check["confirmed"]:
        print(f"{head} confirmed: eps <= {proved_upper_str(check['eps_upper'], check['eps'])} for every input "
              f"({check['file']})")
    else:
        print(f"{head} REJECTED: {check['problem']} ({check['file']})")
    return 0
