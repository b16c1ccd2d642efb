"""Bounds on hostile or broken input, in one place (docs/limits.md lists them with what happens past each).

A value nested deeper than MAX_NESTING lists and objects (a spec value, a tool call's arguments or result, an
answer read as JSON for a `json_schema` check) is refused with a message before any recursive code meets it:
Python's recursion limit (about 1,000 frames, several per level in validation and matching) would otherwise end
the run in a RecursionError.
"""

from __future__ import annotations

from typing import Any

MAX_NESTING = 100


def deeper_than(value: Any, limit: int = MAX_NESTING) -> bool:
    """Whether `value` nests lists/dicts more than `limit` levels deep (a scalar is 0 levels, `[]` and `[1]` 1,
    `[[]]` 2). Level by level without recursion, so any depth is measured safely; a scalar costs one check."""
    level, depth = ([value] if isinstance(value, (dict, list)) else []), 0
    while level:
        depth += 1
        if depth > limit:
            return True
        level = [
            child
            for item in level
            for child in (item.values() if isinstance(item, dict) else item)
            if isinstance(child, (dict, list))
        ]
    return False
