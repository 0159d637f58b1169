"""The documentation site's sources hold together (``mkdocs build --strict`` itself runs in CI):
every page is in the navigation, every link of the README and the pages reaches a page, the
CLI reference generated from the parsers names every command and option, and the build
fetches nothing (no remote fonts, no plugin that downloads at build time)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bench.cli_reference import PAGE, markdown
from bench.sphinx_roles import on_page_content
from hybrid.cli import build_parser

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
CONFIG = (ROOT / "mkdocs.yml").read_text()
GENERATED = {PAGE}  # pages a hook writes at build time
LINK = re.compile(r"\]\(([^)#\s]+\.md)(#[^)]*)?\)")


def nav_pages() -> list[str]:
    nav = CONFIG.split("\nnav:\n", 1)[1]
    return re.findall(r"^\s+- (?:[^:]+|\"[^\"]+\"): (\S+\.md)\s*$", nav, re.M)


def pages() -> set[str]:
    return {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")}


def test_every_page_is_in_the_navigation_and_every_entry_is_a_page():
    nav = nav_pages()
    assert len(nav) == len(set(nav)) >= 10
    assert pages() - set(nav) == set(), "add these pages to the nav of mkdocs.yml"
    assert set(nav) - pages() <= GENERATED


@pytest.mark.parametrize("page", sorted(pages()))
def test_every_page_has_one_title(page):
    lines = (DOCS / page).read_text().splitlines()
    assert lines[0].startswith("# ") and sum(line.startswith("# ") for line in _prose(lines)) == 1


def _prose(lines: list[str]) -> list[str]:
    """The lines outside fenced blocks."""
    out, fenced = [], False
    for line in lines:
        if line.strip().startswith("```"):
            fenced = not fenced
        elif not fenced:
            out.append(line)
    return out


@pytest.mark.parametrize("source", ["README.md", *(f"docs/{p}" for p in sorted(pages()))])
def test_every_link_reaches_a_page(source):
    path = ROOT / source
    for target, _ in LINK.findall(path.read_text()):
        if "://" in target:
            continue
        resolved = (path.parent / target).resolve()
        generated = resolved.is_relative_to(DOCS) and resolved.relative_to(DOCS).as_posix() in GENERATED
        assert resolved.is_file() or generated, f"{source}: {target} is no page"


def test_the_cli_reference_names_every_command_and_option():
    parser = build_parser()
    page = markdown(parser)
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    assert list(sub.choices) == re.findall(r"^## dphybrid (\S+)$", page, re.M)
    for name, command in sub.choices.items():
        section = page.split(f"\n## dphybrid {name}\n", 1)[1].split("\n## ", 1)[0]
        for action in command._actions:
            for flag in action.option_strings:
                if flag not in ("-h", "--help"):
                    assert re.search(rf"`[^`]*{re.escape(flag)}\b", section), f"{name}: {flag} missing"
            if not action.option_strings:
                assert f"`{action.metavar or action.dest}`" in section, f"{name}: {action.dest} missing"


def test_the_cli_reference_is_valid_table_markdown():
    """Every table row has its two cells (a ``|`` in a help text is escaped)."""
    for line in markdown(build_parser()).splitlines():
        if line.startswith("| `"):
            assert len(re.findall(r"(?<!\\)\|", line)) == 3, line


def test_the_build_fetches_nothing():
    theme = CONFIG.split("\ntheme:\n", 1)[1].split("\n\n", 1)[0]
    assert re.search(r"^\s+font: false$", theme, re.M), "Material would link Google Fonts"
    plugins = CONFIG.split("\nplugins:\n", 1)[1].split("\n\n", 1)[0]
    assert "privacy" not in plugins and "import:" not in plugins and "://" not in plugins


def test_sphinx_roles_become_plain_code():
    html = "see :class:<code>Budget</code> and :func:<code>search</code>; ratio 1:2, <code>a:b</code>"
    assert on_page_content(html) == "see <code>Budget</code> and <code>search</code>; ratio 1:2, <code>a:b</code>"
