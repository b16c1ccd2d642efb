"""Readers of the frameworks' own trace formats, on what the real libraries write.

MLflow (run here, against a local tracking server and model), LiteLLM (a committed recording its generator makes with
the real library, regenerated and compared when litellm is installed) and Langfuse (run here, its spans as its SDK
exports them).

Every agent below plays the same scripted model: two tool calls issued together (the second tool fails), then
the answer. The facts each trace must give are the script's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import ROOT

from agentci_action.trace.load import load_traces
from tests.fakes.instrumented_agents import pydantic_ai_weather_agent
from tests.fakes.mlflow_server import FakeMlflowServer
from tests.fakes.scripted_openai import FAILING_TOOL_SCRIPT as SCRIPT
from tests.fakes.scripted_openai import PARIS_ANSWER as ANSWER
from tests.fakes.scripted_openai import PARIS_QUESTION as QUESTION
from tests.fakes.scripted_openai import ScriptedOpenAIServer

AGENTS = ROOT / "tests" / "agents"
TOOLS = [
    ("get_weather", {"city": "Paris"}, {"city": "Paris", "celsius": 21}, None),
    ("get_forecast", {"city": "Paris", "days": 2}, None, "forecast service unavailable"),
]
LLM = [("gpt-4o-mini-2024-07-18", 120, 40, 64), ("gpt-4o-mini-2024-07-18", 200, 12, 64)]


def _facts(trace):
    return (
        trace.id,
        trace.query,
        trace.final_answer,
        [(c.name, c.arguments, c.result, c.error) for c in trace.tool_calls],
        [(c.model, c.input_tokens, c.output_tokens, c.cached_input_tokens) for c in trace.llm_calls],
        trace.metadata["status"],
    )


@pytest.mark.parametrize("traced_tools", [True, False], ids=["tool spans", "tools in the messages"])
def test_mlflow_traces_of_a_real_agent(tmp_path, traced_tools):
    """mlflow-tracing's OpenAI autolog and @mlflow.trace.

    With tool spans a failing tool's error is the exception MLflow recorded, without them the calls and results come
    from the autologged messages.
    """
    out = tmp_path / "mlflow.jsonl"
    with ScriptedOpenAIServer(SCRIPT) as model, FakeMlflowServer(tmp_path / "artifacts") as tracking:
        env = {
            **os.environ,
            "OPENAI_BASE_URL": model.openai_url,
            "OPENAI_API_KEY": "sk-test",
            "MLFLOW_TRACKING_URI": tracking.base,
            "MLFLOW_DISABLE_TELEMETRY": "true",  # MLflow's usage reports would leave the machine
        }
        flags = ["--traced-tools"] if traced_tools else []
        command = [
            sys.executable,
            str(AGENTS / "mlflow_weather_agent.py"),
            str(out),
            *flags,
            f"weather-paris={QUESTION}",
        ]
        subprocess.run(command, env=env, check=True, timeout=120, capture_output=True)
    (trace,) = load_traces([str(out)])
    assert trace.metadata["source_format"] == "mlflow"
    tools = TOOLS if traced_tools else [TOOLS[0], (*TOOLS[1][:2], {"error": TOOLS[1][3]}, TOOLS[1][3])]
    assert _facts(trace) == ("weather-paris", QUESTION, ANSWER, tools, LLM, "completed")
    assert trace.metadata["agents"] == ["weather_agent"] and trace.total_cost_usd > 0
    assert [(d.id, d.text) for d in trace.retrieved_context] == [("notes/paris.md", "Paris is mild in spring.")]


LITELLM = ROOT / "tests" / "fixtures" / "traces" / "litellm"  # weather.jsonl, written by generate.py there


def _litellm_facts(path: Path) -> list:
    return [(*_facts(t), t.metadata.get("error", "")[:24]) for t in load_traces([str(path)])]


def test_litellm_logging_payloads_give_one_trace_per_run():
    """Runs grouped by litellm_trace_id, then by conversation; the call that failed fails its run."""
    traces = load_traces([str(LITELLM / "weather.jsonl")])
    assert {t.metadata["source_format"] for t in traces} == {"litellm"}
    paris = ("weather-paris", QUESTION, ANSWER, [TOOLS[0], (*TOOLS[1][:2], {"error": TOOLS[1][3]}, TOOLS[1][3])], LLM)
    assert _litellm_facts(LITELLM / "weather.jsonl") == [
        (*paris, "completed", ""),
        (*paris, "completed", ""),
        ("weather-mars", "What's the weather on Mars?", "", [], [], "failed", "litellm.BadRequestError:"),
    ]
    assert [c.provider for c in traces[0].llm_calls] == ["openai", "openai"]
    assert all(c.duration_ms > 0 for c in traces[0].llm_calls) and traces[0].total_cost_usd > 0


def test_langfuse_spans_of_a_real_agent(tmp_path):
    """The langfuse SDK's own spans (langfuse.observation.*, no gen_ai.*).

    The OpenAI wrapper's generations, the @observe tools (the failing one with its error status) and agent, two runs
    told apart by their trace.
    """
    out = tmp_path / "langfuse.jsonl"
    with ScriptedOpenAIServer(SCRIPT) as model:
        env = {**os.environ, "OPENAI_BASE_URL": model.openai_url, "OPENAI_API_KEY": "sk-test"}
        runs = [f"weather-paris={QUESTION}", f"weather-paris-again={QUESTION}"]
        command = [sys.executable, str(AGENTS / "langfuse_weather_agent.py"), str(out), *runs]
        subprocess.run(command, env=env, check=True, timeout=120, capture_output=True)
    traces = load_traces([str(out)])
    assert {t.metadata["source_format"] for t in traces} == {"langfuse"}
    assert [_facts(t) for t in traces] == [
        (query_id, QUESTION, ANSWER, TOOLS, LLM, "completed") for query_id in ("weather-paris", "weather-paris-again")
    ]
    assert all(t.metadata["agents"] == ["weather_agent"] and t.total_cost_usd > 0 for t in traces)


GOOGLE_ADK = ROOT / "tests" / "fixtures" / "traces" / "google_adk"  # weather.jsonl, written by generate.py


def _adk_facts(path: Path) -> list:
    return [(*_facts(t), t.metadata["agents"], [c.agent for c in t.tool_calls]) for t in load_traces([str(path)])]


def test_google_adk_spans_are_read_as_otel_genai():
    """ADK's own GenAI spans.

    generate_content calls (Gemini usage with cached tokens), one execute_tool span per call (its '(merged tools)' span
    for the parallel pair is no call), the error the tool returned.
    """
    gemini = [("gemini-2.0-flash", *call[1:]) for call in LLM]
    tools = [TOOLS[0], (*TOOLS[1][:2], {"error": TOOLS[1][3]}, "TOOL_ERROR")]
    assert _adk_facts(GOOGLE_ADK / "weather.jsonl") == [
        ("weather-paris", QUESTION, ANSWER, tools, gemini, "completed", ["weather_agent"], ["weather_agent"] * 2)
    ]
    (trace,) = load_traces([str(GOOGLE_ADK / "weather.jsonl")])
    assert trace.metadata["source_format"] == "otel-genai" and trace.total_cost_usd > 0


CREWAI = ROOT / "tests" / "fixtures" / "traces" / "crewai"  # weather.jsonl, written by generate.py there


def _crewai_facts(path: Path) -> list:
    return [
        (*_facts(t)[:4], [c.model for c in t.llm_calls], t.metadata["agents"], "final_answer_inferred" in t.metadata)
        for t in load_traces([str(path)])
    ]


def test_crewai_spans_are_read_as_openinference():
    """CrewAI's OpenInference instrumentor beside its OpenAI instrumentor: errors, names and the answer.

    The OpenInference instrumentor gives agent, tool and crew spans, the OpenAI instrumentor the model calls: the
    failing tool's error, the agent's role as its name, the crew's raw output as the answer.
    """
    assert _crewai_facts(CREWAI / "weather.jsonl") == [
        (
            "weather-paris",
            _crewai_query(),
            ANSWER,
            [TOOLS[0], TOOLS[1]],
            ["gpt-4o-mini"] * 2,
            ["Weather reporter"],
            False,
        )
    ]
    (trace,) = load_traces([str(CREWAI / "weather.jsonl")])
    assert trace.metadata["source_format"] == "openinference" and trace.total_cost_usd > 0


def _crewai_query() -> str:
    """CrewAI's own prompt for the task (the first user message: the crew's spans carry no plain question)."""
    (trace,) = load_traces([str(CREWAI / "weather.jsonl")])
    assert QUESTION in trace.query
    return trace.query


def test_parallel_tool_spans_without_call_ids_keep_the_order_the_model_issued_them(tmp_path):
    """CrewAI runs the two calls at once and its tool spans name no tool-call id.

    Whichever starts first, the calls are in the order of the model's output (matched by tool name and arguments).
    """
    spans = [json.loads(line) for line in (CREWAI / "weather.jsonl").read_text().splitlines()]
    weather, forecast = (
        next(s for s in spans if s["name"] == f"{name}.run") for name in ("get_weather", "get_forecast")
    )
    weather["start_time"], forecast["start_time"] = forecast["start_time"], weather["start_time"]
    assert forecast["start_time"] < weather["start_time"]
    path = tmp_path / "swapped.jsonl"
    path.write_text("".join(json.dumps(s) + "\n" for s in spans))
    (trace,) = load_traces([str(path)])
    assert trace.tool_names == ["get_weather", "get_forecast"]


def test_pydantic_ai_spans_of_a_real_agent(tmp_path):
    """Pydantic AI (2.68) with its Instrumentation capability writes GenAI spans the OTel GenAI reader reads.

    Its chat spans (model calls), execute_tool spans (a tool that returns its error is a call that succeeded, as
    Pydantic AI records it) and invoke_agent span.
    """
    path = tmp_path / "pydantic_ai.jsonl"
    with path.open("w") as out, ScriptedOpenAIServer(SCRIPT) as server:
        agent, provider = pydantic_ai_weather_agent(server.openai_url, out)
        agent.tool_plain(lambda city, days: {"error": TOOLS[1][3]}, name="get_forecast")
        agent.run_sync(QUESTION)
        provider.shutdown()
    (trace,) = load_traces([str(path)])
    tools = [TOOLS[0], (*TOOLS[1][:2], {"error": TOOLS[1][3]}, None)]
    assert _facts(trace) == (None, QUESTION, ANSWER, tools, LLM, "completed")
    assert trace.metadata["source_format"] == "otel-genai" and trace.metadata["agents"] == ["weather_agent"]


@pytest.mark.parametrize(
    "library, folder, facts, why",
    [
        ("litellm", LITELLM, _litellm_facts, "litellm is not a test dependency (about 360 MB)"),
        ("google.adk", GOOGLE_ADK, _adk_facts, "google-adk pins opentelemetry-sdk <= 1.44"),
        ("crewai", CREWAI, _crewai_facts, "crewai is about 1 GB and brings openai 2.x"),
    ],
    ids=["litellm", "google-adk", "crewai"],
)
def test_a_committed_recording_is_what_the_library_writes_today(tmp_path, library, folder, facts, why):
    """The library's generator makes the recording again, and the facts read from it equal the committed one's.

    Where the library is installed (an environment of its own: it cannot share the test environment); ids and times
    differ run to run.
    """
    pytest.importorskip(library, reason=f"{why}: install it beside AgentCI to regenerate {folder.name}")
    out = tmp_path / "weather.jsonl"
    command = [sys.executable, str(folder / "generate.py"), str(out)]
    subprocess.run(command, check=True, timeout=300, capture_output=True)
    assert facts(out) == facts(folder / "weather.jsonl")
