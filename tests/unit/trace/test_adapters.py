"""Framework adapters.

One support run (triage hands off to billing; two parallel tool calls, one failing; cached input; a retrieval) recorded
in every format under tests/fixtures/traces/, read into the same canonical trace and evaluated to the same layer
results.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from helpers import ROOT, run_cli

from agentci_action._util.errors import TraceError
from agentci_action.engine.evaluate_spec import evaluate_spec
from agentci_action.spec.loader import load_spec
from agentci_action.spec.trace_formats import TRACE_FORMATS
from agentci_action.trace.load import load_traces

FIXTURES = ROOT / "tests" / "fixtures" / "traces"
QUERY = "My order 1042 arrived damaged. Can I get a refund?"
ANSWER = "I'm sorry the item arrived damaged. A full refund of $59.00 for order 1042 has been approved (refund R-88)."
FILES = {
    "otel-genai": "otel_genai.jsonl",
    "openinference": "openinference.jsonl",
    "openai-agents": "openai_agents.jsonl",
    "openai-chat": "openai_chat.json",
    "openai-responses": "openai_responses.json",
    "anthropic": "anthropic.json",
    "langsmith": "langsmith.jsonl",
    "langgraph": "langgraph.json",
}
WITH_RETRIEVAL = set(FILES) - {"openai-chat"}  # Chat Completions has no way to say what was retrieved
WITH_SCORES = WITH_RETRIEVAL - {"anthropic"}  # Anthropic search_result blocks carry no score
WITH_AGENT_NAMES = set(FILES) - {"openai-responses"}  # the Responses API names no agent
WITH_TIMING = {"otel-genai", "openinference", "openai-agents", "langsmith"}


def refund_trace(fmt: str, **kwargs):
    traces = load_traces([str(FIXTURES / FILES[fmt])], **kwargs)
    return next(t for t in traces if t.id == "refund-damaged-order")


def test_every_adapter_has_a_fixture():
    # The Vercel AI SDK has no agents, handoffs or retrieval spans to write this run in: its reader is tested on
    # the SDK's own recorded spans (tests/unit/trace/test_real_traces.py). MLflow, LiteLLM and Langfuse are read only from
    # what the real libraries write (tests/e2e/test_framework_readers.py), never from records written by hand.
    assert set(FILES) == set(TRACE_FORMATS) - {"canonical", "vercel-ai", "mlflow", "litellm", "langfuse"}


@pytest.mark.parametrize("fmt", sorted(FILES))
def test_fixture_is_detected_and_read_into_the_canonical_run(fmt):
    trace = refund_trace(fmt)
    assert trace.metadata["source_format"] == fmt
    assert trace.query == QUERY
    assert trace.final_answer == ANSWER
    # The model issued lookup_order before check_warranty; in the span fixtures check_warranty starts first.
    # transfer_to_billing is a tool call in every format, whatever else it is read as (tool checks see it).
    assert trace.tool_names == ["lookup_order", "check_warranty", "transfer_to_billing", "issue_refund"]
    assert [bool(c.error) for c in trace.tool_calls] == [False, True, False, False]
    assert "timed out" in trace.tool_calls[1].error
    assert trace.tool_calls[0].result == {"order_id": 1042, "status": "delivered", "total": 59.0}
    assert trace.tool_calls[3].arguments == {"order_id": 1042, "amount": 59.0}
    # A handoff where the framework marks it (a handoff span, the agent the spans or messages name), never from a
    # call's name: the Responses API names no agent, so its run has none.
    assert [h.to for h in trace.handoffs] == (["billing"] if fmt in WITH_AGENT_NAMES else [])
    assert [c.input_tokens for c in trace.llm_calls] == [820, 1010, 1400, 1520]
    assert [c.cached_input_tokens for c in trace.llm_calls] == [0, 768, 1024, 1280]
    assert trace.total_llm_calls == 4 and trace.total_tokens == 4877
    assert trace.total_cost_usd is not None and trace.total_cost_usd > 0
    if fmt in WITH_AGENT_NAMES:
        assert [c.agent for c in trace.tool_calls] == ["triage", "triage", "triage", "billing"]
        assert trace.handoffs[0].from_agent == "triage"
    if fmt in WITH_RETRIEVAL:
        assert [(d.id, d.score) for d in trace.retrieved_context] == [
            ("policy-7", 0.91 if fmt in WITH_SCORES else None)
        ]
        assert trace.retrieved_context[0].text == "Damaged items are refunded in full within 30 days of delivery."
    else:
        assert trace.retrieved_context == []
    assert (trace.total_duration_ms == pytest.approx(5000.0)) if fmt in WITH_TIMING else trace.total_duration_ms is None


@pytest.mark.parametrize("fmt", sorted(FILES))
def test_naming_the_format_gives_the_same_trace_as_detecting_it(fmt):
    assert refund_trace(fmt, trace_format=fmt).model_dump() == refund_trace(fmt).model_dump()


def test_an_inferred_final_answer_is_marked():
    assert refund_trace("openai-chat").metadata["final_answer_inferred"] is True
    assert "final_answer_inferred" not in refund_trace("otel-genai").metadata  # the billing agent span states it
    assert "final_answer_inferred" not in refund_trace("openai-agents").metadata  # a final_output custom span


def test_anthropic_total_input_adds_cache_creation_and_cache_reads():
    calls = refund_trace("anthropic").llm_calls
    # input_tokens + cache_creation_input_tokens + cache_read_input_tokens, from the fixture's usage blocks
    assert [(c.input_tokens, c.cache_write_input_tokens, c.cached_input_tokens) for c in calls] == [
        (52 + 768 + 0, 768, 0),
        (10 + 232 + 768, 232, 768),
        (16 + 360 + 1024, 360, 1024),
        (20 + 220 + 1280, 220, 1280),
    ]


def test_one_otel_file_holds_two_traces_grouped_by_trace_id():
    traces = load_traces([str(FIXTURES / FILES["otel-genai"])])
    assert [(t.id, t.metadata["trace_id"]) for t in traces] == [
        ("refund-damaged-order", "5b8efff798038103d269b633813fc60c"),
        ("return-window", "0af7651916cd43dd8448eb211c80319c"),
    ]
    assert traces[1].query == "How long do I have to return an item?" and traces[1].tool_calls == []
    assert traces[1].source.endswith(":3")


def _as_single_document_with_base64_ids(jsonl: Path) -> dict:
    """The OTLP file-exporter lines as one resourceSpans document, ids in base64, enums as numbers."""
    documents = [json.loads(line) for line in jsonl.read_text().splitlines()]
    merged = {"resourceSpans": [rs for d in documents for rs in d["resourceSpans"]]}
    for rs in merged["resourceSpans"]:
        for ss in rs["scopeSpans"]:
            for span in ss["spans"]:
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in span:
                        span[key] = base64.b64encode(bytes.fromhex(span[key])).decode()
                span["kind"] = 3 if span["kind"] == "SPAN_KIND_CLIENT" else span["kind"]
                if "status" in span:
                    span["status"]["code"] = 2
    return merged


def _snake_case(value):
    """OTLP JSON with protobuf field names kept (resource_spans, span_id, string_value, ...)."""
    if isinstance(value, list):
        return [_snake_case(v) for v in value]
    if not isinstance(value, dict):
        return value
    return {
        ("".join(f"_{c.lower()}" if c.isupper() else c for c in k) if k != "key" else k): _snake_case(v)
        for k, v in value.items()
    }


@pytest.mark.parametrize("variant", [lambda doc: doc, _snake_case], ids=["camelCase", "snake_case"])
def test_single_resource_spans_document_with_base64_ids_reads_the_same(tmp_path, variant):
    path = tmp_path / "spans.json"
    path.write_text(json.dumps(variant(_as_single_document_with_base64_ids(FIXTURES / FILES["otel-genai"])), indent=1))
    single = load_traces([str(path)])
    lines = load_traces([str(FIXTURES / FILES["otel-genai"])])
    assert [t.model_dump() for t in single] == [t.model_dump() for t in lines]


def _span(n, parent, op, start, end, **attrs):
    attributes = [{"key": "gen_ai.operation.name", "value": {"stringValue": op}}]
    attributes += [
        {"key": k, "value": {"intValue": str(v)} if isinstance(v, int) else {"stringValue": v}}
        for k, v in attrs.items()
    ]
    span = {
        "traceId": "ab" * 16,
        "spanId": f"{n:016x}",
        "name": op,
        "startTimeUnixNano": str(start * 10**6),
        "endTimeUnixNano": str(end * 10**6),
        "attributes": attributes,
    }
    if parent:
        span["parentSpanId"] = f"{parent:016x}"
    return span


def test_nested_sub_agent_keeps_its_name_and_nothing_is_counted_twice(tmp_path):
    """An agent used as a tool: its spans nest inside the caller's tool span; usage on agent spans is ignored."""
    spans = [
        _span(
            1,
            None,
            "invoke_agent",
            1,
            100,
            **{"gen_ai.agent.name": "planner", "agentci.query_id": "q1", "gen_ai.usage.input_tokens": 999},
        ),
        _span(
            2,
            1,
            "chat",
            1,
            10,
            **{
                "gen_ai.request.model": "gpt-4o-mini",
                "gen_ai.usage.input_tokens": 100,
                "gen_ai.usage.output_tokens": 10,
            },
        ),
        _span(3, 1, "execute_tool", 11, 90, **{"gen_ai.tool.name": "research"}),
        _span(4, 3, "invoke_agent", 12, 89, **{"gen_ai.agent.name": "researcher", "gen_ai.usage.input_tokens": 999}),
        _span(
            5,
            4,
            "chat",
            13,
            20,
            **{"gen_ai.request.model": "gpt-4o-mini", "gen_ai.usage.input_tokens": 50, "gen_ai.usage.output_tokens": 5},
        ),
        _span(6, 4, "execute_tool", 21, 30, **{"gen_ai.tool.name": "web_search"}),
    ]
    path = tmp_path / "nested.jsonl"
    path.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}) + "\n")
    (trace,) = load_traces([str(path)])
    assert [(c.name, c.agent) for c in trace.tool_calls] == [("research", "planner"), ("web_search", "researcher")]
    assert [c.input_tokens for c in trace.llm_calls] == [100, 50] and trace.total_tokens == 165
    assert trace.handoffs == []  # a nested agent is a sub-agent, not a handoff


def test_sequential_top_level_agents_without_transfer_tools_are_a_handoff(tmp_path):
    spans = [
        _span(1, None, "invoke_agent", 1, 10, **{"gen_ai.agent.name": "triage", "agentci.query": "hi"}),
        _span(2, None, "invoke_agent", 11, 20, **{"gen_ai.agent.name": "billing"}),
    ]
    path = tmp_path / "seq.jsonl"
    path.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}) + "\n")
    (trace,) = load_traces([str(path)])
    assert [(h.from_agent, h.to) for h in trace.handoffs] == [("triage", "billing")]


SPEC = """\
agent: support-bot
pricing:
  gpt-4o-mini-2024-07-18: {input: 0.15, output: 0.60, cached_input: 0.075}
queries:
  - id: refund-damaged-order
    query: "My order 1042 arrived damaged. Can I get a refund?"
    correctness:
      expected_in_answer: [refund, R-88]
      not_in_answer: [cannot]
    path:
      expected_tools: [lookup_order, check_warranty, transfer_to_billing, issue_refund]
      forbidden_tools: [delete_order]
      max_tool_calls: 5
      expected_handoff: billing
      min_sequence_similarity: 0.9
    cost:
      max_total_tokens: 4000
      max_llm_calls: 4
      max_cost_usd: 0.01
"""


def _layers(fmt: str, spec) -> dict:
    traces = [
        t for t in load_traces([str(FIXTURES / FILES[fmt])], pricing=spec.pricing) if t.id == "refund-damaged-order"
    ]
    (result,) = evaluate_spec(spec, traces).results
    return {name: result.layer(name).model_dump() for name in ("correctness", "path", "cost")}


@pytest.mark.parametrize(
    "group",
    [
        ["otel-genai", "openinference", "openai-agents", "langsmith"],  # span trees: timing recorded
        ["openai-chat", "langgraph"],  # conversations: no timing (the Responses API names no agent: no handoff)
    ],
)
def test_the_same_run_in_different_formats_gives_identical_layer_results(write, group):
    spec = load_spec(write("agentci_spec.yaml", SPEC))
    results = {fmt: _layers(fmt, spec) for fmt in group}
    first = results[group[0]]
    assert first["correctness"]["status"] == "pass" and first["path"]["status"] == "pass"
    assert first["cost"]["status"] == "warn"  # 4877 tokens > 4000
    assert first["cost"]["details"]["cost_usd"] == pytest.approx(
        (
            820 * 0.15
            + 40 * 0.6
            + 242 * 0.15
            + 768 * 0.075
            + 12 * 0.6
            + 376 * 0.15
            + 1024 * 0.075
            + 30 * 0.6
            + 240 * 0.15
            + 1280 * 0.075
            + 45 * 0.6
        )
        / 1e6
    )
    for fmt in group[1:]:
        assert results[fmt] == first, fmt


def test_truncated_json_lines_name_the_file_and_line(tmp_path):
    lines = (FIXTURES / FILES["otel-genai"]).read_text().splitlines()
    path = tmp_path / "cut.jsonl"
    path.write_text("\n".join([*lines[:2], lines[2][: len(lines[2]) // 2]]) + "\n")
    with pytest.raises(TraceError) as caught:
        load_traces([str(path)])
    (problem,) = caught.value.problems
    assert (problem.file, problem.line) == (str(path), 3) and "malformed JSON" in problem.message


def test_truncated_json_document_names_the_file_and_line(tmp_path):
    text = (FIXTURES / FILES["anthropic"]).read_text()
    path = tmp_path / "cut.json"
    path.write_text(text[: len(text) // 2])
    with pytest.raises(TraceError) as caught:
        load_traces([str(path)])
    (problem,) = caught.value.problems
    assert problem.file == str(path) and problem.line > 1 and "malformed JSON" in problem.message


def test_a_record_of_the_wrong_shape_names_its_line(tmp_path):
    run = json.loads((FIXTURES / FILES["anthropic"]).read_text())
    broken = json.loads(json.dumps(run))
    del broken["messages"][1]["content"][1]["name"]  # a tool_use block without its name
    path = tmp_path / "runs.jsonl"
    path.write_text(json.dumps(run) + "\n" + json.dumps(broken) + "\n")
    with pytest.raises(TraceError) as caught:
        load_traces([str(path)], trace_format="anthropic")
    (problem,) = caught.value.problems
    assert (problem.file, problem.line) == (str(path), 2) and "anthropic" in problem.message


def test_a_line_that_is_not_spans_names_its_line(tmp_path):
    lines = (FIXTURES / FILES["otel-genai"]).read_text().splitlines()
    path = tmp_path / "mixed.jsonl"
    path.write_text("\n".join([lines[0], json.dumps({"hello": "world"}), lines[1]]) + "\n")
    with pytest.raises(TraceError) as caught:
        load_traces([str(path)], trace_format="otel-genai")
    (problem,) = caught.value.problems
    assert (problem.file, problem.line) == (str(path), 2) and "resourceSpans" in problem.message


def test_a_run_without_a_query_says_so(tmp_path):
    path = tmp_path / "run.json"
    path.write_text(json.dumps({"messages": [{"role": "assistant", "content": "hi"}], "completions": []}))
    with pytest.raises(TraceError) as caught:
        load_traces([str(path)], trace_format="openai-chat")
    (problem,) = caught.value.problems
    assert problem.line == 1 and "needs `id` or `query`" in problem.message


def test_unknown_format_lists_the_known_ones(tmp_path):
    with pytest.raises(TraceError) as caught:
        load_traces([str(FIXTURES / FILES["langgraph"])], trace_format="langchain")
    assert all(name in str(caught.value) for name in FILES)


def test_the_cli_reads_a_framework_trace_with_or_without_the_format_named(write):
    spec = write("agentci_spec.yaml", SPEC)
    for extra in ([], ["--trace-format", "otel-genai"]):
        result = run_cli("test", "--spec", spec, "--traces", FIXTURES / FILES["otel-genai"], "--format", "json", *extra)
        assert result.returncode == 0, result.stderr
        (query,) = json.loads(result.stdout)["results"]
        assert (query["correctness"]["status"], query["path"]["status"], query["cost"]["status"]) == (
            "pass",
            "pass",
            "warn",
        )
    wrong = run_cli("test", "--spec", spec, "--traces", FIXTURES / FILES["otel-genai"], "--trace-format", "anthropic")
    assert wrong.returncode == 2 and "otel_genai.jsonl:1" in wrong.stderr


def _mutations(value, rng, count):
    """`count` copies of `value`, each with one randomly chosen key deleted or one value replaced by a wrong type."""
    paths = []

    def walk(node, path):
        if isinstance(node, dict):
            for key, child in node.items():
                paths.append((*path, key))
                walk(child, (*path, key))
        elif isinstance(node, list):
            for index, child in enumerate(node):
                paths.append((*path, index))
                walk(child, (*path, index))

    walk(value, ())
    for _ in range(count):
        copy = json.loads(json.dumps(value))
        *parents, last = rng.choice(paths)
        holder = copy
        for part in parents:
            holder = holder[part]
        if isinstance(holder, dict) and rng.random() < 0.5:
            del holder[last]
        else:
            holder[last] = rng.choice([None, 7, "x", [], {}])
        yield copy


@pytest.mark.parametrize("fmt", sorted(FILES))
def test_damaged_records_give_trace_errors_never_crashes(tmp_path, fmt):
    """120 single-field corruptions of each fixture: each loads, or fails with a TraceError naming the file."""
    import random

    source = FIXTURES / FILES[fmt]
    text = source.read_text()
    records = [json.loads(line) for line in text.splitlines()] if source.suffix == ".jsonl" else [json.loads(text)]
    rng = random.Random(fmt)
    path = tmp_path / source.name
    for n in range(120):
        index = rng.randrange(len(records))
        (damaged,) = _mutations(records[index], rng, 1)
        lines = [json.dumps(damaged if i == index else r) for i, r in enumerate(records)]
        path.write_text("\n".join(lines) + "\n")
        for named in (None, fmt):
            try:
                load_traces([str(path)], trace_format=named)
            except TraceError as exc:
                assert all(p.file == str(path) for p in exc.problems), (n, exc)


def test_a_file_that_is_just_a_message_list_is_one_run(tmp_path):
    chat = tmp_path / "chat.json"
    chat.write_text(
        json.dumps([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}], indent=1)
    )
    graph = tmp_path / "graph.json"
    graph.write_text(
        json.dumps([{"type": "human", "content": "hi"}, {"type": "ai", "content": "hello", "tool_calls": []}], indent=1)
    )
    for path, fmt in ((chat, "openai-chat"), (graph, "langgraph")):
        (trace,) = load_traces([str(path)])
        assert (trace.metadata["source_format"], trace.query, trace.final_answer) == (fmt, "hi", "hello")
        # no usage block: one LLM call whose cost is unknown, and the trace says why
        assert trace.total_llm_calls == 1 and trace.total_cost_usd is None and trace.metadata["cost_unknown"]


def test_a_cost_the_trace_states_is_kept_and_the_others_are_priced(tmp_path):
    lines = [json.loads(line) for line in (FIXTURES / FILES["openinference"]).read_text().splitlines()]
    first_llm = next(
        s for s in lines if s["attributes"].get("openinference.span.kind") == "LLM"
    )  # the first call: it ends first
    first_llm["attributes"]["llm.cost.total"] = 0.25
    path = tmp_path / "spans.jsonl"
    path.write_text("".join(json.dumps(s) + "\n" for s in lines))
    (stated,) = load_traces([str(path)])
    priced = refund_trace("openinference")
    assert stated.llm_calls[0].cost_usd == 0.25
    assert [c.cost_usd for c in stated.llm_calls[1:]] == [c.cost_usd for c in priced.llm_calls[1:]]
    assert stated.total_cost_usd == pytest.approx(0.25 + sum(c.cost_usd for c in priced.llm_calls[1:]))


def test_a_model_call_recorded_by_two_instrumentation_layers_counts_once_in_otel(tmp_path):
    """LangChain's instrumentor and the OpenAI SDK's both record one chat call: the inner span nests in the outer."""
    spans = [
        _span(1, None, "invoke_agent", 1, 100, **{"gen_ai.agent.name": "a", "agentci.query_id": "q"}),
        _span(
            2,
            1,
            "chat",
            2,
            50,
            **{
                "gen_ai.request.model": "gpt-4o-mini",
                "gen_ai.usage.input_tokens": 100,
                "gen_ai.usage.output_tokens": 10,
            },
        ),
        _span(
            3,
            2,
            "chat",
            3,
            49,
            **{
                "gen_ai.request.model": "gpt-4o-mini",
                "gen_ai.usage.input_tokens": 100,
                "gen_ai.usage.output_tokens": 10,
            },
        ),
        _span(
            4,
            1,
            "chat",
            60,
            90,
            **{"gen_ai.request.model": "gpt-4o-mini", "gen_ai.usage.input_tokens": 7, "gen_ai.usage.output_tokens": 3},
        ),
    ]
    path = tmp_path / "nested_llm.jsonl"
    path.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}) + "\n")
    (trace,) = load_traces([str(path)])
    assert trace.total_llm_calls == 2 and trace.total_tokens == 120
    assert [c.duration_ms for c in trace.llm_calls] == [
        pytest.approx(48.0),
        pytest.approx(30.0),
    ]  # the outer span's timing


def _oi_span(n, parent, kind, start, **attrs):
    """One OpenInference span as the OpenTelemetry Python SDK prints it."""
    return {
        "name": kind.lower(),
        "context": {"trace_id": "0x" + "cd" * 16, "span_id": f"0x{n:016x}"},
        "parent_id": f"0x{parent:016x}" if parent else None,
        "start_time": f"2026-05-01T10:00:{start:02d}Z",
        "end_time": f"2026-05-01T10:00:{start + 1:02d}Z",
        "attributes": {"openinference.span.kind": kind, **attrs},
    }


def test_a_model_call_recorded_by_two_instrumentation_layers_counts_once_in_openinference(tmp_path):
    """The outer (LangChain) LLM span carries the tool call it issued but no usage.

    The inner (OpenAI) one the usage: one call with the inner span's tokens, and the tool call still follows the model's
    order.
    """
    spans = [
        _oi_span(1, None, "AGENT", 0, **{"agent.name": "a", "input.value": "hi", "output.value": "done"}),
        _oi_span(
            2,
            1,
            "LLM",
            1,
            **{
                "llm.model_name": "gpt-4o-mini",
                "llm.output_messages.0.message.role": "assistant",
                "llm.output_messages.0.message.tool_calls.0.tool_call.id": "c1",
                "llm.output_messages.0.message.tool_calls.1.tool_call.id": "c2",
            },
        ),
        _oi_span(
            3,
            2,
            "LLM",
            2,
            **{"llm.model_name": "gpt-4o-mini", "llm.token_count.prompt": 100, "llm.token_count.completion": 10},
        ),
        _oi_span(4, 1, "TOOL", 5, **{"tool.name": "second", "tool.id": "c2"}),
        _oi_span(5, 1, "TOOL", 6, **{"tool.name": "first", "tool.id": "c1"}),
    ]
    path = tmp_path / "nested_llm.jsonl"
    path.write_text("".join(json.dumps(s) + "\n" for s in spans))
    (trace,) = load_traces([str(path)])
    assert trace.metadata["source_format"] == "openinference"
    assert trace.total_llm_calls == 1 and trace.total_tokens == 110
    assert trace.tool_names == ["first", "second"]


def _fail_otel_root(records):
    for record in records:
        for span in record["resourceSpans"][0]["scopeSpans"][0]["spans"]:
            if "parentSpanId" not in span:
                span["status"] = {"code": "STATUS_CODE_ERROR", "message": "agent crashed"}


def _fail_openinference_root(records):
    for span in records:
        if span["parent_id"] is None:
            span["status"] = {"status_code": "ERROR", "description": "agent crashed"}


def _fail_agents_root(records):
    for item in records:
        if item["object"] == "trace.span" and item["parent_id"] is None:
            item["error"] = {"message": "Max turns (10) exceeded", "data": None}


def _fail_langsmith_root(records):
    for run in records:
        if run["parent_run_id"] is None:
            run.update(status="error", error="GraphRecursionError: recursion limit reached")


def _fail_responses_last(records):
    records[0]["responses"][-1]["status"] = "incomplete"


FAIL_THE_TASK = {
    "otel-genai": _fail_otel_root,
    "openinference": _fail_openinference_root,
    "openai-agents": _fail_agents_root,
    "langsmith": _fail_langsmith_root,
    "openai-responses": _fail_responses_last,
}


@pytest.mark.parametrize("fmt", sorted(FAIL_THE_TASK))
def test_the_task_status_reaches_task_completion_and_error_recovery(tmp_path, fmt):
    """The fixture's run completed despite its failing tool; failing the run's root makes both checks fail."""
    from agentci_action.engine.checks import agent
    from agentci_action.spec.check_models import AgentChecks

    group = AgentChecks(task_completion=True, error_recovery=True)
    completed = {c.name: c.status.value for c in agent.evaluate(group, refund_trace(fmt))}
    assert completed == {"task_completion": "pass", "error_recovery": "pass"}

    source = FIXTURES / FILES[fmt]
    jsonl = source.suffix == ".jsonl"
    records = (
        [json.loads(line) for line in source.read_text().splitlines()] if jsonl else [json.loads(source.read_text())]
    )
    FAIL_THE_TASK[fmt](records)
    path = tmp_path / source.name
    path.write_text("".join(json.dumps(r) + "\n" for r in records) if jsonl else json.dumps(records[0]))
    (failed,) = [t for t in load_traces([str(path)]) if t.id == "refund-damaged-order"]
    assert {c.name: c.status.value for c in agent.evaluate(group, failed)} == {
        "task_completion": "fail",
        "error_recovery": "warn",
    }


def test_time_to_first_token_is_read_where_the_format_records_it(tmp_path):
    from agentci_action.engine.checks import performance
    from agentci_action.spec.check_models import PerformanceChecks

    runs = [json.loads(line) for line in (FIXTURES / FILES["langsmith"]).read_text().splitlines()]
    first_llm = min((r for r in runs if r["run_type"] == "llm"), key=lambda r: r["start_time"])
    first_llm["first_token_time"] = first_llm["start_time"][:-3] + str(int(first_llm["start_time"][-3:]) + 250).zfill(3)
    (tmp_path / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in runs))
    langsmith = next(t for t in load_traces([str(tmp_path / "runs.jsonl")]) if t.id == "refund-damaged-order")

    spans = [json.loads(line) for line in (FIXTURES / FILES["openinference"]).read_text().splitlines()]
    llm = next(s for s in spans if s["attributes"].get("openinference.span.kind") == "LLM")  # starts at 10:00:00.010
    llm["events"] = [{"name": "First Token Stream Event", "timestamp": "2026-05-01T10:00:00.310Z", "attributes": {}}]
    (tmp_path / "oi.jsonl").write_text("".join(json.dumps(s) + "\n" for s in spans))
    openinference = next(t for t in load_traces([str(tmp_path / "oi.jsonl")]) if t.id == "refund-damaged-order")

    otel = [_span(1, None, "chat", 0, 10, **{"gen_ai.request.model": "gpt-4o-mini", "agentci.query": "hi"})]
    otel[0]["attributes"].append({"key": "gen_ai.server.time_to_first_token", "value": {"doubleValue": 0.42}})
    (tmp_path / "otel.jsonl").write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": otel}]}]}) + "\n")
    (otel_trace,) = load_traces([str(tmp_path / "otel.jsonl")])

    assert next(c.ttft_ms for c in langsmith.llm_calls) == pytest.approx(250.0)
    assert sorted(c.ttft_ms for c in openinference.llm_calls if c.ttft_ms is not None) == [pytest.approx(300.0)]
    assert otel_trace.llm_calls[0].ttft_ms == pytest.approx(420.0)
    (check,) = performance.evaluate(PerformanceChecks(max_ttft_ms=280), langsmith)
    assert (check.name, check.status.value) == ("max_ttft_ms", "pass")
    (check,) = performance.evaluate(PerformanceChecks(max_ttft_ms=280), openinference)
    assert check.status.value == "warn"


def test_agents_sdk_calls_of_one_tool_keep_the_order_the_model_issued_them(tmp_path):
    """Function spans carry no call id: they are matched by name and equal arguments, then by name order."""

    def span(n, start, data, parent="span_root"):
        return {
            "object": "trace.span",
            "id": f"span_{n}",
            "trace_id": "trace_x",
            "parent_id": parent,
            "started_at": f"2026-05-01T10:00:00.{start:03d}+00:00",
            "ended_at": f"2026-05-01T10:00:00.{start + 40:03d}+00:00",
            "span_data": data,
            "error": None,
        }

    calls = [
        {"id": f"c{i}", "type": "function", "function": {"name": "lookup", "arguments": json.dumps({"id": i})}}
        for i in (1, 2, 3)
    ]
    records = [
        {"object": "trace", "id": "trace_x", "workflow_name": "w", "metadata": {"agentci.query_id": "q"}},
        span("root", 0, {"type": "agent", "name": "a"}, parent=None),
        span(
            1,
            10,
            {
                "type": "generation",
                "model": "gpt-4o-mini",
                "usage": {"input_tokens": 10, "output_tokens": 5},
                "input": [{"role": "user", "content": "hi"}],
                "output": [{"role": "assistant", "content": None, "tool_calls": calls}],
            },
        ),
        # started in another order than issued; the third span's input matches no call exactly (name order takes it)
        span(2, 105, {"type": "function", "name": "lookup", "input": '{"id":2}', "output": "two"}),
        span(3, 106, {"type": "function", "name": "lookup", "input": "id=3", "output": "three"}),
        span(4, 107, {"type": "function", "name": "lookup", "input": '{"id": 1}', "output": "one"}),
    ]
    path = tmp_path / "agents.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    (trace,) = load_traces([str(path)])
    assert [c.result for c in trace.tool_calls] == ["one", "two", "three"]


def test_otel_handoff_attributes_are_a_handoff_and_the_tool_call_the_span_names(tmp_path):
    """A handoff recorded by the contrib openai-agents instrumentation is a handoff, and the tool's call.

    The OpenTelemetry contrib openai-agents instrumentation records a handoff as gen_ai.handoff.from/to_agent on the
    span of the tool that made it: a handoff, and that tool's call (tool checks see it).
    """
    handoff = _span(
        4,
        2,
        "execute_tool",
        11,
        12,
        **{"gen_ai.tool.name": "transfer", "gen_ai.handoff.from_agent": "triage", "gen_ai.handoff.to_agent": "billing"},
    )
    spans = [
        _span(1, None, "workflow", 1, 100, **{"agentci.query_id": "q1"}),
        _span(2, 1, "invoke_agent", 2, 50, **{"gen_ai.agent.name": "triage"}),
        handoff,
        _span(5, 2, "invoke_agent", 13, 49, **{"gen_ai.agent.name": "billing"}),  # nested: no handoff of its own
    ]
    path = tmp_path / "handoff.jsonl"
    path.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}) + "\n")
    (trace,) = load_traces([str(path)])
    assert [(h.from_agent, h.to) for h in trace.handoffs] == [("triage", "billing")]
    assert [(c.name, c.agent) for c in trace.tool_calls] == [("transfer", "triage")]


def test_old_otlp_instrumentation_library_spans_are_detected_and_read_alike(tmp_path):
    """OTLP before 0.15 named scopeSpans `instrumentationLibrarySpans`: detection and reading walk the same way."""
    lines = (FIXTURES / FILES["otel-genai"]).read_text().splitlines()
    old = [json.loads(line) for line in lines]
    for document in old:
        for resource_spans in document["resourceSpans"]:
            resource_spans["instrumentationLibrarySpans"] = resource_spans.pop("scopeSpans")
    path = tmp_path / "old.jsonl"
    path.write_text("".join(json.dumps(d) + "\n" for d in old))
    detected = load_traces([str(path)])
    assert {t.metadata["source_format"] for t in detected} == {"otel-genai"}
    assert [t.model_dump() for t in detected] == [
        t.model_dump() for t in load_traces([str(FIXTURES / FILES["otel-genai"])])
    ]


@pytest.mark.parametrize("fmt", ["anthropic", "otel-genai"])
def test_a_number_too_large_for_a_count_names_file_and_line_with_exit_2(write, tmp_path, fmt):
    source = FIXTURES / FILES[fmt]
    text = source.read_text()
    needle = '"input_tokens": 52' if fmt == "anthropic" else '"intValue": "820"'
    assert needle in text
    path = tmp_path / source.name
    path.write_text(text.replace(needle, needle.split(":")[0] + ": 1e400", 1))
    result = run_cli("test", "--spec", write("agentci_spec.yaml", SPEC), "--traces", path)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert f"{path}:1: " in result.stderr and "format: a number out of range" in result.stderr


def test_a_langchain_retriever_tool_artifact_is_retrieved_context(tmp_path):
    """A retriever tool with response_format="content_and_artifact": its ToolMessage's artifact holds the Documents."""
    document = {
        "lc": 1,
        "type": "constructor",
        "id": ["langchain", "schema", "document", "Document"],
        "kwargs": {"page_content": "Returns within 30 days.", "metadata": {"source": "returns.md"}},
    }
    messages = [
        {"type": "human", "content": "Return window?"},
        {"type": "ai", "content": "", "tool_calls": [{"id": "t1", "name": "search_docs", "args": {"q": "return"}}]},
        {"type": "tool", "content": "Returns within 30 days.", "tool_call_id": "t1", "artifact": [document]},
        {"type": "ai", "content": "30 days.", "tool_calls": []},
    ]
    path = tmp_path / "graph.json"
    path.write_text(json.dumps({"id": "q", "messages": messages}))
    (trace,) = load_traces([str(path)])
    assert [(d.id, d.text, d.score) for d in trace.retrieved_context] == [
        ("returns.md", "Returns within 30 days.", None)
    ]
    assert trace.tool_names == ["search_docs"]
