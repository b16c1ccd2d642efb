"""A tool call's arguments against one expected call: modes exact, subset, ignore; per-key regex and tolerance rules.

For each constrained key (a key of `arguments` or of `argument_rules`) the call must have the key and its value
must pass the key's test: JSON equality with the expected value, `re.search(regex, value)` on a string, or
|value − expected| ≤ tolerance on a number. `exact` also rejects keys the expectation does not name;
`subset` ignores them; `ignore` accepts any arguments.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Callable

from ..report.text import one_line
from ..spec.models import ArgumentMatch, ExpectedToolCall

ABSENT = "(absent)"
SHOWN = 60  # characters of a value or key shown in a message


def inert_name(name: str) -> str:
    """A key or tool name as one inert line of at most SHOWN characters."""
    return one_line(name, SHOWN)


def inert_value(value: Any) -> str:
    """A JSON value as one inert line of at most SHOWN characters: JSON text, strings quoted."""
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, default=repr)
    return one_line(text[: SHOWN + 1], SHOWN)


@dataclass(frozen=True)
class ArgumentMismatch:
    """One key whose value did not pass; every field is inert text, ready for a message."""

    key: str
    expected: str
    actual: str

    def __str__(self) -> str:
        return f"{self.key} expected {self.expected}, got {self.actual}"


def as_mapping(arguments: Any) -> dict[str, Any] | None:
    """A call's arguments as a dict: None → {}, a JSON-object string → parsed, anything else → None (not an object)."""
    if arguments is None:
        return {}
    if isinstance(arguments, dict):
        return arguments
    if isinstance(arguments, str):
        try:
            parsed = json.loads(arguments)
        except ValueError:
            return None
        return parsed if isinstance(parsed, dict) else None
    return None


def same_json(a: Any, b: Any) -> bool:
    """JSON equality: 1 equals 1.0, but true is not 1 and "1" is not 1; objects and arrays compared deeply."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_json(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


@dataclass(frozen=True)
class _KeyTest:
    key: str
    passes: Callable[[Any], bool]
    expected: str  # what was expected, as inert text


def _key_tests(call: ExpectedToolCall) -> list[_KeyTest]:
    values = call.arguments or {}
    rules = call.argument_rules or {}
    tests = []
    for key in dict.fromkeys([*values, *rules]):
        rule = rules.get(key)
        if rule is not None and rule.regex is not None:
            pattern = re.compile(rule.regex)
            tests.append(_KeyTest(key, lambda v, p=pattern: isinstance(v, str) and p.search(v) is not None,
                                  f"a match for /{inert_name(rule.regex)}/"))
        elif rule is not None and rule.tolerance is not None:
            target, tolerance = values[key], rule.tolerance
            tests.append(_KeyTest(key, lambda v, t=target, d=tolerance: _is_number(v) and abs(v - t) <= d,
                                  f"{inert_value(target)} ± {inert_value(tolerance)}"))
        else:
            tests.append(_KeyTest(key, lambda v, e=values[key]: same_json(v, e), inert_value(values[key])))
    return tests


class ArgumentMatcher:
    """The argument test of one expected call, prepared once and applied to many calls."""

    def __init__(self, call: ExpectedToolCall):
        self.mode = call.argument_match
        self.tests = [] if self.mode is ArgumentMatch.IGNORE else _key_tests(call)

    @property
    def accepts_anything(self) -> bool:
        """True when no call can fail this test (ignore, or subset with nothing constrained)."""
        return self.mode is ArgumentMatch.IGNORE or (self.mode is ArgumentMatch.SUBSET and not self.tests)

    def matches(self, arguments: dict[str, Any] | None) -> bool:
        """Whether arguments already passed through `as_mapping` pass (None: not an object)."""
        if self.accepts_anything:
            return True
        if arguments is None:
            return False
        for test in self.tests:
            if test.key not in arguments or not test.passes(arguments[test.key]):
                return False
        # every tested key is present, so equal counts mean no key beyond them
        return self.mode is not ArgumentMatch.EXACT or len(arguments) == len(self.tests)

    def mismatches(self, raw_arguments: Any) -> list[ArgumentMismatch]:
        """Every failing key of a call's raw arguments, in the order the spec names them, then unexpected keys."""
        if self.accepts_anything:
            return []
        arguments = as_mapping(raw_arguments)
        if arguments is None:
            return [ArgumentMismatch("(arguments)", "an object", inert_value(raw_arguments))]
        found = [
            ArgumentMismatch(inert_name(t.key), t.expected, inert_value(arguments[t.key]) if t.key in arguments else ABSENT)
            for t in self.tests
            if t.key not in arguments or not t.passes(arguments[t.key])
        ]
        if self.mode is ArgumentMatch.EXACT:
            named = {t.key for t in self.tests}
            found += [ArgumentMismatch(inert_name(k), ABSENT, inert_value(v)) for k, v in arguments.items() if k not in named]
        return found
