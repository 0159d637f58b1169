"""Suite runners that misbehave on purpose, chosen by the entry's id (module level: entry processes import them).

- ``stuck...``: spins in Python with SIGALRM blocked, like a long numba kernel or C loop that no
  signal interrupts; only killing its process ends it (it gives up after a minute, so a broken
  limit fails the test instead of hanging it);
- ``victim DIR``: writes its pid to ``DIR/victim.pid`` and sleeps, to be killed from outside (the
  directory travels in the id: the fork server's environment is older than the test);
- anything else: the real search (:func:`hybrid.suites.runner.run_search_entry`).
"""

import os
import signal
import time
from pathlib import Path

from hybrid.suites.runner import run_search_entry

GIVE_UP = 60.0


def faulty(entry):
    if entry.id.startswith("stuck"):
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
        end = time.monotonic() + GIVE_UP
        spins = 0
        while time.monotonic() < end:
            spins += 1
        return {"not_killed_after_spins": spins}
    if entry.id.startswith("victim "):
        pid_file = Path(entry.id.split(" ", 1)[1]) / "victim.pid"
        pid_file.with_suffix(".tmp").write_text(str(os.getpid()))
        os.replace(pid_file.with_suffix(".tmp"), pid_file)  # whole: the killer may read it at once
        time.sleep(GIVE_UP)
        return {"not_killed": True}
    return run_search_entry(entry)
