"""Suite scaling over workers: ``python -m bench.suite_scaling [--quick] [--suite NAME_OR_FILE] [--backend dask]``.

Runs a suite (default: the built-in ``dpsniper``, whose entries fork tasks) through
:func:`hybrid.suites.runner.run_suite` on the local backend (or ``--backend dask``: a LocalCluster of
one worker with ``--jobs`` threads, whose idle threads lend themselves) at ``--jobs`` 1, 2, 4, ... and the
machine's core count, each run in a fresh interpreter with empty kernel caches (so every run pays
the same JIT) into a fresh JSONL file.  Per run: the wall time; the work, the sum of the task times the rows record; the
efficiency, work / (jobs x wall); the critical path, the longest chain of tasks; the floor
max(critical path, work / jobs), below which no scheduler of that work on that many workers gets;
and the speed-up over ``--jobs 1``.  The load average beside each run says how busy the (shared)
machine was.  Last, whether the rows are the same at every job count, timings aside
(:data:`TIMING_FIELDS` and the result's ``timings``): a result may depend on the seed and the
count budgets, never on the number of workers.

What the rows record defines the tasks.  A row without ``tasks`` is one task of ``elapsed``
seconds.  A row that records ``tasks`` (an entry whose search forked some,
:mod:`hybrid.searcher.forked_tasks`: its own stretches of work, and the candidate pairs tuned or
enclosed between two of them, which the run's idle workers take), a list of
``{"elapsed": seconds, "after": [indices into that list of the tasks it waits for]}``, is those
tasks: its work is their sum and its critical path the longest chain through ``after``.  Entries
never wait for each other, so the suite's critical path is the longest entry's; the table gives the
longest entry's own time beside it (what the critical path would be without forked tasks).

Task times are wall seconds, not core-seconds: ``run_suite`` gives each worker ``cores // jobs``
numba threads, so at ``--jobs 1`` an entry's kernels may use every core.  The efficiency says how
busy the workers were; when entries slow down as workers are added (fewer numba threads each, a
loaded machine) the work grows with them, so read it beside the speed-up.
``--quick`` runs the suite's first entries only.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path
from typing import Any

from bench.common import machine, markdown_table
from bench.suite_runs import add_suite_options, entries_ok, run_once, selected
from hybrid.suites.runner import BACKENDS

TIMING_FIELDS = ("elapsed", "worker", "finished")
HEADERS = ["jobs", "wall s", "work s", "efficiency", "forked tasks", "critical path s", "longest entry s", "floor s",
           "speed-up", "load avg", "entries ok"]


def job_counts(cores: int) -> list[int]:
    """1, 2, 4, ... below ``cores``, then ``cores`` itself."""
    counts = [1]
    while counts[-1] * 2 < cores:
        counts.append(counts[-1] * 2)
    return counts + [cores] if cores > 1 else counts


def _tasks(row: dict[str, Any]) -> list[dict[str, Any]]:
    return row.get("tasks") or [{"elapsed": row["elapsed"], "after": []}]


def work(rows: list[dict[str, Any]]) -> float:
    """The sum of the rows' task times (seconds)."""
    return sum(t["elapsed"] for r in rows for t in _tasks(r))


def _longest_chain(tasks: list[dict[str, Any]]) -> float:
    done: dict[int, float] = {}

    def finish(i: int, seen: frozenset[int]) -> float:
        if i in seen:
            raise ValueError(f"the tasks' 'after' lists form a cycle through task {i}")
        if i not in done:
            done[i] = tasks[i]["elapsed"] + max((finish(j, seen | {i}) for j in tasks[i].get("after", [])),
                                                default=0.0)
        return done[i]

    return max(finish(i, frozenset()) for i in range(len(tasks)))


def critical_path(rows: list[dict[str, Any]]) -> float:
    """The longest chain of tasks (seconds): entries are independent, so the longest entry's chain."""
    return max((_longest_chain(_tasks(r)) for r in rows), default=0.0)


def forked(rows: list[dict[str, Any]]) -> int:
    """The forked tasks the rows record (not the entries' own stretches of work)."""
    return sum(1 for r in rows for t in r.get("tasks", []) if t.get("forked"))


def timings_aside(row: dict[str, Any]) -> dict[str, Any]:
    """The row without what the clock or the scheduler decides: :data:`TIMING_FIELDS`, on the row
    and on each task, and the result's ``timings``."""
    out = {k: v for k, v in row.items() if k not in TIMING_FIELDS}
    if isinstance(out.get("result"), dict):
        out["result"] = {k: v for k, v in out["result"].items() if k != "timings"}
    if "tasks" in out:
        out["tasks"] = [{k: v for k, v in t.items() if k not in TIMING_FIELDS} for t in out["tasks"]]
    return out


def differences(rows: list[dict[str, Any]], other: list[dict[str, Any]]) -> list[str]:
    """The entries whose rows differ, timings aside, each with the fields that differ."""
    a = {r["id"]: timings_aside(r) for r in rows}
    b = {r["id"]: timings_aside(r) for r in other}
    out = []
    for i in sorted(a.keys() | b.keys()):
        if i not in a or i not in b:
            out.append(f"{i} (a row at one job count only)")
        elif a[i] != b[i]:
            fields = [k for k in sorted(a[i].keys() | b[i].keys()) if a[i].get(k) != b[i].get(k)]
            if "result" in fields and isinstance(a[i]["result"], dict) and isinstance(b[i]["result"], dict):
                ra, rb = a[i]["result"], b[i]["result"]
                fields.remove("result")
                fields += [f"result.{k}" for k in sorted(ra.keys() | rb.keys()) if ra.get(k) != rb.get(k)]
            out.append(f"{i} ({', '.join(fields)})")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.suite_scaling", description=__doc__.splitlines()[0])
    add_suite_options(ap, default="dpsniper")
    ap.add_argument("--backend", choices=BACKENDS, default="local", help="the suite runner's backend (default local)")
    args = ap.parse_args(argv)
    suite, limit = selected(ap, args)
    counts = job_counts(os.cpu_count() or 1)
    runs: dict[int, tuple[float, list[dict[str, Any]], tuple[float, float]]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-suite-scaling-") as d:
        for jobs in counts:
            load0 = os.getloadavg()[0]
            wall, rows = run_once(args.suite, limit, jobs, Path(d), args.backend)
            runs[jobs] = wall, rows, (load0, os.getloadavg()[0])

    n = len(suite.entries[:limit])
    print(f"Suite `{suite.name}`: {n} of {len(suite.entries)} entries, {args.backend} backend, --jobs "
          f"{', '.join(map(str, counts))} ({machine()}; load average before and after each run in the table)\n")
    wall1 = runs[1][0]
    table = []
    for jobs, (wall, rows, (load0, load1)) in runs.items():
        w, path = work(rows), critical_path(rows)
        longest = max((r["elapsed"] for r in rows), default=0.0)
        table.append([jobs, f"{wall:.1f}", f"{w:.1f}", f"{w / (jobs * wall):.0%}", forked(rows), f"{path:.1f}",
                      f"{longest:.1f}", f"{max(path, w / jobs):.1f}", f"{wall1 / wall:.2f}x",
                      f"{load0:.1f} → {load1:.1f}", entries_ok(rows)])
    print(markdown_table(HEADERS, table))
    print("\nwork: the sum of the task times the rows record (an entry without forked tasks is one task, its "
          "`elapsed`: process start, JIT with empty caches and search; one with forked tasks is its own stretches "
          "of work and the candidate pairs tuned or enclosed in forked tasks, which idle workers take); "
          "efficiency = work / (jobs x wall); critical path: the longest chain of tasks; longest entry: the "
          "longest entry's own time (the critical path without forked tasks); floor = max(critical path, work / jobs). "
          "The work grows with the jobs where entries slow down (fewer numba threads each, a loaded machine): "
          "read the efficiency beside the speed-up.\n")
    diffs = [f"--jobs {jobs}: {d}" for jobs in counts[1:] for d in differences(runs[1][1], runs[jobs][1])]
    fields = ", ".join([*TIMING_FIELDS, "result.timings"])
    if diffs:
        print(f"Rows at --jobs {', '.join(map(str, counts[1:]))} **differ** from --jobs 1 ({fields} aside):\n")
        print("\n".join(f"- {d}" for d in diffs))
    else:
        print(f"Rows identical at --jobs {', '.join(map(str, counts))} ({fields} aside): yes, all {n} entries.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
