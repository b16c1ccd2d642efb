"""Langfuse SDK spans (langfuse 3 and later, built on OpenTelemetry).

Spans whose attributes are `langfuse.observation.*` (type, input, output, model, usage, level) and `langfuse.trace.*`,
values as JSON text, in any span shape the OpenTelemetry readers take (see spans). They carry no `gen_ai.*` attributes,
so the OpenTelemetry GenAI reader would see no model call in them.

Spans are grouped into runs by trace id and `agentci.query_id` / `agentci.run` as for OpenTelemetry GenAI.
By `langfuse.observation.type`:
- `generation` → an LLM call: model `langfuse.observation.model.name`; tokens from
  `langfuse.observation.usage_details` in the provider's vocabulary as the Langfuse OpenAI wrapper records it
  (`prompt_tokens` including `prompt_tokens_details.cached_tokens`, `completion_tokens`); the request
  (`input.messages`) and the reply (`output`, an assistant message) give the tool calls the model issued and the
  results it was sent, when there are no tool spans, and the texts.
- `tool` → a tool call: the span's name, arguments the call's keyword arguments (`input.kwargs`, as `@observe`
  records them; else the input), result `output`, error from the span's error status
  (`langfuse.observation.status_message`).
- `agent` → an agent span (its name is the agent's); its text output is the answer when it is the root.
Query: `langfuse.trace.metadata.agentci.query_id` / `agentci.query` / `agentci.run` (set with
`propagate_attributes(metadata=…)`), else the root span's first text argument, else the first user message.
Task status: failed when the root span failed. Dropped: events, scores, prompts, model parameters.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agentci_action.trace.adapters._assembly import SpanView, traces_of_spans
from agentci_action.trace.adapters._conventions import json_attribute, known
from agentci_action.trace.adapters.openai_chat import message_fields, openai_usage
from agentci_action.trace.adapters.spans import Span, read_spans, spans_in

if TYPE_CHECKING:
    from agentci_action.trace.canonical import Trace
    from agentci_action.trace.json_records import Record

NAME = "langfuse"
TYPE = "langfuse.observation.type"
TRACE_METADATA = "langfuse.trace.metadata."


def detect(records: list[Record]) -> bool:
    return any(TYPE in attrs for attrs in spans_in(records))


def _first_text(value: Any) -> str:
    """The first text argument of an `@observe` input ({args, kwargs}), or the input itself when it is text."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        arguments = [*(value.get("args") or []), *(value.get("kwargs") or {}).values()]
        return next((a for a in arguments if isinstance(a, str)), "")
    return ""


def view(span: Span) -> SpanView:
    attrs = span.attributes
    kind = attrs.get(TYPE)
    inputs = json_attribute(attrs, "langfuse.observation.input")
    output = json_attribute(attrs, "langfuse.observation.output")
    metadata = {
        key.removeprefix(TRACE_METADATA): json_attribute(attrs, key) for key in attrs if key.startswith(TRACE_METADATA)
    }
    if kind == "generation":
        request = inputs if isinstance(inputs, dict) else {}
        messages = [m for m in request.get("messages") or [] if isinstance(m, dict)]
        return SpanView(
            kind="llm",
            metadata=metadata,
            llm=known(
                {
                    **(openai_usage(json_attribute(attrs, "langfuse.observation.usage_details")) or {}),
                    "model": attrs.get("langfuse.observation.model.name"),
                }
            ),
            **message_fields(messages, output if isinstance(output, dict) else {}),
        )
    if kind == "tool":
        arguments = inputs.get("kwargs") if isinstance(inputs, dict) and not inputs.get("args") else inputs
        return SpanView(kind="tool", metadata=metadata, tool_name=span.name, arguments=arguments, result=output)
    text = output if isinstance(output, str) else ""
    if kind == "agent":
        return SpanView(
            kind="agent", metadata=metadata, agent=span.name, output_text=text, input_text=_first_text(inputs)
        )
    return SpanView(metadata=metadata, output_text=text, input_text=_first_text(inputs))


def convert(records: list[Record], file: str) -> list[Trace]:
    return traces_of_spans(read_spans(records, file), file, NAME, view)
