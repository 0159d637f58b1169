"""The README and the documentation pages (docs/**/*.md) match what a user sees.

* The README's two set-up commands are the ones CI runs, and the README stays a front door.
* Every command a page shows -- each line of a ```bash block, and each generated block's
  command (``<!-- output: COMMAND -->``), split at ``&&`` and ``|`` -- that starts with
  ``dphybrid`` or ``python -m``: the default run parses each with the real argument parsers
  (the subcommand and every flag exist, every value is accepted) and runs the quick ones in
  process, page by page (README first) in one temporary folder holding the files the pages
  show (``<!-- file: NAME -->``), checking the exit status (0, or the ``(exit N)`` the page
  documents).  ``-m slow`` runs every one through bash with the installed ``dphybrid`` (the
  suites take tens of minutes).  A command shown on several pages runs once.
* Every ```python block compiles and its ``from M import N`` names exist; ``-m slow`` runs each
  block that shows its output (``<!-- python-output -->``) and compares what it prints.
* The catalogue section names exactly the mechanisms ``dphybrid list`` lists.
"""

from __future__ import annotations

import ast
import contextlib
import importlib
import importlib.util
import io
import json
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from bench.readme_examples import MARKER, blocks, files, python_before
from hybrid.cli import build_parser, main

ROOT = Path(__file__).resolve().parent.parent
PAGES = {p.relative_to(ROOT).as_posix(): p.read_text()
         for p in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]}
README = PAGES["README.md"]
README_MAX_LINES = 250

QUICK = {"list", "dist", "verify", "accuracy", "pufferfish", "certify", "sample"}  # seconds each, in process
SLOW_MODELS = ("noisy_max_independent",)  # a Pufferfish check over every prior: minutes
# commands a test cannot run in full, and why (they are still parsed)
NOT_RUN = {
    "--scheduler": "needs a running dask scheduler at the address shown",
}
READS = re.compile(r"\.(json|jsonl|toml)$")  # arguments naming a file the command reads
WRITES = {"--out", "--plot", ">"}  # the file after these is written, not read


@dataclass(frozen=True)
class Command:
    page: str
    text: str  # as shown (one line, comment dropped)
    line: int
    status: int  # the documented exit status

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"


def _setup_commands() -> list[str]:
    section = README.split("## Set up", 1)[1].split("\n## ", 1)[0]
    found = re.findall(r"```bash\n(.*?)```", section, re.S)
    return [line for b in found for line in b.splitlines() if line and not line.startswith("#")]


def _shown(segment: str) -> bool:
    return segment.startswith("dphybrid ") or segment == "dphybrid" or segment.startswith("python -m ")


def commands(page: str, text: str) -> list[Command]:
    """Every command line of a ```bash block or a generated block that starts with dphybrid or python -m."""
    out, fenced = [], None
    for i, line in enumerate(text.splitlines()):
        s = line.strip()
        if s.startswith("```"):
            fenced = s[3:] if fenced is None else None
            continue
        m = MARKER.match(s)
        if m and m.group(1) == "output":
            out.append(Command(page, m.group(2), i + 1, int(m.group(3) or 0)))
        elif fenced == "bash" and s and not s.startswith("#"):
            text_, _, comment = (p.strip() for p in (re.split(r"\s(#)", s, maxsplit=1) + ["", ""])[:3])
            if _shown(segments(text_)[0]):  # a trailing comment saying "no result" documents exit 3
                out.append(Command(page, text_, i + 1, 3 if "no result" in comment else 0))
    return out


def segments(text: str) -> list[str]:
    """The simple commands of a line: split at ``&&`` and ``|``."""
    return [p.strip() for p in re.split(r"&&|\|", text) if p.strip()]


def argv_of(segment: str) -> tuple[list[str], str | None]:
    """A segment's words before a ``> FILE`` redirection, and FILE."""
    words = shlex.split(segment)
    if ">" in words:
        k = words.index(">")
        return words[:k], words[k + 1]
    return words, None


def reads(words: list[str]) -> list[str]:
    return [w for k, w in enumerate(words) if READS.search(w) and (k == 0 or words[k - 1] not in WRITES)]


def expected_status(c: Command) -> int:
    """The documented status; a library black box without its library is bad input (2)."""
    m = re.search(r"\b(opendp|diffprivlib):", c.text)
    if m and importlib.util.find_spec(m.group(1)) is None:
        return 2
    return c.status


def _first_of_each(cs: list[Command]) -> list[Command]:
    seen: set[str] = set()
    return [c for c in cs if not (c.text in seen or seen.add(c.text))]


ALL = [c for page, text in PAGES.items() for c in commands(page, text)]
DISTINCT = _first_of_each(ALL)
PROVIDED = {name for text in PAGES.values() for _, name, _ in files(text)}


def _in_page_order(workdir: Path):
    """``(page, command)`` in page order, each page's files written to ``workdir`` before its
    commands; a command already yielded on an earlier page (same text, same files read) is skipped."""
    done: set[tuple[str, ...]] = set()
    for page, text in PAGES.items():
        for _, name, content in files(text):
            (workdir / name).write_text(content)
        for c in commands(page, text):
            read = sorted({w for seg in segments(c.text) for w in reads(argv_of(seg)[0])})
            key = (c.text, *((workdir / r).read_text() if (workdir / r).is_file() else "" for r in read))
            if key not in done:
                done.add(key)
                yield c


def test_readme_has_exactly_two_setup_commands():
    cmds = _setup_commands()
    assert len(cmds) == 2
    assert cmds[0].endswith("dphybrid search noisy_max_geom") and cmds[1].endswith("pytest")


def test_ci_runs_the_readme_test_command():
    assert _setup_commands()[1] in (ROOT / ".ci" / "run").read_text().splitlines()


def test_the_readme_is_a_front_door():
    """Short, with the main job's output, a generated headline table and the tour's snippet."""
    assert len(README.splitlines()) <= README_MAX_LINES
    assert {(b.kind, b.command) for b in blocks(README)} >= {
        ("output", "dphybrid search noisy_max_geom"), ("python-output", "")}
    assert any(b.kind == "report" for b in blocks(README))


def test_the_pages_show_commands_and_generated_blocks():
    assert len(DISTINCT) >= 30 and any(c.text.startswith("dphybrid suite") for c in ALL)
    kinds = {b.kind for text in PAGES.values() for b in blocks(text)}
    assert kinds == {"output", "report", "python-output"}
    assert {"statdp_result.json", "my_suite.toml"} <= PROVIDED


@pytest.mark.parametrize("c", DISTINCT, ids=lambda c: c.where)
def test_every_command_parses(c):
    for seg in segments(c.text):
        if not _shown(seg):
            continue
        words, _ = argv_of(seg)
        if words[0] == "dphybrid":
            try:
                build_parser().parse_args(words[1:])
            except SystemExit as e:
                pytest.fail(f"{c.where}: {seg!r} does not parse (argparse exit {e.code})")
        else:
            module = words[2]
            assert importlib.util.find_spec(module) is not None, f"{c.where}: no module {module}"
            res = subprocess.run([sys.executable, "-m", module, "--help"], capture_output=True, text=True,
                                 cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
            assert res.returncode == 0, res.stderr
            for flag in (w.split("=", 1)[0] for w in words[3:] if w.startswith("--")):
                assert flag in res.stdout, f"{c.where}: {module} has no {flag}"


def _quick(c: Command, present: set[str]) -> bool:
    if any(key in c.text for key in NOT_RUN) or any(m in c.text for m in SLOW_MODELS):
        return False
    segs = segments(c.text)
    if "|" in c.text or not all(s.startswith("dphybrid ") for s in segs):
        return False
    for seg in segs:
        words, _ = argv_of(seg)
        if words[1] not in QUICK or not set(reads(words)) <= present:
            return False
    return True


def _run_in_process(seg: str) -> tuple[int, str, str]:
    words, target = argv_of(seg)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(words[1:])
    if target is not None:
        Path(target).write_text(out.getvalue())
    return code, out.getvalue(), err.getvalue()


def test_quick_commands_run(tmp_path, monkeypatch):
    """Every quick command, in process, page by page: its documented exit status, and on
    failure one line on stderr."""
    monkeypatch.chdir(tmp_path)
    ran = 0
    for c in _in_page_order(tmp_path):
        if not _quick(c, PROVIDED):
            continue
        for seg in segments(c.text):
            code, out, err = _run_in_process(seg)
            assert code == expected_status(c), f"{c.where}: {seg!r} exited {code}:\n{err[-2000:]}"
            if code:
                assert len(err.strip().splitlines()) == 1 and out == "", f"{c.where}: {err}"
        ran += 1
    assert ran >= 15


@pytest.mark.slow
def test_every_command_runs(tmp_path):
    """Every command (suites included: tens of minutes) through bash with the installed dphybrid."""
    bindir = str(Path(sys.executable).parent)
    env = {**os.environ, "PATH": bindir + os.pathsep + os.environ.get("PATH", ""),
           "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    failures = []
    for c in _in_page_order(tmp_path):
        if any(key in c.text for key in NOT_RUN):
            continue
        res = subprocess.run(["bash", "-o", "pipefail", "-c", c.text], cwd=tmp_path, env=env,
                             capture_output=True, text=True)
        if res.returncode != expected_status(c):
            failures.append(f"{c.where}: {c.text!r} exited {res.returncode}:\n{res.stderr[-1500:]}")
    assert not failures, "\n".join(failures)


@dataclass(frozen=True)
class Snippet:
    page: str
    line: int
    code: str
    shown: str | None  # the output the page shows (its python-output block), if any


def snippets() -> list[Snippet]:
    """Every ```python block of every page, with the output shown below it."""
    out = []
    for page, text in PAGES.items():
        lines = text.splitlines()
        shown = {}
        for b in blocks(text):
            if b.kind == "python-output":
                body = [ln for ln in lines[b.start + 1:b.end] if not ln.startswith("```")]
                shown[python_before(lines, b.start)] = "\n".join(body)
        for m in re.finditer(r"^```python\n(.*?)^```$", text, re.S | re.M):
            code = m.group(1)
            out.append(Snippet(page, text[:m.start()].count("\n") + 1, code, shown.get(code)))
    return out


SNIPPETS = snippets()


@pytest.mark.parametrize("s", SNIPPETS, ids=lambda s: f"{s.page}:{s.line}")
def test_every_snippet_compiles_and_its_imports_exist(s):
    tree = ast.parse(s.code, filename=f"{s.page}:{s.line}")
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            module = importlib.import_module(node.module)
            for alias in node.names:
                assert hasattr(module, alias.name), f"{s.page}:{s.line}: {node.module} has no {alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                assert importlib.util.find_spec(alias.name) is not None, f"{s.page}:{s.line}: no {alias.name}"


def test_the_pages_show_python_outputs():
    assert sum(s.shown is not None for s in SNIPPETS) >= 3


@pytest.mark.slow
@pytest.mark.parametrize("s", [s for s in SNIPPETS if s.shown is not None], ids=lambda s: f"{s.page}:{s.line}")
def test_every_snippet_prints_what_its_page_shows(s, tmp_path):
    res = subprocess.run([sys.executable, "-"], input=s.code, cwd=tmp_path, capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")})
    assert res.returncode == 0, res.stderr[-2000:]
    printed = "\n".join(line.rstrip() for line in res.stdout.strip("\n").splitlines())
    assert printed == s.shown


def test_the_catalogue_section_names_every_mechanism():
    """The catalogue section (in the language page) names every catalogue mechanism and library
    black box ``dphybrid list`` lists (ranges like ``svt1 .. svt6`` count)."""
    rows = json.loads(_run_in_process("dphybrid list --json")[1])
    want = {r["name"] for r in rows if r["kind"] != "alias"}
    page = next(text for text in PAGES.values() if "\n## Built-in catalogue" in text)
    section = page.split("\n## Built-in catalogue", 1)[1].split("\n## ", 1)[0]
    named = set(re.findall(r"`([a-z0-9_]+(?::[a-z_]+)?)`", section))
    for lo, hi in re.findall(r"`([a-z_]+\d+[a-z_]*)`\s+\.\.\s+`([a-z_]+\d+[a-z_]*)`", section):
        stem, a = re.match(r"([a-z_]+?)(\d+)", lo).groups()
        b = int(re.match(r"[a-z_]+?(\d+)", hi).group(1))
        suffix = lo[len(stem) + len(a):]
        named |= {f"{stem}{k}{suffix}" for k in range(int(a), b + 1)}
    assert want <= named, sorted(want - named)
