"""The generator of the README's and the docs' blocks (``python -m bench.readme_examples``) and its JSON abridger."""

import json

import pytest

from bench.abridge import abridge, render
from bench.readme_examples import BlockError, blocks, files, generate, main, python_before, splice

DOC = """# t

<!-- file: w.txt -->
```text
hello
```

<!-- output: cat w.txt -->
old
<!-- output:end -->

```python
print(6 * 7)
```

<!-- python-output -->
<!-- python-output:end -->

<!-- output: exit 3 (exit 3) -->
<!-- output:end -->
"""


def test_blocks_and_files_are_found_in_order():
    found = blocks(DOC)
    assert [(b.kind, b.command, b.status) for b in found] == [
        ("output", "cat w.txt", 0), ("python-output", "", 0), ("output", "exit 3", 3)]
    assert files(DOC) == [(2, "w.txt", "hello\n")]
    assert python_before(DOC.splitlines(), found[1].start) == "print(6 * 7)\n"


@pytest.mark.parametrize("text, message", [
    ("<!-- output: ls -->\n", "has no <!-- output:end -->"),
    ("<!-- output: ls -->\n<!-- report: x -->\n<!-- report:end -->\n", "before the next block"),
    ("<!-- output:end -->\n", "closes no block"),
    ("<!-- output -->\n<!-- output:end -->\n", "a command is missing"),
    ("<!-- python-output: ls -->\n<!-- python-output:end -->\n", "no command belongs here"),
    ("<!-- file: ../x -->\n```\na\n```\n", "plain relative path"),
    ("<!-- file: x -->\nno block\n", "followed by a fenced block"),
])
def test_malformed_markers_are_refused(text, message):
    with pytest.raises(BlockError, match=message):
        blocks(text)
        files(text)


def test_generate_runs_commands_and_splice_keeps_other_edits(tmp_path):
    new = generate(DOC, tmp_path, only=[], suites=True, reuse=False)
    edited = DOC.replace("# t", "# t, edited meanwhile")
    out = splice(edited, new)
    assert out.startswith("# t, edited meanwhile")
    assert "```text\n$ cat w.txt\nhello\n```" in out and "old" not in out
    assert "```text\n42\n```" in out
    assert "$ exit 3\n[exit status 3]\n```" in out
    assert splice(out, {}) == out and blocks(out) == blocks(splice(out, new))


def test_a_command_with_another_status_fails(tmp_path):
    doc = "<!-- output: exit 1 -->\n<!-- output:end -->\n"
    with pytest.raises(BlockError, match="exited with status 1, the page says 0"):
        generate(doc, tmp_path, only=[], suites=True, reuse=False)


def test_only_selects_blocks_and_a_vanished_block_is_an_error(tmp_path):
    new = generate(DOC, tmp_path, only=["cat"], suites=True, reuse=False)
    assert list(new) == [("output", "cat w.txt", 0)]
    with pytest.raises(BlockError, match="no longer has"):
        splice("# empty\n", new)


def test_several_files_share_one_working_directory_in_order(tmp_path):
    first, second = tmp_path / "a.md", tmp_path / "b.md"
    first.write_text("<!-- file: w.txt -->\n```text\nfrom a\n```\n")
    second.write_text("<!-- output: cat w.txt -->\n<!-- output:end -->\n")
    work = tmp_path / "work"
    assert main(["--file", str(first), "--file", str(second), "--workdir", str(work)]) == 0
    assert "```text\n$ cat w.txt\nfrom a\n```" in second.read_text()


def test_a_failing_block_leaves_every_file_unchanged(tmp_path):
    good, bad = tmp_path / "a.md", tmp_path / "b.md"
    good.write_text("<!-- output: echo new -->\nold\n<!-- output:end -->\n")
    bad.write_text("<!-- output: exit 1 -->\n<!-- output:end -->\n")
    before = good.read_text()
    assert main(["--file", str(good), "--file", str(bad), "--workdir", str(tmp_path / "w")]) == 1
    assert good.read_text() == before


def test_a_suite_shown_twice_is_rendered_once(tmp_path):
    doc = "<!-- report: dphybrid suite s --out s.jsonl -->\n<!-- report:end -->\n"
    rendered = {"dphybrid suite s --out s.jsonl": ["the table, rendered earlier in this run"]}
    new = generate(doc, tmp_path, only=[], suites=True, reuse=False, reports=rendered)
    assert list(new.values()) == [["the table, rendered earlier in this run"]]


def test_abridge_cuts_lists_of_containers_only():
    doc = {"x": [1, 2, 3], "rows": [{"a": [1, 2]}, {"a": [3]}], "curve": [[0, 1], [1, 2]], "one": [{"k": 1}]}
    assert abridge(doc, 1) == {"x": [1, 2, 3], "rows": [{"a": [1, 2]}, "..."], "curve": [[0, 1], "..."],
                               "one": [{"k": 1}]}
    text = render(abridge(doc, 1))
    assert len(text.splitlines()) == 4 and json.loads(text)["x"] == [1, 2, 3]
