"""Text embeddings for semantic similarity: any OpenAI-compatible embeddings endpoint through the official SDK,
with bounded retries (tenacity) and a content-addressed cache file, so a rerun on unchanged text makes no request.

This is the edge where the engine talks to a provider; the engine itself only sees the `Embedder` protocol
(engine/checks/answer.py), as it only sees the `Judge` protocol of the LLM judge.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Mapping
from pathlib import Path

import openai
from tenacity import RetryCallState, Retrying, retry_if_exception, stop_after_attempt, wait_random_exponential

from ..errors import InfraError
from ..spec.models import JudgeConfig
from .checks.answer import Embedder, EmbeddingError, NoEmbedder

PROVIDER = "openai"


class EmbeddingCache:
    """Vectors keyed by sha256 of (provider, model, text), kept in a JSON file the user may commit or cache."""

    def __init__(self, path: Path | None = None):
        self.path = path
        self._lock = threading.Lock()
        self._vectors: dict[str, list[float]] = {}
        if path is not None and path.exists():
            try:
                self._vectors = json.loads(path.read_text(encoding="utf-8"))
            except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                raise InfraError(f"{path}: the embedding cache is not valid JSON ({exc}); delete it to rebuild it") from None

    @staticmethod
    def key(model: str, text: str) -> str:
        return hashlib.sha256(json.dumps([PROVIDER, model, text]).encode()).hexdigest()

    def get(self, key: str) -> list[float] | None:
        with self._lock:
            return self._vectors.get(key)

    def put(self, key: str, vector: list[float]) -> None:
        with self._lock:
            self._vectors[key] = vector

    def save(self) -> None:
        """Write atomically (temporary file, then rename) so an interrupted run leaves the old cache intact."""
        if self.path is None:
            return
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            partial = self.path.with_suffix(self.path.suffix + ".partial")
            partial.write_text(json.dumps(self._vectors, sort_keys=True), encoding="utf-8")
            partial.replace(self.path)


def _retryable(exc: BaseException) -> bool:
    """429, 5xx, connection errors and timeouts are worth another attempt; other errors are not."""
    if isinstance(exc, openai.APIConnectionError):  # includes APITimeoutError
        return True
    return isinstance(exc, openai.APIStatusError) and (exc.status_code == 429 or exc.status_code >= 500)


def _retry_after(exc: BaseException | None) -> float | None:
    """The server's retry-after header in seconds, when it sent one."""
    response = getattr(exc, "response", None)
    value = response.headers.get("retry-after") if response is not None else None
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


class _Wait:
    """retry-after when the server says it (capped), else exponential backoff with full jitter."""

    def __init__(self, max_wait: float):
        self.max_wait = max_wait
        self.backoff = wait_random_exponential(multiplier=0.5, max=max_wait)

    def __call__(self, state: RetryCallState) -> float:
        told = _retry_after(state.outcome.exception() if state.outcome else None)
        return min(told, self.max_wait) if told is not None else self.backoff(state)


class OpenAIEmbedder:
    """Embeddings from an OpenAI-compatible endpoint; texts already in the cache are never sent."""

    def __init__(self, client: openai.OpenAI, model: str, cache: EmbeddingCache, attempts: int = 4, max_wait: float = 20.0):
        self.client = client
        self.model = model
        self.cache = cache
        self.attempts = attempts
        self.max_wait = max_wait

    def embed(self, texts: list[str]) -> list[list[float]]:
        keys = [EmbeddingCache.key(self.model, text) for text in texts]
        missing = list(dict.fromkeys(text for text, key in zip(texts, keys) if self.cache.get(key) is None))
        if missing:
            for text, vector in zip(missing, self._request(missing)):
                self.cache.put(EmbeddingCache.key(self.model, text), vector)
        return [self.cache.get(key) or [] for key in keys]

    def _request(self, texts: list[str]) -> list[list[float]]:
        retrying = Retrying(stop=stop_after_attempt(self.attempts), wait=_Wait(self.max_wait),
                            retry=retry_if_exception(_retryable), reraise=True)
        try:
            response = retrying(self.client.embeddings.create, model=self.model, input=texts)
        except openai.APIStatusError as exc:
            raise EmbeddingError(f"embedding provider answered HTTP {exc.status_code} ({self.model})") from None
        except openai.APIConnectionError as exc:
            raise EmbeddingError(f"embedding provider unreachable: {type(exc).__name__} ({self.model})") from None
        vectors = sorted(response.data, key=lambda item: item.index)
        if len(vectors) != len(texts):
            raise EmbeddingError(f"embedding provider returned {len(vectors)} vectors for {len(texts)} texts")
        return [list(item.embedding) for item in vectors]


def embedding_base_url(config: JudgeConfig | None) -> str | None:
    """embedding_base_url, else the judge's base_url when its provider is openai, else the SDK's default."""
    if config is None:
        return None
    if config.embedding_base_url:
        return config.embedding_base_url
    return config.base_url if config.provider == "openai" else None


def build_embedder(config: JudgeConfig | None, cache: EmbeddingCache, env: Mapping[str, str] = os.environ) -> Embedder:
    """An OpenAI embedder when OPENAI_API_KEY is set, else a NoEmbedder that gives the reason."""
    key = env.get("OPENAI_API_KEY")
    if not key:
        return NoEmbedder("no embedding provider: OPENAI_API_KEY is not set")
    model = config.embedding_model if config else JudgeConfig.model_fields["embedding_model"].default
    client = openai.OpenAI(api_key=key, base_url=embedding_base_url(config), max_retries=0, timeout=30.0)
    return OpenAIEmbedder(client, model, cache)
