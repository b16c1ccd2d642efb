"""`agentci test` drives a conversation turn by turn through real agent frameworks.

The OpenAI Agents SDK (its own session, or the history AgentCI resends) and LangGraph (the conversation in its
checkpointer's thread) against the local scripted model; the same runner with a plain openai-SDK agent is
tests/integration/test_conversation_runner.py.
"""

from __future__ import annotations

import json

import pytest
import yaml
from fakes.conversations import ASK, ASKS_FIRST, CELSIUS, PARIS, WEATHER
from fakes.scripted_openai import ScriptedOpenAIServer
from helpers import hermetic_environment, run_cli
from integration.test_conversation_runner import AGENTS, _spec


@pytest.mark.parametrize("api", ["chat_completions", "responses"])
@pytest.mark.parametrize("style", ["session", "history"])
def test_an_agents_sdk_agent_keeps_the_conversation_in_its_own_session_or_is_resent_it(tmp_path, api, style):
    """Both styles of state on the real Agents SDK.

    Its SQLiteSession under AgentCI's session id, or the history AgentCI resends as the run's input items; either way
    turn 2's request carries turn 1.
    """
    with ScriptedOpenAIServer(WEATHER, per_message=True) as model:
        runner = {
            "python": f"agents_sdk_agent:{'answer_in_session' if style == 'session' else 'answer_with_history'}",
            "cwd": str(AGENTS),
            "workers": 2,
            "env": {"AGENT_OPENAI_API": api, "AGENT_SESSIONS_DB": str(tmp_path / "sessions.db")},
        }
        spec = tmp_path / "spec.yaml"
        conversation = {
            "id": "paris",
            "turns": [
                {"user": PARIS, "path": {"expected_handoff": "weather", "expected_tools": ["get_weather"]}},
                {"user": CELSIUS, "correctness": {"expected_in_answer": ["21 °C"]}},
            ],
            "cost": {"max_turns": 2},
        }
        spec.write_text(yaml.safe_dump({"agent": "weather", "runner": runner, "queries": [conversation]}))
        env = hermetic_environment(OPENAI_BASE_URL=model.openai_url, OPENAI_API_KEY="sk-test-agents")
        result = run_cli("test", "--spec", spec, "--record", tmp_path / "traces", "--format", "json", env=env)
        assert result.returncode == 0, result.stdout + result.stderr
        (trace,) = [json.loads(line) for line in (tmp_path / "traces" / "paris.jsonl").read_text().splitlines()]
        first, second = trace["turns"]
        assert [c["name"] for c in first["tool_calls"]] == ["transfer_to_weather", "get_weather", "to_fahrenheit"]
        assert first["handoffs"] == [{"from": "triage", "to": "weather"}]
        assert second["final_answer"] == "It is 21 °C in Paris." and len(second["llm_calls"]) == 2
        assert trace["total_llm_calls"] == 6
        # the SDK's session (or AgentCI) resent turn 1 on turn 2: its question and its answer are in turn 2's first request
        turn_two = json.dumps(model.bodies[4], ensure_ascii=False)
        assert PARIS in turn_two and "69.8 °F" in turn_two
        (query,) = json.loads(result.stdout)["results"]
        assert [turn["status"] for turn in query["turns"]] == ["pass", "pass"]


def test_a_langgraph_agent_returning_its_thread_gives_each_turn_its_own_reply(tmp_path):
    """A LangGraph agent returning its whole thread every turn: each turn's trace is the thread's last turn.

    A real LangGraph agent keeping the conversation in its checkpointer's thread (AgentCI's session id); each turn's
    trace is not the conversation so far.
    """
    with ScriptedOpenAIServer(ASKS_FIRST, per_message=True) as model:
        spec = _spec(tmp_path, {"python": "langgraph_thread_agent:chat_in_thread", "workers": 1})
        env = hermetic_environment(OPENAI_BASE_URL=model.openai_url, OPENAI_API_KEY="sk-test")
        result = run_cli("test", "--spec", spec, "--record", tmp_path / "traces", "--format", "json", env=env)
        assert result.returncode == 0, result.stdout + result.stderr
        (trace,) = [json.loads(line) for line in (tmp_path / "traces" / "refund.jsonl").read_text().splitlines()]
        first, second = trace["turns"]
        assert (first["query"], first["final_answer"], first["tool_calls"]) == (
            ASK,
            "Sure, what is your order number?",
            [],
        )
        assert [call["name"] for call in second["tool_calls"]] == ["lookup_order", "issue_refund"]
        assert second["final_answer"] == "Order A-1234 is refunded: $59." and len(second["llm_calls"]) == 3
        assert trace["total_llm_calls"] == 4
        (query,) = json.loads(result.stdout)["results"]
        assert [turn["status"] for turn in query["turns"]] == ["pass", "pass"]
