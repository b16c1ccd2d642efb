"""OpenInference spans (Arize Phoenix and its instrumentors), in OTLP/JSON or the Python SDK's span JSON.

Spans are grouped into runs by trace id and `agentci.query_id` / `agentci.run` (see `assemble.span_runs`:
the one trace per call that `using_metadata` around an instrumented client gives is one run); the role of
each span comes from `openinference.span.kind`:
- LLM → an LLM call: `llm.model_name` (`llm.response.model_name` when set), `llm.token_count.prompt` /
  `completion`, `llm.token_count.prompt_details.cache_read` / `cache_write` (sub-counts of the prompt),
  `llm.token_count.completion_details.reasoning`, and `llm.cost.total` as the call's cost when present.
  What the call sent, `llm.input_messages.*` and each `llm.tools.N.tool.json_schema`, gives its input breakdown
  (trace/input_parts.py): a system message is the system prompt, a `tool` message a tool result.
  Tool calls it issued: `llm.output_messages.N.message.tool_calls.M.tool_call.id` / `function.name` /
  `function.arguments`, in that order; a run without TOOL spans (the OpenAI and Anthropic instrumentors
  alone) takes its tool calls from them, each result from a later call's input message with role `tool`
  and that `tool_call_id`. Calls with no message at all (OPENINFERENCE_HIDE_*) give
  `metadata.content_missing` naming the switch.
  Time to first token: from the span's start to its `First Token Stream Event` (the event the
  OpenInference instrumentors add when a streamed response's first chunk arrives).
- TOOL → a tool call: `tool.name`, arguments from `input.value`, result from `output.value` (JSON parsed),
  linked to the issuing call by `tool.id` (= the model's `tool_call.id`); error status = failed call. A TOOL
  span named `handoff to <agent>` without `tool.name` (openinference-instrumentation-openai-agents) is a
  handoff from `input.value` to `output.value`.
- AGENT → an agent (`agent.name`, else `graph.node.id` as CrewAI's instrumentor sets the agent's role, else the
  span name); RETRIEVER → `retrieval.documents.N.document.id` /
  `content` / `score`.
- The root span's `output.value` is the final answer when it is plain text (or the `raw` text of CrewAI's
  JSON CrewOutput); else the last LLM output text
  (marked inferred). Matching: `agentci.query_id` / `agentci.query` on any span (directly or inside the
  `metadata` JSON attribute), else the root span's `input.value`, else the first user message.
- Sessions: the traces whose spans carry one `session.id` (OpenInference's `using_session`) are the turns of one
  conversation, each trace a turn, its message the last user message of its first model call
  (adapters/_sessions.py).
- Task status (`metadata.status`, read by the agent checks): failed when a root span has error status,
  else completed.
Dropped: EMBEDDING, RERANKER, GUARDRAIL, EVALUATOR and PROMPT spans; token counts on non-LLM spans.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from agentci_action.trace.adapters._assembly import SpanView, last_user, traces_of_spans, user_messages
from agentci_action.trace.adapters._conventions import KEY_NAMES, known, maybe_json
from agentci_action.trace.adapters.spans import Span, read_spans, spans_in
from agentci_action.trace.input_parts import Message, as_text, breakdown, schemas

if TYPE_CHECKING:
    from agentci_action.trace.canonical import Trace
    from agentci_action.trace.json_records import Record

NAME = "openinference"
KIND = "openinference.span.kind"
FIRST_TOKEN = "First Token Stream Event"
HANDOFF_SPAN = "handoff to "  # the TOOL span openinference-instrumentation-openai-agents writes for a handoff

CONTENT_SWITCH = (
    "unset OPENINFERENCE_HIDE_INPUTS, OPENINFERENCE_HIDE_OUTPUTS, OPENINFERENCE_HIDE_INPUT_MESSAGES and "
    "OPENINFERENCE_HIDE_OUTPUT_MESSAGES (or pass TraceConfig(hide_inputs=False, hide_outputs=False) to the instrumentor)"
)


def detect(records: list[Record]) -> bool:
    return any(KIND in attrs for attrs in spans_in(records))


def _indexed(attrs: dict[str, Any], prefix: str) -> list[dict[str, Any]]:
    """`prefix.N.rest` attributes as a list of {rest: value} dicts, ordered by N."""
    items: dict[int, dict[str, Any]] = {}
    pattern = re.compile(rf"{re.escape(prefix)}\.(\d+)\.(.+)")
    for key, value in attrs.items():
        match = pattern.fullmatch(key)
        if match:
            items.setdefault(int(match.group(1)), {})[match.group(2)] = value
    return [items[i] for i in sorted(items)]


def _messages(attrs: dict[str, Any], prefix: str) -> list[dict[str, Any]]:
    """{role, text, calls: [{id, name, arguments}], answers: tool-call id or None} of `prefix.N.message.*`."""
    found = []
    for message in _indexed(attrs, prefix):
        text = message.get("message.content")
        if text is None:
            text = "".join(
                str(c.get("message_content.text", ""))
                for c in _indexed(message, "message.contents")
                if c.get("message_content.type", "text") == "text"
            )
        found.append(
            {
                "role": message.get("message.role", ""),
                "text": text or "",
                "calls": [
                    {
                        "id": None if c.get("tool_call.id") in (None, "") else str(c["tool_call.id"]),
                        "name": str(c.get("tool_call.function.name") or ""),
                        "arguments": maybe_json(c.get("tool_call.function.arguments")),
                    }
                    for c in _indexed(message, "message.tool_calls")
                ],
                "answers": message.get("message.tool_call_id"),
            }
        )
    return found


def _metadata(attrs: dict[str, Any]) -> dict[str, Any]:
    nested = maybe_json(attrs.get("metadata"))
    found = {k: v for k, v in (nested if isinstance(nested, dict) else {}).items() if k in KEY_NAMES}
    found.update({k: attrs[k] for k in KEY_NAMES if k in attrs})
    return found


def _int(attrs: dict[str, Any], name: str) -> int | None:
    """The count; None when absent (an absent count, not a zero)."""
    value = attrs.get(name)
    return None if value in (None, "") else int(value)


def _input_breakdown(attrs: dict[str, Any], model: Any, inputs: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The call's input breakdown from its input messages and tool definitions; None when none was captured."""
    if not inputs:
        return None
    sent = [
        Message(m["role"], results=[(m["answers"], m["text"])])
        if m["role"] == "tool"
        else Message(
            m["role"],
            texts=[m["text"]] if m["text"] else [],
            calls=[(c["name"], as_text(c["arguments"])) for c in m["calls"]],
            call_ids=[c["id"] for c in m["calls"]],
        )
        for m in inputs
    ]
    tools = [maybe_json(tool.get("tool.json_schema")) for tool in _indexed(attrs, "llm.tools")]
    return breakdown(model, [], sent, schemas(tools))


def _plain_output(attrs: dict[str, Any]) -> str:
    """A span's text output; of a JSON output, only the `raw` text of a CrewAI CrewOutput / TaskOutput."""
    value = attrs.get("output.value")
    if not isinstance(value, str):
        return ""
    if attrs.get("output.mime_type") == "application/json":
        output = maybe_json(value)
        return output["raw"] if isinstance(output, dict) and isinstance(output.get("raw"), str) else ""
    return value


def _role_view(span: Span) -> SpanView:
    attrs = span.attributes
    kind = str(attrs.get(KIND, "")).upper()
    meta = _metadata(attrs)
    if kind == "LLM":
        out = _messages(attrs, "llm.output_messages")
        inputs = _messages(attrs, "llm.input_messages")
        cost = attrs.get("llm.cost.total")
        issued = [c for m in out for c in m["calls"]]
        model = attrs.get("llm.response.model_name") or attrs.get("llm.model_name")
        return SpanView(
            kind="llm",
            metadata=meta,
            llm=known(
                {
                    "model": model,
                    "provider": attrs.get("llm.provider") or attrs.get("llm.system"),
                    "input_tokens": _int(attrs, "llm.token_count.prompt"),
                    "output_tokens": _int(attrs, "llm.token_count.completion"),
                    "cached_input_tokens": _int(attrs, "llm.token_count.prompt_details.cache_read"),
                    "cache_write_input_tokens": _int(attrs, "llm.token_count.prompt_details.cache_write"),
                    "reasoning_tokens": _int(attrs, "llm.token_count.completion_details.reasoning"),
                    "cost_usd": float(cost) if cost is not None else None,
                    "ttft_ms": span.since_start_ms(FIRST_TOKEN),
                    "input_breakdown": _input_breakdown(attrs, model, inputs),
                }
            ),
            issued_calls=[c["id"] for c in issued if c["id"]],
            message_calls=[c for c in issued if c["name"]],
            message_results={str(m["answers"]): m["text"] for m in inputs if m["role"] == "tool" and m["answers"]},
            has_content=bool(out or inputs),
            continues=any(m["role"] == "assistant" for m in inputs) if inputs else None,
            output_text="".join(m["text"] for m in out if m["role"] in ("assistant", "")),
            input_text=next((m["text"] for m in inputs if m["role"] == "user" and m["text"]), ""),
            latest_input=last_user(inputs),
            user_messages=user_messages(inputs),
        )
    if kind == "TOOL" and not attrs.get("tool.name") and span.name.startswith(HANDOFF_SPAN):
        # openinference-instrumentation-openai-agents: input.value is the agent handing off, output.value the target
        return SpanView(
            kind="handoff",
            metadata=meta,
            handoff_to=str(attrs.get("output.value") or span.name.removeprefix(HANDOFF_SPAN)),
            handoff_from=str(attrs["input.value"]) if attrs.get("input.value") else None,
        )
    if kind == "TOOL":
        return SpanView(
            kind="tool",
            metadata=meta,
            tool_name=str(attrs.get("tool.name") or span.name),
            arguments=maybe_json(attrs.get("input.value")),
            result=maybe_json(attrs.get("output.value")),
            call_id=attrs.get("tool.id") or attrs.get("tool_call.id"),
        )
    if kind == "AGENT":
        return SpanView(
            kind="agent",
            metadata=meta,
            agent=str(attrs.get("agent.name") or attrs.get("graph.node.id") or span.name),
            output_text=_plain_output(attrs),
            input_text=str(attrs.get("input.value") or ""),
        )
    if kind == "RETRIEVER":
        docs = [
            {
                "id": None if d.get("document.id") is None else str(d["document.id"]),
                "text": str(d.get("document.content", "")),
                "score": d.get("document.score"),
            }
            for d in _indexed(attrs, "retrieval.documents")
        ]
        return SpanView(kind="retrieval", metadata=meta, documents=docs)
    return SpanView(metadata=meta, output_text=_plain_output(attrs), input_text=str(attrs.get("input.value") or ""))


def view(span: Span) -> SpanView:
    """What the span is (by its role), and the session it belongs to (`session.id`)."""
    found = _role_view(span)
    session = span.attributes.get("session.id")
    found.session = str(session) if session not in (None, "") else None
    return found


def convert(records: list[Record], file: str) -> list[Trace]:
    return traces_of_spans(read_spans(records, file), file, NAME, view, CONTENT_SWITCH)
