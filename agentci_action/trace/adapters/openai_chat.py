"""OpenAI Chat Completions conversations: `messages` with assistant `tool_calls` and `role: tool` results.

A record is one run: `{"id"?, "query"?, "messages": [...], "completions"?: [ChatCompletion, ...], "tools"?: [...]}`,
or a file that is just the list of messages (one run). Messages are the dicts the SDK returns
(`message.model_dump()`) plus the user and tool messages the program sent.
- Each assistant message is one model turn. Usage and model come from `completions` (the API responses,
  `completion.model_dump()`, in order): `usage.prompt_tokens` (includes `prompt_tokens_details.cached_tokens`),
  `usage.completion_tokens` (includes `completion_tokens_details.reasoning_tokens`), `model`, `created`.
  The i-th completion goes with the i-th assistant message; without completions the tokens and cost are
  unknown and the trace's metadata says so.
- Tool calls keep the order of `tool_calls` in each assistant message; a `role: tool` message is linked by
  `tool_call_id`. Chat Completions has no error flag: a result is recorded as is, and a tool message whose
  content is a JSON object with an `error` key counts as a failed call.
- No retrieved context: Chat Completions has no retrieval item, and a retriever's output reaches the model
  as the opaque text of a `role: tool` message (recorded as that tool call's result), so `retrieved_context`
  stays empty and the RAG checks are `skip`. Record retrieval with a span format, Responses (`file_search_call`),
  Anthropic (`search_result`) or LangGraph (`documents`), or write canonical traces.
- Input breakdown (trace/input_parts.py): the i-th call sent the messages before the i-th assistant message (every
  message, for a completion whose message was not appended) and the record's `tools` (the definitions sent with
  every call, when the record keeps them).
- Agent: an assistant message's `name`, if any. Final answer: the last assistant text (inferred).
- Query: `id` / `query` on the record (or `metadata.agentci.query_id` / `agentci.query`), else the first
  user message. Dropped: refusals, logprobs, audio (system prompts count only in the input breakdown).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from agentci_action.trace.adapters._assembly import ToolResults, Turn, from_turns
from agentci_action.trace.adapters._conventions import (
    build_trace,
    convert_each,
    maybe_json,
    record_key,
    text_of,
    tool_output,
)
from agentci_action.trace.input_parts import Message, Schema, as_text, breakdown, schemas

if TYPE_CHECKING:
    from agentci_action.trace.canonical import Trace
    from agentci_action.trace.json_records import Record

NAME = "openai-chat"
ROLES = {"system", "developer", "user", "assistant", "tool", "function"}


def _is_message(value: Any) -> bool:
    return isinstance(value, dict) and value.get("role") in ROLES


def detect(records: list[Record]) -> bool:
    if records and all(_is_message(r.value) for r in records):
        return True
    return bool(records) and all(
        isinstance(r.value, dict)
        and isinstance(r.value.get("messages"), list)
        and r.value["messages"]
        and all(_is_message(m) for m in r.value["messages"])
        for r in records
    )


def openai_usage(usage: dict[str, Any] | None) -> dict[str, int] | None:
    """LLMCall token fields from an OpenAI usage block (Chat Completions or Responses vocabulary)."""
    if not isinstance(usage, dict):
        return None
    inputs = usage.get("input_tokens_details") or usage.get("prompt_tokens_details") or {}
    outputs = usage.get("output_tokens_details") or usage.get("completion_tokens_details") or {}
    return {
        "input_tokens": int(usage.get("input_tokens", usage.get("prompt_tokens")) or 0),
        "output_tokens": int(usage.get("output_tokens", usage.get("completion_tokens")) or 0),
        "cached_input_tokens": int(inputs.get("cached_tokens") or 0),
        "reasoning_tokens": int(outputs.get("reasoning_tokens") or 0),
    }


def unix_time(seconds: Any) -> str | None:
    if not isinstance(seconds, (int, float)):
        return None
    return datetime.fromtimestamp(seconds, tz=UTC).isoformat().replace("+00:00", "Z")


def _llm(completion: dict[str, Any] | None) -> dict[str, Any] | None:
    if completion is None:
        return None
    usage = openai_usage(completion.get("usage"))
    if usage is None:
        return None
    return {
        **usage,
        "model": completion.get("model"),
        "provider": "openai",
        "timestamp": unix_time(completion.get("created")),
    }


def tool_calls_of(message: dict[str, Any]) -> list[dict[str, Any]]:
    """{id, name, arguments} of each tool call an assistant message issued, in order."""
    return [
        {"id": c.get("id"), "name": c["function"]["name"], "arguments": maybe_json(c["function"].get("arguments"))}
        for c in message.get("tool_calls") or []
    ]


def message_fields(messages: list[dict[str, Any]], reply: dict[str, Any]) -> dict[str, Any]:
    """SpanView fields of a model call recorded as its request `messages` and its assistant `reply`.

    The tool calls it issued, the tool results its input carries (by call id), texts, whether content was recorded.
    """
    issued = tool_calls_of(reply)
    return {
        "issued_calls": [c["id"] for c in issued if c["id"]],
        "message_calls": issued,
        "message_results": {
            str(m["tool_call_id"]): m.get("content")
            for m in messages
            if m.get("role") == "tool" and m.get("tool_call_id")
        },
        "has_content": bool(messages or reply),
        "continues": any(m.get("role") == "assistant" for m in messages) if messages else None,
        "output_text": text_of(reply.get("content")),
        "input_text": next((text_of(m.get("content")) for m in messages if m.get("role") == "user"), ""),
    }


def request_message(message: dict[str, Any]) -> Message:
    """A Chat Completions message as the input breakdown reads it."""
    role = str(message.get("role"))
    if role == "tool":
        return Message(role, results=[(message.get("tool_call_id"), text_of(message.get("content")))])
    issued = [c for c in message.get("tool_calls") or [] if isinstance(c, dict)]
    return Message(  # a call's arguments as the model wrote them (a JSON string), not re-serialised
        role,
        texts=[text] if (text := text_of(message.get("content"))) else [],
        calls=[(str(c["function"]["name"]), as_text(c["function"].get("arguments"))) for c in issued],
        call_ids=[c.get("id") for c in issued],
    )


def request_breakdown(body: dict[str, Any]) -> dict[str, Any] | None:
    """The input breakdown of a Chat Completions request `body` (`messages`, `tools`)."""
    messages = [request_message(m) for m in body.get("messages") or [] if isinstance(m, dict)]
    return breakdown(body.get("model"), [], messages, schemas(body.get("tools") or []))


def _turn(message: dict[str, Any], completion: dict[str, Any] | None, sent: list[Message], tools: list[Schema]) -> Turn:
    """The assistant `message` (and its `completion`), a call whose request held the messages `sent` and `tools`."""
    return Turn(
        text=text_of(message.get("content")),
        tool_calls=tool_calls_of(message),
        llm=_llm(completion),
        agent=message.get("name"),
        input_breakdown=breakdown((completion or {}).get("model"), [], sent, tools),
    )


def conversation(
    messages: list[dict[str, Any]], completions: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None
) -> tuple[list[Turn], ToolResults, str]:
    """(assistant turns, tool results by call id, first user text) of a Chat Completions message list.

    Each turn's request is the messages before it (and `tools`).
    """
    turns: list[Turn] = []
    results: ToolResults = {}
    query = ""
    sent: list[Message] = []
    defined = schemas(tools or [])
    for message in messages:
        role = message.get("role")
        if role == "user" and not query:
            query = text_of(message.get("content"))
        elif role == "assistant":
            completion = completions[len(turns)] if len(turns) < len(completions) else None
            turns.append(_turn(message, completion, list(sent), defined))
        elif role == "tool":
            results[message.get("tool_call_id")] = tool_output(message.get("content"))
        sent.append(request_message(message))
    for completion in completions[len(turns) :]:  # responses whose message was not appended to the list
        turns.append(_turn(((completion.get("choices") or [{}])[0]).get("message") or {}, completion, sent, defined))
    return turns, results, query


def convert(records: list[Record], file: str) -> list[Trace]:
    if records and all(_is_message(r.value) for r in records):
        records = [type(records[0])({"messages": [r.value for r in records]}, records[0].line)]

    def one(record: Record) -> Trace:
        value = record.value
        tools = value.get("tools") if isinstance(value.get("tools"), list) else []
        turns, results, query = conversation(value["messages"], value.get("completions") or [], tools)
        fields = {**from_turns(turns, results, query), **record_key(value)}
        return build_trace(fields, file, record.line, NAME, inferred_answer=True)

    return convert_each(records, file, NAME, one)
