"""Spec regexes on agent output, bounded in time.

A pattern such as `(a|aa)+$` backtracks exponentially on 'aaaa…!', and Python's re would run it for ever. The `regex`
package (re's syntax, plus a timeout) stops after REGEX_TIMEOUT_S and the caller reports that check as an error.
"""

from __future__ import annotations

from functools import lru_cache

import regex

from agentci_action._util.limits import REGEX_TIMEOUT_S

_REPETITION = frozenset("*+?{")  # quantifiers, lazy/possessive marks and group extensions such as (?=…)


class PatternTimeout(Exception):
    """A spec regex took longer than REGEX_TIMEOUT_S on one text."""

    def __init__(self, pattern: str):
        super().__init__(f"gave up after {REGEX_TIMEOUT_S:g} s (catastrophic backtracking?): simplify the pattern")
        self.pattern = pattern


@lru_cache(maxsize=1024)  # a spec holds a few hundred patterns at most; each is searched once per run
def compiled(pattern: str) -> tuple[regex.Pattern, float | None]:
    """The compiled pattern and the timeout to search it with.

    REGEX_TIMEOUT_S, or None for a pattern with no repetition at all (none of * + ? {, escaped or not): each of its
    parts matches at most once, so the work per starting position is bounded by the pattern alone and a search is linear
    in the text. Skipping the timer there matters: its bookkeeping costs ten times a short search.
    """
    return regex.compile(pattern), None if _REPETITION.isdisjoint(pattern) else REGEX_TIMEOUT_S


def found(pattern: str, text: str) -> bool:
    """re.search semantics; PatternTimeout past REGEX_TIMEOUT_S."""
    search, timeout = compiled(pattern)
    if timeout is None:
        return search.search(text) is not None  # without the keyword: even timeout=None costs a microsecond
    try:
        return search.search(text, timeout=timeout) is not None
    except TimeoutError:
        raise PatternTimeout(pattern) from None
