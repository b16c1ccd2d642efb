"""Clients for the providers of AgentCI's own model calls, through their official SDKs (imported on first use).

They serve the judge, the simulated users and embeddings.

Structured output is enforced by the API, not asked for in prose: Anthropic gets one tool whose
input schema is the caller's schema and a tool_choice that forces it; OpenAI gets a strict json_schema
response_format. The SDKs' own retries are off (max_retries=0): `call_with_retries` (retries.py) owns retrying,
so attempts are bounded in one place and every HTTP request is one attempt.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from agentci_action._util.extras import require
from agentci_action.model_access.untrusted import Prompt

DEFAULT_DESCRIPTION = "Record your answer."


@dataclass(frozen=True)
class Structured:
    """A reply forced into a JSON schema: the object (None when none came back) and the raw text."""

    value: Any
    raw: str
    input_tokens: int
    output_tokens: int


class Provider(Protocol):
    """A provider's client: replies forced into a caller's JSON schema, and which of its errors are worth retrying."""

    name: str

    def structured(
        self,
        model: str,
        prompt: Prompt,
        temperature: float,
        name: str,
        schema: dict[str, Any],
        description: str = DEFAULT_DESCRIPTION,
    ) -> Structured: ...

    def is_transient(self, exc: BaseException) -> bool: ...


class _SDKProvider(ABC):
    """What both SDKs share: an error taxonomy with the same names, and a client with its retries off.

    Each SDK's provider gives `structured`.
    """

    def __init__(self, sdk: Any, client: Any, max_output_tokens: int):
        self.sdk, self._client, self._max_tokens = sdk, client, max_output_tokens

    def is_transient(self, exc: BaseException) -> bool:
        """429, 5xx, connection errors and timeouts are worth another attempt; other errors are not."""
        if isinstance(exc, self.sdk.APIConnectionError):  # includes APITimeoutError
            return True
        return isinstance(exc, self.sdk.APIStatusError) and (exc.status_code == 429 or exc.status_code >= 500)

    @abstractmethod
    def structured(
        self,
        model: str,
        prompt: Prompt,
        temperature: float,
        name: str,
        schema: dict[str, Any],
        description: str = DEFAULT_DESCRIPTION,
    ) -> Structured: ...


class AnthropicProvider(_SDKProvider):
    name = "anthropic"

    def __init__(self, api_key: str, base_url: str | None, timeout_s: float, max_output_tokens: int):
        anthropic = require("anthropic", "The judge's Anthropic models")

        super().__init__(
            anthropic,
            anthropic.Anthropic(api_key=api_key, base_url=base_url, timeout=timeout_s, max_retries=0),
            max_output_tokens,
        )

    def structured(
        self,
        model: str,
        prompt: Prompt,
        temperature: float,
        name: str,
        schema: dict[str, Any],
        description: str = DEFAULT_DESCRIPTION,
    ) -> Structured:
        """One tool named `name`, described by `description`, whose input schema is `schema`, forced by tool_choice.

        `temperature` is not sent: the pinned Messages API takes no sampling parameters.
        """
        message = self._client.messages.create(
            model=model,
            max_tokens=self._max_tokens,
            system=prompt.system,
            messages=[{"role": "user", "content": prompt.user}],
            tools=[
                {
                    "name": name,
                    "description": description,
                    "input_schema": schema,
                }
            ],
            tool_choice={"type": "tool", "name": name},
        )
        used = next((block for block in message.content if block.type == "tool_use" and block.name == name), None)
        raw = used.input if used is not None else [block.model_dump() for block in message.content]
        return Structured(
            used.input if used is not None else None,
            str(raw),
            message.usage.input_tokens,
            message.usage.output_tokens,
        )


class OpenAIProvider(_SDKProvider):
    name = "openai"

    def __init__(self, api_key: str, base_url: str | None, timeout_s: float, max_output_tokens: int):
        openai = require("openai", "The judge's OpenAI models (and semantic similarity's embeddings)")

        super().__init__(
            openai,
            openai.OpenAI(api_key=api_key, base_url=base_url, timeout=timeout_s, max_retries=0),
            max_output_tokens,
        )

    def structured(
        self,
        model: str,
        prompt: Prompt,
        temperature: float,
        name: str,
        schema: dict[str, Any],
        description: str = DEFAULT_DESCRIPTION,
    ) -> Structured:
        """A strict json_schema response format named `name`; the content parsed as JSON (None when it is not).

        `description` is Anthropic's alone.
        """
        completion = self._client.chat.completions.create(
            model=model,
            temperature=temperature,
            max_completion_tokens=self._max_tokens,
            messages=[{"role": "system", "content": prompt.system}, {"role": "user", "content": prompt.user}],
            response_format={"type": "json_schema", "json_schema": {"name": name, "strict": True, "schema": schema}},
        )
        content = (completion.choices[0].message.content or "") if completion.choices else ""
        usage = completion.usage
        try:
            value = json.loads(content)
        except ValueError:
            value = None
        return Structured(value, content, usage.prompt_tokens if usage else 0, usage.completion_tokens if usage else 0)

    def embed(self, model: str, texts: list[str]) -> list[list[float]]:
        """One embedding per text, in order (the semantic-similarity check's use of this provider)."""
        response = self._client.embeddings.create(model=model, input=texts)
        return [list(item.embedding) for item in sorted(response.data, key=lambda item: item.index)]


PROVIDERS: dict[str, Callable[..., Provider]] = {"anthropic": AnthropicProvider, "openai": OpenAIProvider}
