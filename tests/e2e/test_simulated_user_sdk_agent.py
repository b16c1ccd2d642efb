"""A simulated user talks to a real openai-SDK agent (tests/agents/support_chat.py) against a scripted model.

The user reaches its goal with the simulator on either provider, and with the agent's model calls recorded the whole
conversation (the agent's calls and the user's messages) replays offline with no server and no key.
"""

from __future__ import annotations

import json

import pytest
import yaml
from fakes.conversations import ASK, ASKS_FIRST, GIVE
from fakes.llm_server import FakeLLMServer
from fakes.scripted_openai import ScriptedOpenAIServer
from helpers import ROOT, run_cli
from integration.test_simulated_user import customer, keyed, results_of, traces_of, write_spec

SDK_AGENTS = ROOT / "tests" / "agents"


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_a_simulated_user_reaches_its_goal_with_a_real_sdk_agent(tmp_path, provider):
    with ScriptedOpenAIServer(ASKS_FIRST, per_message=True) as model, FakeLLMServer(customer()) as simulator:
        runner = {"command": ["python", str(SDK_AGENTS / "support_chat.py"), "history"], "cwd": str(SDK_AGENTS)}
        spec = write_spec(tmp_path, simulator, runner)
        if provider == "openai":  # the simulator on an OpenAI model, beside the judge's claude default
            document = yaml.safe_load(spec.read_text())
            document["queries"][0]["simulated_user"]["model"] = "gpt-4o-mini"
            spec.write_text(yaml.safe_dump(document))
        env = keyed(OPENAI_BASE_URL=model.openai_url, OPENAI_API_KEY="agent-key")
        if provider == "openai":  # the simulator's OpenAI calls go to the fake's OpenAI wire, the agent's to its own
            env["OPENAI_BASE_URL"] = simulator.openai_url
            document = yaml.safe_load(spec.read_text())
            document["runner"]["env"] = {"OPENAI_BASE_URL": model.openai_url}
            spec.write_text(yaml.safe_dump(document))
        done = run_cli("test", "--spec", spec, "--record", tmp_path / "t", "--format", "json", env=env)
        assert done.returncode == 0, done.stderr
        (trace,) = traces_of(tmp_path / "t")
        assert [turn["query"] for turn in trace["turns"]] == [ASK, GIVE]
        assert trace["turns"][1]["final_answer"] == "Order A-1234 is refunded: $59."
        ending = trace["metadata"]["agentci_user"]
        assert ending["ended"] == "goal_reached" and ending["turns"] == 2 and ending["requests"] == 3
        paths = {r.path for r in simulator.received}
        assert paths == ({"/v1/messages"} if provider == "anthropic" else {"/v1/chat/completions"})
        # the agent's reply reached the simulator as data inside the fence, the persona and goal outside it
        last = simulator.received[-1].body
        text = json.dumps(last)
        assert "Order A-1234 is refunded: $59." in text and "Get order A-1234 refunded" in text
        report = results_of(done)
        usage = report["summary"]["simulated_users"]
        assert usage["requests"] == 3 and usage["cache_hits"] == 0 and usage["cost_usd"] > 0
        assert report["summary"]["judge"]["requests"] == 0  # kept apart from the judge's
        (result,) = report["results"]
        assert [t["user"] for t in result["turns"]] == [ASK, GIVE]
        assert result["correctness"]["checks"][0]["message"].startswith("the simulated user reached its goal at turn 2")


def test_with_the_model_call_replay_the_whole_conversation_runs_offline(tmp_path):
    runner = {
        "command": ["python", str(SDK_AGENTS / "support_chat.py"), "history"],
        "cwd": str(SDK_AGENTS),
        "replay": {"mode": "record"},
    }
    with ScriptedOpenAIServer(ASKS_FIRST, per_message=True) as model, FakeLLMServer(customer()) as simulator:
        spec = write_spec(tmp_path, simulator, runner)
        env = keyed(OPENAI_BASE_URL=model.openai_url, OPENAI_API_KEY="agent-key")
        recorded = run_cli("run", "--spec", spec, "--output", tmp_path / "live", env=env)
        assert recorded.returncode == 0, recorded.stderr
        assert len(model.bodies) == 4 and simulator.count == 3
    assert sorted(p.name for p in (tmp_path / "recordings" / "refund-chat").iterdir()) == [
        "run-0.json",  # the agent's model calls
        "run-0.user.json",  # the simulated user
    ]
    # both servers gone, no key at all: the agent's calls and the user's messages come from the recordings
    offline = run_cli(
        "test", "--spec", spec, "--record", tmp_path / "offline", "--replay", "replay", "--format", "json"
    )
    assert offline.returncode == 0, offline.stderr
    (live,), (again,) = traces_of(tmp_path / "live"), traces_of(tmp_path / "offline")
    assert [(t["query"], t["final_answer"]) for t in again["turns"]] == [
        (t["query"], t["final_answer"]) for t in live["turns"]
    ]
    assert again["metadata"]["agentci_replay"]["replayed"] == 4 and again["metadata"]["agentci_replay"]["live"] == 0
    assert again["metadata"]["agentci_user"]["replayed"] == 3 and again["metadata"]["agentci_user"]["requests"] == 0
