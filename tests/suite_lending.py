"""A suite runner that shows whether its entry's forked tasks ran side by side on a lent token
(module level: entry processes import it by name)."""

import os
import tempfile
import time

from hybrid.searcher import forked_tasks

WAIT = 60.0  # seconds a task waits for the other, and the runner for a token: a broken lender fails, not hangs


def _meet(job: tuple[str, int]) -> bool:
    """Task ``k`` announces itself, then waits for the other task: both see each other only if they ran at once."""
    folder, k = job
    open(os.path.join(folder, str(k)), "w").close()
    other, end = os.path.join(folder, str(1 - k)), time.monotonic() + WAIT
    while time.monotonic() < end:
        if os.path.exists(other):
            return True
        time.sleep(0.01)
    return False


def lent(entry) -> dict:
    """Wait for a token in the entry's pool, then run two tasks that must meet: ``met`` says whether they did."""
    pool, end = forked_tasks._pool, time.monotonic() + WAIT
    if pool is None:
        return {"met": [False, False]}
    while not pool.acquire(False):
        if time.monotonic() > end:
            return {"met": [False, False]}
        time.sleep(0.05)
    pool.release()
    with tempfile.TemporaryDirectory() as folder:
        return {"met": list(forked_tasks.ordered(_meet, [(folder, 0), (folder, 1)]))}
