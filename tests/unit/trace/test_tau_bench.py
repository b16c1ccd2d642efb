"""τ-bench's real conversations, read and checked.

200 gpt-4o airline trajectories (50 tasks × 4 trials, each a whole Chat Completions conversation with a simulated user)
from ../shared/fixtures/tau-bench, read in place and never copied into the repository (its SOURCES.md says where it
comes from).

In τ-bench `transfer_to_human_agents` is a real tool: the agent escalates the customer to a person. A reader that took
every `transfer_to_*` call for a handoff between agents dropped it from every tool check, and `forbidden_tools:
[transfer_to_human_agents]`, the one behaviour a team most wants to gate, passed conversations that called it.
"""

from __future__ import annotations

import json

import pytest
from helpers import shared_fixture, tau_bench_file

from agentci_action.engine.evaluate_spec import evaluate_spec
from agentci_action.spec.models import AgentCISpec
from agentci_action.trace.load import load_traces

ESCALATE = "transfer_to_human_agents"


@pytest.fixture(scope="module")
def conversations() -> list[dict]:
    reason = "shared/fixtures/tau-bench not found beside the repository (set AGENTCI_TAU_BENCH)"
    return json.loads(shared_fixture(tau_bench_file(), reason).read_text())


def key(entry: dict) -> str:
    return f"task-{entry['task_id']}-trial-{entry['trial']}"


def calls_made(entry: dict) -> list[dict]:
    """Every function call the model made, in order: what the conversation shows."""
    return [c for m in entry["traj"] if m["role"] == "assistant" for c in m.get("tool_calls") or []]


@pytest.fixture(scope="module")
def traces(conversations, tmp_path_factory) -> dict:
    """Each conversation as a Chat Completions record (its own `messages`), read by AgentCI's detected reader."""
    path = tmp_path_factory.mktemp("tau-bench") / "airline.jsonl"
    path.write_text("".join(json.dumps({"id": key(e), "messages": e["traj"]}) + "\n" for e in conversations))
    return {trace.id: trace for trace in load_traces([str(path)])}


def test_every_conversation_is_read_with_every_call_the_model_made(conversations, traces):
    assert len(conversations) == len(traces) == 200
    for entry in conversations:
        trace, made = traces[key(entry)], calls_made(entry)
        assert trace.metadata["source_format"] == "openai-chat"
        assert [(c.name, c.arguments) for c in trace.tool_calls] == [
            (c["function"]["name"], json.loads(c["function"]["arguments"])) for c in made
        ]
        answers = {m["tool_call_id"]: m["content"] for m in entry["traj"] if m["role"] == "tool"}
        for call, issued in zip(trace.tool_calls, made):  # each result linked to its call by id
            assert (call.result is None) == (issued["id"] not in answers)
        assert trace.handoffs == []  # no agent is named: nothing marks a handoff
        assert trace.query == next(m["content"] for m in entry["traj"] if m["role"] == "user")


def test_a_tool_named_transfer_to_is_seen_by_every_tool_check(conversations, traces):
    """forbidden_tools, allowed_tools, expected_tools and max_tool_calls each see the escalation by its name."""
    tools = sorted({c["function"]["name"] for e in conversations for c in calls_made(e)})
    queries = [
        {
            "id": key(entry),
            "query": "q",
            "path": {
                "forbidden_tools": [ESCALATE],
                "allowed_tools": [t for t in tools if t != ESCALATE],
                "max_tool_calls": len([c for c in calls_made(entry) if c["function"]["name"] != ESCALATE]),
                "expected_tools": [ESCALATE],
                "min_tool_recall": 1.0,
            },
        }
        for entry in conversations
    ]
    spec = AgentCISpec.model_validate({"agent": "tau-bench-airline", "queries": queries})
    run = evaluate_spec(spec, [traces[q.key] for q in spec.queries])
    escalated = {key(e) for e in conversations if ESCALATE in [c["function"]["name"] for c in calls_made(e)]}
    assert len(escalated) == 48  # of 200: what the file shows
    for result in run.results:
        statuses = {check.name: check.status.value for check in result.path.checks}
        if result.id in escalated:
            assert statuses["forbidden_tools"] == "fail" and result.blocking  # a forbidden tool blocks by default
            assert statuses["allowed_tools"] != "pass" and statuses["max_tool_calls"] != "pass", statuses
            assert statuses["min_tool_recall"] == "pass"
        else:
            assert statuses["forbidden_tools"] == "pass" and statuses["allowed_tools"] == "pass", statuses
            assert statuses["max_tool_calls"] == "pass" and statuses["min_tool_recall"] != "pass"
    assert sorted(r.id for r in run.results if r.path.status.value == "fail") == sorted(escalated)
