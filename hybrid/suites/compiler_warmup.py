"""Set numba's compiler up on import (about a second), for the suite's fork server.

Loading numba's typing and lowering registries is paid once per process, the first time
anything is compiled or loaded from the kernel cache.  The fork server imports this
module, so every entry process forked from it starts with that done.  It compiles and
runs one small serial function only: numba's thread pool stays unstarted, as it must in a
process that forks.
"""

from numba import njit


@njit(cache=False)
def _increment(x: int) -> int:
    return x + 1


_increment(1)
