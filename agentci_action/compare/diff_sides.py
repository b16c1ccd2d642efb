"""The evaluation of both sides of a diff.

Each side's traces evaluated alike (same golden variants, same judge and verdict cache, same embedder and settings: an
`Evaluator`), then compared (compare/diff.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from agentci_action.compare.diff import Side, diff_runs
from agentci_action.compare.diff_schema import RunDiff
from agentci_action.engine.correctness import Judge
from agentci_action.engine.evaluate_spec import Observe, Settings, evaluate_spec, group_traces
from agentci_action.engine.path import closest_variant
from agentci_action.engine.results import (
    RunResult,
)
from agentci_action.spec.models import AgentCISpec, PathSpec
from agentci_action.trace.canonical import Trace

if TYPE_CHECKING:
    from agentci_action.compare.baselines import Reference
    from agentci_action.engine.checks.answer import Embedder


@dataclass(frozen=True)
class Evaluator:
    """What evaluates a side.

    The judge (None: judge checks skip) with its verdict cache, the embedder for semantic similarity (None: those
    checks skip), and the settings. Both sides of a diff use the same one. `observe` is told of each side's
    evaluation (progress on stderr, from the command line and the action).
    """

    judge: Judge | None = None
    embedder: Embedder | None = None
    settings: Settings = field(default_factory=Settings)
    observe: Observe | None = None


def chosen_variants(spec: AgentCISpec, variants: dict[str, list[Trace]], after: Side) -> dict[str, Trace]:
    """Per query, the golden variant the path layer chose for the after side's first run.

    closest_variant, the path layer's own choice; with one run it is that run's `baseline_variant`.
    """
    chosen = {}
    for query in spec.queries:
        options, runs = variants.get(query.key), after.traces.get(query.key)
        if options and runs:
            ranking = query.path or PathSpec()
            index, _ = closest_variant(
                runs[0].tool_names, [v.tool_names for v in options], ranking.match_mode, ranking.sequence_metric
            )
            chosen[query.key] = options[index]
    return chosen


def evaluate_side(
    spec: AgentCISpec,
    label: str,
    by_query: dict[str, list[Trace]],
    variants: dict[str, list[Trace]] | None = None,
    evaluator: Evaluator = Evaluator(),
) -> Side:
    """Evaluate the queries of `spec` that have traces in `by_query` against the golden `variants` with `evaluator`.

    One side of a diff. Both sides of a diff are evaluated alike.

    A saved version keeps the runs it was recorded with: the spec's `runs` (raised since, say) is not asked of it.
    """
    queries = [q.model_copy(update={"runs": None}) for q in spec.queries if by_query.get(q.key)]
    run = evaluate_spec(
        spec,
        [t for q in queries for t in by_query[q.key]],
        queries=queries,
        baselines=variants,
        judge=evaluator.judge,
        embedder=evaluator.embedder,
        settings=evaluator.settings,
        on_result=evaluator.observe(label, len(queries)) if evaluator.observe else None,
    )
    return Side(label, run, by_query)


def baseline_side(spec: AgentCISpec, reference: Reference, after: Side, evaluator: Evaluator = Evaluator()) -> Side:
    """The reference's traces evaluated as `after` was (same variants, same evaluator).

    Baseline traces given as variants are evaluated per query on the variant the path layer chose for after's first run
    alone.
    """
    if reference.runs is not None:
        runs = reference.runs
    else:
        runs = {key: [trace] for key, trace in chosen_variants(spec, reference.variants, after).items()}
    return evaluate_side(spec, reference.label, runs, reference.variants, evaluator)


def diff_against(
    spec: AgentCISpec,
    reference: Reference,
    after: Side,
    evaluator: Evaluator = Evaluator(),
    before: Side | None = None,
    *,
    shard: bool = False,
) -> RunDiff:
    """`after` compared with the reference's side.

    `baseline_side`; `before` when the caller has it already: adaptive runs compare again after each batch with the same
    baseline. A `shard`'s diff carries the baseline side's results, for the merge (merge_diffs).
    """
    before = before or baseline_side(spec, reference, after, evaluator)
    plans = {q.key: plan for q in spec.queries if (plan := q.run_plan)}
    diff = diff_runs(before, after, reference.warnings, reference.removed, plans, spec.significance)
    diff.baseline_commit = reference.commit
    diff.baseline_results = before.run.results if shard else None
    return diff


def current_side(spec: AgentCISpec, run: RunResult, traces: list[Trace]) -> Side:
    """The current run as the after side of a diff: its results and its traces by query."""
    return Side("current", run, group_traces(spec.queries, traces).by_query)
