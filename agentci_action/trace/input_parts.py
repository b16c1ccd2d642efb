"""Split one model call's request into the parts of its input, by component, and count each part's tokens.

An adapter that sees what a call sent (the messages, the system prompt, the tool definitions) describes it in one
shape, `Message`s beside the system texts and the tool definitions; `breakdown` then gives the call's
`input_breakdown` (canonical LLMCall field):

| component | what | the metrics reference's type |
|---|---|---|
| `system_prompt` | system and developer messages, Anthropic's `system`, Responses' `instructions` | SYSTEM_PROMPT (and the skill prompts a trace cannot tell apart from it) |
| `tool_schemas` | each tool definition sent, as JSON (named by tool, with its count of top-level parameters) | TOOL_SCHEMA |
| `history` | earlier user messages and the assistant's earlier turns: its text and the tool calls it issued | TOOL_CALL, within the conversation |
| `tool_results` | tool results sent back (named by the tool that returned them) | TOOL_RESPONSE |
| `retrieved_context` | documents the format marks as retrieved: Anthropic `search_result` and `document` blocks, Responses `file_search_call` results (named by source) | |
| `query` | the user's message of the current turn: the last user message with text | |

Parts are listed in the order the provider reads the request (tool definitions, then the system prompt, then the
messages oldest first), which is the order a prompt cache serves its prefix in. Parts of one component and name are
summed into one. Each text is counted by the model's tokenizer (trace/tokenizer.py): the count is exact for OpenAI
models, an estimate for others. The few tokens a provider adds to frame the messages are no part's: `framing` is
what OpenAI's chat format adds, FRAMING_PER_MESSAGE a message (system texts included) and FRAMING_REPLY to prime
the reply; the engine compares the count plus framing with the input tokens the provider reported.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, get_args

from agentci_action.trace.canonical import Component
from agentci_action.trace.tokenizer import tokenizer_for

COMPONENTS: tuple[str, ...] = get_args(Component)
FRAMING_PER_MESSAGE, FRAMING_REPLY = 3, 3
SYSTEM_PROMPT, TOOL_SCHEMAS, HISTORY, TOOL_RESULTS, RETRIEVED_CONTEXT, QUERY = COMPONENTS


@dataclass
class Message:
    """One message of a request, whatever the format.

    Its role (system, user, assistant or tool), its texts, the tool calls it issued (name, arguments as text), the tool
    results it carries (call id, text) and the retrieved documents in it (source, text).
    """

    role: str
    texts: list[str] = field(default_factory=list)
    calls: list[tuple[str, str]] = field(default_factory=list)
    results: list[tuple[str | None, str]] = field(default_factory=list)
    documents: list[tuple[str | None, str]] = field(default_factory=list)
    call_ids: list[str | None] = field(default_factory=list)  # the ids of `calls`, to name the tool of each result


def as_text(value: Any) -> str:
    """A part's text as the model reads it: a string as is, anything else as compact JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def tool_name(tool: dict[str, Any]) -> str:
    """A tool definition's name: Chat's `function.name`, else `name`, else a built-in tool's `type`."""
    function = tool.get("function")
    if isinstance(function, dict) and function.get("name"):
        return str(function["name"])
    return str(tool.get("name") or tool.get("type") or "tool")


def parameter_count(tool: dict[str, Any]) -> int:
    """The top-level properties of a tool's parameter schema; 0 when it has none.

    The schema: Chat's `function.parameters`, Responses' and OTel's `parameters`, Anthropic's `input_schema`, the Vercel
    AI SDK's `inputSchema`.
    """
    function = tool.get("function")
    described: dict[str, Any] = function if isinstance(function, dict) else tool
    schema = described.get("parameters") or described.get("input_schema") or described.get("inputSchema") or {}
    properties = schema.get("properties") if isinstance(schema, dict) else None
    return len(properties) if isinstance(properties, dict) else 0


Schema = tuple[str, str, int]  # a tool definition: its name, its JSON text, its top-level parameters


def schemas(tools: list[Any]) -> list[Schema]:
    """The tool definitions a request sent, each as the model reads it: written once per conversation, not per call."""
    return [(tool_name(t), as_text(t), parameter_count(t)) for t in tools if isinstance(t, dict)]


def _last_query(messages: list[Message]) -> int:
    """The index of the last user message with text (the current turn's query); -1 when there is none."""
    return next((i for i in range(len(messages) - 1, -1, -1) if messages[i].role == "user" and messages[i].texts), -1)


def parts(
    system: list[str], messages: list[Message], tools: list[Schema]
) -> list[tuple[str, str | None, str, int | None]]:
    """(component, name, text, parameters) of every part of the request, in the order the provider reads it."""
    found: list[tuple[str, str | None, str, int | None]] = [
        (TOOL_SCHEMAS, name, text, count) for name, text, count in tools
    ]
    found += [(SYSTEM_PROMPT, None, text, None) for text in system if text]
    query_at = _last_query(messages)
    called: dict[str | None, str] = {}
    for index, message in enumerate(messages):
        if message.role in ("system", "developer"):
            found += [(SYSTEM_PROMPT, None, text, None) for text in message.texts]
            continue
        own = QUERY if index == query_at else HISTORY
        found += [(own, None, text, None) for text in message.texts]
        for call_id, (name, arguments) in zip(message.call_ids, message.calls):
            called[call_id] = name
            found.append((HISTORY, None, f"{name}({arguments})", None))
        found += [(TOOL_RESULTS, called.get(call_id, "tool"), text, None) for call_id, text in message.results]
        found += [(RETRIEVED_CONTEXT, source, text, None) for source, text in message.documents]
    return found


def breakdown(
    model: str | None, system: list[str], messages: list[Message], tools: list[Schema]
) -> dict[str, Any] | None:
    """The call's `input_breakdown`.

    {tokenizer, exact, parts: [{component, name, tokens, parameters}], framing}, the parts of one component and name
    summed, in request order (a part without a name has no `name`); None when the request holds no text at all.
    """
    tokenizer = tokenizer_for(model)
    summed: dict[tuple[str, str | None], dict[str, Any]] = {}
    for component, name, text, parameters in parts(system, messages, tools):
        part = summed.get((component, name))
        if part is None:
            part = summed[component, name] = {"component": component, "tokens": 0}
            if name is not None:
                part["name"] = name
        part["tokens"] += tokenizer.count(text)
        if parameters is not None:
            part["parameters"] = max(part.get("parameters", 0), parameters)
    if not summed:
        return None
    framing = FRAMING_PER_MESSAGE * (sum(1 for text in system if text) + len(messages)) + FRAMING_REPLY
    return {
        "tokenizer": tokenizer.encoding,
        "exact": tokenizer.exact,
        "parts": list(summed.values()),
        "framing": framing,
    }
