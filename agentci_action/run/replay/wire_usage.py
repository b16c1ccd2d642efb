"""The model and token usage a provider reported in one answer, plain or streamed: what a live call was billed.

Read where each API reports it:
- Chat Completions: `model`, `usage.prompt_tokens` / `completion_tokens` / `prompt_tokens_details.cached_tokens`;
  streamed, in the chunk that carries `usage` (with `stream_options.include_usage`, else no usage is known);
- Responses: `usage.input_tokens` / `output_tokens` / `input_tokens_details.cached_tokens`; streamed, in the
  `response` of the `response.completed` (or `.incomplete`, `.failed`) event;
- Embeddings: `usage.prompt_tokens`, no output;
- Anthropic Messages: `usage.input_tokens` / `output_tokens` / `cache_read_input_tokens` /
  `cache_creation_input_tokens`, where input_tokens leaves the cached ones out (they are added here, so input
  counts every prompt token, as OpenAI's do); streamed, `message_start`'s message, then each `message_delta`'s
  usage, whose counts are running totals.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agentci_action.run.replay.recordings import RecordedResponse


@dataclass(frozen=True)
class WireUsage:
    model: str | None
    input_tokens: int | None = None
    output_tokens: int | None = None
    cached_input_tokens: int = 0
    cache_write_input_tokens: int = 0

    @property
    def known(self) -> bool:
        return self.input_tokens is not None or self.output_tokens is not None


def usage_of(provider: str, response: RecordedResponse) -> WireUsage:
    """The usage an answer reports (see the module docstring); counts None when it reports none."""
    content = response.content
    if "stream" in content:
        frames = [frame.get("data") for frame in content["stream"]]
        events = [data for data in frames if isinstance(data, dict)]
        return _anthropic_stream(events) if provider == "anthropic" else _openai_stream(events)
    body = content.get("body")
    if not isinstance(body, dict):
        return WireUsage(None)
    return _anthropic(body.get("model"), body.get("usage")) if provider == "anthropic" else _openai(body)


def _openai(body: dict[str, Any]) -> WireUsage:
    usage = body.get("usage")
    model = body.get("model")
    if not isinstance(usage, dict):
        return WireUsage(model)
    if "input_tokens" in usage:  # Responses
        details = usage.get("input_tokens_details") or {}
        return WireUsage(
            model, usage.get("input_tokens"), usage.get("output_tokens"), details.get("cached_tokens") or 0
        )
    details = usage.get("prompt_tokens_details") or {}
    return WireUsage(
        model, usage.get("prompt_tokens"), usage.get("completion_tokens"), details.get("cached_tokens") or 0
    )


def _openai_stream(events: list[dict[str, Any]]) -> WireUsage:
    model = None
    for event in events:
        if isinstance(event.get("response"), dict) and str(event.get("type", "")).startswith("response."):
            response = event["response"]
            model = response.get("model") or model
            if event["type"] in ("response.completed", "response.incomplete", "response.failed"):
                return _openai(response)
            continue
        model = event.get("model") or model
        if isinstance(event.get("usage"), dict):
            return _openai(event)
    return WireUsage(model)


def _anthropic(model: str | None, usage: Any) -> WireUsage:
    if not isinstance(usage, dict):
        return WireUsage(model)
    cached = usage.get("cache_read_input_tokens") or 0
    written = usage.get("cache_creation_input_tokens") or 0
    uncached = usage.get("input_tokens")
    total = None if uncached is None else uncached + cached + written
    return WireUsage(model, total, usage.get("output_tokens"), cached, written)


def _anthropic_stream(events: list[dict[str, Any]]) -> WireUsage:
    model, usage = None, {}
    for event in events:
        if event.get("type") == "message_start" and isinstance(event.get("message"), dict):
            model = event["message"].get("model")
            usage = dict(event["message"].get("usage") or {})
        elif event.get("type") == "message_delta" and isinstance(event.get("usage"), dict):
            usage.update({name: value for name, value in event["usage"].items() if value is not None})
    return _anthropic(model, usage or None)
