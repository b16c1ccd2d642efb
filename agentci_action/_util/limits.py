"""Bounds on hostile or broken input, in one place (docs/reference/limits.md lists them with what happens past each).

A value nested deeper than MAX_NESTING lists and objects (a spec value, a tool call's arguments or result, an
answer read as JSON for a `json_schema` check) is refused with a message before any recursive code meets it:
Python's recursion limit (about 1,000 frames, several per level in validation and matching) would otherwise end
the run in a RecursionError.
"""

from __future__ import annotations

from typing import Any

MAX_NESTING = 100  # levels of lists and objects in a spec value, a trace's free-form values, a JSON answer
REGEX_TIMEOUT_S = 1.0  # CPU time one spec regex may take on one agent text before its check is an error
# |P|·|R| (tool calls of the run times calls of the reference) up to which sequence similarity is exact: 100,000
# calls on each side. Past it, a lower bound from aligned blocks (engine/metrics.py), flagged in the path details.
MAX_SEQUENCE_CELLS = 10**10
MAX_ALIAS_VALUES = 100_000  # values a spec's YAML aliases may expand to (nested aliases grow exponentially)
# Items a spec regex may hold once its repeat counts are multiplied out ({m} and {m,n} repeat their atom m times; the
# `regex` package builds each copy in memory: `a{4294967294}` took 2.7 GB before failing). Past it, a spec error.
MAX_REGEX_ITEMS = 100_000
# A results file read back (the action's publish-only mode, `agentci merge`'s shards) may come from a fork's artifact:
# at most 256 MiB (10,000 queries of 20 runs write about 235 MB; reading takes 3-5× the file's size in memory) and
# nested at most MAX_RESULTS_NESTING levels (a trace's values, MAX_NESTING deep, inside the results' own ~10 levels).
MAX_RESULTS_BYTES = 256 * 1024 * 1024
MAX_RESULTS_NESTING = 2 * MAX_NESTING
# A line of the history branch (compare/history.py): one run's entry, its queries' statuses included (10,000 queries
# with ids of 100 characters write about 1.2 MB). Longer lines are skipped with a warning, never parsed.
MAX_HISTORY_LINE = 8 * 1024 * 1024
MAX_VERSION_LENGTH = 100  # characters of a baseline version name: a file name of at most 105 bytes with ".json"


def deeper_than(value: Any, limit: int = MAX_NESTING) -> bool:
    """Whether `value` nests lists/dicts more than `limit` levels deep.

    A scalar is 0 levels, `[]` and `[1]` 1, `[[]]` 2. Level by level without recursion, so any depth is measured safely;
    a scalar costs one check.
    """
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
