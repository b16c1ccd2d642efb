"""Spec regexes on agent output, bounded in time: a pattern such as `(a|aa)+$` backtracks exponentially on
'aaaa…!', and Python's re would run it for ever. The `regex` package (re's syntax, plus a timeout) stops after
REGEX_TIMEOUT_S and the caller reports that check as an error."""

from __future__ import annotations

import regex

from ..limits import REGEX_TIMEOUT_S


class PatternTimeout(Exception):
    """A spec regex took longer than REGEX_TIMEOUT_S on one text."""

    def __init__(self, pattern: str):
        super().__init__(f"gave up after {REGEX_TIMEOUT_S:g} s (catastrophic backtracking?): simplify the pattern")
        self.pattern = pattern


def found(pattern: str, text: str) -> bool:
    """re.search semantics (compiled patterns are cached by `regex`); PatternTimeout past REGEX_TIMEOUT_S."""
    try:
        return regex.search(pattern, text, timeout=REGEX_TIMEOUT_S) is not None
    except TimeoutError:
        raise PatternTimeout(pattern) from None
