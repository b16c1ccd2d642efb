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

from agentci_action.trace.adapters import anthropic_messages, openai_chat, openai_responses

MODEL_PATHS = ("/chat/completions", "/responses", "/messages")


def is_model_request(path: str) -> bool:
    """Whether a request to `path` asks a model for an answer (Chat Completions, Responses, Anthropic Messages)."""
    return path.endswith(MODEL_PATHS)


def request_breakdown(path: str, body: Any) -> dict[str, Any] | None:
    """The input breakdown of the call a request to `path` with JSON `body` made; None for any other request."""
    if not isinstance(body, dict):
        return None
    if path.endswith("/chat/completions"):
        return openai_chat.request_breakdown(body)
    if path.endswith("/responses"):
        return openai_responses.request_breakdown(body)
    if path.endswith("/messages"):
        return anthropic_messages.request_breakdown(body)
    return None
