"""Vercel AI SDK telemetry (`experimental_telemetry`).

Spans with `ai.*` attributes, as the JavaScript SDK holds them (a ReadableSpan written as JSON), in OTLP/JSON, or as the
Python SDK prints spans.

One call of `generateText` / `streamText` / `generateObject` / `streamObject` is a run; spans are grouped
into runs by trace id and `agentci.query_id` / `agentci.run` (telemetry metadata) as for OpenTelemetry
GenAI. A provider call or tool call span that names no parent joins the call span of the same
`ai.telemetry.functionId` whose time encloses it (with no context manager registered the JavaScript SDK
makes every span the root of its own trace). By
`ai.operationId`:
- `ai.generateText` / `ai.streamText` / `ai.generateObject` / `ai.streamObject` → the run: its
  `ai.response.text` (else `ai.response.object`) is the final answer, its `ai.prompt` (`prompt`, else the
  first user message of `messages`) the query. Its usage sums the steps and is not counted again.
- `….doGenerate` / `….doStream` → an LLM call: model `ai.response.model`, else `ai.model.id`; provider the
  first part of `ai.model.provider` (`openai.responses` → openai); tokens `ai.usage.inputTokens` /
  `outputTokens` / `reasoningTokens`, cache reads `ai.usage.inputTokenDetails.cacheReadTokens` (else
  `cachedInputTokens`) and writes `….cacheWriteTokens` (AI SDK 5+; input includes both), or
  `promptTokens` / `completionTokens` (AI SDK 4); time to first token `ai.response.msToFirstChunk`
  (streamed calls). Tool calls it issued: `ai.response.toolCalls` (`toolCallId`, `toolName`, `input` or
  `args`), in order. Input breakdown (trace/input_parts.py): `ai.prompt.messages` are the messages the call sent
  (system, user, assistant text and tool-call parts, tool-result parts) and `ai.prompt.tools` its tool definitions
  (each a JSON string; the SDK writes the attribute only when the call has tools), recorded with `recordInputs`.
- `ai.toolCall` → a tool call: `ai.toolCall.name`, `ai.toolCall.id`, arguments `ai.toolCall.args` /
  `input`, result `ai.toolCall.result` / `output` (JSON parsed); error status = failed call. Without
  `ai.toolCall` spans the tool calls come from the calls' messages (`ai.prompt.messages` tool-result parts
  give the results).
Task status (`metadata.status`): failed when the run's span has error status, else completed. Matching:
`ai.telemetry.metadata.agentci.query_id` / `agentci.query` / `agentci.run`, else the prompt's user text.
Dropped: `ai.embed` / `ai.embedMany` spans (runs of embeddings only are not agent runs), `ai.telemetry.functionId`
beyond the grouping repair, provider metadata.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agentci_action.trace.adapters._assembly import SpanView, traces_of_spans
from agentci_action.trace.adapters._conventions import KEY_NAMES, known, maybe_json, text_of
from agentci_action.trace.adapters.spans import Span, read_spans, spans_in
from agentci_action.trace.input_parts import Message, as_text, breakdown, schemas

if TYPE_CHECKING:
    from agentci_action.trace.canonical import Trace
    from agentci_action.trace.json_records import Record

NAME = "vercel-ai"
CALLS = ("ai.generateText", "ai.streamText", "ai.generateObject", "ai.streamObject")
PROVIDER_CALLS = tuple(f"{call}.{step}" for call in CALLS for step in ("doGenerate", "doStream"))
METADATA = "ai.telemetry.metadata."
CONTENT_SWITCH = "set experimental_telemetry: {isEnabled: true, recordInputs: true, recordOutputs: true}"


def detect(records: list[Record]) -> bool:
    return any("ai.operationId" in attrs for attrs in spans_in(records))


def _metadata(attrs: dict[str, Any]) -> dict[str, Any]:
    return {k: attrs[METADATA + k] for k in KEY_NAMES if METADATA + k in attrs}


def _int(attrs: dict[str, Any], *names: str) -> int | None:
    value = next((attrs[n] for n in names if attrs.get(n) not in (None, "")), None)
    return None if value is None else int(value)


def _messages(value: Any) -> list[dict[str, Any]]:
    messages = maybe_json(value)
    return [m for m in messages if isinstance(m, dict)] if isinstance(messages, list) else []


def _parts(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    return [p for p in content if isinstance(p, dict)] if isinstance(content, list) else []


def _tool_output(part: dict[str, Any]) -> Any:
    """A tool-result part's result: AI SDK 5+ `output` ({type, value}), AI SDK 4 `result`."""
    output = part.get("output", part.get("result"))
    return output.get("value") if isinstance(output, dict) and "value" in output else output


def _first_user(messages: list[dict[str, Any]]) -> str:
    return next((text_of(m.get("content")) for m in messages if m.get("role") == "user"), "")


def _prompt_text(value: Any) -> str:
    prompt = maybe_json(value)
    if isinstance(prompt, dict):
        return text_of(prompt["prompt"]) if prompt.get("prompt") else _first_user(_messages(prompt.get("messages")))
    return text_of(prompt) if isinstance(prompt, str) else ""


def _request_message(message: dict[str, Any]) -> Message:
    """An AI SDK prompt message as the input breakdown reads it (its content a string or typed parts)."""
    parts = _parts(message)
    calls = [p for p in parts if p.get("type") == "tool-call"]
    texts = [str(p.get("text")) for p in parts if p.get("type") == "text" and p.get("text")]
    if isinstance(message.get("content"), str) and message["content"]:
        texts = [message["content"]]
    return Message(
        str(message.get("role")),
        texts=texts,
        calls=[(str(c.get("toolName")), as_text(c.get("input", c.get("args")))) for c in calls],
        call_ids=[c.get("toolCallId") for c in calls],
        results=[(p.get("toolCallId"), as_text(_tool_output(p))) for p in parts if p.get("type") == "tool-result"],
    )


def _input_breakdown(attrs: dict[str, Any], model: Any, inputs: list[dict[str, Any]]) -> dict[str, Any] | None:
    """A provider call's input breakdown: its prompt messages and tool definitions; None without messages."""
    if not inputs:
        return None
    tools = [maybe_json(t) for t in attrs.get("ai.prompt.tools") or []]
    messages = [_request_message(m) for m in inputs]
    return breakdown(model if isinstance(model, str) else None, [], messages, schemas(tools))


def view(span: Span) -> SpanView:
    attrs = span.attributes
    operation = str(attrs.get("ai.operationId", ""))
    meta = _metadata(attrs)
    if operation in PROVIDER_CALLS:
        inputs = _messages(attrs.get("ai.prompt.messages"))
        issued = [
            {
                "id": c.get("toolCallId"),
                "name": str(c.get("toolName") or ""),
                "arguments": maybe_json(c.get("input", c.get("args"))),
            }
            for c in _messages(attrs.get("ai.response.toolCalls"))
        ]
        text = attrs.get("ai.response.text")
        model = attrs.get("ai.response.model") or attrs.get("ai.model.id")
        return SpanView(
            kind="llm",
            metadata=meta,
            llm=known(
                {
                    "model": model,
                    "provider": str(attrs["ai.model.provider"]).split(".")[0]
                    if attrs.get("ai.model.provider")
                    else None,
                    "input_tokens": _int(attrs, "ai.usage.inputTokens", "ai.usage.promptTokens"),
                    "output_tokens": _int(attrs, "ai.usage.outputTokens", "ai.usage.completionTokens"),
                    "cached_input_tokens": _int(
                        attrs, "ai.usage.inputTokenDetails.cacheReadTokens", "ai.usage.cachedInputTokens"
                    ),
                    "cache_write_input_tokens": _int(attrs, "ai.usage.inputTokenDetails.cacheWriteTokens"),
                    "reasoning_tokens": _int(attrs, "ai.usage.reasoningTokens"),
                    "ttft_ms": attrs.get("ai.response.msToFirstChunk"),
                    "input_breakdown": _input_breakdown(attrs, model, inputs),
                }
            ),
            issued_calls=[c["id"] for c in issued if c["id"]],
            message_calls=[c for c in issued if c["name"]],
            message_results={
                str(p["toolCallId"]): _tool_output(p)
                for m in inputs
                for p in _parts(m)
                if p.get("type") == "tool-result" and p.get("toolCallId")
            },
            has_content=bool(inputs or text or issued),
            continues=any(m.get("role") == "assistant" for m in inputs) if inputs else None,
            output_text=text if isinstance(text, str) else "",
            input_text=_first_user(inputs),
        )
    if operation == "ai.toolCall":
        return SpanView(
            kind="tool",
            metadata=meta,
            tool_name=str(attrs.get("ai.toolCall.name") or ""),
            arguments=maybe_json(attrs.get("ai.toolCall.args", attrs.get("ai.toolCall.input"))),
            result=maybe_json(attrs.get("ai.toolCall.result", attrs.get("ai.toolCall.output"))),
            call_id=attrs.get("ai.toolCall.id"),
        )
    if operation in CALLS:
        answer = attrs.get("ai.response.text", attrs.get("ai.response.object"))
        return SpanView(
            metadata=meta,
            output_text=answer if isinstance(answer, str) else "",
            input_text=_prompt_text(attrs.get("ai.prompt")),
        )
    return SpanView(metadata=meta)


def _reattach(spans: list[Span]) -> None:
    """Give each parentless provider call or tool call span the call span of its function id that encloses it.

    The latest-starting one whose time encloses it: with no context manager registered, the JavaScript SDK makes every
    span a root.
    """
    calls = [s for s in spans if s.attributes.get("ai.operationId") in CALLS and s.start is not None]
    calls.sort(key=lambda s: s.start or 0.0, reverse=True)  # every start is known here
    for span in spans:
        if span.parent_id or span.attributes.get("ai.operationId") not in (*PROVIDER_CALLS, "ai.toolCall"):
            continue
        function = span.attributes.get("ai.telemetry.functionId")
        for call in calls:
            if (
                call.attributes.get("ai.telemetry.functionId") == function
                and call.start is not None
                and call.end is not None
                and span.start is not None
                and span.end is not None
                and call.start <= span.start
                and span.end <= call.end
            ):
                span.parent_id, span.trace_id = call.span_id, call.trace_id
                break


def convert(records: list[Record], file: str) -> list[Trace]:
    spans = read_spans(records, file)
    _reattach(spans)
    # A run of embeddings only is no agent run.
    return traces_of_spans(
        spans, file, NAME, view, CONTENT_SWITCH, lambda views: any(v.kind in ("llm", "tool") for v in views.values())
    )
