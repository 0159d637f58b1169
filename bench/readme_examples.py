"""Rewrite the generated blocks of the README and the docs by running their commands:
``python -m bench.readme_examples``.

Any markdown file may hold generated blocks (by default: README.md and every page under docs/
that has one); each is marked with a pair of comment lines::

    <!-- output: COMMAND -->         a ```text block: "$ COMMAND" and what it printed
    <!-- output:end -->

    <!-- report: SUITE COMMAND -->   the suite run (a ``dphybrid suite ... --out FILE``), then
    <!-- report:end -->              ``dphybrid report FILE`` pasted as printed, headed by the
                                     commands, date, machine, load and wall time

    <!-- python-output -->           a ```text block: what the ```python block just above
    <!-- python-output:end -->       printed (run as ``python -``)

``COMMAND (exit N)`` names the exit status a command documents (default 0).  Blocks run
file by file, each file's in order, through bash, in one working directory (a fresh
temporary one, or ``--workdir``), so a later block may read what an earlier one wrote;
``dphybrid`` is the one installed beside this interpreter, and the terminal is 80 columns
wide, the width rich assumes when output is piped.  A command exiting with another status
fails the run and leaves every file unchanged; otherwise the blocks are spliced into each
file as it is when the run ends.  ``--only TEXT`` regenerates the blocks whose command
contains TEXT; ``--no-suites`` skips the (long) report blocks, and a suite shown in several
files runs once.  A fenced block right after a line ``<!-- file: NAME -->`` (a suite file, a
witness file a page shows) is written to NAME in the working directory before that file's
blocks run.  A suite run leaves its results file and a record of the run (``FILE.run.json``:
date, machine, load, wall time) in the working directory; ``--workdir DIR --reuse-results``
renders the report from them again.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from bench.common import machine

ROOT = Path(__file__).resolve().parent.parent
MARKER = re.compile(r"^<!-- (output|report|python-output)(?:: (.+?))?(?: \(exit (\d+)\))? -->$")
KINDS_WITH_COMMAND = ("output", "report")
WIDTH = 80


class BlockError(RuntimeError):
    """A generated block is malformed, or its command did not do what the README says."""


@dataclass(frozen=True)
class Block:
    kind: str  # "output" or "report"
    command: str
    status: int
    start: int  # line index of the opening marker
    end: int  # line index of the closing marker


def blocks(text: str) -> list[Block]:
    """The generated blocks of a README, in order; each opening marker needs its own closing one."""
    found, lines, i = [], text.splitlines(), 0
    while i < len(lines):
        m = MARKER.match(lines[i].strip())
        if m:
            kind, command, status = m.group(1), (m.group(2) or "").strip(), int(m.group(3) or 0)
            if (kind in KINDS_WITH_COMMAND) != bool(command):
                raise BlockError(f"line {i + 1}: {lines[i].strip()}: " + ("a command is missing" if command == ""
                                                                            else "no command belongs here"))
            close = f"<!-- {kind}:end -->"
            end = next((j for j in range(i + 1, len(lines)) if lines[j].strip() == close
                        or MARKER.match(lines[j].strip())), None)
            if end is None or lines[end].strip() != close:
                raise BlockError(f"line {i + 1}: {lines[i].strip()} has no {close} before the next block")
            found.append(Block(kind, command, status, i, end))
            i = end
        elif lines[i].strip() in ("<!-- output:end -->", "<!-- report:end -->", "<!-- python-output:end -->"):
            raise BlockError(f"line {i + 1}: {lines[i].strip()} closes no block")
        i += 1
    return found


def _env() -> dict[str, str]:
    bindir = str(Path(sys.executable).parent)
    return {**os.environ, "PATH": bindir + os.pathsep + os.environ.get("PATH", ""), "COLUMNS": str(WIDTH),
            "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}


def run(command: str, workdir: Path, status: int = 0) -> str:
    """``command`` through bash in ``workdir``: its stdout and stderr as a terminal shows them."""
    print(f"$ {command}", file=sys.stderr, flush=True)
    res = subprocess.run(["bash", "-c", command], cwd=workdir, env=_env(), stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
    if res.returncode != status:
        raise BlockError(f"{command!r} exited with status {res.returncode}, the page says {status}:\n"
                         + res.stdout[-3000:])
    return "\n".join(line.rstrip() for line in res.stdout.strip("\n").splitlines())


def output_block(block: Block, workdir: Path) -> list[str]:
    out = run(block.command, workdir, block.status)
    tail = [f"[exit status {block.status}]"] if block.status else []
    return ["```text", f"$ {block.command}", *out.splitlines(), *tail, "```"]


def python_before(lines: list[str], start: int) -> str:
    """The code of the last ```python block ending before line ``start``."""
    end = next((j for j in range(start - 1, -1, -1) if lines[j].strip() == "```"), None)
    begin = None if end is None else next((j for j in range(end - 1, -1, -1) if lines[j].strip().startswith("```")), None)
    if begin is None or lines[begin].strip() != "```python":
        raise BlockError(f"line {start + 1}: a python-output block must follow a ```python block")
    return "\n".join(lines[begin + 1:end]) + "\n"


def python_block(block: Block, lines: list[str], workdir: Path) -> list[str]:
    """Run the python block above ``block`` (``python -`` in ``workdir``): what it printed."""
    code = python_before(lines, block.start)
    print("$ python - <<'EOF' (the code block above)", file=sys.stderr, flush=True)
    res = subprocess.run([sys.executable, "-"], input=code, cwd=workdir, env=_env(), stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
    if res.returncode != block.status:
        raise BlockError(f"the python block above line {block.start + 1} exited with status {res.returncode}:\n"
                         + res.stdout[-3000:])
    return ["```text", *(line.rstrip() for line in res.stdout.strip("\n").splitlines()), "```"]


def _load() -> str:
    try:
        return f"{os.getloadavg()[0]:.1f}"
    except OSError:
        return "unknown"


def report_block(block: Block, workdir: Path, reuse: bool) -> list[str]:
    """Run the suite (or, with ``reuse``, take the earlier run's results file and record), then
    ``dphybrid report`` on its results file."""
    argv = shlex.split(block.command)
    if argv[:2] != ["dphybrid", "suite"] or "--out" not in argv[:-1]:
        raise BlockError(f"a report block needs 'dphybrid suite ... --out FILE', got {block.command!r}")
    results = argv[argv.index("--out") + 1]
    record = workdir / f"{results}.run.json"
    if reuse and record.is_file() and json.loads(record.read_text()).get("command") == block.command:
        run_info = json.loads(record.read_text())
    else:
        (workdir / results).unlink(missing_ok=True)  # a fresh run, never a resumed one
        date = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        load_before, t = _load(), time.perf_counter()
        run(block.command, workdir, block.status)
        run_info = {"command": block.command, "date": date, "machine": machine(), "load_before": load_before,
                    "load_after": _load(), "wall": time.perf_counter() - t}
        record.write_text(json.dumps(run_info) + "\n")
    report = f"dphybrid report {shlex.quote(results)}"
    table = run(report, workdir)
    minutes, seconds = divmod(round(run_info["wall"]), 60)
    head = (f"`{block.command}`, then `{report}`: run on {run_info['date']}, {run_info['machine']}, load "
            f"average {run_info['load_before']} at the start and {run_info['load_after']} at the end, "
            f"{minutes} min {seconds} s wall. The table is `dphybrid report`'s output as printed.")
    return [head, "", *table.splitlines()]


Key = tuple[str, str, int]  # (kind, command, how many blocks with that kind and command come before)


def _keyed(text: str) -> list[tuple[Key, Block]]:
    seen: dict[tuple[str, str], int] = {}
    out = []
    for b in blocks(text):
        n = seen.get((b.kind, b.command), 0)
        seen[(b.kind, b.command)] = n + 1
        out.append(((b.kind, b.command, n), b))
    return out


FILE_MARKER = re.compile(r"^<!-- file: (\S+) -->$")


def files(text: str) -> list[tuple[int, str, str]]:
    """``(line, name, content)`` of each ``<!-- file: NAME -->`` followed by a fenced block."""
    lines, out = text.splitlines(), []
    for i, line in enumerate(lines):
        m = FILE_MARKER.match(line.strip())
        if m:
            if i + 1 >= len(lines) or not lines[i + 1].startswith("```"):
                raise BlockError(f"line {i + 1}: {line.strip()} must be followed by a fenced block")
            end = next((j for j in range(i + 2, len(lines)) if lines[j].strip() == "```"), None)
            if end is None:
                raise BlockError(f"line {i + 2}: the fenced block of {m.group(1)} is not closed")
            name = m.group(1)
            if Path(name).is_absolute() or ".." in Path(name).parts:
                raise BlockError(f"line {i + 1}: {name} must be a plain relative path")
            out.append((i, name, "\n".join(lines[i + 2:end]) + "\n"))
    return out


def generate(text: str, workdir: Path, only: list[str], suites: bool, reuse: bool,
             reports: dict[str, list[str]] | None = None) -> dict[Key, list[str]]:
    """The new contents of the selected blocks of ``text`` (the ``<!-- file: NAME -->`` blocks are
    written to the working directory first); ``reports`` holds the report blocks already
    rendered in this run, by command, so a suite shown in several files runs once."""
    new: dict[Key, list[str]] = {}
    reports = {} if reports is None else reports
    lines = text.splitlines()
    for _, name, content in files(text):
        (workdir / name).write_text(content)
    for key, b in _keyed(text):
        if (only and not any(o in (b.command or "python") for o in only)) or (b.kind == "report" and not suites):
            continue
        if b.kind == "output":
            new[key] = output_block(b, workdir)
        elif b.kind == "report":
            if b.command not in reports:
                reports[b.command] = report_block(b, workdir, reuse)
            new[key] = reports[b.command]
        else:
            new[key] = python_block(b, lines, workdir)
    return new


def splice(text: str, new: dict[Key, list[str]]) -> str:
    """``text`` with the blocks in ``new`` replaced (``text`` may have been edited meanwhile)."""
    lines, out, i = text.splitlines(), [], 0
    keyed = _keyed(text)
    missing = set(new) - {key for key, _ in keyed}
    if missing:
        raise BlockError(f"the file no longer has the block {sorted(missing)[0]}")
    for key, b in keyed:
        out += lines[i:b.start + 1]
        out += new.get(key, lines[b.start + 1:b.end])
        i = b.end
    out += lines[i:]
    return "\n".join(out) + "\n"


def documents() -> list[Path]:
    """README.md, then every page under docs/ holding a generated block, in path order."""
    return [ROOT / "README.md", *(p for p in sorted((ROOT / "docs").rglob("*.md")) if blocks(p.read_text()))]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.readme_examples", description=__doc__.splitlines()[0])
    ap.add_argument("--readme", "--file", dest="files", type=Path, action="append", metavar="FILE",
                    help="a markdown file to rewrite (repeatable; default README.md and the docs/*.md pages "
                         "with generated blocks)")
    ap.add_argument("--only", action="append", default=[], metavar="TEXT",
                    help="regenerate only the blocks whose command contains TEXT (repeatable)")
    ap.add_argument("--no-suites", action="store_true", help="skip the report blocks (each runs a whole suite)")
    ap.add_argument("--workdir", type=Path, help="run the commands here (default: a fresh temporary folder)")
    ap.add_argument("--reuse-results", action="store_true",
                    help="report blocks: use the suite results (and run record) already in --workdir, if any")
    ap.add_argument("--list", action="store_true", help="print the blocks' commands and exit")
    args = ap.parse_args(argv)
    try:
        paths = args.files or documents()
        texts = {path: path.read_text() for path in paths}
        found = {path: blocks(text) for path, text in texts.items()}
    except (OSError, BlockError) as e:
        ap.error(str(e))
    if args.list:
        for path, bs in found.items():
            for b in bs:
                print(f"{os.path.relpath(path)}: {b.kind}: {b.command or '(the python block above)'}"
                      + (f" (exit {b.status})" if b.status else ""))
        return 0
    with tempfile.TemporaryDirectory(prefix="readme-examples-") as tmp:
        workdir = args.workdir or Path(tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        reports: dict[str, list[str]] = {}
        try:
            new = {path: generate(text, workdir, args.only, not args.no_suites, args.reuse_results, reports)
                   for path, text in texts.items()}
            spliced = {path: splice(path.read_text(), new[path]) for path in paths}  # as they are now
        except BlockError as e:
            print(f"readme_examples: {e}", file=sys.stderr)
            return 1
    for path, text in spliced.items():
        path.write_text(text)
        print(f"regenerated {len(new[path])} block(s) of {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
