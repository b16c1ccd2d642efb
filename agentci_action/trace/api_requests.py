"""A model API's request body, as a proxy or an instrumentation saw it sent, read as that call's input breakdown.

The bodies the three APIs take (trace/input_parts.py then splits and counts them):
- Chat Completions (`…/chat/completions`): `messages` (system and developer messages are the system prompt, `tool`
  messages tool results) and `tools`;
- Responses (`…/responses`): `instructions`, `input` (a string is the user's message; `function_call` items are the
  assistant's calls, `function_call_output` items their results, named by the call they answer) and `tools`; a
  request that continues a stored response or conversation (`previous_response_id`, `conversation`) sends only what
  is new, so it has no breakdown: the tokens it reports hold a context the request does not show;
- Anthropic Messages (`…/messages`): `system`, `messages` (tool_use and tool_result blocks; `search_result` and
  `document` blocks are retrieved context) and `tools`.
Any other request (embeddings, a model list, a body that is not JSON) has no breakdown.
"""

from __future__ import annotations

from typing import Any

from agentci_action.trace.adapters import anthropic_messages, openai_chat
from agentci_action.trace.adapters._conventions import text_of
from agentci_action.trace.input_parts import Message, as_text, breakdown, schemas


def _responses_input(items: Any) -> list[Message]:
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


MODEL_PATHS = ("/chat/completions", "/responses", "/messages")


def is_model_request(path: str) -> bool:
    """Whether a request to `path` asks a model for an answer (Chat Completions, Responses, Anthropic Messages)."""
    return path.endswith(MODEL_PATHS)


def request_breakdown(path: str, body: Any) -> dict[str, Any] | None:
    """The input breakdown of the call a request to `path` with JSON `body` made; None for any other request."""
    if not isinstance(body, dict):
        return None
    model, tools = body.get("model"), schemas(body.get("tools") or [])
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    if path.endswith("/chat/completions"):
        return breakdown(model, [], [openai_chat.request_message(m) for m in messages], tools)
    if path.endswith("/responses"):
        if body.get("previous_response_id") or body.get("conversation"):
            return None  # the earlier context is the server's, not in the request: nothing to split it by
        instructions = body.get("instructions")
        system = [as_text(instructions)] if isinstance(instructions, str) else [text_of(instructions)]
        return breakdown(model, system, _responses_input(body.get("input")), tools)
    if path.endswith("/messages"):
        system = anthropic_messages.system_texts(body.get("system"))
        return breakdown(model, system, [anthropic_messages.request_message(m) for m in messages], tools)
    return None
