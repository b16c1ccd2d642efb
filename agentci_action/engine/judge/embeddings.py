"""Text embeddings for semantic similarity, with a content-addressed cache file.

Through model_access's OpenAI provider (any OpenAI-compatible endpoint, official SDK) and its retries (429 honouring
retry-after, 5xx, connection errors, timeouts); with the cache, a rerun on unchanged text makes no request.

This is where the engine reaches a provider, through model_access/; the rest of the engine only sees the `Embedder` protocol
(engine/checks/answer.py), as it only sees the `Judge` protocol of the LLM judge.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path

from agentci_action.engine.checks.answer import Embedder, EmbeddingError, NoEmbedder
from agentci_action.model_access.json_store import JsonStore
from agentci_action.model_access.keys import base_urls_from_environment
from agentci_action.model_access.providers import OpenAIProvider
from agentci_action.model_access.retries import Attempts, RetryPolicy, call_with_retries
from agentci_action.spec.models import JudgeConfig

PROVIDER = "openai"


def _is_vector(entry: object) -> bool:
    return isinstance(entry, list) and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in entry)


class EmbeddingCache(JsonStore):
    """Vectors keyed by sha256 of (provider, model, text), kept in a JSON file the user may commit or cache.

    {"version": 1, "vectors": {key: [floats]}}, read and written like the judge's verdict cache.
    """

    def __init__(self, path: str | Path | None = None):
        super().__init__(path, what="embedding cache", field="vectors", valid=_is_vector, shape="a list of numbers")

    @staticmethod
    def key(model: str, text: str) -> str:
        return hashlib.sha256(json.dumps([PROVIDER, model, text]).encode()).hexdigest()

    def get(self, key: str) -> list[float] | None:
        return self.get_entry(key)

    def put(self, key: str, vector: list[float]) -> None:
        self.put_entry(key, vector)


class OpenAIEmbedder:
    """Embeddings from the judge's OpenAI provider, retried like a judge call; texts already in the cache are never sent."""

    def __init__(
        self,
        provider: OpenAIProvider,
        model: str,
        cache: EmbeddingCache,
        max_attempts: int = 4,
        policy: RetryPolicy = RetryPolicy(),
    ):
        self.provider = provider
        self.model = model
        self.cache = cache
        self.max_attempts = max_attempts
        self.policy = policy

    def embed(self, texts: list[str]) -> list[list[float]]:
        keys = [EmbeddingCache.key(self.model, text) for text in texts]
        missing = list(dict.fromkeys(text for text, key in zip(texts, keys) if self.cache.get(key) is None))
        if missing:
            for text, vector in zip(missing, self._request(missing)):
                self.cache.put(EmbeddingCache.key(self.model, text), vector)
        return [self.cache.get(key) or [] for key in keys]

    def _request(self, texts: list[str]) -> list[list[float]]:
        attempts = Attempts()
        try:
            vectors = call_with_retries(
                self.provider, lambda: self.provider.embed(self.model, texts), self.policy, self.max_attempts, attempts
            )
        except self.provider.sdk.APIError as exc:  # HTTP status, connection and timeout errors alike
            status = getattr(exc, "status_code", None)
            what = f"answered HTTP {status}" if status is not None else f"unreachable ({type(exc).__name__})"
            raise EmbeddingError(
                f"embedding provider {what} after {attempts.count} attempt(s) ({self.model})"
            ) from None
        if len(vectors) != len(texts):
            raise EmbeddingError(f"embedding provider returned {len(vectors)} vectors for {len(texts)} texts")
        return vectors


def embedding_base_url(config: JudgeConfig) -> str | None:
    """embedding_base_url, else the judge's base_url when its model is served by OpenAI(-compatible), else the SDK's default."""
    if config.embedding_base_url:
        return config.embedding_base_url
    return config.base_url if config.provider_for(config.model) == "openai" else None


def build_embedder(config: JudgeConfig | None, cache: EmbeddingCache, environ: Mapping[str, str]) -> Embedder:
    """An OpenAI embedder when OPENAI_API_KEY is set in `environ`, else a NoEmbedder that gives the reason.

    Its endpoint is embedding_base_url's, else OPENAI_BASE_URL in `environ`. The judge's timeout and attempt budget
    (judge_config.timeout_s, max_attempts) apply.
    """
    key = environ.get("OPENAI_API_KEY")
    if not key:
        return NoEmbedder("no embedding provider: OPENAI_API_KEY is not set")
    config = config or JudgeConfig()
    base_url = embedding_base_url(config) or base_urls_from_environment(environ).get("openai")
    provider = OpenAIProvider(key, base_url, config.timeout_s, config.max_output_tokens)
    return OpenAIEmbedder(provider, config.embedding_model, cache, config.max_attempts)
