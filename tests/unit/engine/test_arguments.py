"""Argument matching of one expected tool call: modes exact, subset, ignore; regex and tolerance rules."""

import re

import pytest
from pydantic import ValidationError

from agentci_action.engine.arguments import ArgumentMatcher, ArgumentMismatch, as_mapping, same_json
from agentci_action.spec.models import ExpectedToolCall


def matcher(**fields) -> ArgumentMatcher:
    return ArgumentMatcher(ExpectedToolCall(name="search", **fields))


def passes(m: ArgumentMatcher, arguments) -> bool:
    return m.matches(as_mapping(arguments))


def test_subset_is_the_default_and_ignores_extra_keys():
    m = matcher(arguments={"q": "paris"})
    assert passes(m, {"q": "paris", "limit": 5})
    assert not passes(m, {"q": "london"})
    assert not passes(m, {"limit": 5})
    assert m.mismatches({"limit": 5}) == [ArgumentMismatch("q", '"paris"', "(absent)")]


def test_exact_rejects_extra_and_missing_keys():
    m = matcher(arguments={"q": "paris"}, argument_match="exact")
    assert passes(m, {"q": "paris"})
    assert not passes(m, {"q": "paris", "limit": 5})
    assert [str(x) for x in m.mismatches({"q": "paris", "limit": 5})] == ["limit expected (absent), got 5"]
    assert not passes(m, {})


def test_exact_without_arguments_means_no_arguments():
    m = matcher(argument_match="exact")
    assert passes(m, None) and passes(m, {})
    assert not passes(m, {"q": "x"})


def test_ignore_accepts_anything_even_non_objects():
    m = matcher(argument_match="ignore")
    assert m.accepts_anything
    for arguments in (None, {}, {"q": 1}, "not json", [1, 2]):
        assert passes(m, arguments)
        assert m.mismatches(arguments) == []


def test_regex_rule_searches_strings_only():
    m = matcher(argument_rules={"q": {"regex": "(?i)^paris"}})
    assert passes(m, {"q": "Paris weather"})
    assert not passes(m, {"q": "weather in Paris"})
    assert not passes(m, {"q": 12})
    assert [str(x) for x in m.mismatches({"q": 12})] == ["q expected a match for /(?i)^paris/, got 12"]


def test_tolerance_rule_bounds_the_distance_to_the_expected_number():
    m = matcher(arguments={"price": 100}, argument_rules={"price": {"tolerance": 0.5}})
    assert passes(m, {"price": 100.5}) and passes(m, {"price": 99.5})
    assert not passes(m, {"price": 100.51})
    assert not passes(m, {"price": "100"})
    assert not passes(m, {"price": True})
    assert [str(x) for x in m.mismatches({"price": 101})] == ["price expected 100 ± 0.5, got 101"]


def test_rules_written_inline_under_arguments_are_the_same_rules():
    """The issue's own shape, arguments: {q: {regex: …}}, must not be compared as an expected object."""
    inline = ExpectedToolCall(
        name="search", arguments={"q": {"regex": "(?i)paris"}, "lat": {"value": 48.86, "tolerance": 0.01}, "lang": "en"}
    )
    spelled = ExpectedToolCall(
        name="search",
        arguments={"lat": 48.86, "lang": "en"},
        argument_rules={"q": {"regex": "(?i)paris"}, "lat": {"tolerance": 0.01}},
    )
    assert inline == spelled
    m = ArgumentMatcher(inline)
    assert passes(m, {"q": "Weather in PARIS", "lat": 48.865, "lang": "en"})
    assert sorted(str(x) for x in m.mismatches({"q": "London", "lat": 48.9, "lang": "en"})) == [
        "lat expected 48.86 ± 0.01, got 48.9",
        'q expected a match for /(?i)paris/, got "London"',
    ]
    literal = ExpectedToolCall(
        name="search", arguments={"filter": {"regex": "a", "field": "name"}}
    )  # other keys: a plain value
    assert literal.argument_rules is None and passes(
        ArgumentMatcher(literal), {"filter": {"regex": "a", "field": "name"}}
    )


def test_json_equality_is_type_aware():
    assert same_json(1, 1.0)
    assert not same_json(True, 1) and not same_json(0, False)
    assert not same_json("1", 1)
    assert same_json({"a": [1, {"b": None}]}, {"a": [1.0, {"b": None}]})
    assert not same_json({"a": [1]}, {"a": [1, 2]})
    assert not same_json({"a": 1}, {"a": 1, "b": 2})
    m = matcher(arguments={"flag": True})
    assert not passes(m, {"flag": 1})


def test_arguments_given_as_a_json_string_are_parsed():
    m = matcher(arguments={"q": "paris"})
    assert passes(m, '{"q": "paris"}')
    assert not passes(m, "q=paris")
    assert [str(x) for x in m.mismatches("q=paris")] == ['(arguments) expected an object, got "q=paris"']


def test_mismatch_values_are_truncated_and_escaped():
    m = matcher(arguments={"q": "x"})
    long_evil = "line1\nline2\r::error::owned\u202e" + "y" * 200
    (mismatch,) = m.mismatches({"q": long_evil})
    assert mismatch.actual.startswith('"line1\\nline2\\r::error::owned\\u202e')
    assert len(mismatch.actual) == 60 and mismatch.actual.endswith("…")
    assert not any(ch in mismatch.actual for ch in "\n\r\u202e")
    (extra,) = matcher(argument_match="exact").mismatches({"k\ney": 1})
    assert extra.key == "k⏎ey"


@pytest.mark.parametrize(
    "fields, message",
    [
        ({}, "exactly one of `name` or `any_of`"),
        ({"name": "a", "any_of": ["b"]}, "exactly one of `name` or `any_of`"),
        ({"name": "a", "argument_match": "ignore", "arguments": {"q": 1}}, "argument_match is `ignore`"),
        ({"name": "a", "arguments": {"q": "s"}, "argument_rules": {"q": {"tolerance": 1}}}, "needs an expected number"),
        (
            {"name": "a", "argument_rules": {"q": {"tolerance": 1}}},
            "needs an expected number: `arguments: {q: {value: N, tolerance: 1}}`",
        ),
        ({"name": "a", "arguments": {"q": {"tolerance": 1}}}, "needs an expected number"),
        ({"name": "a", "arguments": {"q": {"regex": "("}}}, "argument 'q': regex does not compile"),
        (
            {"name": "a", "arguments": {"q": {"regex": "a", "tolerance": 1}}},
            "argument 'q': an argument rule takes exactly one",
        ),
        (
            {"name": "a", "arguments": {"q": {"regex": "a"}}, "argument_rules": {"q": {"regex": "b"}}},
            "both under `arguments` and `argument_rules`",
        ),
        ({"name": "a", "arguments": {"q": {"value": "s", "regex": "s"}}}, "both a value and a regex"),
        ({"name": "a", "arguments": {"q": "s"}, "argument_rules": {"q": {"regex": "s"}}}, "both a value and a regex"),
        ({"name": "a", "argument_rules": {"q": {"regex": "("}}}, "regex does not compile"),
        ({"name": "a", "argument_rules": {"q": {}}}, "exactly one of `regex` or `tolerance`"),
        (
            {"name": "a", "argument_rules": {"q": {"regex": "a", "tolerance": 1}}},
            "exactly one of `regex` or `tolerance`",
        ),
        (
            {"name": "a", "argument_rules": {"q": {"tolerance": -1}}, "arguments": {"q": 1}},
            "greater than or equal to 0",
        ),
        ({"any_of": []}, "at least 1 item"),
    ],
)
def test_invalid_expected_calls_are_rejected(fields, message):
    with pytest.raises(ValidationError, match=re.escape(message)):
        ExpectedToolCall(**fields)


@pytest.mark.parametrize("mode", ["superset", "within_expected"])
def test_superset_allows_only_the_expected_keys_and_lets_them_be_absent(mode):
    """agentevals' tool_args_match_mode "subset": the call's arguments are within the expected ones."""
    m = matcher(
        arguments={"q": "paris", "limit": 3}, argument_rules={"lang": {"regex": "^(en|fr)$"}}, argument_match=mode
    )
    assert passes(m, {}) and passes(m, None) and passes(m, {"q": "paris"}) and passes(m, {"lang": "fr", "limit": 3})
    assert not passes(m, {"q": "paris", "page": 2})
    assert not passes(m, {"q": "london"}) and not passes(m, {"lang": "de"}) and not passes(m, "not an object")
    assert [str(x) for x in m.mismatches({"q": "london", "page": 2})] == [
        'q expected "paris", got "london"',
        "page expected (absent), got 2",
    ]
    assert m.anchor is None  # no key is sure to be present: calls are not looked up by one


def test_contains_expected_is_subset():
    assert ExpectedToolCall(name="s", argument_match="contains_expected").argument_match.value == "subset"
