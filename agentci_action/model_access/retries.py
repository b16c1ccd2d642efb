"""Retrying AgentCI's own model calls: 429, 5xx, connection errors and timeouts.

Waits as the server's retry-after says, else with random exponential backoff; every HTTP request is one counted
attempt.
"""

from __future__ import annotations

import email.utils
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from tenacity import Retrying, retry_if_exception, stop_after_attempt, wait_random_exponential

from agentci_action.model_access.providers import Provider

T = TypeVar("T")


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
