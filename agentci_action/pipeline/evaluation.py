"""One evaluation, as both the CLI and the action run it: spec + traces (+ baseline) → RunResult and its diff;
or spec + shard results files → the merged RunResult.

The edges (cli/, github/) turn their arguments or inputs into an `Evaluation` (or a merge) and publish the
`Outcome`; everything between reading the files and the results happens here, once.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, TextIO

from pydantic import ValidationError

from agentci_action._util.errors import AgentCIError, InputError, Problem, SpecError
from agentci_action._util.limits import MAX_RESULTS_BYTES, MAX_RESULTS_NESTING, deeper_than
from agentci_action._util.progress import Progress
from agentci_action._util.text import one_line, plural
from agentci_action.compare.base_ref import BaseRef, base_reference, read_at
from agentci_action.compare.baselines import Reference, load_baseline, only_queries, reference_for, version_reference
from agentci_action.compare.diff import Side, merge_diffs
from agentci_action.compare.diff_schema import RunDiff
from agentci_action.compare.diff_sides import Evaluator, baseline_side, current_side, diff_against, evaluate_side
from agentci_action.compare.suite_gates import judge_gates, with_gates
from agentci_action.engine.checks.answer import Embedder
from agentci_action.engine.correctness import asks_for_judge
from agentci_action.engine.evaluate_spec import OnResult, Settings, evaluate_spec, group_traces
from agentci_action.engine.judge import LLMJudge, build_judge
from agentci_action.engine.judge.embeddings import EmbeddingCache, build_embedder
from agentci_action.engine.judge.json_store import JsonStore
from agentci_action.engine.judge.llm import SpendCap
from agentci_action.engine.merge import merge_shards
from agentci_action.engine.results import JudgeUsage, QueryResult, RunResult, ShardInfo, Status
from agentci_action.engine.shard import select_shard
from agentci_action.pipeline.adaptive_runs import next_runs
from agentci_action.spec.advice import advice
from agentci_action.spec.loader import load_spec, select_tags
from agentci_action.spec.models import AgentCISpec
from agentci_action.trace.load import load_traces

NO_BASELINE = "none"


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


@dataclass(frozen=True)
class Evaluation:
    """What to evaluate; paths as the user gave them (files, directories or globs).

    `baseline` names a saved version; None means the newest whose precheck passed (no baseline when
    there is none), "none" means no baseline. `baseline_traces` are raw accepted traces instead.
    """

    spec: str
    traces: list[str]
    baseline: str | None = None
    baseline_traces: list[str] = field(default_factory=list)
    trace_format: str | None = None
    tags: list[str] = field(default_factory=list)
    embedding_cache: str | None = None  # JSON file of cached embeddings (semantic similarity), read then updated
    settings: Settings = Settings()
    shard: ShardInfo | None = None  # evaluate only this shard's queries (the baseline still guides path and cost)
    judge: JudgeOptions = JudgeOptions()
    progress: str | None = None  # the command's name for progress on stderr while judge calls run; None: silent
    baseline_ref: BaseRef | None = (
        None  # read the baseline at this commit (compare/base_ref.py); `baseline` names a version
    )


# Runs the agent until each query named has this many runs (its runs so far kept): adaptive runs' next batch.
MoreRuns = Callable[[dict[str, int]], None]


@dataclass(frozen=True)
class Outcome:
    """The results, and the diff against the baseline when there was one (its warnings included).

    A shard has no diff: the diff needs every query's traces, which no single shard holds.
    """

    run: RunResult
    diff: RunDiff | None = None


def judge_for(spec: AgentCISpec, options: JudgeOptions) -> LLMJudge | None:
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
    """Progress on stderr (progress.Progress) while an evaluation waits on providers: a header when the first side
    begins, a line per side after it, the line advancing per query (judge requests, cached verdicts, queries
    failed so far), the totals at the end. Silent when nothing can call a provider: no judge key or no query asking
    for a judge, and no embedder (a deterministic suite, or verdicts only from the cache, is fast)."""

    def __init__(
        self,
        command: str,
        spec: AgentCISpec,
        judge: LLMJudge | None,
        embedder: Embedder | None,
        workers: int,
        stream: TextIO | None = None,
        live: bool | None = None,
    ):
        judging = judge is not None and any(judge.api_keys.values()) and any(asks_for_judge(q) for q in spec.queries)
        self.command = command
        self.about = " · ".join(
            ([f"judge {one_line(judge.config.model, 80)}"] if judging and judge else [])
            + (["embeddings"] if embedder is not None else [])
            + [plural(workers, "worker")]
        )
        self.progress = (
            Progress(command, 0, "query", "queries", ("judge requests", "cached", "failed"), stream, live)
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
    """The judge, embedder and settings every side of an evaluation uses, with progress on stderr under the name
    `progress` (None: none); on leaving, the verdict and embedding caches are saved (even when the run failed: what
    was paid for is kept). With `options.caches_at`, the caches are trusted only as they are at that commit, and
    `notes` gets a line for each cache holding entries that are not."""
    judge = judge_for(spec, options)
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
    """Each cache trusted only as it is at the base commit; a note for each holding entries the pull request added
    or changed (set aside: judged again with a key, else reported as not verified). When the base cannot be read,
    nothing in the checkout's caches is trusted."""
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


def evaluate(request: Evaluation, more_runs: MoreRuns | None = None) -> Outcome:
    """Load the spec and the traces (priced with the spec's pricing) and the baseline, run every layer,
    then compare the run with the baseline and judge the suite's gates.

    Both the current run and the baseline are evaluated alike, judge included (the baseline's verdicts are
    usually cached since its save); the judge's verdict cache is saved even when the run fails, so verdicts
    already paid for are kept. A shard compares only its own queries (its results file carries that diff, for
    the merge) and judges no suite gate: the merge judges them on the whole suite.

    With `more_runs` (the agent runs into `request.traces`) and a baseline, queries with adaptive runs whose
    verdict is still open get their next batch (pipeline/adaptive_runs.py) and everything is evaluated again, one
    round at a time, with the same judge (its spend cap counts over every round) and the same baseline side.
    """
    if request.baseline and request.baseline_traces:
        raise SpecError.at("baseline-traces", 0, "a baseline version and baseline traces exclude each other; give one")
    if request.baseline_ref and request.baseline_traces:
        raise SpecError.at("baseline-traces", 0, "a baseline ref and baseline traces exclude each other; give one")
    whole = load_spec(request.spec)  # once: the baseline's hash and matching need every query
    spec = select_tags(whole, request.tags) if request.tags else whole
    traces = load_traces(request.traces, request.trace_format, spec.pricing)
    reference, notes = None, []
    if request.baseline_traces:
        baseline = group_traces(spec.queries, load_traces(request.baseline_traces, request.trace_format, spec.pricing))
        reference = Reference("baseline traces", {k: v for k, v in baseline.by_query.items() if v})
        notes = [
            f"baseline traces: {note}" for note in baseline.unmatched
        ]  # warned like --traces, never dropped silently
    elif request.baseline_ref is not None:
        reference, notes = base_reference(
            whole, spec, request.traces, request.baseline, request.baseline_ref, request.trace_format
        )
        if reference is None:  # nothing at the base commit: the saved baseline of the working tree, as without it
            reference = reference_for(whole, spec, request.baseline)
            notes = [f"{notes[0]}; compared with {reference.label if reference else 'no baseline'} instead"]
    elif (request.baseline or "").lower() != NO_BASELINE:
        reference = reference_for(whole, spec, request.baseline)
    if reference is not None and request.shard is not None:
        reference = only_queries(reference, {q.key for q in select_shard(spec.queries, request.shard)})
    evaluated = select_shard(spec.queries, request.shard) if request.shard else spec.queries
    cache_notes: list[str] = []
    with evaluator_for(
        spec, request.judge, request.embedding_cache, request.settings, request.progress, cache_notes
    ) as evaluator:
        before: Side | None = None
        while True:
            run = evaluate_spec(
                spec,
                traces,
                baselines=reference.variants if reference else {},
                judge=evaluator.judge,
                embedder=evaluator.embedder,
                settings=request.settings,
                shard=request.shard,
                on_result=evaluator.observe("current run", len(evaluated)) if evaluator.observe else None,
                release_traces=reference is None,  # only the diff against a baseline reads them again
            )
            run.warnings.extend([*notes, *cache_notes])
            if reference is None:
                diff = None
                break
            after = current_side(spec, run, traces)
            before = before or baseline_side(spec, reference, after, evaluator)
            diff = diff_against(spec, reference, after, evaluator, before, shard=request.shard is not None)
            if more_runs is None:
                break
            wanted = next_runs(spec, run, diff, bool(getattr(evaluator.judge, "spent", False)))
            if not wanted.targets:
                run.warnings.extend([wanted.stopped] if wanted.stopped else [])
                break
            more_runs(wanted.targets)
            traces = load_traces(request.traces, request.trace_format, spec.pricing)
    run.warnings.extend(_judge_warnings(evaluator))
    run.warnings.extend(str(warning) for warning in advice(spec))
    if request.shard is None:
        with_gates(run, spec.suite, diff)
    return Outcome(run, diff)


def compare_versions(
    spec_path: str,
    baseline: str | None,
    compare: str,
    judge: JudgeOptions = JudgeOptions(),
    embedding_cache: str | None = None,
    settings: Settings = Settings(),
    baseline_ref: BaseRef | None = None,
    progress: str | None = None,
) -> Outcome:
    """Saved version `compare` against saved version `baseline`, both evaluated with the current spec exactly as
    `agentci test --baseline` evaluates a run (same judge and verdict cache, embedder and settings); the suite's
    gates are judged on `compare` against `baseline`, as `test` judges them on a run. Returns `compare`'s results
    and the diff; `progress` names the command for progress on stderr (None: none)."""
    spec = load_spec(spec_path)
    if baseline_ref is not None:  # version `baseline` (default: the newest that passed) as saved at the base commit
        reference, notes = base_reference(spec, spec, [], baseline, baseline_ref)
    else:
        found = load_baseline(spec, baseline, "--baseline")
        reference, notes = (version_reference(spec, found), []) if found else (None, ["no baseline version passed"])
    stored = load_baseline(spec, compare, "--compare")
    if stored is None or reference is None:
        raise InputError.at("--baseline-ref" if baseline_ref else "--baseline", 0, notes[0] if notes else "no version")
    compared = version_reference(spec, stored)
    cache_notes: list[str] = []
    with evaluator_for(spec, judge, embedding_cache, settings, progress, cache_notes) as evaluator:
        after = evaluate_side(spec, compare, compared.runs or {}, reference.variants, evaluator)
        diff = diff_against(spec, reference, after, evaluator)
    diff.warnings += cache_notes
    diff.gates = judge_gates(spec.suite, after.run, diff)
    diff.warnings += [w for w in compared.warnings if w not in diff.warnings]
    diff.warnings += [w for w in _judge_warnings(evaluator) if w not in diff.warnings]
    return Outcome(after.run, diff)


def _judge_warnings(evaluator: Evaluator) -> list[str]:
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


def read_shards(patterns: list[str]) -> dict[str, Outcome]:
    """Shard results files matching the glob patterns, by file name, each with the diff of its queries when it was
    compared with a baseline; each must parse as results JSON."""
    import glob

    files = sorted({file for pattern in patterns for file in (glob.glob(pattern) or [pattern])})
    shards, problems = {}, []
    for file in files:
        try:
            shards[file] = _read_document(file, "shard results")
        except InputError as exc:
            problems.extend(exc.problems)
    if problems:
        raise InputError(problems)
    return shards


def _read_document(path: str, what: str) -> Outcome:
    """A results file's run and its diff (when it has one); InputError naming the file when it is not one, or when it
    is larger or nested deeper than a results file may be (_util/limits.py): it may be a fork's forged artifact."""
    try:
        with open(path, "rb") as file:
            if not stat.S_ISREG(os.fstat(file.fileno()).st_mode):
                raise InputError.at(path, 0, f"cannot read {what}: not a regular file")
            data = file.read(MAX_RESULTS_BYTES + 1)
        if len(data) > MAX_RESULTS_BYTES:
            raise InputError.at(
                path, 0, f"{what} is larger than {MAX_RESULTS_BYTES >> 20} MiB, more than AgentCI reads"
            )
        document = json.loads(data)
        del data  # the text, no longer needed while the document is validated
        if deeper_than(document, MAX_RESULTS_NESTING):
            raise RecursionError
        run = RunResult.model_validate(document)
        diff = RunDiff.model_validate(document["diff"]) if isinstance(document, dict) and "diff" in document else None
    except OSError as exc:
        raise InputError.at(path, 0, f"cannot read {what}: {exc.strerror or exc}") from None
    except RecursionError:  # json's own limit is about 1,000 levels
        raise InputError.at(
            path, 0, f"not an agentci results file: nested deeper than {MAX_RESULTS_NESTING} lists and objects"
        ) from None
    except ValueError as exc:  # JSON and pydantic errors alike
        why = _first_error(exc) if isinstance(exc, ValidationError) else str(exc)
        raise InputError.at(path, 0, f"not an agentci results file: {why}") from None
    return Outcome(run, diff)


def _first_error(exc: ValidationError) -> str:
    """'results.0.path.details.reference: String should match pattern ...': where the first error is, and what."""
    error = exc.errors(include_url=False)[0]
    where = ".".join(str(part) for part in error["loc"])
    return f"{where}: {error['msg']}" if where else error["msg"]


def read_results(path: str) -> Outcome:
    """A results file written by an earlier run (the action's publish-only mode), with its diff when it has one.

    The file may come from a fork's workflow: it is validated like any input, and a shard's file is refused."""
    outcome = _read_document(path, "the results file")
    if outcome.run.shard is not None:
        raise InputError.at(path, 0, "a shard results file: publish the merge job's results instead")
    return outcome


def merge(spec: str, shard_results: list[str], tags: list[str] | None = None) -> Outcome:
    """The shards' results files (paths or globs) as one run of the spec (loaded with the shards' tags), its suite
    gates judged on the whole, and the shards' diffs (each of its own queries) combined into the diff of the whole
    (merge_diffs): the unsharded run's diff, the uplift and suite aggregates rebuilt from each shard's baseline side."""
    loaded = load_spec(spec, tags=tags or None)
    shards = read_shards(shard_results)
    run = merge_shards(loaded, {file: shard.run for file, shard in shards.items()})
    compared = {file: shard.diff.before if shard.diff else None for file, shard in shards.items()}
    if len(set(compared.values())) > 1:
        raise InputError(
            [
                Problem(
                    file, 0, f"compared with {f'baseline {label}' if label else 'no baseline'}: the shards disagree"
                )
                for file, label in compared.items()
            ]
        )
    diffs = [shard.diff for shard in shards.values() if shard.diff is not None]
    merged = merge_diffs(loaded, run, diffs) if diffs else None
    return Outcome(with_gates(run, loaded.suite, merged), merged)
