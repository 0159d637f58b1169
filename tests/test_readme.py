"""The README's set-up commands are the ones CI runs."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    section = text.split("## Set up", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```bash\n(.*?)```", section, re.S)
    return [line for b in blocks for line in b.splitlines() if line and not line.startswith("#")]


def test_readme_has_exactly_two_setup_commands():
    cmds = _commands()
    assert len(cmds) == 2
    assert "dphybrid" in cmds[0] and cmds[1].endswith("pytest")


def test_ci_runs_the_readme_test_command():
    assert _commands()[1] in (ROOT / ".ci" / "run").read_text().splitlines()
