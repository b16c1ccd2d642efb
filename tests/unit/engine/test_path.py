"""Path layer: the exact text of every explanation, allow/deny lists, name normalisation, aliases."""

import json

import pytest
import yaml
from helpers import ROOT

from agentci_action.engine.path import evaluate_path
from agentci_action.engine.results import Status
from agentci_action.spec.models import MatchMode, PathSpec
from agentci_action.trace.canonical import Trace


def trace(*tools, **kwargs) -> Trace:
    """trace("a", ("search", {"q": 1})) → a Trace with those tool calls."""
    tool_calls = [{"name": t} if isinstance(t, str) else {"name": t[0], "arguments": t[1]} for t in tools]
    return Trace.model_validate({"id": "q", "tool_calls": tool_calls, **kwargs})


def path(**fields) -> PathSpec:
    return PathSpec.model_validate(fields)


def check(result, name):
    return next(c for c in result.checks if c.name == name)


WEATHER_STEPS = [
    {"name": "search", "arguments": {"q": "weather paris", "limit": 3}},
    {"any_of": ["rerank", "filter"], "optional": True},
    {"name": "answer"},
]


def test_expected_calls_strict_message_names_step_tool_and_arguments():
    result = evaluate_path(
        path(match_mode="strict", expected_tool_calls=WEATHER_STEPS),
        trace(("search", {"q": "weather rome", "limit": 3}), "shell", "answer"),
    )
    assert result.status is Status.WARN
    assert result.messages == [
        "expected_tool_calls not matched (strict): "
        "first difference at step 0: expected search (expected_tool_calls[0]), got search with other arguments; "
        "missing: search (expected_tool_calls[0]); "
        "unexpected: search at step 0, shell at step 1; "
        'arguments of search at step 0 vs expected_tool_calls[0]: q expected "weather paris", got "weather rome"'
    ]
    details = result.details["expected_tool_calls"]
    assert details["first_divergence"] == {
        "index": 0,
        "expected": "search (expected_tool_calls[0])",
        "actual": "search with other arguments",
    }
    assert details["missing"] == [{"step": 0, "tool": "search"}]
    assert details["unexpected"] == [{"call": 0, "tool": "search"}, {"call": 1, "tool": "shell"}]
    assert details["argument_mismatches"] == [
        {"step": 0, "call": 0, "tool": "search", "key": "q", "expected": '"weather paris"', "actual": '"weather rome"'}
    ]
    assert details["pairs"] == [{"step": 2, "call": 2}]


def test_expected_calls_subsequence_message_for_a_missing_alternative():
    steps = [{"name": "search"}, {"any_of": ["rerank", "filter"]}, {"name": "answer"}]
    result = evaluate_path(
        path(match_mode="subsequence", expected_tool_calls=steps), trace("search", "think", "answer")
    )
    assert result.messages == [
        "expected_tool_calls not matched (subsequence): "
        "first difference at step 1: expected any of (rerank, filter) (expected_tool_calls[1]), got think; "
        "missing: any of (rerank, filter) (expected_tool_calls[1])"
    ]


def test_expected_calls_unordered_modes_list_missing_and_unexpected_without_a_position():
    result = evaluate_path(
        path(match_mode="unordered", expected_tool_calls=WEATHER_STEPS),
        trace("answer", ("search", {"q": "weather paris"}), "shell"),
    )
    assert result.messages == [
        "expected_tool_calls not matched (unordered): "
        "missing: search (expected_tool_calls[0]); unexpected: search at step 1, shell at step 2; "
        "arguments of search at step 1 vs expected_tool_calls[0]: limit expected 3, got (absent)"
    ]
    assert result.details["expected_tool_calls"]["first_divergence"] is None


def test_expected_calls_pass_reports_the_pairing():
    result = evaluate_path(
        path(match_mode="subset", expected_tool_calls=WEATHER_STEPS),
        trace("plan", ("search", {"q": "weather paris", "limit": 3, "lang": "fr"}), "answer"),
    )
    assert result.status is Status.PASS and result.messages == []
    assert result.details["expected_tool_calls"]["pairs"] == [{"step": 0, "call": 1}, {"step": 2, "call": 2}]
    assert check(result, "expected_tool_calls").status is Status.PASS


@pytest.mark.parametrize(
    "alias, mode", [("contains_reference", MatchMode.SUBSET), ("within_reference", MatchMode.SUPERSET)]
)
def test_agentevals_style_aliases(alias, mode):
    spec = path(match_mode=alias, expected_tools=["search", "answer"])
    assert spec.match_mode is mode
    extra = check(evaluate_path(spec, trace("search", "shell", "answer")), "match_mode").status
    fewer = check(evaluate_path(spec, trace("search")), "match_mode").status
    # contains_reference: the trace contains the reference (extras fine); within_reference: the trace stays within it
    assert (extra, fewer) == ((Status.PASS, Status.WARN) if mode is MatchMode.SUBSET else (Status.WARN, Status.PASS))


def test_unknown_match_mode_is_rejected():
    with pytest.raises(ValueError, match="match_mode"):
        path(match_mode="contains")


def test_allowed_tools_violation_fails_hard_and_names_tools_and_positions():
    result = evaluate_path(
        path(allowed_tools=["search", "Answer"]), trace("search", "shell", "answer", "shell", "Fetch-URL")
    )
    assert result.status is Status.FAIL
    assert result.messages == ["tools not in allowed_tools: shell at steps 1, 3, Fetch-URL at step 4"]
    assert result.details["disallowed_calls"] == {"shell": [1, 3], "Fetch-URL": [4]}


def test_allowed_tools_pass_and_empty_allow_list_allows_nothing():
    assert evaluate_path(path(allowed_tools=["search", "answer"]), trace("Search", "ANSWER")).status is Status.PASS
    assert evaluate_path(path(allowed_tools=[]), trace()).status is Status.PASS
    assert evaluate_path(path(allowed_tools=[]), trace("search")).status is Status.FAIL


def test_forbidden_message_has_the_names_as_called_and_their_positions():
    result = evaluate_path(path(forbidden_tools=["delete_file"]), trace("search", "DeleteFile", "delete-file"))
    assert result.status is Status.FAIL
    assert result.messages == ["forbidden tools used: delete_file at steps 1, 2"]
    assert result.details["forbidden_violations"] == ["delete_file"]
    assert result.details["forbidden_calls"] == {"delete_file": [1, 2]}


def test_name_normalisation_can_be_turned_off():
    spec = path(tool_name_normalization=False, forbidden_tools=["delete_file"], allowed_tools=["search", "delete_file"])
    result = evaluate_path(spec, trace("search", "DeleteFile"))
    assert check(result, "forbidden_tools").status is Status.PASS
    assert check(result, "allowed_tools").message == "tools not in allowed_tools: DeleteFile at step 1"
    assert check(evaluate_path(spec, trace("delete_file")), "forbidden_tools").status is Status.FAIL


def test_loops_are_reported_with_tool_and_positions():
    result = evaluate_path(path(max_loops=1), trace("search", "search", "grade", "grade", "grade"))
    assert result.messages == ["loops: 3 > max 1 (search ×2 at steps 0-1; grade ×3 at steps 2-4)"]
    assert result.details["loops"] == [
        {"tool": "search", "start": 0, "count": 2},
        {"tool": "grade", "start": 2, "count": 3},
    ]
    assert evaluate_path(path(), trace("a", "a")).details["loops"] == [{"tool": "a", "start": 0, "count": 2}]


def test_max_tool_calls_message_counts_calls_by_tool():
    result = evaluate_path(path(max_tool_calls=2), trace("search", "fetch", "search", "answer"))
    assert result.messages == ["tool calls: 4 > max 2 (search ×2, fetch ×1, answer ×1)"]


def test_sequence_similarity_message_says_where_the_sequences_diverge():
    result = evaluate_path(
        path(expected_tools=["search", "rerank", "answer"], min_sequence_similarity=0.9),
        trace("search", "fetch", "answer"),
    )
    assert check(result, "min_sequence_similarity").message == (
        "sequence similarity (lcs) against the expected_tools: 0.67 < min 0.9 "
        "(first difference at step 1: expected rerank, got fetch)"
    )


def test_subsequence_message_points_past_the_trace_not_at_an_extra_call():
    result = evaluate_path(
        path(expected_tools=["search", "analyze"], match_mode="subsequence"), trace("x", "y", "z", "search", "q", "r")
    )
    assert check(result, "match_mode").message == (
        "match mode 'subsequence' against the expected_tools failed: "
        "first difference at step 6: expected analyze, got (end); missing: analyze"
    )
    assert result.details["match_mode"]["first_divergence"] == {"index": 6, "expected": "analyze", "actual": None}


def test_hostile_tool_names_stay_inert_in_messages_and_details():
    evil = "rm\n::error file=x::pwned\u202e" + "z" * 100
    result = evaluate_path(
        path(allowed_tools=["search"], max_loops=0, match_mode="strict", expected_tool_calls=[{"name": "search"}]),
        trace(evil, evil),
    )
    text = json.dumps(result.model_dump(mode="json"), ensure_ascii=False)
    for message in result.messages:
        assert "\n" not in message and "\u202e" not in message and "z" * 70 not in message
    assert "rm⏎::error" in result.messages[0]
    expected_calls = result.details["expected_tool_calls"]
    assert all("\n" not in u["tool"] and len(u["tool"]) <= 60 for u in expected_calls["unexpected"])
    assert "\u202e" not in json.dumps(expected_calls, ensure_ascii=False)
    assert text  # the whole layer still serialises


def test_the_docs_example_of_expected_tool_calls_is_valid_and_explains_as_documented():
    docs = (ROOT / "docs" / "explanation" / "matching-and-scoring.md").read_text(encoding="utf-8")
    section = docs.split("### Expected tool calls", 1)[1]
    example = yaml.safe_load(section.split("```yaml", 1)[1].split("```", 1)[0])
    spec = PathSpec.model_validate(example["path"])
    calls = [
        ("plan", {}),
        ("get_forecast", {"days": 3, "lat": 48.865}),
        ("answer", {}),
        ("think", {}),
        ("search", {"query": "weather in Rome", "lang": "en"}),
    ]
    result = evaluate_path(spec, trace(*calls))
    assert (
        "arguments of search at step 4 vs expected_tool_calls[0]: query expected a match for /(?i)paris/, got "
        '"weather in Rome"' in result.messages[0]
    )
    fixed = [("search", {"query": "Paris weather", "lang": "en", "units": "C"}), *calls[1:4]]
    assert evaluate_path(spec, trace(*fixed)).status is Status.PASS


REFUND_STEPS = [{"name": "lookup_order"}, {"name": "refund", "arguments": {"order_id": "1042"}}]


@pytest.mark.parametrize("mode", ["strict", "subsequence"])
def test_a_step_called_in_the_wrong_place_is_said_out_of_order_not_missing_and_unexpected(mode):
    result = evaluate_path(
        path(match_mode=mode, expected_tool_calls=REFUND_STEPS),
        trace(("refund", {"order_id": "1042"}), "lookup_order"),
    )
    [message] = result.messages
    assert message == (
        f"expected_tool_calls not matched ({mode}): "
        "first difference at step 0: expected lookup_order (expected_tool_calls[0]), got refund; "
        "out of order: lookup_order (expected_tool_calls[0]) called at step 1"
    )
    assert "missing:" not in message and "unexpected:" not in message
    assert result.details["expected_tool_calls"]["out_of_order"] == [{"step": 0, "call": 1, "tool": "lookup_order"}]


@pytest.mark.parametrize("mode", ["unordered", "superset", "within_reference"])
def test_a_double_refund_fails_the_unordered_modes_and_is_named_a_repeat(mode):
    calls = ("lookup_order", ("refund", {"order_id": "1042"}), ("refund", {"order_id": "1042"}))
    result = evaluate_path(path(match_mode=mode, expected_tool_calls=REFUND_STEPS), trace(*calls))
    shown = MatchMode(mode).value
    assert result.status is Status.WARN
    assert result.messages == [
        f"expected_tool_calls not matched ({shown}): "
        "repeated: refund at step 2 (expected_tool_calls[1] was matched already)"
    ]
    assert result.details["expected_tool_calls"]["repeated"] == [{"call": 2, "step": 1, "tool": "refund"}]
    again = evaluate_path(
        path(match_mode=mode, expected_tool_calls=REFUND_STEPS, repeated_calls="ignore"), trace(*calls)
    )
    assert again.status is Status.PASS  # the explicit opt-in keeps AgentCI 2.0's reading


def test_argument_match_superset_keeps_the_calls_arguments_within_the_expected_ones():
    step = {"name": "refund", "arguments": {"order_id": "1042", "amount": 35}, "argument_match": "within_expected"}
    spec = path(match_mode="strict", expected_tool_calls=[step])
    assert evaluate_path(spec, trace(("refund", {"order_id": "1042"}))).status is Status.PASS  # amount may be absent
    extra = evaluate_path(spec, trace(("refund", {"order_id": "1042", "note": "rush"})))
    assert extra.status is Status.WARN
    assert (
        'arguments of refund at step 0 vs expected_tool_calls[0]: note expected (absent), got "rush"'
        in extra.messages[0]
    )
    wrong = evaluate_path(spec, trace(("refund", {"order_id": "1042", "amount": 350})))
    assert "amount expected 35, got 350" in wrong.messages[0]


def test_a_strict_mismatch_of_the_same_calls_says_they_came_in_another_order():
    result = evaluate_path(
        path(match_mode="strict", expected_tools=["lookup_order", "refund"]), trace("refund", "lookup_order")
    )
    assert result.messages == [
        "match mode 'strict' against the expected_tools failed: first difference at step 0: expected lookup_order, "
        "got refund (the same calls in another order)"
    ]
