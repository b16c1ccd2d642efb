"""Anthropic Messages transcripts: content blocks `text`, `tool_use`, `tool_result` (with `is_error`).

A record is one run: `{"id"?, "query"?, "messages": [...], "responses"?: [Message, ...], "system"?, "tools"?}` where
`messages` is the conversation the program sent (`{"role", "content"}`, content a string or a list of blocks),
`responses` the API's Message objects (`message.model_dump()`), in order, and `system` and `tools` what every call
sent beside the messages (when the record keeps them).
- Each assistant turn is one model call; the i-th response gives its `model` and `usage`, and responses
  beyond the assistant messages in `messages` become turns of their own (the last reply is often not
  appended). Total input tokens = `input_tokens + cache_creation_input_tokens + cache_read_input_tokens`
  (Anthropic reports them apart); cache reads are `cached_input_tokens`, cache writes
  `cache_write_input_tokens`, each priced at its own rate. A Message carries no time, so a call is priced
  at the fixed date of trace/pricing.py (UNDATED_PRICE_DATE).
- Tool calls keep the order of the `tool_use` blocks; a `tool_result` is linked by `tool_use_id`, and
  `is_error: true` makes the call failed with the result text as the error.
- Retrieved context: `search_result` blocks (Anthropic's search results, given in a user message or inside
  a `tool_result`'s content): id = `source`, text = the block's text content; they carry no score.
- Input breakdown (trace/input_parts.py): the i-th call sent `system`, `tools` and the messages before the i-th
  assistant message (every message, for a response not appended); `tool_result` blocks are tool results, and
  `search_result` and `document` blocks retrieved context.
- Agent: `metadata.agent` on a response, if the program sets it. Final answer: the last assistant text
  (inferred). Query: the record's `id` / `query` (or `metadata.agentci.query_id` / `agentci.query`), else the
  first user text. Dropped: `thinking` and `redacted_thinking` blocks, images (system prompts count only in the input
breakdown).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agentci_action.trace.adapters._assembly import ToolResults, Turn, from_turns
from agentci_action.trace.adapters._conventions import build_trace, convert_each, maybe_json, record_key, text_of
from agentci_action.trace.input_parts import Message, Schema, as_text, breakdown, schemas

if TYPE_CHECKING:
    from agentci_action.trace.canonical import Trace
    from agentci_action.trace.json_records import Record

NAME = "anthropic"
BLOCK_TYPES = {"tool_use", "tool_result", "thinking", "redacted_thinking"}


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content or [] if isinstance(b, dict)]


def detect(records: list[Record]) -> bool:
    def anthropic(value: Any) -> bool:
        if not isinstance(value, dict) or not isinstance(value.get("messages"), list):
            return False
        responses = value.get("responses") or []
        if any(isinstance(r, dict) and r.get("type") == "message" for r in responses):
            return True
        return any(
            isinstance(m, dict) and any(b.get("type") in BLOCK_TYPES for b in _blocks(m.get("content")))
            for m in value["messages"]
        )

    return bool(records) and all(anthropic(r.value) for r in records)


def anthropic_usage(response: dict[str, Any] | None) -> dict[str, Any] | None:
    """LLMCall fields of a Message: input = input_tokens + cache_creation_input_tokens + cache_read_input_tokens."""
    if response is None:
        return None
    usage = response.get("usage")
    if not isinstance(usage, dict):
        return None
    cache_read = int(usage.get("cache_read_input_tokens") or 0)
    cache_write = int(usage.get("cache_creation_input_tokens") or 0)
    return {
        "model": response.get("model"),
        "provider": "anthropic",
        "input_tokens": int(usage.get("input_tokens") or 0) + cache_read + cache_write,
        "output_tokens": int(usage.get("output_tokens") or 0),
        "cached_input_tokens": cache_read,
        "cache_write_input_tokens": cache_write,
    }


def _documents(block: dict[str, Any]) -> list[tuple[str | None, str]]:
    """(source, text) of a `search_result` or `document` block, and of those inside a `tool_result`."""
    kind = block.get("type")
    if kind == "search_result":
        return [(block.get("source"), text_of(block.get("content")))]
    if kind == "document":
        given = block.get("source")
        source: dict[str, Any] = given if isinstance(given, dict) else {}
        return [(block.get("title"), as_text(source.get("data") or text_of(source.get("content"))))]
    if kind == "tool_result" and isinstance(block.get("content"), list):
        return [found for inner in _blocks(block["content"]) for found in _documents(inner)]
    return []


def request_message(message: dict[str, Any]) -> Message:
    """An Anthropic message as the input breakdown reads it (a tool result's search results are retrieved context)."""
    blocks = _blocks(message.get("content"))
    uses = [b for b in blocks if b.get("type") == "tool_use"]
    results = [b for b in blocks if b.get("type") == "tool_result"]
    return Message(
        str(message.get("role")),
        texts=[str(b.get("text")) for b in blocks if b.get("type") == "text" and b.get("text")],
        calls=[(str(b.get("name")), as_text(b.get("input"))) for b in uses],
        call_ids=[b.get("id") for b in uses],
        results=[
            (
                b.get("tool_use_id"),
                text_of(b.get("content")) if isinstance(b.get("content"), list) else as_text(b.get("content")),
            )
            for b in results
        ],
        documents=[found for b in blocks for found in _documents(b)],
    )


def system_texts(value: Any) -> list[str]:
    """The texts of a request's `system`: a string, or text blocks."""
    return [value] if isinstance(value, str) else [str(b.get("text")) for b in _blocks(value) if b.get("text")]


def request_breakdown(body: dict[str, Any]) -> dict[str, Any] | None:
    """The input breakdown of a Messages request `body` (`system`, `messages`, `tools`)."""
    messages = [request_message(m) for m in body.get("messages") or [] if isinstance(m, dict)]
    return breakdown(body.get("model"), system_texts(body.get("system")), messages, schemas(body.get("tools") or []))


def _turn(
    content: Any, response: dict[str, Any] | None, request: tuple[list[str], list[Message], list[Schema]]
) -> Turn:
    """An assistant turn: its `content`, its `response`, and the call's request (system, messages, tools)."""
    blocks = _blocks(content)
    calls = [
        {"id": b.get("id"), "name": b["name"], "arguments": b.get("input")}
        for b in blocks
        if b.get("type") == "tool_use"
    ]
    agent = ((response or {}).get("metadata") or {}).get("agent")
    return Turn(
        text=text_of([b for b in blocks if b.get("type") == "text"]),
        tool_calls=calls,
        llm=anthropic_usage(response),
        agent=agent,
        input_breakdown=breakdown((response or {}).get("model"), *request),
    )


def _search_results(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Retrieved documents of the `search_result` blocks among `blocks` and inside their tool results."""
    found: list[dict[str, Any]] = []
    for block in blocks:
        if block.get("type") == "search_result":
            found.append({"id": block.get("source"), "text": text_of(block.get("content")), "score": None})
        elif block.get("type") == "tool_result" and isinstance(block.get("content"), list):
            found.extend(_search_results(_blocks(block["content"])))
    return found


def _result(block: dict[str, Any]) -> tuple[Any, str | None]:
    content = block.get("content")
    result = maybe_json(content if isinstance(content, str) else text_of(content))
    return result, (text_of(content) or "tool error") if block.get("is_error") else None


def convert(records: list[Record], file: str) -> list[Trace]:
    def one(record: Record) -> Trace:
        value = record.value
        responses = [r for r in value.get("responses") or [] if isinstance(r, dict)]
        turns: list[Turn] = []
        results: ToolResults = {}
        query = ""
        documents: list[dict[str, Any]] = []
        system = system_texts(value.get("system"))
        tools = schemas(value.get("tools") or [])
        sent: list[Message] = []
        for message in value["messages"]:
            if message.get("role") == "assistant":
                response = responses[len(turns)] if len(turns) < len(responses) else None
                turns.append(_turn(message.get("content"), response, (system, list(sent), tools)))
                sent.append(request_message(message))
                continue
            sent.append(request_message(message))
            documents.extend(_search_results(_blocks(message.get("content"))))
            for block in _blocks(message.get("content")):
                if block.get("type") == "tool_result":
                    results[block.get("tool_use_id")] = _result(block)
                elif block.get("type") == "text" and not query:
                    query = block.get("text", "")
        turns.extend(_turn(r.get("content"), r, (system, sent, tools)) for r in responses[len(turns) :])
        fields = {**from_turns(turns, results, query), **record_key(value), "retrieved_context": documents}
        return build_trace(fields, file, record.line, NAME, inferred_answer=True)

    return convert_each(records, file, NAME, one)
