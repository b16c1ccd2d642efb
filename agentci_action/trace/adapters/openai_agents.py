"""OpenAI Agents SDK trace export.

`{"object": "trace"}` and `{"object": "trace.span"}` records (JSON Lines, or the exporter's `{"data": [...]}` batch), as
`Trace.export()` / `Span.export()` give them.

Spans are grouped by `trace_id` and re-sorted by `started_at` (processors see them in end order). By
`span_data.type`:
- agent → an agent (`name`); nested agent spans (agents used as tools) keep their own name on their tool
  calls and their model calls are counted once.
- generation → an LLM call: `model`, `usage.input_tokens` / `output_tokens` (Chat Completions names
  accepted too); its `output` messages give the text and the tool calls it issued.
- response → an LLM call from `usage`; when the exporter also writes `response` (the Response object),
  its `model`, `created_at` and output items are read too; its `file_search_call` results are the
  retrieved context (`file_id`, `text`, `score`). Without a model the call's cost stays unknown. When it also
  writes `input` (the span's input items, which `Span.export()` leaves out) and the Response keeps its
  `instructions` and `tools`, the call has its input breakdown: the request those make (trace/input_parts.py).
  A generation span (Chat Completions) has none: it records the messages sent but not the tool definitions.
- function → a tool call (`name`, `input` and `output` JSON-parsed); the span's `error.message` marks it
  failed. Function spans carry no call id: each is linked to a call issued by the latest model call started
  before it, with the same name and arguments equal to the span's input (JSON compared parsed), else to the
  earliest unclaimed call of the same name; so parallel calls keep the order the model issued them, even
  several calls of one tool that finish or start in another order.
- handoff → a handoff `from_agent` → `to_agent`, and a tool call: the SDK runs no function span for a handoff,
  so the `transfer_to_*` call the model issued for that agent is taken from its output (tool checks see it).
  A run without function spans takes its tool calls from the model output, `transfer_to_*` calls among them.
- guardrail → `metadata.guardrails_triggered` lists the names of those that fired.
- custom span with `data.final_output` → the final answer; else the last model text (inferred).
Task status (`metadata.status`, read by the agent checks): failed when a span of the run itself records an
error, e.g. max turns exceeded or a guardrail tripwire: a root span, an agent span, or the custom `task` /
`turn` spans (`data.sdk_span_type`) with which SDK 0.24 wraps a run and each turn (0.3 exports have agent
spans as roots and no such spans), else completed. Tool errors sit on function spans and do not fail the task. No time to
first token: the export does not record it.
Matching: the trace's `metadata.agentci.query_id` / `agentci.query`, else the first user input of the
first model call. Sessions: the traces with one `group_id` (`RunConfig(group_id=session.session_id)` beside a
session) are the turns of one conversation, each trace a turn, its message the last user input of its first model
call (the session sends the conversation so far before it; adapters/_sessions.py). Dropped: transcription, speech and MCP listing spans, custom span data.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agentci_action._util.errors import Problem, TraceError
from agentci_action.trace.adapters._assembly import SpanView, ViewOf, from_spans
from agentci_action.trace.adapters._conventions import (
    build_trace,
    convert_each,
    maybe_json,
    parse_time,
    query_key,
    text_of,
)
from agentci_action.trace.adapters._sessions import conversations
from agentci_action.trace.adapters.openai_chat import openai_usage, unix_time
from agentci_action.trace.adapters.openai_responses import file_search_documents, request_breakdown
from agentci_action.trace.adapters.spans import Span, by_trace, first_line

if TYPE_CHECKING:
    from agentci_action.trace.canonical import Trace
    from agentci_action.trace.json_records import Record

NAME = "openai-agents"
CONTENT_SWITCH = (
    "set OPENAI_AGENTS_TRACE_INCLUDE_SENSITIVE_DATA=true (or RunConfig(trace_include_sensitive_data=True)) and keep "
    "each response span's `response` as the README's exporter does"
)
# SDK 0.24+ wraps a run and each of its turns in custom spans; errors such as a guardrail tripwire land there.
RUN_SPANS = ("task", "turn")


def _items(records: list[Record]) -> list[tuple[Any, int]]:
    """(item, line) of every exported trace or span: a record's `data` batch, else the record itself."""
    found: list[tuple[Any, int]] = []
    for record in records:
        value = record.value
        data = value.get("data") if isinstance(value, dict) else None
        batch = data if isinstance(data, list) else [value]
        found.extend((item, record.line) for item in batch)
    return found


def detect(records: list[Record]) -> bool:
    items = _items(records)
    return bool(items) and all(isinstance(i, dict) and i.get("object") in ("trace", "trace.span") for i, _ in items)


def _output_calls(data: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
    """(text, [{id, name, arguments}]) of a generation's output messages or a response's output items."""
    texts, calls = [], []
    output = data.get("output") or ((data.get("response") or {}).get("output")) or []
    for item in output if isinstance(output, list) else []:
        if not isinstance(item, dict):
            continue
        if item.get("type") == "function_call":
            calls.append(
                {"id": item.get("call_id"), "name": item.get("name"), "arguments": maybe_json(item.get("arguments"))}
            )
        elif item.get("type") == "message" or item.get("role") == "assistant":
            texts.append(text_of(item.get("content")))
            calls.extend(
                {
                    "id": c.get("id"),
                    "name": (c.get("function") or {}).get("name"),
                    "arguments": maybe_json((c.get("function") or {}).get("arguments")),
                }
                for c in item.get("tool_calls") or []
            )
    return "".join(texts), calls


def _response_request(data: dict[str, Any]) -> dict[str, Any] | None:
    """A response span's input breakdown, from the input items it sent and the Response's instructions and tools.

    None when the export keeps neither the input nor both of those (a Response that echoes none of them was trimmed by
    the exporter, and a split without them would give their tokens to the other parts).
    """
    response = data.get("response") or {}
    if data.get("input") is None or not {"instructions", "tools"} <= response.keys():
        return None
    request = {key: response.get(key) for key in ("model", "instructions", "tools", "previous_response_id")}
    return request_breakdown({**request, "conversation": response.get("conversation"), "input": data["input"]})


def _user_texts(data: dict[str, Any]) -> list[str]:
    """The texts of the user messages a model call was sent, in order."""
    inputs = data.get("input")
    if isinstance(inputs, str):
        return [inputs]
    return [text_of(m.get("content")) for m in inputs or [] if isinstance(m, dict) and m.get("role") == "user"]


def _claim(calls: list[dict[str, Any]], functions: list[Span], links: dict[str, str]) -> None:
    """Link one model call's function spans to the calls it issued.

    Same name and equal arguments first, then the remaining spans (in start order) to the earliest unclaimed call of the
    same name.
    """
    free = list(calls)
    for exact in (True, False):
        for span in [f for f in functions if f.span_id not in links]:
            data = span.attributes
            match = next(
                (
                    c
                    for c in free
                    if c["name"] == data.get("name") and (not exact or c["arguments"] == maybe_json(data.get("input")))
                ),
                None,
            )
            if match:
                free.remove(match)
                links[span.span_id] = match["key"]


def _link_functions(spans: list[Span]) -> dict[str, str]:
    """span id → a synthetic call id, linking each function span to a call of its model call.

    The model call: the latest that started before it (see `_claim`).
    """
    links: dict[str, str] = {}
    windows: list[tuple[list[dict[str, Any]], list[Span]]] = [([], [])]
    for span in spans:
        data = span.attributes
        if data.get("type") in ("generation", "response"):
            _, calls = _output_calls(data)
            windows.append(([{**c, "key": f"{span.span_id}#{i}"} for i, c in enumerate(calls)], []))
        elif data.get("type") == "function":
            windows[-1][1].append(span)
    for calls, functions in windows:
        _claim(calls, functions, links)
    return links


def _view(links: dict[str, str], session: str | None) -> ViewOf:
    def view(span: Span) -> SpanView:
        found = _role_view(span)
        found.session = session
        return found

    def _role_view(span: Span) -> SpanView:
        data = span.attributes
        kind = data.get("type")
        if kind == "agent":
            return SpanView(kind="agent", agent=data.get("name"), fails_task=True)
        if kind == "custom" and (data.get("data") or {}).get("sdk_span_type") in RUN_SPANS:
            return SpanView(fails_task=True)
        if kind in ("generation", "response"):
            response = data.get("response") or {}
            usage = openai_usage(data.get("usage") or response.get("usage")) or {}
            text, calls = _output_calls(data)
            return SpanView(
                kind="llm",
                llm={
                    **usage,
                    "model": data.get("model") or response.get("model"),
                    **({"timestamp": unix_time(response["created_at"])} if response.get("created_at") else {}),
                    **({"input_breakdown": _response_request(data)} if kind == "response" else {}),
                },
                issued_calls=[f"{span.span_id}#{i}" for i in range(len(calls))],
                message_calls=[c for c in calls if c["name"]],
                has_content=bool(data.get("input") or text or calls),
                output_text=text,
                input_text=next(iter(_user_texts(data)), ""),
                latest_input=next(reversed(_user_texts(data)), ""),
                documents=file_search_documents(response.get("output") or []),
            )
        if kind == "function":
            return SpanView(
                kind="tool",
                tool_name=data.get("name", ""),
                arguments=maybe_json(data.get("input")),
                result=maybe_json(data.get("output")),
                call_id=links.get(span.span_id),
            )
        if kind == "handoff":
            return SpanView(kind="handoff", handoff_from=data.get("from_agent"), handoff_to=data.get("to_agent"))
        if kind == "custom" and isinstance(data.get("data"), dict) and "final_output" in data["data"]:
            return SpanView(output_text=text_of(data["data"]["final_output"]))
        return SpanView()

    return view


def _span(item: dict[str, Any], line: int, position: int) -> Span:
    error = item.get("error")
    return Span(
        trace_id=str(item.get("trace_id", "")),
        span_id=str(item.get("id", "")),
        parent_id=item.get("parent_id"),
        name=str((item.get("span_data") or {}).get("type", "")),
        start=parse_time(item.get("started_at")),
        end=parse_time(item.get("ended_at")),
        attributes=item.get("span_data") or {},
        error=(error.get("message") or "error") if isinstance(error, dict) else (str(error) if error else None),
        line=line,
        position=position,
    )


def convert(records: list[Record], file: str) -> list[Trace]:
    items = _items(records)
    problems = [
        Problem(file, line, 'expected an exported trace or span ({"object": "trace" | "trace.span", ...})')
        for i, line in items
        if not isinstance(i, dict) or i.get("object") not in ("trace", "trace.span")
    ]
    if problems:
        raise TraceError(problems)
    heads: dict[str | None, tuple[dict[str, Any], int]] = {
        i.get("id"): (i, line) for i, line in items if i["object"] == "trace"
    }
    spans = [_span(i, line, n) for n, (i, line) in enumerate(items) if i["object"] == "trace.span"]

    def one(group: list[Span]) -> Trace:
        head, head_line = heads.get(group[0].trace_id) or ({}, None)
        session = head.get("group_id") or None
        fields, inferred = from_spans(group, _view(_link_functions(group), session), content_switch=CONTENT_SWITCH)
        final = [
            s
            for s in group
            if s.attributes.get("type") == "custom" and "final_output" in (s.attributes.get("data") or {})
        ]
        if final:
            fields["final_answer"], inferred = text_of(final[-1].attributes["data"]["final_output"]), False
        fields.update(query_key(head.get("metadata")))
        guardrails = [
            s.attributes.get("name")
            for s in group
            if s.attributes.get("type") == "guardrail" and s.attributes.get("triggered")
        ]
        fields["metadata"].update(
            {"workflow_name": head.get("workflow_name"), **({"guardrails_triggered": guardrails} if guardrails else {})}
        )
        return build_trace(fields, file, head_line or first_line(group), NAME, inferred)

    return conversations(convert_each(by_trace(spans), file, NAME, one, first_line))
