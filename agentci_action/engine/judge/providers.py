"""Clients for the judge's providers, through their official SDKs (imported on first use).

Structured output is enforced by the API, not asked for in prose: Anthropic gets one tool whose
input schema is the verdict and a tool_choice that forces it; OpenAI gets a strict json_schema
response_format. The SDKs' own retries are off (max_retries=0): `call_with_retries` owns retrying,
so attempts are bounded in one place and every HTTP request is one attempt.
"""

from __future__ import annotations

import email.utils
import json
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from tenacity import Retrying, retry_if_exception, stop_after_attempt, wait_random_exponential

from agentci_action._util.extras import require
from agentci_action.engine.judge.prompt import Prompt
from agentci_action.engine.judge.verdict import VERDICT_SCHEMA, Verdict, parse_verdict

VERDICT_TOOL = "record_verdict"
TOOL_DESCRIPTIONS = {VERDICT_TOOL: "Record the verdict on the material."}
KEY_VARIABLES = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}
BASE_URL_VARIABLES = {"anthropic": "ANTHROPIC_BASE_URL", "openai": "OPENAI_BASE_URL"}
T = TypeVar("T")


@dataclass(frozen=True)
class Reply:
    verdict: Verdict | None  # None when the output did not match the verdict schema
    raw: str  # what came back, for the error message when it did not parse
    input_tokens: int
    output_tokens: int


@dataclass(frozen=True)
class Structured:
    """A reply forced into a JSON schema: the object (None when none came back) and the raw text."""

    value: Any
    raw: str
    input_tokens: int
    output_tokens: int


class Provider(Protocol):
    name: str

    def complete(self, model: str, prompt: Prompt, temperature: float) -> Reply: ...

    def structured(
        self, model: str, prompt: Prompt, temperature: float, name: str, schema: dict[str, Any]
    ) -> Structured: ...

    def is_transient(self, exc: BaseException) -> bool: ...


class _SDKProvider(ABC):
    """What both SDKs share: an error taxonomy with the same names, and a client with its retries off. Each SDK's
    provider gives `structured`."""

    def __init__(self, sdk: Any, client: Any, max_output_tokens: int):
        self.sdk, self._client, self._max_tokens = sdk, client, max_output_tokens

    def is_transient(self, exc: BaseException) -> bool:
        """429, 5xx, connection errors and timeouts are worth another attempt; other errors are not."""
        if isinstance(exc, self.sdk.APIConnectionError):  # includes APITimeoutError
            return True
        return isinstance(exc, self.sdk.APIStatusError) and (exc.status_code == 429 or exc.status_code >= 500)

    @abstractmethod
    def structured(
        self, model: str, prompt: Prompt, temperature: float, name: str, schema: dict[str, Any]
    ) -> Structured: ...

    def complete(self, model: str, prompt: Prompt, temperature: float) -> Reply:
        """The verdict on the prompt's material: `structured` with the verdict's schema."""
        reply = self.structured(model, prompt, temperature, VERDICT_TOOL, VERDICT_SCHEMA)
        verdict = parse_verdict(reply.value) if reply.value is not None else None
        return Reply(verdict, reply.raw, reply.input_tokens, reply.output_tokens)


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
        self, model: str, prompt: Prompt, temperature: float, name: str, schema: dict[str, Any]
    ) -> Structured:
        """One tool whose input schema is `schema`, forced by tool_choice. `temperature` is not sent: the pinned
        Messages API takes no sampling parameters."""
        message = self._client.messages.create(
            model=model,
            max_tokens=self._max_tokens,
            system=prompt.system,
            messages=[{"role": "user", "content": prompt.user}],
            tools=[
                {
                    "name": name,
                    "description": TOOL_DESCRIPTIONS.get(name, "Record your answer."),
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
        self, model: str, prompt: Prompt, temperature: float, name: str, schema: dict[str, Any]
    ) -> Structured:
        """A strict json_schema response format named `name`; the content parsed as JSON (None when it is not)."""
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


@dataclass(frozen=True)
class RetryPolicy:
    """Waits between attempts: random in [0, min(max_wait, initial × 2^n)] unless the server says retry-after."""

    initial_wait: float = 1.0
    max_wait: float = 30.0
    max_retry_after: float = 120.0  # a longer retry-after is capped here
    sleep: Callable[[float], None] = time.sleep


def retry_after_seconds(exc: BaseException) -> float | None:
    """The server's retry-after-ms / retry-after (seconds or an HTTP date) on an error response, if any."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    try:
        if headers.get("retry-after-ms"):
            return float(headers["retry-after-ms"]) / 1000
        value = headers.get("retry-after")
        if not value:
            return None
        try:
            return max(0.0, float(value))
        except ValueError:
            return max(0.0, email.utils.parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None


@dataclass
class Attempts:
    """How many HTTP requests one call took (failed attempts included)."""

    count: int = 0


def call_with_retries(
    provider: Provider, call: Callable[[], T], policy: RetryPolicy, max_attempts: int, attempts: Attempts
) -> T:
    """`call()` until it succeeds, raises a non-transient error, or has been tried `max_attempts` times; the last error is re-raised."""
    backoff = wait_random_exponential(multiplier=policy.initial_wait, max=policy.max_wait)

    def wait(state: Any) -> float:
        told = retry_after_seconds(state.outcome.exception())
        return min(told, policy.max_retry_after) if told is not None else backoff(state)

    def counted() -> T:
        attempts.count += 1
        return call()

    retrying = Retrying(
        stop=stop_after_attempt(max_attempts),
        wait=wait,
        retry=retry_if_exception(provider.is_transient),
        sleep=policy.sleep,
        reraise=True,
    )
    return retrying(counted)
