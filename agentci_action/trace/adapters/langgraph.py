"""LangGraph / LangChain message lists: the `messages` of a graph's final state.

A record is one run: `{"id"?, "query"?, "messages": [...]}` (e.g. `graph.invoke(...)` output, with
`messages_to_dict` or `model_dump()` or LangChain's serialized `{"lc": 1, "id": [..., "AIMessage"], "kwargs"}`
form), or a file that is just the list of messages.
- Each AI message is one model call: `usage_metadata.input_tokens` (LangChain counts cache reads and writes
  in it: `input_token_details.cache_read` / `cache_creation`), `output_tokens`
  (`output_token_details.reasoning` included), model from `response_metadata.model_name` / `model`.
- Tool calls keep the order of `AIMessage.tool_calls`; a `ToolMessage` is linked by `tool_call_id`, and
  `status: "error"` makes the call failed with its content as the error.
- Agent: the AI message's `name` (LangGraph sets it to the agent's name in multi-agent graphs); a switch of
  that name is a handoff, and a `transfer_to_<agent>` call is a tool call like any other. Final answer: the last
  AI text (inferred).
- Retrieved context: LangChain Documents (`page_content`, `metadata.id` / `source`, `metadata.score`; plain or
  in LangChain's serialized form) in the record's `documents` (the state channel LangGraph's RAG graphs keep
  them in) and in a ToolMessage's `artifact` (a retriever tool made with `response_format="content_and_artifact"`).
- Query: the record's `id` / `query` (or `metadata.agentci.query_id` / `agentci.query`), else the first
  human message. Dropped: system messages, `additional_kwargs`, reasoning content blocks.
- Threads: a record that names its thread (`thread_id`, or the `config` of `graph.get_state(config)`, whose
  `configurable.thread_id` it is) is the thread's state after its last invocation, the whole conversation the
  checkpointer kept: each human message begins a turn, the AI and tool messages after it are that turn's, the
  state's `documents` the last turn's (adapters/_sessions.py); the conversation's id is the record's `id`, else
  the thread id. Record the thread once, after its last turn (each invocation's state holds the turns before it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agentci_action.trace.adapters._assembly import ToolResults, Turn, from_turns
from agentci_action.trace.adapters._conventions import build_trace, convert_each, maybe_json, record_key, text_of
from agentci_action.trace.adapters._sessions import SESSION_KEY, conversation

if TYPE_CHECKING:
    from agentci_action.trace.canonical import Trace
    from agentci_action.trace.json_records import Record

NAME = "langgraph"
CLASS_TYPES = {
    "AIMessage": "ai",
    "AIMessageChunk": "ai",
    "HumanMessage": "human",
    "ToolMessage": "tool",
    "SystemMessage": "system",
}
ROLE_TYPES = {"assistant": "ai", "user": "human", "tool": "tool", "system": "system"}
TYPES = {"ai", "human", "tool", "system"}


def lc_message(value: Any) -> dict[str, Any] | None:
    """A LangChain message in any saved form as {type, content, ...}; None when it is not one."""
    if not isinstance(value, dict):
        return None
    if value.get("lc") and isinstance(value.get("id"), list) and isinstance(value.get("kwargs"), dict):
        kind = CLASS_TYPES.get(value["id"][-1])
        return {**value["kwargs"], "type": kind} if kind else None
    if value.get("type") in TYPES and isinstance(value.get("data"), dict):
        return {**value["data"], "type": value["type"]}
    if value.get("type") in TYPES and "content" in value:
        return value
    return None


def _messages(value: Any) -> list[dict[str, Any]] | None:
    items = value.get("messages") if isinstance(value, dict) else None
    if not isinstance(items, list) or not items:
        return None
    found = [message for m in items if (message := lc_message(m))]
    return found if len(found) == len(items) else None


def detect(records: list[Record]) -> bool:
    if records and all(lc_message(r.value) for r in records):
        return True
    return bool(records) and all(_messages(r.value) for r in records)


def lc_documents(items: Any) -> list[dict[str, Any]]:
    """Retrieved documents {id, text, score} of a list of LangChain Documents, plain or serialized (`lc` form)."""
    found: list[dict[str, Any]] = []
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict) and item.get("lc") and isinstance(item.get("kwargs"), dict):
            item = item["kwargs"]
        if isinstance(item, dict) and "page_content" in item:
            meta = item.get("metadata") or {}
            doc_id = meta.get("id") or item.get("id") or meta.get("source")
            found.append(
                {
                    "id": None if doc_id is None else str(doc_id),
                    "text": str(item["page_content"]),
                    "score": meta.get("score"),
                }
            )
    return found


def lc_usage(message: dict[str, Any]) -> dict[str, Any] | None:
    """LLMCall fields of an AI message's usage_metadata (None when it has none)."""
    usage = message.get("usage_metadata")
    if not isinstance(usage, dict):
        return None
    inputs = usage.get("input_token_details") or {}
    outputs = usage.get("output_token_details") or {}
    meta = message.get("response_metadata") or {}
    return {
        "model": meta.get("model_name") or meta.get("model"),
        "provider": meta.get("model_provider"),
        "input_tokens": int(usage.get("input_tokens") or 0),
        "output_tokens": int(usage.get("output_tokens") or 0),
        "cached_input_tokens": int(inputs.get("cache_read") or 0),
        "cache_write_input_tokens": int(inputs.get("cache_creation") or 0),
        "reasoning_tokens": int(outputs.get("reasoning") or 0),
    }


def ai_turn(message: dict[str, Any]) -> Turn:
    calls = [
        {"id": c.get("id"), "name": c["name"], "arguments": c.get("args")} for c in message.get("tool_calls") or []
    ]
    return Turn(
        text=text_of(message.get("content")), tool_calls=calls, llm=lc_usage(message), agent=message.get("name")
    )


def tool_result(message: dict[str, Any]) -> tuple[Any, str | None]:
    content = message.get("content")
    result = maybe_json(content if isinstance(content, str) else text_of(content))
    return result, (text_of(content) or "tool error") if message.get("status") == "error" else None


def _thread_of(value: dict[str, Any]) -> str | None:
    """The LangGraph thread a record is the state of.

    Its `thread_id`, else its `config.configurable.thread_id` (a StateSnapshot's config).
    """
    configurable = ((value.get("config") or {}).get("configurable") or {}) if isinstance(value, dict) else {}
    thread = value.get("thread_id") or configurable.get("thread_id")
    return str(thread) if thread not in (None, "") else None


def _by_human_message(messages: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """A thread's messages cut before each human message after the first: one exchange each."""
    exchanges: list[list[dict[str, Any]]] = [[]]
    for message in messages:
        if message["type"] == "human" and any(m["type"] == "human" for m in exchanges[-1]):
            exchanges.append([])
        exchanges[-1].append(message)
    return exchanges


def _exchange(messages: list[dict[str, Any]], documents: list[dict[str, Any]]) -> dict[str, Any]:
    """Trace fields of the messages of one run (a whole record, or one turn of a thread).

    Its model calls and tool calls, its last AI text as the answer, its first human message as the query; `documents`
    retrieved besides.
    """
    turns = [ai_turn(m) for m in messages if m["type"] == "ai"]
    results: ToolResults = {m.get("tool_call_id"): tool_result(m) for m in messages if m["type"] == "tool"}
    query = next((text_of(m.get("content")) for m in messages if m["type"] == "human"), "")
    documents = documents + [doc for m in messages if m["type"] == "tool" for doc in lc_documents(m.get("artifact"))]
    return {**from_turns(turns, results, query), "retrieved_context": documents}


def convert(records: list[Record], file: str) -> list[Trace]:
    if records and all(lc_message(r.value) for r in records):
        records = [type(records[0])({"messages": [r.value for r in records]}, records[0].line)]

    def one(record: Record) -> Trace:
        messages = _messages(record.value)
        if messages is None:
            raise ValueError("expected `messages`: a list of LangChain messages")
        documents = lc_documents(record.value.get("documents"))
        thread = _thread_of(record.value)
        exchanges = _by_human_message(messages) if thread else [messages]
        if len(exchanges) == 1:
            fields = {**_exchange(messages, documents), **record_key(record.value)}
            if thread:
                fields["metadata"] = {SESSION_KEY: thread}
            return build_trace(fields, file, record.line, NAME, inferred_answer=True)
        turns = [
            build_trace(
                {
                    **_exchange(exchange, documents if n == len(exchanges) - 1 else []),
                    "metadata": {SESSION_KEY: thread},
                },
                file,
                record.line,
                NAME,
                inferred_answer=True,
            )
            for n, exchange in enumerate(exchanges)
        ]
        return conversation(str(thread), turns, record_key(record.value))

    return convert_each(records, file, NAME, one)
