"""Retries for calls to model providers (embeddings now, the judge's SDK calls alike): 429, 5xx, connection
errors and timeouts get another attempt, after the server's retry-after when it sends one (capped), else
exponential backoff with full jitter; a bounded number of attempts, then the last error is raised.

Provider-neutral: the anthropic and openai SDKs both raise status errors with `status_code` and `response`.
"""

from __future__ import annotations

from tenacity import RetryCallState, Retrying, retry_if_exception, stop_after_attempt, wait_random_exponential


def is_retryable(exc: BaseException, connection_errors: tuple[type[BaseException], ...]) -> bool:
    """A connection error or timeout, or an HTTP status of 429 or 5xx."""
    if isinstance(exc, connection_errors):
        return True
    status = getattr(exc, "status_code", None)
    return isinstance(status, int) and (status == 429 or status >= 500)


def retry_after(exc: BaseException | None) -> float | None:
    """The server's retry-after header in seconds, when it sent one."""
    response = getattr(exc, "response", None)
    value = response.headers.get("retry-after") if response is not None else None
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


class RetryWait:
    """retry-after when the server says it (at most max_wait), else exponential backoff with full jitter."""

    def __init__(self, max_wait: float):
        self.max_wait = max_wait
        self.backoff = wait_random_exponential(multiplier=0.5, max=max_wait)

    def __call__(self, state: RetryCallState) -> float:
        told = retry_after(state.outcome.exception() if state.outcome else None)
        return min(told, self.max_wait) if told is not None else self.backoff(state)


def provider_retrying(attempts: int, max_wait: float, connection_errors: tuple[type[BaseException], ...]) -> Retrying:
    """A tenacity Retrying that calls `fn(*args, **kwargs)` up to `attempts` times and re-raises the last error."""
    return Retrying(stop=stop_after_attempt(attempts), wait=RetryWait(max_wait),
                    retry=retry_if_exception(lambda exc: is_retryable(exc, connection_errors)), reraise=True)
