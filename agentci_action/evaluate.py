"""One evaluation, as both the CLI and the action run it: spec + traces (+ baselines) → RunResult.

The edges (cli.py, action.py) turn their arguments or inputs into an `Evaluation` and publish the
result; everything between reading the files and the RunResult happens here, once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from .engine.results import RunResult
from .engine.runner import Settings

if TYPE_CHECKING:
    from .engine.checks.answer import Embedder
    from .engine.embeddings import EmbeddingCache
    from .spec.models import AgentCISpec


@dataclass(frozen=True)
class Evaluation:
    """What to evaluate; paths as the user gave them (files, directories or globs)."""

    spec: str
    traces: list[str]
    baseline_traces: list[str] = field(default_factory=list)
    trace_format: str | None = None
    tags: list[str] = field(default_factory=list)
    embedding_cache: str | None = None  # JSON file of cached embeddings (semantic similarity), read then updated
    settings: Settings = Settings()


def evaluate(request: Evaluation) -> RunResult:
    """Load the spec and the traces (priced with the spec's pricing), group the baselines, run every layer."""
    from .engine.runner import group_traces, run_spec
    from .spec.loader import load_spec
    from .trace.load import load_traces

    spec = load_spec(request.spec, tags=request.tags or None)
    traces = load_traces(request.traces, request.trace_format, spec.pricing)
    baselines = {}
    if request.baseline_traces:
        baseline_traces = load_traces(request.baseline_traces, request.trace_format, spec.pricing)
        baselines = group_traces(spec.queries, baseline_traces).by_query
    embedder, cache = _embedder(spec, request.embedding_cache)
    run = run_spec(spec, traces, baselines=baselines, embedder=embedder, settings=request.settings)
    if cache is not None:
        cache.save()
    return run


def _embedder(spec: AgentCISpec, cache_file: str | None) -> tuple[Embedder | None, EmbeddingCache | None]:
    """(embedder, its cache) when a query asks for semantic similarity, else (None, None)."""
    if not any(q.checks and q.checks.answer and q.checks.answer.min_semantic_similarity is not None for q in spec.queries):
        return None, None
    from .engine.embeddings import EmbeddingCache, build_embedder

    cache = EmbeddingCache(Path(cache_file) if cache_file else None)
    return build_embedder(spec.judge_config, cache), cache
