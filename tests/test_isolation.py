"""User code runs in a child process: whatever it does, the command answers (issue 31, item 1).

Each function below misbehaves in its own way inside ``alg``; each command must end with a result
or one line on stderr and exit status 2 (3 for the time budget), never silence, a traceback or a hang.
"""

from __future__ import annotations

import textwrap

import pytest

from hybrid.cli import main

HOSTILE = textwrap.dedent('''
    import os, signal, sys, threading, time

    def exits(prng, queries, epsilon):
        os._exit(0)

    def lingers(prng, queries, epsilon):
        threading.Thread(target=time.sleep, args=(3600,)).start()  # non-daemon: held the process alive
        return queries[0] + prng.laplace(scale=1 / epsilon)

    def base_exception(prng, queries, epsilon):
        raise BaseException("not an Exception")

    def generator_exit(prng, queries, epsilon):
        raise GeneratorExit()

    def interrupts(prng, queries, epsilon):
        raise KeyboardInterrupt()

    def closes_stdout(prng, queries, epsilon):
        sys.stdout.close()
        return queries[0] + prng.laplace(scale=1 / epsilon)

    def reads_stdin(prng, queries, epsilon):
        return queries[0] + len(sys.stdin.read()) + prng.laplace(scale=1 / epsilon)

    def deaf_loop(prng, queries, epsilon):
        signal.signal(signal.SIGALRM, signal.SIG_IGN)  # our in-process deadline no longer reaches it
        signal.setitimer(signal.ITIMER_REAL, 0)
        while True:
            pass

    def fine(prng, queries, epsilon):
        return queries[0] + prng.laplace(scale=1 / epsilon)
''')
EXITS_AT_IMPORT = "import os\nos._exit(0)\ndef alg(prng, queries, epsilon):\n    return queries[0]\n"


@pytest.fixture
def folder(tmp_path):
    (tmp_path / "hostile.py").write_text(HOSTILE)
    (tmp_path / "exits_at_import.py").write_text(EXITS_AT_IMPORT)
    return tmp_path


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("name, words", [
    ("exits", "ended the process (exit status 0"),
    ("base_exception", "BaseException: not an Exception"),
    ("generator_exit", "GeneratorExit"),
    ("interrupts", "raised KeyboardInterrupt"),
    ("closes_stdout", "I/O operation on closed file"),
])
@pytest.mark.parametrize("command", ["prove", "search"])
def test_misbehaving_code_gets_one_line_and_status_2(capsys, folder, name, words, command):
    code, out, err = run(capsys, command, f"{folder}/hostile.py:{name}", "--size", "1", "--domain", "0..1",
                         "--time-budget", "20")
    assert code == 2, (code, out, err)
    assert words in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err


def test_code_that_exits_at_import_is_said(capsys, folder):
    code, out, err = run(capsys, "prove", f"{folder}/exits_at_import.py:alg", "--size", "1", "--domain", "0..1")
    assert code == 2 and "ended the process" in err


@pytest.mark.parametrize("name", ["lingers", "reads_stdin", "fine"])
def test_a_thread_left_running_or_stdin_read_does_not_hold_the_answer(capsys, folder, name):
    code, out, err = run(capsys, "prove", f"{folder}/hostile.py:{name}", "--size", "1", "--domain", "0..1")
    assert code == 0, err
    assert "eps <= 0.1 proved" in out


def test_a_catalogue_mechanism_runs_in_process(capsys):
    """Only user code is isolated: a catalogue name needs no child (and its output is the same)."""
    code, out, err = run(capsys, "verify", "rr", "-p", "n=2")
    assert code == 0 and "rr" in out


def test_code_deaf_to_the_deadline_is_stopped_by_the_parent(capsys, folder):
    code, out, err = run(capsys, "prove", f"{folder}/hostile.py:deaf_loop", "--size", "1", "--domain", "0..1",
                         "--time-budget", "1")
    assert code == 3 and "kept running past the time budget of 1 s" in err, err


def test_a_suite_entry_that_leaves_a_thread_running_ends_with_its_result(tmp_path):
    """The entry's process ends once it answered: a non-daemon thread held it to the hard limit (50 s)."""
    from hybrid.suites.runner import run_suite
    from hybrid.suites.suite_file import load_suite

    (tmp_path / "hostile.py").write_text(HOSTILE)
    (tmp_path / "s.toml").write_text('[[entry]]\nmechanism = "hostile.py:lingers"\nsize = 1\ndomain = "0..1"\n'
                                     'budget = 10\ntime_limit = 40\n')
    (row,) = run_suite(load_suite(str(tmp_path / "s.toml")), jobs=1)
    assert row["status"] == "ok" and row["elapsed"] < 40


def test_memory_is_limited_in_the_childs_process(capsys, tmp_path):
    (tmp_path / "hungry.py").write_text("import numpy as np\ndef alg(prng, queries, epsilon):\n"
                                        "    return float(np.ones(2**31).sum())\n")  # 16 GiB
    code, out, err = run(capsys, "prove", f"{tmp_path}/hungry.py:alg", "--size", "1", "--domain", "0..1",
                         "--memory", "4")
    assert code == 2 and "MemoryError" in err and len(err.strip().splitlines()) == 1, err
