"""One evaluation, as both the CLI and the action run it.

Spec + traces (+ baseline) → RunResult and its diff; or spec + shard results files → the merged RunResult.

The edges (cli/, github/) turn their arguments or inputs into an `Evaluation` (or a merge) and publish the
`Outcome`; everything between reading the files and the results happens here, once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from agentci_action._util.errors import InfraError, InputError, Problem, SpecError
from agentci_action.compare.base_ref import BaseRef, base_reference
from agentci_action.compare.baselines import Reference, load_baseline, only_queries, reference_for, version_reference
from agentci_action.compare.diff import Side, merge_diffs
from agentci_action.compare.diff_sides import baseline_side, current_side, diff_against, evaluate_side
from agentci_action.compare.golden_changes import GoldenChange, golden_changes
from agentci_action.compare.recording_changes import RecordingChange, recording_changes
from agentci_action.compare.suite_gates import judge_gates, with_gates
from agentci_action.compare.verdict_status import with_verdicts
from agentci_action.engine.evaluate_spec import Settings, evaluate_spec, group_traces
from agentci_action.engine.results import ShardInfo
from agentci_action.pipeline.adaptive_runs import next_runs
from agentci_action.pipeline.judge_wiring import JudgeOptions, evaluator_for, judge_warnings
from agentci_action.pipeline.merge import merge_shards
from agentci_action.pipeline.results_files import Outcome, read_shards
from agentci_action.pipeline.shard import select_shard
from agentci_action.spec.advice import advice
from agentci_action.spec.loader import load_spec, select_tags
from agentci_action.spec.models import AgentCISpec
from agentci_action.trace.load import load_traces

NO_BASELINE = "none"


@dataclass(frozen=True)
class Evaluation:
    """What to evaluate; paths as the user gave them (files, directories or globs).

    `baseline` names a saved version; None means the newest whose precheck passed (no baseline when
    there is none), "none" means no baseline. `baseline_traces` are raw accepted traces instead.
    """

    spec: str | AgentCISpec  # the spec YAML's path, or the whole spec already loaded (before any tags)
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
    recordings_at: BaseRef | None = None  # list the runner's recordings changed since this commit (a PR's base)
    goldens_at: BaseRef | None = None  # list the spec's golden queries changed since this commit (a PR's base)


# Runs the agent until each query named has this many runs (its runs so far kept): adaptive runs' next batch.
MoreRuns = Callable[[dict[str, int]], None]
T = TypeVar("T")


def evaluate(request: Evaluation, more_runs: MoreRuns | None = None) -> Outcome:
    """Load the spec, the traces and the baseline, run every layer, compare with the baseline, judge the gates.

    The traces are priced with the spec's pricing; the gates are the suite's.

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
    # once: the baseline's hash and matching need every query
    whole = request.spec if isinstance(request.spec, AgentCISpec) else load_spec(request.spec)
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
                queries=evaluated if request.shard else None,
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
    run.warnings.extend(judge_warnings(evaluator))
    run.warnings.extend(str(warning) for warning in advice(spec))
    if request.shard is None:  # a shard's verdicts wait for the merge: Holm adjusts over every query
        if diff is not None:
            with_verdicts(run, diff, spec.composite)
        with_gates(run, spec.suite, diff)
    recordings = changed_recordings(whole, request.recordings_at, run.warnings)
    return Outcome(run, diff, recordings, changed_goldens(whole, request.goldens_at, run.warnings))


def changed_recordings(spec: AgentCISpec, base: BaseRef | None, warnings: list[str]) -> list[RecordingChange]:
    """The recordings of the spec's runner.replay changed since `base` ([] without either; see _listed)."""
    if base is None or spec.runner is None or spec.runner.replay is None:
        return []
    folder = Path(spec.path).resolve().parent / spec.runner.replay.recordings
    return _listed("recordings", lambda: recording_changes(folder, base), warnings)


def changed_goldens(spec: AgentCISpec, base: BaseRef | None, warnings: list[str]) -> list[GoldenChange]:
    """The spec's golden queries added, changed or removed since `base` ([] without it; see _listed)."""
    if base is None:
        return []
    return _listed("golden queries", lambda: golden_changes(spec, base), warnings)


def _listed(what: str, changes: Callable[[], list[T]], warnings: list[str]) -> list[T]:
    """changes(); a base commit that cannot be read (or whose spec does not load) is a warning instead.

    The evaluation stands without the list: "recordings changed in this PR: cannot be listed (...)".
    """
    try:
        return changes()
    except (InputError, InfraError) as exc:
        warnings.append(f"{what} changed in this PR: cannot be listed ({exc})")
        return []


@dataclass(frozen=True)
class VersionComparison:
    """Two saved versions to compare (`agentci diff`): `compare` against `baseline`.

    `baseline` None: the newest whose precheck passed; that version as saved at `baseline_ref` when given. Evaluated
    with the judge, embedding cache and settings an `Evaluation` has, with progress on stderr under the command's name
    `progress` (None: none).
    """

    spec: str
    baseline: str | None
    compare: str
    judge: JudgeOptions = JudgeOptions()
    embedding_cache: str | None = None
    settings: Settings = Settings()
    baseline_ref: BaseRef | None = None
    progress: str | None = None


def compare_versions(request: VersionComparison) -> Outcome:
    """Saved version `compare` against saved version `baseline`, both evaluated with the current spec.

    Exactly as `agentci test --baseline` evaluates a run (same judge and verdict cache, embedder and settings); the
    suite's gates are judged on `compare` against `baseline`, as `test` judges them on a run. Returns `compare`'s
    results and the diff.
    """
    baseline, compare, baseline_ref = request.baseline, request.compare, request.baseline_ref
    spec = load_spec(request.spec)
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
    with evaluator_for(
        spec, request.judge, request.embedding_cache, request.settings, request.progress, cache_notes
    ) as evaluator:
        after = evaluate_side(spec, compare, compared.runs or {}, reference.variants, evaluator)
        diff = diff_against(spec, reference, after, evaluator)
    with_verdicts(after.run, diff, spec.composite)
    diff.warnings += cache_notes
    diff.gates = judge_gates(spec.suite, after.run, diff)
    diff.warnings += [w for w in compared.warnings if w not in diff.warnings]
    diff.warnings += [w for w in judge_warnings(evaluator) if w not in diff.warnings]
    return Outcome(after.run, diff)


def merge(spec: str, shard_results: list[str], tags: list[str] | None = None) -> Outcome:
    """The shards' results files (paths or globs) as one run of the spec, with its suite gates and diff.

    The spec is loaded with the shards' tags; its suite gates are judged on the whole, and the shards' diffs (each of
    its own queries) combined into the diff of the whole (merge_diffs): the unsharded run's diff, the uplift and suite
    aggregates rebuilt from each shard's baseline side. The recordings and golden queries the PR changed are the
    first shard's: each lists all of them.
    """
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
    if merged is not None:
        with_verdicts(run, merged, loaded.composite)
    first = shards[min(shards)]  # every shard lists the whole spec's and recordings' changes alike
    return Outcome(with_gates(run, loaded.suite, merged), merged, first.recordings, first.goldens)
