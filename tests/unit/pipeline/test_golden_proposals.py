"""A trace as a proposed golden: the volatile-argument rule, the budget rounded up, masking, incidents."""

from __future__ import annotations

import pytest

from agentci_action.pipeline.golden_proposals import (
    GoldenOptions,
    Incident,
    Masking,
    identifying,
    proposal,
    round_up,
    volatile,
)
from agentci_action.trace.canonical import ToolCall, Trace


def no_secrets(text: str) -> str:
    return text


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        ("user_id", "mia_li_3668", False),  # an id the user gave: identifies the call
        ("reservation_id", "EUJUY6", False),
        ("date", "2024-05-20", False),  # a day, not a moment
        ("request_id", "anything", True),
        ("created_at", "yesterday", True),
        ("timestamp", 1733000000, True),
        ("ref", "3f2b8c1e-9a4d-4c1b-8e2f-0123456789ab", True),  # a UUID, whatever its key
        ("when", "2026-05-01T10:00:00Z", True),
        ("token", "a1B2c3D4e5F6g7H8i9J0k1L2m3", True),
        ("filters", {"city": "Paris", "trace_id": "x"}, True),  # volatile inside
    ],
)
def test_the_volatile_rule(key, value, expected):
    assert volatile(key, value, ()) is expected


def test_keys_the_user_names_are_volatile_too():
    call = ToolCall(name="search", arguments={"query": "paris", "page_token": "p2", "seed": 7})
    assert identifying(call, ("seed",)) == {"query": "paris", "page_token": "p2"}


@pytest.mark.parametrize(
    ("value", "expected"), [(0.000402123, 0.000403), (0.0118, 0.0118), (1.0005, 1.01), (123456.0, 124000.0)]
)
def test_a_budget_is_rounded_up_never_down(value, expected):
    assert round_up(value) == expected


def trace(**fields) -> Trace:
    base = {"id": "t1", "query": "Where is order 12?", "final_answer": "It ships today."}
    return Trace.model_validate({**base, **fields}).with_derived_totals()


def test_a_golden_from_a_trace():
    found = trace(
        tool_calls=[{"name": "lookup", "arguments": {"order": 12, "request_id": "r-1"}}],
        llm_calls=[{"model": "m", "input_tokens": 10, "output_tokens": 2, "cost_usd": 0.002}],
        metadata={"status": "completed"},
    )
    made = proposal(found, {"source": "t.jsonl:1"}, GoldenOptions(cost_margin=0.25), Masking(no_secrets))
    assert made.golden == {
        "id": "t1",
        "query": "Where is order 12?",
        "tags": ["promoted"],
        "reference_answer": "It ships today.",
        "path": {"expected_tool_calls": [{"name": "lookup", "arguments": {"order": 12}}]},
        "cost": {"max_cost_usd": 0.0025},
        "checks": {
            "answer": {"min_rouge_l": 0.5},
            "safety": {"no_pii_leakage": True},
            "agent": {"task_completion": True},
        },
        "provenance": {"source": "t.jsonl:1"},
    }
    assert made.masked == [] and made.flag == ""


def test_an_incident_keeps_none_of_the_failing_run_and_fails_by_its_expectation():
    found = trace(tool_calls=[{"name": "delete_account"}], metadata={"status": "failed"})
    incident = Incident(
        expect_in_answer=("refund",), expect_route=("lookup", "refund"), forbid_tools=("delete_account",)
    )
    made = proposal(
        found, {"source": "t.jsonl:1", "incident": True}, GoldenOptions(incident=incident), Masking(no_secrets)
    )
    assert "reference_answer" not in made.golden and "checks" not in made.golden
    assert made.golden["tags"] == ["promoted", "incident"]
    assert made.golden["correctness"] == {"expected_in_answer": ["refund"]}
    assert made.golden["path"] == {
        "expected_tool_calls": [{"name": "lookup"}, {"name": "refund"}],
        "severity": {"expected_tool_calls": "fail"},
        "forbidden_tools": ["delete_account"],
    }


def test_masking_reports_each_mask_and_flags_a_masked_query():
    secret = "hunter2-is-my-password"
    found = trace(id=None, query=f"Reset {secret} for jane@example.com", final_answer="Mail sent to jane@example.com.")
    made = proposal(found, {"source": "t.jsonl:1"}, GoldenOptions(), Masking(lambda t: t.replace(secret, "***")))
    assert made.masked == ["secret in query", "email in query", "email in reference_answer"]
    assert made.flag == "its query had to be masked"
    assert secret not in str(made.golden) and "jane@example.com" not in str(made.golden)
    assert made.golden["id"] == "reset-for-ja"  # derived from the masked query: no personal data in the id
