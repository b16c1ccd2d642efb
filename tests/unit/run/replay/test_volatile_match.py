"""A placeholder in a recorded key stands for any value of a secret, none included, and for nothing beyond it."""

import pytest

from agentci_action.run.replay.request_keys import PLACEHOLDER, canonical_json, volatile_match

RECORDED = canonical_json({"body": {"messages": [{"content": f"desk token {PLACEHOLDER} when asked"}]}})


def key(content: str) -> str:
    return canonical_json({"body": {"messages": [{"content": content}]}})


@pytest.mark.parametrize("value", ["", "None", "another-token-0123", PLACEHOLDER])
def test_any_value_or_none_where_the_placeholder_stands_matches(value):
    assert volatile_match(key(f"desk token {value} when asked"), ["unrelated", RECORDED]) == RECORDED


@pytest.mark.parametrize(
    "content",
    ["desk token two words when asked", 'desk token a"b when asked', "desk token x when asked twice", "other"],
)
def test_a_change_beyond_one_value_does_not(content):
    assert volatile_match(key(content), [RECORDED]) is None


def test_a_key_without_a_placeholder_only_matches_exactly_elsewhere():
    plain = key("desk token abc when asked")
    assert volatile_match(key("desk token abd when asked"), [plain]) is None
