"""Text embeddings for semantic similarity: any OpenAI-compatible embeddings endpoint through the official SDK,
with bounded retries (engine/retry.py) and a content-addressed cache file, so a rerun on unchanged text makes no request.

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

from ..errors import InfraError
from ..spec.models import JudgeConfig
from .checks.answer import Embedder, EmbeddingError, NoEmbedder
from .retry import provider_retrying

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
        retrying = provider_retrying(self.attempts, self.max_wait, (openai.APIConnectionError,))  # includes timeouts
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
