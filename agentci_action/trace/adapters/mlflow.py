"""MLflow traces (MLflow 3, `mlflow` or `mlflow-tracing`).

One trace a record, as `Trace.to_json()` / `Trace.to_dict()` write it: `info` (trace id, state, `trace_metadata`) and
`data.spans`.

Each record is one run. The spans are OTLP field names in snake_case with a flat attribute dict whose values
are JSON text; what a span is comes from `mlflow.spanType`:
- `CHAT_MODEL` / `LLM` → an LLM call: model `mlflow.llm.model`, else the request's `model`; tokens from
  `mlflow.chat.tokenUsage` (`input_tokens`, which include cache reads and writes as MLflow counts them,
  `output_tokens`, `cache_read_input_tokens`, `cache_creation_input_tokens`). Autologged OpenAI calls keep
  the request in `mlflow.spanInputs` and the response in `mlflow.spanOutputs`: the tool calls the model
  issued and its text are read from the response, tool results from the next request's `tool` messages.
- `TOOL` → a tool call: the span's name, arguments `mlflow.spanInputs`, result `mlflow.spanOutputs`, error
  from the span's error status (its `exception` event). Without tool spans the calls come from the messages.
- `AGENT` → an agent span (its name is the agent's); `RETRIEVER` → retrieved documents
  (`page_content`, `id` or `metadata.doc_uri`, `metadata.score`).
Final answer: the root span's output when it is text. Query: `info.trace_metadata` `agentci.query_id` /
`agentci.query` / `agentci.run` (set with `mlflow.update_current_trace(metadata=…)`), else the root span's
first text input, else the first user message. Task status: failed when the root span failed.
Dropped: assessments, tags, previews, chat-tool schemas.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agentci_action.trace.adapters._assembly import SpanView, from_spans
from agentci_action.trace.adapters._conventions import build_trace, convert_each, json_attribute, known
from agentci_action.trace.adapters.openai_chat import message_fields
from agentci_action.trace.adapters.spans import MLFLOW, Span, span_of

if TYPE_CHECKING:
    from agentci_action.trace.canonical import Trace
    from agentci_action.trace.json_records import Record

NAME = "mlflow"
LLM_TYPES = ("CHAT_MODEL", "LLM")


def _is_trace(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and isinstance(value.get("info"), dict)
        and isinstance(value.get("data"), dict)
        and isinstance(value["data"].get("spans"), list)
    )


def detect(records: list[Record]) -> bool:
    return bool(records) and all(_is_trace(r.value) for r in records)


def _message(response: Any) -> dict[str, Any]:
    """The assistant message of a Chat Completions response."""
    choices = response.get("choices") if isinstance(response, dict) else None
    message = choices[0].get("message") if choices and isinstance(choices[0], dict) else None
    return message if isinstance(message, dict) else {}


def _first_text(inputs: Any) -> str:
    if isinstance(inputs, str):
        return inputs
    if isinstance(inputs, dict):
        return next((v for v in inputs.values() if isinstance(v, str)), "")
    return ""


def _documents(outputs: Any) -> list[dict[str, Any]]:
    docs = []
    for doc in outputs if isinstance(outputs, list) else []:
        if isinstance(doc, dict):
            meta = doc.get("metadata") or {}
            docs.append(
                {
                    "id": doc.get("id") or meta.get("doc_uri") or meta.get("chunk_id"),
                    "text": str(doc.get("page_content") or ""),
                    "score": meta.get("score"),
                }
            )
    return docs


def view(span: Span) -> SpanView:
    attrs = span.attributes
    kind = json_attribute(attrs, "mlflow.spanType")
    inputs, outputs = json_attribute(attrs, "mlflow.spanInputs"), json_attribute(attrs, "mlflow.spanOutputs")
    if kind in LLM_TYPES:
        request = inputs if isinstance(inputs, dict) else {}
        messages = [m for m in request.get("messages") or [] if isinstance(m, dict)]
        usage = json_attribute(attrs, "mlflow.chat.tokenUsage") or {}
        return SpanView(
            kind="llm",
            llm=known(
                {
                    "model": json_attribute(attrs, "mlflow.llm.model") or request.get("model"),
                    "input_tokens": usage.get("input_tokens"),
                    "output_tokens": usage.get("output_tokens"),
                    "cached_input_tokens": usage.get("cache_read_input_tokens"),
                    "cache_write_input_tokens": usage.get("cache_creation_input_tokens"),
                }
            ),
            **message_fields(messages, _message(outputs)),
        )
    if kind == "TOOL":
        return SpanView(kind="tool", tool_name=span.name, arguments=inputs, result=outputs)
    if kind == "AGENT":
        return SpanView(
            kind="agent",
            agent=span.name,
            output_text=outputs if isinstance(outputs, str) else "",
            input_text=_first_text(inputs),
        )
    if kind == "RETRIEVER":
        return SpanView(kind="retrieval", documents=_documents(outputs))
    return SpanView(output_text=outputs if isinstance(outputs, str) else "", input_text=_first_text(inputs))


def _convert_one(record: Record, file: str) -> Trace:
    info = record.value["info"]
    spans = [span_of(raw, MLFLOW, record.line, index) for index, raw in enumerate(record.value["data"]["spans"])]
    spans.sort(key=lambda s: (s.start if s.start is not None else float("inf"), s.position))
    views = {span.span_id: view(span) for span in spans}
    roots = [s for s in spans if not s.parent_id]
    if roots:  # the run's own keys: what update_current_trace(metadata=…) recorded
        views[roots[0].span_id].metadata = dict(info.get("trace_metadata") or {})
    fields, inferred = from_spans(spans, view, views)
    fields["metadata"]["trace_id"] = info.get("trace_id") or info.get("request_id") or fields["metadata"]["trace_id"]
    return build_trace(fields, file, record.line, NAME, inferred)


def convert(records: list[Record], file: str) -> list[Trace]:
    return convert_each(records, file, NAME, lambda record: _convert_one(record, file))
