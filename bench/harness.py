"""Run every benchmark and collect their markdown into one document (``python -m bench``).

Each benchmark runs in its own process, ``python -m bench.NAME [--quick]``; its stdout is
streamed to the terminal and captured.  The document (default ``bench/RESULTS.md``) has a
header (date, machine, the exact command) and one section per benchmark: the command that
reproduces it, its wall time and its output, or for a failed benchmark the error tail
(the harness then exits 1).  ``--readme FILE`` (any markdown file: the docs' page is
``docs/performance.md``) also replaces the text between the lines ``<!-- bench:start -->``
and ``<!-- bench:end -->`` of FILE with the document's body, its headings one level down so
the sections sit under the page's ``## Benchmarks``.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import IO

from bench.common import machine

BENCHES = ("startup", "budgets", "samplers", "kernels", "verify", "testers", "search", "smt", "suite", "suite_scaling",
           "continuous", "scaling", "large_n", "large_sample", "prover", "templates", "composition", "plain",
           "libraries")
START, END = "<!-- bench:start -->", "<!-- bench:end -->"
DEFAULT_OUT = Path(__file__).resolve().parent / "RESULTS.md"
ERROR_TAIL = 30  # lines of a failed benchmark's stderr kept in its section
_HEADING = re.compile(r"^(#{1,6})(?=\s)")
_SECTION = re.compile(r"^#{2,3} (\w+)\s*$")


class MarkerError(ValueError):
    """The markdown file lacks the bench markers (or has them twice, or in the wrong order)."""


@dataclass
class Outcome:
    name: str
    command: str
    seconds: float
    returncode: int
    stdout: str
    stderr: str


def shift_headings(text: str, by: int) -> str:
    """Every markdown heading ``by`` levels deeper (at most ``######``); code blocks untouched."""
    out, fenced = [], False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif not fenced:
            line = _HEADING.sub(lambda m: "#" * min(6, len(m.group(1)) + by), line)
        out.append(line)
    return "\n".join(out)


def nest(text: str, level: int) -> str:
    """Shift the headings so the shallowest becomes ``level`` (text without headings is unchanged)."""
    levels, fenced = [], False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif not fenced and (m := _HEADING.match(line)):
            levels.append(len(m.group(1)))
    return shift_headings(text, level - min(levels)) if levels else text


def splice(text: str, body: str) -> str:
    """``text`` with the lines between the bench markers replaced by ``body``."""
    lines = text.splitlines(keepends=True)
    starts = [i for i, line in enumerate(lines) if line.strip() == START]
    ends = [i for i, line in enumerate(lines) if line.strip() == END]
    if len(starts) != 1 or len(ends) != 1:
        raise MarkerError(f"expected one line {START} and one line {END}, "
                          f"found {len(starts)} and {len(ends)}")
    if ends[0] < starts[0]:
        raise MarkerError(f"{END} comes before {START}")
    return "".join(lines[:starts[0] + 1]) + "\n" + body.strip() + "\n\n" + "".join(lines[ends[0]:])


def spliced(text: str) -> str:
    """The lines between the bench markers of ``text``."""
    lines = [line.strip() for line in text.splitlines()]
    if START not in lines or END not in lines:
        return ""
    return "\n".join(text.splitlines()[lines.index(START) + 1:lines.index(END)])


def readme_body(document: str) -> str:
    """The document without its title, headings one level down (``## bench`` -> ``### bench``)."""
    lines = document.strip().splitlines()
    if lines and lines[0].startswith("# "):
        lines = lines[1:]
    return shift_headings("\n".join(lines).strip(), 1)


def _pump(src: IO[str], sink: IO[str], keep: list[str]) -> None:
    for line in src:
        sink.write(line)
        sink.flush()
        keep.append(line)


def run_bench(name: str, quick: bool) -> Outcome:
    """``python -m bench.NAME [--quick]`` in a subprocess, its output streamed and captured."""
    args = ["-m", f"bench.{name}"] + (["--quick"] if quick else [])
    command = shlex.join(["python", *args])
    print(f"\n==> {command}", file=sys.stderr, flush=True)
    out: list[str] = []
    err: list[str] = []
    t = time.perf_counter()
    proc = subprocess.Popen([sys.executable, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            bufsize=1, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    assert proc.stdout is not None and proc.stderr is not None
    errors = threading.Thread(target=_pump, args=(proc.stderr, sys.stderr, err), daemon=True)
    errors.start()
    _pump(proc.stdout, sys.stdout, out)
    returncode = proc.wait()
    errors.join()
    return Outcome(name, command, time.perf_counter() - t, returncode, "".join(out), "".join(err))


def section(o: Outcome, date: str) -> str:
    """One benchmark's section of the document (it names its own date: a partial run with
    ``--only`` replaces some sections and keeps the others)."""
    parts = [f"## {o.name}", ""]
    if o.returncode == 0:
        parts += [f"`{o.command}` (run {date}, wall time {o.seconds:.1f} s)", "", nest(o.stdout.strip(), 3)]
        return "\n".join(parts)
    parts += [f"`{o.command}` **failed** with exit code {o.returncode} after {o.seconds:.1f} s", ""]
    if o.stdout.strip():
        parts += [nest(o.stdout.strip(), 3), ""]
    tail = o.stderr.rstrip().splitlines()[-ERROR_TAIL:]
    parts += ["Error output (last lines):", "", "```text", *(tail or ["(none)"]), "```"]
    return "\n".join(parts)


def document(outcomes: list[Outcome], command: str, date: str, where: str) -> str:
    head = ["# Benchmarks", "", f"- Date: {date}", f"- Machine: {where}", f"- Command: `{command}`", "",
            "Each section is one benchmark run in its own process; ratios are against baselines "
            "measured in the same run."]
    return "\n\n".join(["\n".join(head), *(section(o, date) for o in outcomes)]) + "\n"


def _sections(text: str) -> tuple[list[str], dict[str, list[str]]]:
    """The lines before the first benchmark section, and each section's lines by benchmark name
    (a section starts at a ``##`` or ``###`` heading naming a benchmark of :data:`BENCHES`)."""
    head: list[str] = []
    sections: dict[str, list[str]] = {}
    current: list[str] = head
    for line in text.splitlines():
        m = _SECTION.match(line)
        if m and m.group(1) in BENCHES:
            current = sections.setdefault(m.group(1), [])
        current.append(line)
    return head, sections


def merge_sections(old: str, new: str) -> str:
    """``new``'s head and sections, with the sections of ``old`` that ``new`` lacks kept, in
    :data:`BENCHES` order: how ``--only`` updates a document without dropping the other benchmarks."""
    _, kept = _sections(old)
    head, fresh = _sections(new)
    merged = {**kept, **fresh}
    body = ["\n".join(merged[name]).strip() for name in BENCHES if name in merged]
    return "\n\n".join(["\n".join(head).strip(), *body]) + "\n"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    ap = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="pass --quick to every benchmark (a smoke run)")
    ap.add_argument("--only", default="", help=f"comma-separated benchmarks (default all: {','.join(BENCHES)})")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="the markdown document (default bench/RESULTS.md)")
    ap.add_argument("--readme", type=Path, metavar="FILE",
                    help=f"also replace the text between {START} and {END} in this markdown file "
                         "(docs/performance.md)")
    args = ap.parse_args(argv)
    only = [s.strip() for s in args.only.split(",") if s.strip()]
    unknown = sorted(set(only) - set(BENCHES))
    if unknown:
        ap.error(f"unknown benchmark {unknown[0]!r} (known: {', '.join(BENCHES)})")
    if args.readme is not None:  # check the markers before spending any time
        try:
            splice(args.readme.read_text(), "")
        except OSError as e:
            ap.error(f"cannot read {args.readme}: {e}")
        except MarkerError as e:
            ap.error(f"{args.readme}: {e}")

    command = shlex.join(["python", "-m", "bench", *argv])
    date = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    outcomes = [run_bench(name, args.quick) for name in BENCHES if not only or name in only]
    doc = document(outcomes, command, date, machine())
    if only and args.out.is_file():  # a partial run keeps the other benchmarks' sections
        doc = merge_sections(args.out.read_text(), doc)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(doc)
    print(f"\nwrote {args.out}", file=sys.stderr)
    failed = [o.name for o in outcomes if o.returncode != 0]
    if args.readme is not None:
        if failed:
            print(f"not updating {args.readme}: a benchmark failed", file=sys.stderr)
        else:
            body = readme_body(doc)
            if only:
                body = merge_sections(spliced(args.readme.read_text()), body)
            args.readme.write_text(splice(args.readme.read_text(), body))
            print(f"updated {args.readme} between its bench markers", file=sys.stderr)
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0
