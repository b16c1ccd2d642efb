"""Readers of framework sessions.

The runs of one conversation, recorded by the real libraries as their owners record them, read as one trace whose turns
are those runs.

- The OpenAI Agents SDK (0.24) keeping the conversation in a `SQLiteSession`, each `Runner.run` given the session
  id as its `group_id`: its own trace export, and the spans of openinference-instrumentation-openai-agents inside
  `using_session` (`session.id`).
- Pydantic AI (2.68) given the message history, which keeps its `gen_ai.conversation.id` across runs (OTel GenAI).
- LangGraph (1.2) with a checkpointer, invoked on one thread_id: the thread's state, and LangSmith's runs of it.

Each agent plays the local scripted model; the facts each conversation must give are the script's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from fakes.conversations import CELSIUS, PARIS, WEATHER
from fakes.instrumented_agents import pydantic_ai_weather_agent
from fakes.scripted_openai import ScriptedOpenAIServer, Turn
from helpers import ROOT, run_cli

from agentci_action.trace.load import load_traces

AGENTS = ROOT / "tests" / "agents"
SESSION = "chat-42"
FORGETS = {**WEATHER, CELSIUS: [Turn(tool_calls=[("transfer_to_weather", {})]), Turn(content="Which city?")]}


def _agents_sdk_session(
    folder: Path,
    tracing: str,
    script: dict = WEATHER,
    session: str = SESSION,
    questions: tuple = (PARIS, CELSIUS),
    query_ids: str = "",
) -> Path:
    """The conversation's recording.

    agents_sdk_session.py asked `questions` in one session, traced by `tracing` (each run's agentci.query_id from
    `query_ids`, comma-separated).
    """
    folder.mkdir(exist_ok=True)
    out = folder / f"{tracing}.jsonl"
    with ScriptedOpenAIServer(script, per_message=True) as model:
        env = {
            **os.environ,
            "OPENAI_BASE_URL": model.openai_url,
            "OPENAI_API_KEY": "sk-test-agents",
            "AGENT_QUERY_IDS": query_ids,
        }
        command = [sys.executable, str(AGENTS / "agents_sdk_session.py"), tracing, str(out), session, *questions]
        subprocess.run(command, env=env, cwd=AGENTS, check=True, timeout=120, capture_output=True)
    return out


def _turn_facts(trace):
    return [
        (
            turn.query,
            turn.final_answer,
            turn.tool_names,
            len(turn.llm_calls),
            [(h.from_agent, h.to) for h in turn.handoffs],
        )
        for turn in trace.turns
    ]


TURNS = [
    (
        PARIS,
        "It is 69.8 °F in Paris.",
        ["transfer_to_weather", "get_weather", "to_fahrenheit"],
        4,
        [("triage", "weather")],
    ),
    (CELSIUS, "It is 21 °C in Paris.", ["transfer_to_weather"], 2, [("triage", "weather")]),
]


@pytest.mark.parametrize("tracing", ["agents-sdk", "openinference"])
def test_an_agents_sdk_session_is_one_conversation_of_its_runs(tmp_path, tracing):
    """Each Runner.run on the session is a turn, its message the user's own, in time order.

    The session resent turn 1 before it; time order whatever the order of the file's records.
    """
    path = _agents_sdk_session(tmp_path, tracing)
    (trace,) = load_traces([str(path)])
    assert (trace.id, trace.query, trace.final_answer) == (SESSION, PARIS, "It is 21 °C in Paris.")
    assert _turn_facts(trace) == TURNS
    assert trace.metadata["session_id"] == SESSION and trace.metadata["status"] == "completed"
    assert trace.total_llm_calls == 6 and trace.total_tokens == sum(t.total_tokens for t in trace.turns) > 0
    assert trace.tool_names == TURNS[0][2] + TURNS[1][2]
    reversed_file = tmp_path / "reversed.jsonl"
    reversed_file.write_text("".join(reversed(path.read_text().splitlines(keepends=True))))
    (again,) = load_traces([str(reversed_file)])
    assert _turn_facts(again) == TURNS


def _spec(folder: Path, **key: str) -> Path:
    conversation = {
        **key,
        "turns": [
            {"user": PARIS, "path": {"expected_handoff": "weather", "expected_tools": ["get_weather"]}},
            {"user": CELSIUS, "correctness": {"expected_in_answer": ["21 °C"]}},
        ],
        "cost": {"max_turns": 2},
    }
    path = folder / "spec.yaml"
    path.write_text(yaml.safe_dump({"agent": "weather", "queries": [conversation]}))
    return path


@pytest.mark.parametrize("key", [{"id": SESSION}, {}], ids=["by session id", "by first message"])
def test_a_recorded_session_is_judged_turn_by_turn_against_its_conversation(tmp_path, key):
    """A spec's conversation matches the session by its id (the session id), else by its first message.

    A session whose turn 2 forgot the city fails at turn 2.
    """
    spec = _spec(tmp_path, **key)
    good = _agents_sdk_session(tmp_path, "agents-sdk")
    done = run_cli("test", "--spec", spec, "--traces", good, "--format", "json")
    assert done.returncode == 0, done.stdout + done.stderr
    (query,) = json.loads(done.stdout)["results"]
    assert [turn["status"] for turn in query["turns"]] == ["pass", "pass"]
    bad = _agents_sdk_session(tmp_path / "bad", "agents-sdk", FORGETS)
    done = run_cli("test", "--spec", spec, "--traces", bad, "--format", "json")
    assert done.returncode == 1, done.stdout + done.stderr
    (query,) = json.loads(done.stdout)["results"]
    assert [turn["status"] for turn in query["turns"]] == ["pass", "fail"]
    assert "turn 2: expected in answer but missing: '21 °C'" in query["correctness"]["messages"]


def test_an_openinference_chat_session_of_bare_model_calls_splits_at_the_user_s_messages(tmp_path):
    """OpenAIInstrumentor alone writes one trace per model call.

    In a session, the calls of one turn's tool loop are that turn (each was sent the same user messages), and the user's
    next message begins the next turn.
    """
    script = {
        PARIS: [
            Turn(tool_calls=[("get_weather", {"city": "Paris"})]),
            Turn(tool_calls=[("to_fahrenheit", {"celsius": 21})]),
            Turn(content="It is 69.8 °F in Paris."),
        ],
        CELSIUS: [Turn(content="It is 21 °C in Paris.")],
    }
    out = tmp_path / "chat.jsonl"
    with ScriptedOpenAIServer(script, per_message=True) as model:
        env = {**os.environ, "OPENAI_BASE_URL": model.openai_url, "OPENAI_API_KEY": "sk-test"}
        command = [sys.executable, str(AGENTS / "openai_chat_session.py"), str(out), SESSION, PARIS, CELSIUS]
        subprocess.run(command, env=env, cwd=AGENTS, check=True, timeout=120, capture_output=True)
    assert len({json.loads(line)["context"]["trace_id"] for line in out.read_text().splitlines()}) == 4
    (trace,) = load_traces([str(out)])
    assert (trace.id, trace.query, trace.metadata["session_id"]) == (SESSION, PARIS, SESSION)
    assert [(t.query, t.final_answer, t.tool_names, len(t.llm_calls)) for t in trace.turns] == [
        (PARIS, "It is 69.8 °F in Paris.", ["get_weather", "to_fahrenheit"], 3),
        (CELSIUS, "It is 21 °C in Paris.", [], 1),
    ]
    assert trace.turns[0].tool_calls[1].result == "69.8"  # the tool message the loop sent back


def test_pydantic_ai_runs_given_the_history_are_one_conversation_by_its_conversation_id(tmp_path):
    script = {
        PARIS: [Turn(tool_calls=[("get_weather", {"city": "Paris"})]), Turn(content="It is 69.8 °F in Paris.")],
        CELSIUS: [Turn(content="It is 21 °C in Paris.")],
    }
    path = tmp_path / "pydantic_ai.jsonl"
    with path.open("w") as out, ScriptedOpenAIServer(script, per_message=True) as server:
        agent, provider = pydantic_ai_weather_agent(server.openai_url, out)
        first = agent.run_sync(PARIS)
        second = agent.run_sync(CELSIUS, message_history=first.all_messages())
        provider.shutdown()
    (trace,) = load_traces([str(path)])
    assert trace.metadata["source_format"] == "otel-genai"
    assert trace.id == trace.metadata["session_id"] == first.all_messages()[0].conversation_id
    assert [(t.query, t.final_answer, t.tool_names, len(t.llm_calls)) for t in trace.turns] == [
        (PARIS, "It is 69.8 °F in Paris.", ["get_weather"], 2),
        (CELSIUS, second.output, [], 1),
    ]


def test_a_session_of_one_run_stays_a_single_trace_and_sessions_never_mix(tmp_path):
    """Three sessions an exporter appended to one file.

    Two conversations and, for a session with one run, a plain trace that still names its session.
    """
    recorded = [
        _agents_sdk_session(tmp_path / session, "agents-sdk", session=session, questions=questions)
        for session, questions in (("chat-42", [PARIS, CELSIUS]), ("chat-7", [PARIS, CELSIUS]), ("chat-9", [PARIS]))
    ]
    both = tmp_path / "appended.jsonl"
    both.write_text("".join(path.read_text() for path in recorded))
    traces = load_traces([str(both)])
    assert [(t.id, len(t.turns)) for t in traces] == [("chat-42", 2), ("chat-7", 2), (None, 0)]
    assert traces[2].metadata["session_id"] == "chat-9" and traces[2].query == PARIS


def _keeping_client() -> Any:
    """The real LangSmith client, except that it keeps the runs LangChain's tracer would upload instead of sending them.

    Each run's create and update merged, as `client.list_runs` gives them back.
    """
    from langsmith import Client

    class Keeping(Client):
        def __init__(self) -> None:
            super().__init__(api_key="lsv2-test", api_url="http://127.0.0.1:9", auto_batch_tracing=False)
            self.kept: dict[str, dict[str, Any]] = {}

        def create_run(self, name: str, inputs: dict[str, Any], run_type: str, **fields: Any) -> None:
            self.kept[str(fields["id"])] = {"name": name, "inputs": inputs, "run_type": run_type, **fields}

        def update_run(self, run_id: Any, **fields: Any) -> None:
            self.kept.setdefault(str(run_id), {}).update(fields)

    return Keeping()


def test_a_langgraph_thread_is_one_conversation_in_its_state_and_in_its_langsmith_runs(tmp_path):
    """LangGraph (1.2) with a checkpointer, invoked twice on one thread_id.

    The thread's state (messages_to_dict, with the thread's config) and the runs LangSmith's tracer records (each
    carrying the thread_id) each read as one conversation of two turns.
    """
    import warnings

    from langchain_core.messages import messages_to_dict
    from langchain_core.tools import tool
    from langchain_core.tracers import LangChainTracer
    from langchain_openai import ChatOpenAI
    from langgraph.checkpoint.memory import InMemorySaver

    with warnings.catch_warnings():  # moved to langchain.agents in LangGraph 1.0; still LangGraph's own
        warnings.simplefilter("ignore")
        from langgraph.prebuilt import create_react_agent

    @tool
    def get_weather(city: str) -> dict:
        """Current weather of a city."""
        return {"city": city, "celsius": 21}

    script = {
        PARIS: [Turn(tool_calls=[("get_weather", {"city": "Paris"})]), Turn(content="It is 69.8 °F in Paris.")],
        CELSIUS: [Turn(content="It is 21 °C in Paris.")],
    }
    client = _keeping_client()
    thread = {"configurable": {"thread_id": "thread-1"}}
    with ScriptedOpenAIServer(script, per_message=True) as server:
        model = ChatOpenAI(model="gpt-4o-mini", base_url=server.openai_url, api_key="sk-test")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            graph = create_react_agent(model, [get_weather], checkpointer=InMemorySaver())
        for question in (PARIS, CELSIUS):
            graph.invoke(
                {"messages": [{"role": "user", "content": question}]},
                {**thread, "callbacks": [LangChainTracer(client=client)]},
            )
        snapshot = graph.get_state(thread)
    state = tmp_path / "thread.json"
    messages = messages_to_dict(snapshot.values["messages"])
    state.write_text(json.dumps({"config": snapshot.config, "messages": messages}))
    named = tmp_path / "named.json"  # the record names its query and run, as the docs' LangGraph snippet does
    named.write_text(
        json.dumps({"id": "weather-chat", "metadata": {"agentci.run": 1}, **json.loads(state.read_text())})
    )
    runs = tmp_path / "runs.jsonl"
    runs.write_text("".join(json.dumps(run, default=str) + "\n" for run in client.kept.values()))
    expected = [
        (PARIS, "It is 69.8 °F in Paris.", ["get_weather"], 2),
        (CELSIUS, "It is 21 °C in Paris.", [], 1),
    ]
    for path, source_format, key in (
        (state, "langgraph", ("thread-1", None)),
        (named, "langgraph", ("weather-chat", 1)),
        (runs, "langsmith", ("thread-1", None)),
    ):
        (trace,) = load_traces([str(path)])
        assert trace.metadata["source_format"] == source_format
        assert ((trace.id, trace.run), trace.query, trace.metadata["session_id"]) == (key, PARIS, "thread-1")
        assert [(t.query, t.final_answer, t.tool_names, len(t.llm_calls)) for t in trace.turns] == expected, path
        assert trace.total_llm_calls == 3 and trace.final_answer == "It is 21 °C in Paris."


def test_a_session_s_query_id_names_the_conversation_and_different_ones_keep_its_runs_apart(tmp_path):
    """Runs of one session tagged with one agentci.query_id are that query's conversation.

    Runs tagged with different ones (a batch sharing a group_id) stay single traces, each matched to its own query.
    """
    one = _agents_sdk_session(tmp_path / "one", "agents-sdk", query_ids="weather,weather")
    (trace,) = load_traces([str(one)])
    assert (trace.id, [t.query for t in trace.turns]) == ("weather", [PARIS, CELSIUS])
    batch = _agents_sdk_session(tmp_path / "batch", "agents-sdk", query_ids="paris,celsius")
    traces = load_traces([str(batch)])
    assert [(t.id, t.query, len(t.turns), t.metadata["session_id"]) for t in traces] == [
        ("paris", PARIS, 0, SESSION),
        ("celsius", CELSIUS, 0, SESSION),
    ]
