"""A `python:` runner's function, or a callable given to the API, may return an OpenAI Agents SDK `RunResult`.

It is read through the SDK's own tracing: a real Agents SDK agent (tests/agents/agents_sdk_agent.py) against the local
scripted OpenAI server.
"""

from __future__ import annotations

import io

import pytest
from fakes.scripted_openai import ScriptedOpenAIServer, Turn
from helpers import ROOT, hermetic_environment
from integration.test_runner import lines
from unit.run.test_python_call import run

from agentci_action import load_spec
from agentci_action._util.progress import Progress, ProgressOutput
from agentci_action.run import RunOptions, RunSetup, run_agent
from agentci_action.trace.tokenizer import tokenizer_for

QUESTION = "What's the weather in Paris, in Fahrenheit?"
ANSWER = "It is 69.8 °F in Paris."
SCRIPT = {
    QUESTION: [
        Turn(tool_calls=[("transfer_to_weather", {})], prompt_tokens=31, completion_tokens=7),
        Turn(tool_calls=[("get_weather", {"city": "Paris"})], prompt_tokens=52, completion_tokens=11),
        Turn(tool_calls=[("to_fahrenheit", {"celsius": 21})], prompt_tokens=68, completion_tokens=9),
        Turn(content=ANSWER, prompt_tokens=83, completion_tokens=10),
    ]
}


@pytest.fixture
def openai_server():
    with ScriptedOpenAIServer(SCRIPT) as server:
        yield server


def check_agents_sdk_trace(trace: dict, model: str = "gpt-4o-mini") -> None:
    """Chat Completions' generation spans name the model asked for; a Responses call's span, the model that answered."""
    assert trace["final_answer"] == ANSWER
    assert [(c["name"], c["arguments"], c.get("result"), c.get("agent")) for c in trace["tool_calls"]] == [
        ("transfer_to_weather", {}, None, "triage"),  # the handoff's own call: every tool check sees it
        ("get_weather", {"city": "Paris"}, "{'city': 'Paris', 'celsius': 21}", "weather"),  # the SDK records str()
        ("to_fahrenheit", {"celsius": 21}, "69.8", "weather"),
    ]
    assert trace["handoffs"] == [{"from": "triage", "to": "weather"}]
    assert [(c["model"], c["input_tokens"], c["output_tokens"]) for c in trace["llm_calls"]] == [
        (model, 31, 7),
        (model, 52, 11),
        (model, 68, 9),
        (model, 83, 10),
    ]
    assert trace["metadata"]["status"] == "completed"


@pytest.mark.parametrize(
    "function, api",
    [("answer", "chat_completions"), ("answer_async", "chat_completions"), ("answer", "responses")],
)
def test_a_python_runner_may_return_an_agents_sdk_run_result(tmp_path, openai_server, function, api):
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        f"agent: weather\nrunner:\n  python: agents_sdk_agent:{function}\n  cwd: {ROOT / 'tests' / 'agents'}\n"
        f"  env: {{OPENAI_BASE_URL: '{openai_server.openai_url}', OPENAI_API_KEY: sk-test-agents, AGENT_OPENAI_API: {api}}}\n"
        f'queries:\n  - id: paris\n    query: "{QUESTION}"\n'
    )
    outcome, output = run(spec, hermetic_environment(), runs=2)
    assert outcome.ok, outcome.errors
    traces = lines(output / "paris.jsonl")
    assert [t["run"] for t in traces] == [0, 1]
    for trace in traces:
        check_agents_sdk_trace(trace, "gpt-4o-mini" if api == "chat_completions" else openai_server.model)
        check_agents_sdk_breakdowns(trace, api)


def check_agents_sdk_breakdowns(trace: dict, api: str) -> None:
    """A Responses call's span keeps the input items it sent, and its Response the instructions and tools.

    Each call is split by component, counted by the model's tokenizer. A Chat Completions generation span records no
    tool definitions: not attributed.
    """
    breakdowns = [call.get("input_breakdown") for call in trace["llm_calls"]]
    if api == "chat_completions":
        assert breakdowns == [None] * 4
        return
    count = tokenizer_for("gpt-4o-mini").count
    first, second, third, _ = ({(p["component"], p.get("name")): p["tokens"] for p in b["parts"]} for b in breakdowns)
    assert first[("system_prompt", None)] == count("Hand weather questions to the weather agent.")
    assert first[("query", None)] == count(QUESTION)
    assert {name for component, name in first if component == "tool_schemas"} == {"transfer_to_weather"}
    assert second[("system_prompt", None)] == count("You answer weather questions.")
    assert {name for component, name in second if component == "tool_schemas"} == {"get_weather", "to_fahrenheit"}
    assert third[("tool_results", "get_weather")] == count("{'city': 'Paris', 'celsius': 21}")
    assert ("history", None) in third and ("query", None) in third
    assert all(b["exact"] and b["tokenizer"] == "o200k_base" for b in breakdowns)


def test_a_run_result_whose_run_the_sdk_did_not_trace_is_an_error_that_says_so(tmp_path, openai_server):
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        f"agent: weather\nrunner:\n  python: agents_sdk_agent:answer\n  cwd: {ROOT / 'tests' / 'agents'}\n"
        f"  env: {{OPENAI_BASE_URL: '{openai_server.openai_url}', OPENAI_API_KEY: sk-test-agents, "
        f"OPENAI_AGENTS_DISABLE_TRACING: '1'}}\n"
        f'queries:\n  - id: paris\n    query: "{QUESTION}"\n'
    )
    outcome, output = run(spec, hermetic_environment())
    assert outcome.failed == 1
    error = lines(output / "paris.jsonl")[0]["metadata"]["agentci_error"]
    assert error.startswith("query 'paris' run 0: returned an Agents SDK RunResult, but the SDK recorded no trace")


def test_a_callable_given_to_the_api_may_return_an_agents_sdk_run_result(tmp_path, openai_server, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", openai_server.openai_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-agents")
    monkeypatch.syspath_prepend(str(ROOT / "tests" / "agents"))
    import agents_sdk_agent

    spec = tmp_path / "spec.yaml"
    spec.write_text(f'agent: weather\nqueries:\n  - id: paris\n    query: "{QUESTION}"\n')
    progress = Progress("agentci run", 1, "run", output=ProgressOutput(stream=io.StringIO()))
    outcome = run_agent(
        load_spec(spec), RunOptions(tmp_path / "out"), RunSetup(agent=agents_sdk_agent.answer, progress=progress)
    )
    assert outcome.ok, outcome.errors
    check_agents_sdk_trace(lines(tmp_path / "out" / "paris.jsonl")[0])
