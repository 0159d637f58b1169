"""The benchmark harness's pure parts: the README splice and the LPT cluster projection."""

import pytest

from bench.harness import END, START, MarkerError, merge_sections, readme_body, shift_headings, splice, spliced
from bench.suite import lpt_makespan

README = f"# proj\n\n## Performance\n\nintro\n\n{START}\nold figures\n| a |\n{END}\n\n## Layout\nkept\n"


def test_splice_replaces_only_between_the_markers():
    out = splice(README, "new body\n")
    assert out == f"# proj\n\n## Performance\n\nintro\n\n{START}\n\nnew body\n\n{END}\n\n## Layout\nkept\n"
    assert splice(out, "new body") == out  # idempotent: a second run replaces its own output


@pytest.mark.parametrize("text", [
    "no markers at all\n",
    f"{START}\nonly the start\n",
    f"only the end\n{END}\n",
    f"{END}\nreversed\n{START}\n",
    f"{START}\n{END}\n{START}\n{END}\n",
])
def test_splice_without_a_proper_marker_pair_is_an_error(text):
    with pytest.raises(MarkerError):
        splice(text, "body")


def test_readme_body_drops_the_title_and_demotes_headings():
    doc = "# Benchmarks\n\n- Date: d\n\n## smt\n\n### table\n\n```text\n# not a heading\n```\n"
    body = readme_body(doc)
    assert body.startswith("- Date: d")
    assert "\n### smt\n" in body and "\n#### table\n" in body and "\n# not a heading\n" in body
    assert shift_headings("###### deepest", 1) == "###### deepest"


def test_lpt_projection():
    times = [7, 5, 4, 3, 3, 2]
    assert lpt_makespan(times, 1) == sum(times)
    assert lpt_makespan(times, 2) == 12  # [7, 3, 2] and [5, 4, 3]
    assert lpt_makespan(times, 3) == 9  # [7, 2], [5, 3], [4, 3]
    assert lpt_makespan(times, 64) == 7  # never below the longest entry
    assert lpt_makespan([3, 3, 2, 2, 2], 2) == 7  # LPT, not the optimum 6 ([3, 3] and [2, 2, 2])
    assert lpt_makespan([], 4) == 0
    with pytest.raises(ValueError):
        lpt_makespan(times, 0)


def test_a_partial_run_replaces_its_sections_and_keeps_the_others():
    old = "- Date: old\n\n### startup\n\nold startup\n\n### prover\n\nold prover\n#### a table\n"
    new = "- Date: new\n\n### prover\n\nnew prover\n\n### scaling\n\nnew scaling\n"
    merged = merge_sections(old, new)
    assert merged.startswith("- Date: new")
    assert "old startup" in merged and "new prover" in merged and "old prover" not in merged
    assert merged.index("### startup") < merged.index("### scaling") < merged.index("### prover")  # BENCHES order
    page = f"intro\n{START}\n{old}{END}\ntail\n"
    assert spliced(page).strip() == old.strip()
