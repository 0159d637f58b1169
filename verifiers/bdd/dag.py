"""Memoised recursion over DAGs without Python recursion.

Decision diagrams are as deep as they have variables (hundreds or thousands), beyond
Python's recursion limit.  :func:`memo_eval` runs a recursive definition with an
explicit stack: ``expand(key)`` returns the keys the value of ``key`` depends on and a
function combining their values.  Each key is expanded and combined once (``memo``).
Every :data:`CLOCK_EVERY` expansions the time limit in force is checked
(:mod:`samplers.deadline`), so counting, restricting and comparing diagrams all stop
when it passes.
"""

from __future__ import annotations

from typing import Any, Callable, Hashable, Sequence

from samplers import deadline

Combine = Callable[[list[Any]], Any]
Expand = Callable[[Hashable], tuple[Sequence[Hashable], Combine]]
CLOCK_EVERY = 512


def memo_eval(root: Hashable, expand: Expand, memo: dict[Hashable, Any]) -> Any:
    """The value of ``root`` under the recursion ``expand`` (see the module docstring)."""
    if root in memo:
        return memo[root]
    stack = [root]
    frames: dict[Hashable, tuple[Sequence[Hashable], Combine]] = {}
    expanded = 0
    while stack:
        key = stack[-1]
        if key in memo:
            stack.pop()
            continue
        frame = frames.get(key)
        if frame is None:
            expanded += 1
            if expanded % CLOCK_EVERY == 0:
                deadline.check("while evaluating a decision diagram")
            frame = frames[key] = expand(key)
            todo = [k for k in frame[0] if k not in memo]
            if todo:
                stack.extend(todo)
                continue
        # every dependency is memoised once we are back on top of the stack
        stack.pop()
        del frames[key]
        memo[key] = frame[1]([memo[k] for k in frame[0]])
    return memo[root]
