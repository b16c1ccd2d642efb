"""OpenTelemetry GenAI spans (semantic conventions `gen_ai.*`) in OTLP/JSON or the Python SDK's span JSON.

One file may hold many runs: spans are grouped into runs by trace id and `agentci.query_id` /
`agentci.run` (see `assemble.span_runs`: traces of bare model calls of one query are one run).
Span roles come from `gen_ai.operation.name` (inferred from the attributes when absent):
- chat / text_completion / generate_content → an LLM call. Model = `gen_ai.response.model`, else
  `gen_ai.request.model`. Tokens: `gen_ai.usage.input_tokens` / `output_tokens` (older
  `prompt_tokens` / `completion_tokens`), `gen_ai.usage.cache_read.input_tokens` and
  `cache_creation.input_tokens` (older `cache_read_input_tokens` / `cache_creation_input_tokens`; both
  included in input tokens, as the conventions say; Pydantic AI's `gen_ai.usage.details.cache_read_input_tokens`
  / `cache_creation_input_tokens` too), `gen_ai.usage.reasoning.output_tokens`. Time to first
  token: `gen_ai.server.time_to_first_token` (seconds, as the conventions' metric of that name and
  OpenLIT's span attribute) when an instrumentation records it on the span; the conventions define no
  span attribute for it, so it is usually absent.
- execute_tool → a tool call: `gen_ai.tool.name`, `gen_ai.tool.call.id`, `gen_ai.tool.call.arguments` /
  `result` (JSON strings parsed); a span with error status is a failed tool call (status message). Google
  ADK's `execute_tool (merged)` span (tool name `(merged tools)`: the joint response of parallel calls, each
  of which has its own span) is not a call.
- a handoff: `gen_ai.handoff.from_agent` → `gen_ai.handoff.to_agent` (the span the OpenTelemetry contrib
  openai-agents instrumentation writes for a handoff), whatever its operation; also a tool call when the span
  names its tool (`gen_ai.tool.name`).
- invoke_agent → an agent (`gen_ai.agent.name`), its output messages (Pydantic AI: `final_result`) the
  answer; retrieval → retrieved documents from `gen_ai.retrieval.documents` (a JSON list of {id, content, score}).
- Messages: `gen_ai.input.messages` / `gen_ai.output.messages` (parts: text, tool_call {id, name, arguments},
  tool_call_response {id, response}), else the older span events `gen_ai.user.message` / `gen_ai.choice` /
  `gen_ai.tool.message`, else the flattened `gen_ai.prompt.N.*` / `gen_ai.completion.N.*` attributes. A run
  without execute_tool spans (opentelemetry-instrumentation-openai-v2 alone) takes its tool calls from them.
- Input breakdown (trace/input_parts.py) of a model call whose input messages were captured: those messages,
  `gen_ai.system_instructions` and `gen_ai.tool.definitions` (JSON, where the instrumentation records them).
- Model calls with no message at all (content capture off, the contrib default) give `metadata.content_missing`
  naming the switch.
Task status (`metadata.status`, read by the agent checks): failed when a root span has error status,
else completed.
Matching to the spec: `agentci.query_id` (→ id) and `agentci.query` (→ query) on any span, else the root
agent's input, else the first user message. Sessions: the traces whose spans carry one `gen_ai.conversation.id`
(Pydantic AI keeps it across runs given the message history) are the turns of one conversation, each trace a turn,
its message the last user message of its first model call (adapters/_sessions.py). Dropped: embeddings spans (not model turns), other spans'
timing (only the root span's wall time is kept as the total duration), usage recorded on agent spans.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from agentci_action.trace.adapters._assembly import SpanView, last_user, traces_of_spans, user_messages
from agentci_action.trace.adapters._conventions import KEY_NAMES, known, maybe_json, text_of
from agentci_action.trace.adapters.spans import Span, read_spans, spans_in
from agentci_action.trace.input_parts import Message, as_text, breakdown, schemas

if TYPE_CHECKING:
    from agentci_action.trace.canonical import Trace
    from agentci_action.trace.json_records import Record

NAME = "otel-genai"
ADK_MERGED_TOOLS = "(merged tools)"  # Google ADK's span for the joint response of parallel calls it traced one by one
LLM_OPERATIONS = {"chat", "text_completion", "generate_content"}

CONTENT_SWITCH = (
    "set OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental and "
    "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=span_only for the OpenTelemetry contrib GenAI "
    "instrumentations (opentelemetry-instrumentation-openai-v2 and others), or your framework's own switch "
    "(Pydantic AI: InstrumentationSettings(include_content=True))"
)


def detect(records: list[Record]) -> bool:
    return any(any(str(k).startswith("gen_ai.") for k in attrs) for attrs in spans_in(records))


def _first(attrs: dict[str, Any], *names: str) -> Any:
    return next((attrs[n] for n in names if attrs.get(n) not in (None, "")), None)


def _int(attrs: dict[str, Any], *names: str) -> int | None:
    """The first count present among `names`; None when none is (an absent count, not a zero)."""
    value = _first(attrs, *names)
    return int(value) if value is not None else None


def _operation(span: Span) -> str:
    attrs = span.attributes
    if attrs.get("gen_ai.operation.name"):
        return str(attrs["gen_ai.operation.name"])
    if "gen_ai.tool.name" in attrs:
        return "execute_tool"
    if "gen_ai.agent.name" in attrs and span.name.startswith("invoke_agent"):
        return "invoke_agent"
    if any(k.startswith(("gen_ai.usage.", "gen_ai.request.model")) for k in attrs):
        return "chat"
    return "other"


def _call(call_id: Any, name: Any, arguments: Any) -> dict[str, Any]:
    return {
        "id": None if call_id in (None, "") else str(call_id),
        "name": str(name or ""),
        "arguments": maybe_json(arguments),
    }


def _message(
    role: str, content: Any, calls: list[dict[str, Any]], results: dict[str, Any] | None = None
) -> dict[str, Any]:
    """{role, text, calls: [{id, name, arguments}] issued, results: {call id: tool result} answered}."""
    return {"role": role, "text": text_of(content), "calls": calls, "results": results or {}}


def _from_parts(messages: Any) -> list[dict[str, Any]]:
    """The messages of gen_ai.input/output.messages, from their parts.

    [{role, parts: [{type: text, content} | {type: tool_call, id, name, arguments} | {type: tool_call_response, id,
    response}]}].
    """
    found = []
    for message in messages if isinstance(messages, list) else []:
        if isinstance(message, dict):
            parts = [p for p in message.get("parts") or [] if isinstance(p, dict)]
            calls = [
                _call(p.get("id"), p.get("name"), p.get("arguments")) for p in parts if p.get("type") == "tool_call"
            ]
            results = {
                str(p["id"]): p.get("response", p.get("result"))
                for p in parts
                if p.get("type") == "tool_call_response" and p.get("id")
            }
            found.append(_message(message.get("role", "assistant"), parts or message.get("content"), calls, results))
    return found


def _from_events(span: Span, output: bool) -> list[dict[str, Any]]:
    """Older conventions: gen_ai.user/assistant/tool.message and gen_ai.choice events."""
    found = []
    for name, attrs in span.events:
        if output and name == "gen_ai.choice":
            message = maybe_json(attrs.get("message")) or {}
            calls = [
                _call(c.get("id"), (c.get("function") or {}).get("name"), (c.get("function") or {}).get("arguments"))
                for c in (message.get("tool_calls") or [])
                if isinstance(c, dict)
            ]
            found.append(_message("assistant", message.get("content", attrs.get("content")), calls))
        elif not output and name == "gen_ai.user.message":
            found.append(_message("user", attrs.get("content"), []))
        elif not output and name == "gen_ai.assistant.message":
            found.append(_message("assistant", attrs.get("content"), []))
        elif not output and name == "gen_ai.tool.message" and attrs.get("id"):
            found.append(_message("tool", None, [], {str(attrs["id"]): attrs.get("content")}))
    return found


def _from_flattened(attrs: dict[str, Any], prefix: str) -> list[dict[str, Any]]:
    """OpenLLMetry's gen_ai.prompt.N.role/content/tool_call_id and gen_ai.completion.N.tool_calls.M.id/name/arguments."""
    indexes = sorted({int(m.group(1)) for k in attrs if (m := re.match(rf"{re.escape(prefix)}\.(\d+)\.", k))})
    found = []
    for i in indexes:
        base = f"{prefix}.{i}"
        numbers = sorted(
            {int(m.group(1)) for k in attrs if (m := re.fullmatch(rf"{re.escape(base)}\.tool_calls\.(\d+)\.\w+", k))}
        )
        calls = [
            _call(
                attrs.get(f"{base}.tool_calls.{n}.id"),
                attrs.get(f"{base}.tool_calls.{n}.name"),
                attrs.get(f"{base}.tool_calls.{n}.arguments"),
            )
            for n in numbers
        ]
        role = attrs.get(f"{base}.role", "assistant")
        answered = attrs.get(f"{base}.tool_call_id")
        results = {str(answered): attrs.get(f"{base}.content")} if role == "tool" and answered else {}
        found.append(_message(role, None if results else attrs.get(f"{base}.content"), calls, results))
    return found


def messages(span: Span, output: bool) -> list[dict[str, Any]]:
    """A span's input or output messages, newest convention first."""
    attrs = span.attributes
    key = "gen_ai.output.messages" if output else "gen_ai.input.messages"
    if attrs.get(key):
        return _from_parts(maybe_json(attrs[key]))
    return _from_events(span, output) or _from_flattened(attrs, "gen_ai.completion" if output else "gen_ai.prompt")


def _plain(value: Any) -> str:
    """A text attribute's value; '' for anything that is not a string."""
    return value if isinstance(value, str) else ""


def _first_user(msgs: list[dict[str, Any]]) -> str:
    return next((m["text"] for m in msgs if m["role"] == "user" and m["text"]), "")


def _assistant_text(msgs: list[dict[str, Any]]) -> str:
    return "".join(m["text"] for m in msgs if m["role"] == "assistant")


def _documents(value: Any) -> list[dict[str, Any]]:
    docs = []
    for doc in maybe_json(value) or []:
        if isinstance(doc, dict):
            docs.append(
                {
                    "id": None if doc.get("id") is None else str(doc["id"]),
                    "text": text_of(doc.get("content", doc.get("text", ""))),
                    "score": doc.get("score"),
                }
            )
    return docs


def _input_breakdown(attrs: dict[str, Any], model: Any, inputs: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The call's input breakdown from its captured input messages, system instructions and tool definitions."""
    if not inputs:
        return None
    tools = maybe_json(attrs.get("gen_ai.tool.definitions"))
    system = text_of(maybe_json(attrs.get("gen_ai.system_instructions")))
    sent = [
        Message(
            m["role"],
            texts=[m["text"]] if m["text"] else [],
            calls=[(c["name"], as_text(c["arguments"])) for c in m["calls"]],
            call_ids=[c["id"] for c in m["calls"]],
            results=[(call_id, as_text(result)) for call_id, result in m["results"].items()],
        )
        for m in inputs
    ]
    return breakdown(model, [system], sent, schemas(tools if isinstance(tools, list) else []))


def _role_view(span: Span) -> SpanView:
    attrs = span.attributes
    operation = _operation(span)
    meta = {k: attrs[k] for k in KEY_NAMES if k in attrs}
    if attrs.get("gen_ai.handoff.to_agent"):
        return SpanView(
            kind="handoff",
            metadata=meta,
            handoff_to=str(attrs["gen_ai.handoff.to_agent"]),
            handoff_from=str(attrs["gen_ai.handoff.from_agent"]) if attrs.get("gen_ai.handoff.from_agent") else None,
            tool_name=str(attrs.get("gen_ai.tool.name") or ""),  # the handoff tool's own span, when it names it
            arguments=maybe_json(attrs.get("gen_ai.tool.call.arguments")),
        )
    if operation in LLM_OPERATIONS:
        out, inputs = messages(span, output=True), messages(span, output=False)
        issued = [c for m in out for c in m["calls"]]
        model = _first(attrs, "gen_ai.response.model", "gen_ai.request.model")
        return SpanView(
            kind="llm",
            metadata=meta,
            llm=known(
                {
                    "model": model,
                    "provider": _first(attrs, "gen_ai.provider.name", "gen_ai.system"),
                    "input_tokens": _int(attrs, "gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens"),
                    "output_tokens": _int(attrs, "gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens"),
                    "cached_input_tokens": _int(
                        attrs,
                        "gen_ai.usage.cache_read.input_tokens",
                        "gen_ai.usage.cache_read_input_tokens",
                        "gen_ai.usage.details.cache_read_input_tokens",
                    ),
                    "cache_write_input_tokens": _int(
                        attrs,
                        "gen_ai.usage.cache_creation.input_tokens",
                        "gen_ai.usage.cache_creation_input_tokens",
                        "gen_ai.usage.details.cache_creation_input_tokens",
                    ),
                    "reasoning_tokens": _int(attrs, "gen_ai.usage.reasoning.output_tokens"),
                    "ttft_ms": float(ttft) * 1000
                    if (ttft := attrs.get("gen_ai.server.time_to_first_token")) is not None
                    else None,
                    "input_breakdown": _input_breakdown(attrs, model, inputs),
                }
            ),
            issued_calls=[c["id"] for c in issued if c["id"]],
            message_calls=[c for c in issued if c["name"]],
            message_results={k: v for m in inputs for k, v in m["results"].items()},
            has_content=bool(out or inputs),
            continues=any(m["role"] == "assistant" for m in inputs) if inputs else None,
            output_text=_assistant_text(out),
            input_text=_first_user(inputs),
            latest_input=last_user(inputs),
            user_messages=user_messages(inputs),
        )
    if operation == "execute_tool" and attrs.get("gen_ai.tool.name") != ADK_MERGED_TOOLS:
        return SpanView(
            kind="tool",
            metadata=meta,
            tool_name=str(attrs.get("gen_ai.tool.name") or span.name.removeprefix("execute_tool").strip()),
            arguments=maybe_json(attrs.get("gen_ai.tool.call.arguments")),
            result=maybe_json(attrs.get("gen_ai.tool.call.result")),
            call_id=attrs.get("gen_ai.tool.call.id"),
        )
    if operation == "invoke_agent":
        return SpanView(
            kind="agent",
            metadata=meta,
            agent=str(attrs.get("gen_ai.agent.name") or span.name.removeprefix("invoke_agent").strip() or "agent"),
            output_text=_assistant_text(messages(span, output=True)) or _plain(attrs.get("final_result")),
            input_text=_first_user(messages(span, output=False)),
        )
    if operation == "retrieval":
        return SpanView(kind="retrieval", metadata=meta, documents=_documents(attrs.get("gen_ai.retrieval.documents")))
    return SpanView(metadata=meta)


def view(span: Span) -> SpanView:
    """What the span is (by its role), and the session it belongs to (`gen_ai.conversation.id`)."""
    found = _role_view(span)
    session = span.attributes.get("gen_ai.conversation.id")
    found.session = str(session) if session not in (None, "") else None
    return found


def convert(records: list[Record], file: str) -> list[Trace]:
    return traces_of_spans(read_spans(records, file), file, NAME, view, CONTENT_SWITCH)
