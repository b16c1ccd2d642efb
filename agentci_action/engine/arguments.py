"""A tool call's arguments against one expected call.

Modes exact, subset, superset, ignore; per-key regex and tolerance rules.

For each constrained key (a key of `arguments` or of `argument_rules`) the call must have the key and its value
must pass the key's test: JSON equality with the expected value, `re.search(regex, value)` on a string, or
|value − expected| ≤ tolerance on a number. `exact` also rejects keys the expectation does not name;
`subset` ignores them; `superset` turns it round: every key of the call must be constrained and pass, while a
constrained key may be absent (the call's arguments within the expected ones, agentevals' `subset`); `ignore`
accepts any arguments.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from agentci_action._util.patterns import found
from agentci_action._util.text import one_line
from agentci_action.spec.models import ArgumentMatch, ArgumentRule, ExpectedToolCall

ABSENT = "(absent)"
NOT_AN_OBJECT = "(arguments)"
SHOWN = 60  # characters of a value or key shown in a message


@lru_cache(maxsize=4096)  # the same few tool names label hundreds of calls in a trace's details
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


_SCALARS = (str, int, float, bool, type(None))
_MISSING = object()
_IGNORE, _SUBSET, _EXACT, _SUPERSET = (
    ArgumentMatch.IGNORE,
    ArgumentMatch.SUBSET,
    ArgumentMatch.EXACT,
    ArgumentMatch.SUPERSET,
)  # read once: Enum lookups are slow


def same_json(a: object, b: object) -> bool:
    """JSON equality: 1 equals 1.0, but true is not 1 and "1" is not 1; objects and arrays compared deeply."""
    if type(a) is type(b) and type(a) in _SCALARS:
        return a == b
    if isinstance(a, bool) or isinstance(b, bool):
        return False  # a bool against anything of another type
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_json(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def canonical(value: Any) -> Any:
    """A hashable form of a JSON value with same_json(a, b) ⇒ canonical(a) == canonical(b), for indexing calls."""
    if type(value) in (str, int, float):
        return value  # 1 and 1.0 are equal and hash alike; strings never equal numbers
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, dict):
        return ("object", tuple(sorted((str(k), canonical(v)) for k, v in value.items())))
    if isinstance(value, (list, tuple)):
        return ("array", tuple(canonical(v) for v in value))
    if isinstance(value, (str, int, float)) or value is None:
        return value
    return ("other", repr(value))


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _passes(rule: ArgumentRule | None, expected: Any, value: Any) -> bool:
    """One key's test: equality with `expected`, or the rule (regex search; |value − expected| ≤ tolerance)."""
    if rule is None:
        return same_json(value, expected)
    if rule.regex is not None:
        return isinstance(value, str) and found(rule.regex, value)  # PatternTimeout past the time bound
    return _is_number(value) and abs(value - expected) <= rule.tolerance


def _describe(rule: ArgumentRule | None, expected: Any) -> str:
    """What a key's test expects, as inert text."""
    if rule is None:
        return inert_value(expected)
    if rule.regex is not None:
        return f"a match for /{inert_name(rule.regex)}/"
    return f"{inert_value(expected)} ± {inert_value(rule.tolerance)}"


class ArgumentMatcher:
    """The argument test of one expected call, prepared once and applied to many calls.

    `equal` maps the keys compared by equality to their expected values (the spec's own dict when no key has a
    rule, so preparing a step costs almost nothing); `ruled` holds (key, rule, expected value) for the others.
    """

    __slots__ = ("_tests", "accepts_anything", "call", "constrained", "equal", "exact", "ruled", "within")
    equal: dict[str, Any]
    ruled: list[tuple[str, ArgumentRule, Any]]

    def __init__(self, call: ExpectedToolCall):
        self.call = call
        self._tests: list[tuple[str, ArgumentRule | None, Any]] | None = None
        mode = call.argument_match
        values = call.arguments or {}
        rules = call.argument_rules
        if mode is _IGNORE:
            self.equal, self.ruled = {}, []
        elif not rules:
            self.equal, self.ruled = values, []
        else:
            self.equal = {key: value for key, value in values.items() if key not in rules}
            self.ruled = [(key, rule, values.get(key)) for key, rule in rules.items()]
        self.constrained = len(self.equal) + len(self.ruled)
        # True when no call can fail this test (ignore, or subset with nothing constrained)
        self.accepts_anything = mode is _IGNORE or (mode is _SUBSET and not self.constrained)
        self.exact = mode is _EXACT
        self.within = mode is _SUPERSET

    @property
    def tests(self) -> list[tuple[str, ArgumentRule | None, Any]]:
        """(key, rule or None, expected value) for every constrained key, in the spec's order.

        For explanations: built on first use.
        """
        if self._tests is None:
            values, rules = self.call.arguments or {}, self.call.argument_rules or {}
            keys = [] if self.call.argument_match is _IGNORE else [*values, *(k for k in rules if k not in values)]
            self._tests = [(key, rules.get(key), values.get(key)) for key in keys]
        return self._tests

    @property
    def anchor(self) -> tuple[str, Any] | None:
        """A (key, value) every passing call holds.

        Calls can be looked up by it instead of all being tested (none under superset, where an expected key may be
        absent).
        """
        return None if self.within else next(iter(self.equal.items()), None)

    def matches(self, arguments: dict[str, Any] | None) -> bool:
        """Whether arguments already passed through `as_mapping` pass (None: not an object)."""
        if self.accepts_anything:
            return True
        if arguments is None:
            return False
        if self.within:
            return not self.failing_keys(arguments)
        for key, expected in self.equal.items():
            value = arguments.get(key, _MISSING)  # _MISSING equals nothing
            if type(value) is type(expected) and type(value) in _SCALARS:  # same_json's first case, inline
                if value != expected:
                    return False
            elif not same_json(value, expected):
                return False
        for key, rule, expected in self.ruled:
            value = arguments.get(key, _MISSING)
            if value is _MISSING or not _passes(rule, expected, value):
                return False
        # every tested key is present, so equal counts mean no key beyond them
        return not self.exact or len(arguments) == self.constrained

    def failing_keys(self, arguments: dict[str, Any] | None) -> list[str]:
        """Keys of arguments passed through `as_mapping` whose test fails, then the keys `exact` does not allow.

        In the spec's order; ["(arguments)"] when they are not an object.
        """
        if self.accepts_anything:
            return []
        if arguments is None:
            return [NOT_AN_OBJECT]
        if self.within:  # every key of the call is constrained and passes; absent ones are allowed
            tests = {key: (rule, expected) for key, rule, expected in self.tests}
            return [key for key, value in arguments.items() if key not in tests or not _passes(*tests[key], value)]
        failing = [
            key
            for key, rule, expected in self.tests
            if key not in arguments or not _passes(rule, expected, arguments[key])
        ]
        if self.exact:
            named = {key for key, _, _ in self.tests}
            failing += [key for key in arguments if key not in named]
        return failing

    def mismatches(self, raw_arguments: Any) -> list[ArgumentMismatch]:
        """failing_keys of a call's raw arguments, each with what was expected and what was found, as inert text."""
        arguments = as_mapping(raw_arguments)
        described = {key: _describe(rule, expected) for key, rule, expected in self.tests}
        found = []
        for key in self.failing_keys(arguments):
            if arguments is None:
                found.append(ArgumentMismatch(key, "an object", inert_value(raw_arguments)))
            else:
                actual = inert_value(arguments[key]) if key in arguments else ABSENT
                found.append(ArgumentMismatch(inert_name(key), described.get(key, ABSENT), actual))
        return found
