"""OpenAI Responses API runs.

Output items `message`, `function_call`, `file_search_call`, and the `function_call_output` items sent back, linked by
`call_id`.

A record is one run: `{"id"?, "query"?, "input": str | [items], "responses": [Response, ...]}` where
`input` holds every input item the program sent, in order (the user message and each
`function_call_output`), and `responses` the API's Response objects (`response.model_dump()`).
- Each response is one model call: `model`, `created_at`, `usage.input_tokens` (includes
  `input_tokens_details.cached_tokens`), `usage.output_tokens` (includes `output_tokens_details.reasoning_tokens`).
- Tool calls keep the order of the `function_call` items in each response; a `function_call_output` is
  linked by `call_id`. The API has no error flag: an output that is a JSON object with an `error` key
  counts as a failed call. `file_search_call` results become retrieved context (`file_id`, `text`, `score`).
- Input breakdown (trace/input_parts.py): the i-th call's context is the input items that are not tool outputs,
  then each earlier response's output (its text, function calls and `file_search_call` results, retrieved context)
  followed by the `function_call_output` items answering its calls; its `instructions` and `tools` are the
  response's own (a Response echoes both).
- Task status (`metadata.status`, read by the agent checks): the last response's `status` (completed,
  failed, incomplete, cancelled; only completed counts as completed). Final answer: the last response's
  message text (inferred). Query: the record's `id` / `query` (or
  `metadata.agentci.query_id` / `agentci.query`), else the first user input. Dropped: reasoning items,
  web-search and other built-in tool calls (instructions count only in the input breakdown).
"""

from __future__ import annotations

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
from agentci_action.trace.adapters.openai_chat import openai_usage, unix_time
from agentci_action.trace.input_parts import Message, as_text, breakdown, schemas

if TYPE_CHECKING:
    from agentci_action.trace.canonical import Trace
    from agentci_action.trace.json_records import Record

NAME = "openai-responses"


def detect(records: list[Record]) -> bool:
    return bool(records) and all(
        isinstance(r.value, dict)
        and isinstance(r.value.get("responses"), list)
        and r.value["responses"]
        and all(isinstance(x, dict) and isinstance(x.get("output"), list) for x in r.value["responses"])
        for r in records
    )


def file_search_documents(items: list[Any]) -> list[dict[str, Any]]:
    """Retrieved documents {id: file_id, text, score} of the `file_search_call` output items.

    Their `results` are present when the request asked for `include=["file_search_call.results"]`.
    """
    return [
        {"id": r.get("file_id"), "text": r.get("text") or "", "score": r.get("score")}
        for i in items
        if isinstance(i, dict) and i.get("type") == "file_search_call"
        for r in i.get("results") or []
        if isinstance(r, dict)
    ]


def _input_message(item: Any) -> Message:
    """An input item that is not a tool output (a string input is the user's message)."""
    if not isinstance(item, dict):
        return Message("user", texts=[as_text(item)])
    return Message(str(item.get("role") or "user"), texts=[text] if (text := text_of(item.get("content"))) else [])


def _output_message(response: dict[str, Any], outputs: dict[Any, str]) -> list[Message]:
    """An earlier response as its context holds it.

    Its output as the assistant's message, then the tool results (`outputs`, by call id) answering its calls.
    """
    items = [i for i in response.get("output") or [] if isinstance(i, dict)]
    calls = [i for i in items if i.get("type") == "function_call"]
    return [
        Message(
            "assistant",
            texts=[text for i in items if i.get("type") == "message" and (text := text_of(i.get("content")))],
            calls=[(str(c.get("name")), as_text(c.get("arguments"))) for c in calls],
            call_ids=[c.get("call_id") for c in calls],
            documents=[(d["id"], d["text"]) for d in file_search_documents(items)],
        ),
        Message(
            "tool",
            results=[(c.get("call_id"), outputs[c.get("call_id")]) for c in calls if c.get("call_id") in outputs],
        ),
    ]


def _breakdowns(inputs: Any, responses: list[dict[str, Any]]) -> list[dict[str, Any] | None]:
    """Each response's input breakdown: its context as the module docstring says, its instructions and tools."""
    items = inputs if isinstance(inputs, list) else [inputs] if inputs else []
    outputs = {
        i.get("call_id"): as_text(i.get("output"))
        for i in items
        if isinstance(i, dict) and i.get("type") == "function_call_output"
    }
    context = [
        _input_message(i) for i in items if not (isinstance(i, dict) and i.get("type") == "function_call_output")
    ]
    found = []
    for response in responses:
        instructions = response.get("instructions")
        system = [as_text(instructions)] if isinstance(instructions, str) else [text_of(instructions)]
        found.append(breakdown(response.get("model"), system, list(context), schemas(response.get("tools") or [])))
        context += _output_message(response, outputs)
    return found


def _request_input(items: Any) -> list[Message]:
    """A Responses request's `input` as messages: its calls the assistant's, their outputs tool results."""
    found: list[Message] = []
    for item in items if isinstance(items, list) else [items] if items else []:
        kind = item.get("type") if isinstance(item, dict) else None
        if not isinstance(item, dict):
            found.append(Message("user", texts=[as_text(item)]))
        elif kind == "function_call":
            name, arguments = str(item.get("name")), as_text(item.get("arguments"))
            found.append(Message("assistant", calls=[(name, arguments)], call_ids=[item.get("call_id")]))
        elif kind == "function_call_output":
            found.append(Message("tool", results=[(item.get("call_id"), as_text(item.get("output")))]))
        elif kind in (None, "message"):
            text = text_of(item.get("content"))
            found.append(Message(str(item.get("role") or "user"), texts=[text] if text else []))
    return found


def request_breakdown(body: dict[str, Any]) -> dict[str, Any] | None:
    """The input breakdown of a Responses request `body` (`instructions`, `input`, `tools`).

    None for a request that continues a stored response or conversation (`previous_response_id`, `conversation`): it
    sends only what is new, and the tokens it reports hold a context it does not show.
    """
    if body.get("previous_response_id") or body.get("conversation"):
        return None
    instructions = body.get("instructions")
    system = [as_text(instructions)] if isinstance(instructions, str) else [text_of(instructions)]
    return breakdown(body.get("model"), system, _request_input(body.get("input")), schemas(body.get("tools") or []))


def _turn(response: dict[str, Any], input_breakdown: dict[str, Any] | None = None) -> Turn:
    items = [i for i in response.get("output") or [] if isinstance(i, dict)]
    usage = openai_usage(response.get("usage"))
    documents = file_search_documents(items)
    return Turn(
        text="".join(text_of(i.get("content")) for i in items if i.get("type") == "message"),
        tool_calls=[
            {"id": i.get("call_id"), "name": i["name"], "arguments": maybe_json(i.get("arguments"))}
            for i in items
            if i.get("type") == "function_call"
        ],
        llm={
            **usage,
            "model": response.get("model"),
            "provider": "openai",
            "timestamp": unix_time(response.get("created_at")),
        }
        if usage
        else None,
        documents=documents,
        input_breakdown=input_breakdown,
    )


def _user_text(inputs: Any) -> str:
    if isinstance(inputs, str):
        return inputs
    for item in inputs or []:
        if isinstance(item, dict) and item.get("role") == "user":
            return text_of(item.get("content"))
    return ""


def convert(records: list[Record], file: str) -> list[Trace]:
    def one(record: Record) -> Trace:
        value = record.value
        inputs = value.get("input")
        results: ToolResults = {
            i.get("call_id"): tool_output(i.get("output"))
            for i in (inputs if isinstance(inputs, list) else [])
            if isinstance(i, dict) and i.get("type") == "function_call_output"
        }
        responses = value["responses"]
        turns = [_turn(r, b) for r, b in zip(responses, _breakdowns(inputs, responses))]
        fields = {**from_turns(turns, results, _user_text(inputs)), **record_key(value)}
        status = value["responses"][-1].get("status")
        if status:
            fields["metadata"]["status"] = str(status)
        return build_trace(fields, file, record.line, NAME, inferred_answer=True)

    return convert_each(records, file, NAME, one)
