"""The judge and embedder an evaluation uses, wired from the spec and the command's options.

`JudgeOptions`, the judge and the embedder with their caches (`evaluator_for`), the caches trusted only as they are at a
pull request's base, and progress on stderr while judge calls run.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from agentci_action._util.errors import AgentCIError
from agentci_action._util.progress import Progress
from agentci_action._util.text import one_line, plural
from agentci_action.compare.base_ref import BaseRef, read_at
from agentci_action.compare.diff_sides import Evaluator
from agentci_action.engine.checks.answer import Embedder
from agentci_action.engine.correctness import asks_for_judge
from agentci_action.engine.evaluate_spec import OnResult, Settings
from agentci_action.engine.judge import LLMJudge, build_judge
from agentci_action.engine.judge.embeddings import EmbeddingCache, build_embedder
from agentci_action.engine.results import JudgeUsage, QueryResult, Status
from agentci_action.model_access.json_store import JsonStore
from agentci_action.model_access.spend import SpendCap
from agentci_action.spec.models import AgentCISpec


@dataclass(frozen=True)
class JudgeOptions:
    """How the LLM judge runs: `environ` is where its keys are read (ANTHROPIC_API_KEY, OPENAI_API_KEY)."""

    mode: Literal["auto", "required", "off"] = "auto"
    cache: str | None = None  # verdict cache file; default .agentci/judge-cache.json beside the spec
    sample_ensemble: float | None = (
        None  # a share of checks for the ensemble; None: judge_config.ensemble.enabled decides
    )
    max_cost_usd: float | None = None  # a spend cap beside judge_config.max_cost_usd: the lower one holds
    environ: Mapping[str, str] = field(default_factory=dict, repr=False)
    # A pull request's base: the verdict and embedding caches are used only as they are there (JsonStore.trust_only)
    caches_at: BaseRef | None = None
    # The cap shared with the simulated users who ran first (pipeline/simulated_users.py); None: the judge's own
    spend: SpendCap | None = None


def configured_judge(spec: AgentCISpec, options: JudgeOptions) -> LLMJudge | None:
    """The spec's judge as `options` ask (None for judge-mode off); verdicts cached beside the spec by default."""
    return build_judge(
        spec.judge_config,
        options.environ,
        mode=options.mode,
        sample_ensemble=options.sample_ensemble,
        max_cost_usd=options.max_cost_usd,
        cache_path=options.cache or Path(spec.path).parent / ".agentci" / "judge-cache.json",
        pricing=spec.pricing,
        spend=options.spend,
    )


class JudgeProgress:
    """Progress on stderr (progress.Progress) while an evaluation waits on providers.

    A header when the first side begins, a line per side after it, the line advancing per query (judge requests,
    cached verdicts, queries failed so far), the totals at the end. Silent when nothing can call a provider: no
    judge key or no query asking for a judge, and no embedder (a deterministic suite, or verdicts only from the
    cache, is fast).
    """

    def __init__(
        self,
        command: str,
        spec: AgentCISpec,
        judge: LLMJudge | None,
        embedder: Embedder | None,
        workers: int,
    ):
        judging = judge is not None and any(judge.api_keys.values()) and any(asks_for_judge(q) for q in spec.queries)
        self.command = command
        self.about = " · ".join(
            ([f"judge {one_line(judge.config.model, 80)}"] if judging and judge else [])
            + (["embeddings"] if embedder is not None else [])
            + [plural(workers, "worker")]
        )
        self.progress = (
            Progress(command, 0, "query", "queries", ("judge requests", "cached", "failed"))
            if judging or embedder is not None
            else None
        )

    def observe(self, side: str, queries: int) -> OnResult | None:
        """Observe for the engine: `queries` of `side` (e.g. "current run") are next."""
        if self.progress is None or not queries:
            return None
        what = f"{side}: {plural(queries, 'query', 'queries')} to evaluate"
        if self.progress.total or self.progress.done:
            self.progress.expect(queries, f"{self.command}: {what}")
        else:
            self.progress.total = queries
            self.progress.start(f"{self.command}: {what} · {self.about}")
        return self._evaluated

    def _evaluated(self, result: QueryResult) -> None:
        assert self.progress is not None
        usage = JudgeUsage.total(result.correctness.checks)
        failed = result.status in (Status.FAIL, Status.ERROR)
        self.progress.advance(judge_requests=usage.requests, cached=usage.cache_hits, failed=int(failed))

    def finish(self) -> None:
        """The last line: every query evaluated, in how long, and the counters (nothing when silent)."""
        if self.progress is not None and self.progress.total:
            self.progress.finish(self.progress.totals("evaluated"))


@contextmanager
def evaluator_for(
    spec: AgentCISpec,
    options: JudgeOptions,
    embedding_cache: str | None = None,
    settings: Settings = Settings(),
    progress: str | None = None,
    notes: list[str] | None = None,
) -> Iterator[Evaluator]:
    """The judge, embedder and settings every side of an evaluation uses, with progress on stderr.

    Progress under the name `progress` (None: none); on leaving, the verdict and embedding caches are saved (even when
    the run failed: what was paid for is kept). With `options.caches_at`, the caches are trusted only as they are at
    that commit, and `notes` gets a line for each cache holding entries that are not.
    """
    judge = configured_judge(spec, options)
    embedder, cache = _embedder(spec, embedding_cache, options.environ)
    if options.caches_at is not None:
        stores = [store for store in (judge.cache if judge else None, cache) if store is not None]
        (notes if notes is not None else []).extend(trust_at_base(stores, options.caches_at))
    shown = JudgeProgress(progress, spec, judge, embedder, settings.workers) if progress else None
    try:
        yield Evaluator(judge, embedder, settings, shown.observe if shown else None)
    finally:
        if shown is not None:
            shown.finish()
        if judge is not None:
            judge.cache.save()
        if cache is not None:
            cache.save()


def trust_at_base(stores: Sequence[JsonStore], base: BaseRef) -> list[str]:
    """Each cache trusted only as it is at the base commit.

    A note for each holding entries the pull request added or changed (set aside: judged again with a key, else
    reported as not verified). When the base cannot be read, nothing in the checkout's caches is trusted.
    """
    notes = []
    for store in stores:
        if store.path is None or not store.size():  # nothing the checkout could have written: the base is not read
            continue
        try:
            at_base, why = read_at(base, store.path), ""
        except AgentCIError as exc:
            at_base, why = None, f" (the base commit could not be read: {one_line(str(exc), 300)})"
        set_aside = store.trust_only(at_base)
        if set_aside:
            notes.append(
                f"{plural(set_aside, store.what + ' entry', store.what + ' entries')} in {store.path} "
                f"{'is' if set_aside == 1 else 'are'} not at the base commit {base.ref[:7]}{why}: added or changed "
                "by this pull request, so not trusted (judged again where a key is set, else not verified)"
            )
    return notes


def judge_warnings(evaluator: Evaluator) -> list[str]:
    """The LLM judge's run-level notes (e.g. --sample-ensemble with no ensemble); none without one."""
    warnings = getattr(evaluator.judge, "warnings", None)
    return list(warnings()) if callable(warnings) else []


def _embedder(
    spec: AgentCISpec, cache_file: str | None, environ: Mapping[str, str]
) -> tuple[Embedder | None, EmbeddingCache | None]:
    """(embedder, its cache) when a query asks for semantic similarity, else (None, None)."""
    if not any(
        block.checks and block.checks.answer and block.checks.answer.min_semantic_similarity is not None
        for q in spec.queries
        for block in (q, *(q.turns or ()))
    ):
        return None, None

    cache = EmbeddingCache(Path(cache_file) if cache_file else None)
    return build_embedder(spec.judge_config, cache, environ), cache
