"""The CLI reference page, generated from the real argument parsers (never typed).

``markdown(parser)`` walks ``dphybrid``'s argparse parser: a section per command with its
summary, description, usage line and a table per argument group (flags, metavar, help with
defaults expanded).  MkDocs loads this file as a hook (``hooks:`` in ``mkdocs.yml``):
``on_files`` adds the page as ``reference/cli.md`` at build time, so it is never stale and
never committed.  ``python -m bench.cli_reference`` prints the page.
"""

from __future__ import annotations

import argparse
import html
from typing import Any

PAGE = "reference/cli.md"
INTRO = """\
Every command and option of `dphybrid`, generated from its argument parsers when this site
is built (`dphybrid COMMAND --help` prints the same).  Mechanism parameters are `-p key=value`;
rationals are written `1/2` and stay exact.  Bad input exits with status 2 and one line on
stderr; a time budget reached before any result exits with status 3.
"""


class _Fixed(argparse.HelpFormatter):
    def __init__(self, prog: str) -> None:
        super().__init__(prog, width=80)


def _cell(text: str) -> str:
    """Text safe inside a markdown table cell."""
    return html.escape(" ".join(text.split()), quote=False).replace("|", "\\|")


def _help(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    if not action.help or action.help == argparse.SUPPRESS:
        return ""
    return parser._get_formatter()._expand_help(action)


def _invocation(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    formatter = parser._get_formatter()
    if not action.option_strings:
        return formatter._metavar_formatter(action, action.dest)(1)[0]
    if action.nargs == 0:
        return ", ".join(action.option_strings)
    args = formatter._format_args(action, action.dest.upper())
    return ", ".join(f"{flag} {args}" for flag in action.option_strings)


def _commands(parser: argparse.ArgumentParser) -> list[tuple[str, str, argparse.ArgumentParser]]:
    """``(name, summary, subparser)`` of each subcommand, in the order ``--help`` lists them."""
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    summaries = {a.dest: a.help or "" for a in sub._choices_actions}
    return [(name, summaries.get(name, ""), p) for name, p in sub.choices.items()]


def _section(name: str, summary: str, parser: argparse.ArgumentParser) -> list[str]:
    parser.formatter_class = _Fixed  # the usage wraps at 80 columns whatever the terminal
    out = [f"## dphybrid {name}", "", f"{summary[:1].upper()}{summary[1:]}." if summary else "", ""]
    if parser.description:
        out += [parser.description.strip(), ""]
    out += ["```text", parser.format_usage().strip(), "```", ""]
    for group in parser._action_groups:
        actions = [a for a in group._group_actions if a.help != argparse.SUPPRESS and a.dest != "help"]
        if not actions:
            continue
        title = "Arguments" if group.title == "positional arguments" else (group.title or "Options").capitalize()
        out += [f"**{title}**", ""]
        if group.description:
            out += [group.description.strip(), ""]
        out += ["| argument | meaning |", "|---|---|"]
        out += [f"| `{_invocation(parser, a)}` | {_cell(_help(parser, a))} |" for a in actions]
        out.append("")
    if parser.epilog:
        out += [parser.epilog.strip(), ""]
    return out


def markdown(parser: argparse.ArgumentParser) -> str:
    """The reference page of ``parser`` (the ``dphybrid`` parser) as markdown."""
    commands = _commands(parser)
    lines = ["# CLI reference", "", INTRO, "| command | what it does |", "|---|---|"]
    lines += [f"| [`{name}`](#dphybrid-{name}) | {_cell(summary)} |" for name, summary, _ in commands]
    lines.append("")
    for name, summary, sub in commands:
        lines += _section(name, summary, sub)
    return "\n".join(lines).rstrip() + "\n"


def page() -> str:
    from hybrid.cli import build_parser

    return markdown(build_parser())


def on_files(files: Any, config: Any) -> Any:
    """MkDocs hook: add the generated page to the site's files."""
    from mkdocs.structure.files import File

    files.append(File.generated(config, PAGE, content=page()))
    return files


if __name__ == "__main__":
    print(page(), end="")
