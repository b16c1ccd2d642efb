"""Real framework output recorded by other projects (shared/fixtures/real-traces, see its SOURCES.md).

Every recording, format detected, gives the facts its data shows; and the defects real output exposed stay fixed.

The facts below were read off the recordings: tools in issue order with arguments and results, model calls
(model, input tokens including cache reads and writes, output tokens, cache reads, cache writes), handoffs,
task status (None where the format records none), final answer.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from helpers import ROOT

from agentci_action._util.errors import TraceError
from agentci_action.engine.evaluate_spec import evaluate_spec
from agentci_action.spec.loader import load_spec
from agentci_action.trace.load import load_traces


@dataclass
class Facts:
    key: str  # the trace's id, else its query
    tools: list = field(default_factory=list)  # (name, arguments, result, error)
    llm: list = field(default_factory=list)  # (model, input, output, cached input, cache-write input)
    handoffs: list = field(default_factory=list)  # (from, to)
    status: str | None = None
    answer: str = ""


# Facts several recordings share (the same recorded run, written by different libraries).
WEATHER_TOOLS = [
    ("get_current_weather", {"location": "Seattle, WA"}, "50 degrees and raining", None),
    ("get_current_weather", {"location": "San Francisco, CA"}, "70 degrees and sunny", None),
]
WEATHER_LLM = [("gpt-4o-mini-2024-07-18", 75, 51, 0, 0), ("gpt-4o-mini-2024-07-18", 99, 25, 0, 0)]
WEATHER_ANSWER = (
    "Today, the weather in Seattle is 50 degrees and raining, while in San Francisco, it's 70 degrees and sunny."
)
CAPITAL_PROMPT = "Use the registered tools and respond exactly as `Capital: <city>`."
CAPITAL_TOOLS = [("country_source", {}, "Japan", None), ("capital_lookup", {"country": "Japan"}, "Tokyo", None)]
CAPITAL_LLM = [
    ("claude-sonnet-4-5-20250929", 628, 50, 0, 0),
    ("claude-sonnet-4-5-20250929", 691, 53, 0, 0),
    ("claude-sonnet-4-5-20250929", 757, 6, 0, 0),
]
HANDOFF_PROMPT = "Generate a random number then, hand off to agent2."
HANDOFF_LLM = [("gpt-4o-2024-08-06", 0, 0, 0, 0), ("gpt-4o-2024-08-06", 89, 18, 0, 0)]
HANDOFF_ANSWER = "The random number generated is 4, and it's been handed off to agent2."
TOOL_ERROR_LLM = [("gpt-4o-2024-08-06", 244, 10, 0, 0), ("gpt-4o-2024-08-06", 283, 30, 0, 0)]
TOOL_ERROR_ANSWER = (
    "It seems there was an error when trying to call the tool. If you need help with something specific, feel "
    "free to let me know!"
)
TOOL_ERROR_RESULT = "An error occurred while running the tool. Please try again."


def weather(key: str, status: str | None, model: str = "gpt-4o-mini-2024-07-18") -> Facts:
    llm = [(model, *call[1:]) for call in WEATHER_LLM]
    return Facts(key=key, tools=WEATHER_TOOLS, llm=llm, status=status, answer=WEATHER_ANSWER)


def capital(key: str, status: str | None) -> Facts:
    return Facts(key=key, tools=CAPITAL_TOOLS, llm=CAPITAL_LLM, status=status, answer="Capital: Tokyo")


def handoff(key: str, random_number, transfer_arguments=None, transfer_result=None, marked: bool = True) -> Facts:
    """agent1 calls random_number, then hands off to agent2 through the SDK's transfer_to_agent2 tool.

    A tool call in every recording (with the arguments and result each recorded), and a handoff where the framework
    marks one (`marked`: a handoff span; the Responses API's log names no agent).
    """
    tools = [
        ("random_number", {}, random_number, None),
        ("transfer_to_agent2", transfer_arguments, transfer_result, None),
    ]
    handoffs = [("agent1", "agent2")] if marked else []
    return Facts(key=key, tools=tools, llm=HANDOFF_LLM, handoffs=handoffs, status="completed", answer=HANDOFF_ANSWER)


def guardrail_runs(suffix: str = "") -> list[Facts]:
    """A run the input guardrail lets through, then one it trips before any model call."""
    passed = [("gpt-4o-2024-08-06", 29, 9, 0, 0)]
    return [
        Facts(key=f"agents-guardrail-pass{suffix}", llm=passed, status="completed", answer="1 + 1 equals 2."),
        Facts(key=f"agents-guardrail-tripped{suffix}", status="failed"),
    ]


FACTS = {
    "anthropic/anth_oi_parallel_tools.jsonl": [
        Facts(
            key="What is the weather like right now in New York? Also what time is it there? Use necessary tools simultaneously.",
            tools=[
                ("get_weather", {"location": "New York, NY"}, None, None),
                ("get_time", {"timezone": "America/New_York"}, None, None),
            ],
            llm=[("claude-sonnet-4-6", 721, 112, 0, 0)],
            answer="Sure! Let me fetch the current weather and time in New York simultaneously!",
        ),
    ],
    "anthropic/anth_pai_cache.jsonl": [
        Facts(
            key="anth-pai-cache",
            llm=[
                ("claude-sonnet-4-5-20250929", 1114, 406, 1111, 0),
                ("claude-sonnet-4-5-20250929", 1532, 33, 1111, 418),
            ],
            answer="Python is a beginner-friendly, versatile programming language widely used for web development, data science, machine learning, automation, and scientific computing.",
        ),
    ],
    "anthropic/anth_pai_capital.jsonl": [capital("anth-pai-capital", None)],
    "langgraph/lg_otelc_weather.jsonl": [weather("lg-otelc-weather", None)],
    "langsmith/ls_otelc_weather.jsonl": [weather("ls-otelc-weather", "completed", model="gpt-4o-mini")],
    "openai-agents/agents_chat_completions.jsonl": [
        Facts(key="1+1?", llm=[("gpt-4o", 11, 8, 0, 0)], status="completed", answer="1 + 1 = 2"),
    ],
    "openai-agents/agents_guardrail.jsonl": guardrail_runs(),
    "openai-agents/agents_guardrail_sdk033.jsonl": guardrail_runs("-sdk033"),
    "openai-agents/agents_handoff.jsonl": [handoff("agents-handoff", "4", transfer_arguments={})],
    "openai-agents/agents_tool_exception.jsonl": [
        Facts(
            key="agents-tool-exception",
            tools=[("tool", {}, TOOL_ERROR_RESULT, "Error running tool (non-fatal)")],
            llm=TOOL_ERROR_LLM,
            status="completed",
            answer=TOOL_ERROR_ANSWER,
        ),
    ],
    "openai-chat/chat_agno_failing_tool.jsonl": [
        Facts(
            key="Search for Python tutorials",
            tools=[
                (
                    "unreliable_search",
                    {"query": "Python tutorials"},
                    "Search service unavailable for: Python tutorials",
                    None,
                )
            ],
            llm=[("gpt-4o-mini-2024-07-18", 47, 17, 0, 0), ("gpt-4o-mini-2024-07-18", 81, 261, 0, 0)],
            answer='I encountered an issue while trying to search for Python tutorials. However, I can provide a brief overview of where to find good Python tutorials:\n\n1. **Online Course Platforms**:\n   - **Coursera**: Offers courses from universities and organizations, often including hands-on projects.\n   - **edX**: Similar to Coursera, with many free courses available.\n\n2. **Interactive Learning Websites**:\n   - **Codecademy**: Provides interactive lessons for coding in Python.\n   - **freeCodeCamp**: A comprehensive platform with a full Python curriculum.\n\n3. **YouTube Channels**:\n   - **Corey Schafer**: Well-known for clear and concise Python tutorials.\n   - **Programming with Mosh**: Offers a variety of programming tutorials, including Python.\n\n4. **Official Documentation and Tutorials**:\n   - **Python.org**: The official Python website has an extensive range of tutorials and resources.\n\n5. **Books**:\n   - "Automate the Boring Stuff with Python" by Al Sweigart: Great for beginners.\n   - "Python Crash Course" by Eric Matthes: A fast-paced introduction to the language.\n\nIf you have a specific type of Python tutorial in mind or need information on a certain topic, let me know!',
        ),
    ],
    "openai-chat/chat_oi_cached_tokens.jsonl": [
        Facts(
            key="chat-oi-cached",
            llm=[("gpt-4o-mini-2024-07-18", 1370, 155, 1280, 0)],
            answer="Upon the morning dew, the world doth wake,  \nAs sunlight spills its gold on leaves anew,  \nIn whispered tones where softest breezes break,  \nThe heart beats steady, swayed by nature's hue.\n\nBehold the skies, a canvas wide and clear,  \nEach cloud like dreams adrift in azure sea,  \nThe laughter of the brook, a song sincere,  \nInvites the soul to dance, to roam, to be.\n\nYet shadows creep as daylight starts to wane,  \nThe colors fade to twilight's gentle grace,  \nAnd in this transient beauty, we remain,  \nEmbracing every cherished time and place.\n\nFor life, though fleeting, gifts a storied stream,  \nIn every moment lies the heart's true dream.",
        ),
    ],
    "openai-chat/chat_otelc_weather.jsonl": [weather("chat-otelc-weather", None)],
    "openai-responses/resp_af_multiple_tools.jsonl": [
        Facts(
            key="resp-af-multiple-tools",
            tools=[
                ("get_temperature", {"location": "San Francisco"}, "72°F", None),
                ("get_humidity", {"location": "San Francisco"}, "65%", None),
            ],
            llm=[("gpt-4o-mini-2024-07-18", 149, 48, 0, 0), ("gpt-4o-mini-2024-07-18", 197, 26, 0, 0)],
            status="completed",
            answer="The weather in San Francisco is as follows:\n- **Temperature:** 72°F\n- **Humidity:** 65%",
        ),
    ],
    "openai-responses/resp_logfire_agents_handoff.jsonl": [
        handoff(HANDOFF_PROMPT, "4", transfer_arguments={}, transfer_result="{'assistant': 'agent2'}", marked=False)
    ],
    "openai-responses/resp_logfire_tool_exception.jsonl": [
        Facts(
            key="resp-tool-exception",
            tools=[("tool", {}, f"{TOOL_ERROR_RESULT} Error: Ouch, don't do that again!", None)],
            llm=TOOL_ERROR_LLM,
            status="completed",
            answer=TOOL_ERROR_ANSWER,
        ),
    ],
    "openai-responses/resp_otelc_tool_call_only.jsonl": [
        Facts(
            key="resp-otelc-tool-call",
            tools=[("get_current_weather", {"location": "Seattle, WA"}, None, None)],
            llm=[("gpt-4o-mini-2024-07-18", 72, 8, 0, 0)],
            status="completed",
        ),
    ],
    "openinference/oi_agents_handoff.jsonl": [handoff(HANDOFF_PROMPT, 4)],
    "openinference/oi_anthropic_capital.jsonl": [capital(CAPITAL_PROMPT, "completed")],
    "openinference/oi_openai_weather.jsonl": [weather("oi-openai-weather", "completed")],
    "otel-genai/otel_agents_v2_handoff.jsonl": [handoff(HANDOFF_PROMPT, "4")],
    "otel-genai/otel_openai_v2_weather.jsonl": [weather("otel-openai-v2-weather", "completed")],
    "otel-genai/otel_pydantic_ai_capital.jsonl": [capital(CAPITAL_PROMPT, "completed")],
}


def facts_of(trace) -> Facts:
    return Facts(
        key=trace.id or trace.query,
        tools=[(c.name, c.arguments, c.result, c.error) for c in trace.tool_calls],
        llm=[
            (c.model, c.input_tokens, c.output_tokens, c.cached_input_tokens, c.cache_write_input_tokens)
            for c in trace.llm_calls
        ],
        handoffs=[(h.from_agent, h.to) for h in trace.handoffs],
        status=trace.metadata.get("status"),
        answer=trace.final_answer,
    )


def test_the_table_covers_every_recording(real_traces):
    recordings = {str(p.relative_to(real_traces)) for p in real_traces.rglob("*.jsonl")}
    assert recordings == set(FACTS)


@pytest.mark.parametrize("name", sorted(FACTS))
def test_every_recording_gives_the_facts_its_data_shows(real_traces, name):
    traces = load_traces([str(real_traces / name)])
    assert {t.metadata["source_format"] for t in traces} == {name.split("/")[0]}  # detected, not named
    assert [facts_of(t) for t in traces] == FACTS[name]
    for trace in traces:
        assert trace.total_cost_usd is not None, trace.metadata.get("cost_unknown")
        assert "content_missing" not in trace.metadata


def _spec(write, body: str):
    return load_spec(str(write("agentci.yaml", body)))


def _run(spec, traces):
    return evaluate_spec(spec, traces)


@pytest.mark.parametrize("name", ["otel-genai/otel_openai_v2_weather.jsonl", "openinference/oi_openai_weather.jsonl"])
def test_tool_calls_carried_only_in_messages_meet_the_path_checks(real_traces, write, name):
    """No tool spans: the calls come from the messages, so a forbidden tool fails instead of passing blindly."""
    (trace,) = load_traces([str(real_traces / name)])
    spec = _spec(
        write,
        f"""
        agent: weather
        queries:
          - id: {trace.id}
            query: "What's the weather in Seattle and San Francisco today?"
            path:
              forbidden_tools: [get_current_weather]
        """,
    )
    (result,) = _run(spec, [trace]).results
    assert result.layer("path").status.value == "fail"


def test_a_call_in_both_a_tool_span_and_the_messages_counts_once(real_traces):
    """Pydantic AI records each call as an execute_tool span and as a tool_call part of the model's output."""
    path = real_traces / "otel-genai/otel_pydantic_ai_capital.jsonl"
    spans = [json.loads(line) for line in path.read_text().splitlines()]
    assert sum('"tool_call"' in s["attributes"].get("gen_ai.output.messages", "") for s in spans) == 2
    assert sum(s["attributes"].get("gen_ai.operation.name") == "execute_tool" for s in spans) == 2
    (trace,) = load_traces([str(path)])
    assert trace.tool_names == ["country_source", "capital_lookup"]


def _fresh_ids(line: str, copy: int) -> str:
    """The record with new trace and span ids for a second recording (each id's first hex digit rotated)."""
    return re.sub(r"(0x|trace_|span_)([0-9a-f])", lambda m: m.group(1) + f"{(int(m.group(2), 16) + copy) % 16:x}", line)


def _appended_twice(real_traces: Path, name: str, tmp_path: Path, edit=lambda record, copy: record) -> Path:
    """The recording written twice into one file, as a rerun of a recipe that appends gives (new ids)."""
    lines = (real_traces / name).read_text().splitlines()
    path = tmp_path / Path(name).name
    path.write_text(
        "".join(json.dumps(edit(json.loads(_fresh_ids(line, copy)), copy)) + "\n" for copy in (0, 1) for line in lines)
    )
    return path


def test_openinference_calls_of_one_query_are_one_run_and_a_rerun_is_another(real_traces, tmp_path, write):
    """OpenInference's using_metadata gives one trace per model call.

    One run; the second recording in an appended file starts a new conversation, so it is a second run, and the spec (no
    `runs:`) is warned.
    """
    (single,) = load_traces([str(real_traces / "openinference/oi_openai_weather.jsonl")])
    assert single.total_llm_calls == 2 and len(single.tool_calls) == 2
    traces = load_traces([str(_appended_twice(real_traces, "openinference/oi_openai_weather.jsonl", tmp_path))])
    assert [(t.id, t.total_llm_calls, len(t.tool_calls)) for t in traces] == [("oi-openai-weather", 2, 2)] * 2
    spec = _spec(write, 'agent: a\nqueries:\n  - id: oi-openai-weather\n    query: "q"\n')
    (warning,) = _run(spec, traces).warnings
    assert "query 'oi-openai-weather' has 2 traces but the spec asks for 1 run" in warning
    assert "fresh file" in warning and "runs: 2" in warning


def test_agentci_run_keeps_the_runs_of_one_query_apart(real_traces, tmp_path, write):
    def with_run(record, copy):
        metadata = json.loads(record["attributes"]["metadata"])
        record["attributes"]["metadata"] = json.dumps({**metadata, "agentci.run": copy})
        return record

    path = _appended_twice(real_traces, "openinference/oi_openai_weather.jsonl", tmp_path, with_run)
    traces = load_traces([str(path)])
    assert [(t.run, t.total_llm_calls) for t in traces] == [(0, 2), (1, 2)]
    spec = _spec(write, 'agent: a\nqueries:\n  - id: oi-openai-weather\n    query: "q"\n')
    assert _run(spec, traces).warnings == []  # distinct run indices: repeats recorded on purpose


def test_as_many_traces_as_the_spec_asks_for_is_not_warned(real_traces, tmp_path, write):
    traces = load_traces([str(_appended_twice(real_traces, "openai-agents/agents_handoff.jsonl", tmp_path))])
    spec = _spec(write, "agent: a\nqueries:\n  - id: agents-handoff\n    query: q\n    runs: 2\n")
    assert _run(spec, traces).warnings == []


def test_a_rerun_appended_to_an_agents_sdk_file_is_warned(real_traces, tmp_path, write):
    traces = load_traces([str(_appended_twice(real_traces, "openai-agents/agents_handoff.jsonl", tmp_path))])
    assert [t.id for t in traces] == ["agents-handoff"] * 2
    spec = _spec(write, "agent: a\nqueries:\n  - id: agents-handoff\n    query: q\n")
    (warning,) = _run(spec, traces).warnings
    assert warning.startswith(f"{spec.queries[0].file}:3: query 'agents-handoff' has 2 traces")


@pytest.mark.parametrize(
    "name",
    [
        "openai-agents/agents_handoff.jsonl",
        "openinference/oi_agents_handoff.jsonl",
        "otel-genai/otel_agents_v2_handoff.jsonl",
    ],
)
def test_an_agents_sdk_handoff_span_is_a_handoff_and_the_transfer_tool_call(real_traces, name):
    """The SDK runs no tool span for a handoff.

    Its transfer_to_agent2 call is read from the model's output (the OpenTelemetry contrib instrumentation records that
    output as text: then by the name the SDK gives it).
    """
    (trace,) = load_traces([str(real_traces / name)])
    assert trace.tool_names == ["random_number", "transfer_to_agent2"]
    assert [(h.from_agent, h.to) for h in trace.handoffs] == [("agent1", "agent2")]


@pytest.mark.parametrize(
    "name", ["openai-agents/agents_guardrail.jsonl", "openai-agents/agents_guardrail_sdk033.jsonl"]
)
def test_a_tripped_guardrail_fails_the_task_in_the_current_and_the_older_agents_sdk(real_traces, name):
    """SDK 0.24 puts the tripwire's error on a custom `turn` span under the `task` span; 0.3 on the root agent."""
    from agentci_action.engine.checks import agent
    from agentci_action.spec.check_models import AgentChecks

    passed, tripped = load_traces([str(real_traces / name)])
    group = AgentChecks(task_completion=True)
    assert [c.status.value for c in agent.evaluate(group, passed)] == ["pass"]
    assert [c.status.value for c in agent.evaluate(group, tripped)] == ["fail"]
    assert tripped.metadata["guardrails_triggered"] == ["zero_guardrail"]


@pytest.mark.parametrize(
    "name",
    [
        "openai-agents/agents_handoff.jsonl",
        "openinference/oi_agents_handoff.jsonl",
        "otel-genai/otel_agents_v2_handoff.jsonl",
        "openai-responses/resp_logfire_agents_handoff.jsonl",
    ],
)
def test_a_call_reporting_zero_tokens_costs_nothing_and_the_trace_cost_stays_known(real_traces, name):
    (trace,) = load_traces([str(real_traces / name)])
    assert (trace.llm_calls[0].input_tokens, trace.llm_calls[0].output_tokens) == (0, 0)
    assert trace.llm_calls[0].cost_usd == 0.0
    assert trace.total_cost_usd == pytest.approx(trace.llm_calls[1].cost_usd) and "cost_unknown" not in trace.metadata


def test_absent_token_counts_stay_unknown(write):
    path = write("t.json", '{"id": "q", "llm_calls": [{"model": "gpt-4o-2024-08-06"}]}')
    (trace,) = load_traces([str(path)])
    assert trace.total_cost_usd is None
    assert trace.metadata["cost_unknown"] == ["an LLM call to gpt-4o-2024-08-06 reports no token counts"]


def _without_content(record, copy):
    """What opentelemetry-instrumentation-openai-v2 writes with content capture off (its default).

    The same spans without the message attributes.
    """
    for key in ("gen_ai.input.messages", "gen_ai.output.messages"):
        record["attributes"].pop(key, None)
    return record


def _oi_without_content(record, copy):
    """What OpenInference writes with OPENINFERENCE_HIDE_INPUTS / _OUTPUTS set: no messages, no input/output."""
    record["attributes"] = {
        k: v
        for k, v in record["attributes"].items()
        if not k.startswith(("llm.input_messages", "llm.output_messages", "input.", "output."))
    }
    return record


@pytest.mark.parametrize(
    "name, edit, switch",
    [
        (
            "otel-genai/otel_openai_v2_weather.jsonl",
            _without_content,
            "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT",
        ),
        ("openinference/oi_openai_weather.jsonl", _oi_without_content, "OPENINFERENCE_HIDE_INPUTS"),
    ],
)
def test_spans_without_content_are_said_once_per_file_naming_the_switch(
    real_traces, tmp_path, write, name, edit, switch
):
    path = _appended_twice(real_traces, name, tmp_path, edit)
    traces = load_traces([str(path)])
    # Without recorded input a rerun of bare model calls cannot be told apart from the run before it: one run.
    assert len(traces) == (2 if name.startswith("otel") else 1)
    assert all(t.final_answer == "" and t.tool_calls == [] for t in traces)
    spec = _spec(write, f"agent: a\nqueries:\n  - id: {traces[0].id}\n    query: q\n    runs: {len(traces)}\n")
    (notice,) = _run(spec, traces).warnings
    assert notice.startswith(f"{path}: the spans record no message content") and switch in notice


VERCEL = "unsupported/vercel_ai_sdk_v6_spans.json"  # AI SDK 6 spans as the JavaScript SDK holds them


def test_vercel_ai_sdk_spans_are_detected_and_read(real_traces):
    """generateText (prompt, then messages), generateObject and streamText each one run of one model call.

    The embeddings call is no agent run. Each provider call span lost its parent link in the dump: it joins the call
    span of its function id that encloses it in time.
    """
    traces = load_traces([str(real_traces / VERCEL)])
    assert {t.metadata["source_format"] for t in traces} == {"vercel-ai"}
    assert [(t.query, t.final_answer[:20]) for t in traces] == [
        ("Write a haiku about programming.", "Lines of code align,"),
        ("What is 2 + 2?", "3 + 3 equals 6."),
        ("Generate a simple recipe for scrambled eggs.", '{"name":"Scrambled E'),
        ("Write a short poem about TypeScript.", "In code’s embrace, w"),
    ]
    assert [(c.model, c.provider, c.input_tokens, c.output_tokens) for t in traces for c in t.llm_calls] == [
        ("gpt-4o-mini-2024-07-18", "openai", 14, 20),
        ("gpt-4o-mini-2024-07-18", "openai", 50, 9),
        ("gpt-4o-mini-2024-07-18", "openai", 63, 156),
        ("gpt-4o-mini-2024-07-18", "openai", 15, 112),
    ]
    assert [t.llm_calls[0].ttft_ms for t in traces] == [None, None, None, pytest.approx(426.8535)]
    assert all(t.metadata["status"] == "completed" and t.total_cost_usd > 0 for t in traces)
    assert all("final_answer_inferred" not in t.metadata for t in traces)


def test_a_format_no_reader_knows_is_still_an_error_at_its_line(tmp_path):
    path = tmp_path / "spans.json"
    path.write_text('[\n  {"name": "work", "spanContext": {"traceId": "ab", "spanId": "cd"}, "attributes": {}}\n]\n')
    with pytest.raises(TraceError) as caught:
        load_traces([str(path)])
    (problem,) = caught.value.problems
    assert (problem.line, problem.message.split(";")[0]) == (2, "unrecognised trace format")


VERCEL_TOOLS = ROOT / "tests" / "fixtures" / "traces" / "vercel_ai"  # written by generate.mjs there


@pytest.mark.parametrize("name", ["nested.json", "flat.json"])
def test_vercel_ai_sdk_tool_calls_and_usage_of_a_two_step_run(name):
    """The real `ai` package (6.0.326) with its mock model.

    Two parallel tool calls (one throwing), then the answer; with a context manager the spans nest, without one every
    span is its own trace.
    """
    (trace,) = load_traces([str(VERCEL_TOOLS / name)])
    assert trace.metadata["source_format"] == "vercel-ai"
    assert (trace.id, trace.query, trace.final_answer) == (
        "weather-paris",
        "What's the weather in Paris?",
        "It is 18°C and sunny in Paris.",
    )
    assert [(c.name, c.arguments, c.result, c.error) for c in trace.tool_calls] == [
        ("getWeather", {"city": "Paris"}, {"city": "Paris", "celsius": 18}, None),
        ("getForecast", {"city": "Paris", "days": 2}, None, "forecast service unavailable"),
    ]
    assert [(c.model, c.input_tokens, c.output_tokens, c.cached_input_tokens) for c in trace.llm_calls] == [
        ("gpt-4o-mini-2024-07-18", 120, 40, 64),
        ("gpt-4o-mini-2024-07-18", 200, 12, 64),
    ]
    assert trace.metadata["status"] == "completed" and trace.total_cost_usd > 0


def test_a_langsmith_model_run_without_usage_leaves_the_cost_unknown(real_traces, tmp_path):
    """LangSmith's own records without the server's token totals and without usage_metadata: no count is known."""

    def without_usage(record, copy):
        for generation in ((record.get("outputs") or {}).get("generations") or [[]])[0]:
            generation.get("message", {}).get("kwargs", {}).pop("usage_metadata", None)
        return record

    lines = (real_traces / "langsmith/ls_otelc_weather.jsonl").read_text().splitlines()
    path = tmp_path / "ls.jsonl"
    path.write_text("".join(json.dumps(without_usage(json.loads(line), 0)) + "\n" for line in lines))
    (trace,) = load_traces([str(path)])
    assert trace.total_cost_usd is None and [c.cost_usd for c in trace.llm_calls] == [None, None]
