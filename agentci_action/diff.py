"""The three-tier comparison of two runs of one spec (baseline → current), per query and in total. Pure.

Both sides are evaluated alike (same golden variants, same judge), so identical traces show no change and
no uplift. Each side is the run's results (statuses, and figures that are means over a query's runs) and
its traces: the route (tools, handoffs, answer) of the baseline side is the golden variant the current
run's path layer chose, that of the current side its first run. A change is classified with the kinds
trace-diffing tools use:

- regression: the query's status went from pass or warn to fail or error (correctness, a forbidden tool, or
  whatever else fails it); fixed: the reverse;
- new_query / removed_query: the query has a trace on one side only, or was removed from the spec;
- tools_changed: the ordered list of tool calls differs; routing_changed: the handoff targets differ;
- output_changed: the final answer differs (ignoring surrounding whitespace);
- cost_changed: cost, tokens or LLM calls moved by more than COST_TOLERANCE of the baseline, or latency
  by more than LATENCY_TOLERANCE (the noisiest figure); any rise from a zero baseline counts.

Queries are ordered regressions first, then removed, new, fixed, other changes, unchanged; within a
group, the largest cost-and-latency change first.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from .engine import metrics
from .engine.correctness import Judge
from .engine.path import closest_variant
from .engine.results import Aggregates, MetricChange, QueryResult, RunResult, Status
from .engine.runner import group_traces, run_spec
from .engine.score import run_uplift
from .spec.models import AgentCISpec, PathSpec
from .trace.models import Trace

if TYPE_CHECKING:
    from .baselines import Reference

DIFF_SCHEMA_VERSION = "agentci.diff/v1"
COST_TOLERANCE = 0.25
LATENCY_TOLERANCE = 0.50
FAILING = (Status.FAIL, Status.ERROR)


class ChangeKind(str, Enum):
    REGRESSION = "regression"
    REMOVED_QUERY = "removed_query"
    NEW_QUERY = "new_query"
    FIXED = "fixed"
    TOOLS_CHANGED = "tools_changed"
    ROUTING_CHANGED = "routing_changed"
    OUTPUT_CHANGED = "output_changed"
    COST_CHANGED = "cost_changed"


# Rank of a query's most important kind, for ordering (unchanged queries come last).
_RANK = {kind: rank for rank, kind in enumerate(ChangeKind)}


class Delta(BaseModel):
    """before → after. change = after − before; percent = 100·change/before, None when before is 0 or unknown.

    `new` is true when before is 0 and after is not: the percentage would divide by zero.
    """

    before: int | float | None  # counts stay integers in the JSON
    after: int | float | None
    change: int | float | None = None
    percent: float | None = None
    new: bool = False

    @classmethod
    def of(cls, before: float | None, after: float | None) -> Delta:
        if before is None or after is None:
            return cls(before=before, after=after)
        change = after - before
        return cls(
            before=before,
            after=after,
            change=change,
            percent=100.0 * change / before if before else None,
            new=before == 0 and after != 0,
        )

    def moved_beyond(self, tolerance: float) -> bool:
        """|change| > tolerance × |before|, or any change from a zero base."""
        if self.change is None or self.change == 0:
            return False
        return self.new or abs(self.change) > tolerance * abs(self.before or 0)


class StatusDiff(BaseModel):
    """A status before → after; null on the side without the query (or, before, for a query no longer in the spec)."""

    before: Status | None
    after: Status | None


class PathDiff(BaseModel):
    tool_calls: Delta
    tool_precision: Delta
    tool_recall: Delta
    sequence_similarity: float | None = Field(
        None, description="LCS similarity of the after tool list to the before one: 2·|LCS|/(|P|+|R|)."
    )
    loops: Delta
    handoffs: Delta
    tools_added: list[str] = Field(default_factory=list, description="Tools used after but not before.")
    tools_removed: list[str] = Field(default_factory=list, description="Tools used before but not after.")
    handoffs_before: list[str] = Field(default_factory=list)
    handoffs_after: list[str] = Field(default_factory=list)


class CostDiff(BaseModel):
    cost_usd: Delta
    total_tokens: Delta
    llm_calls: Delta
    latency_ms: Delta


class QueryDiff(BaseModel):
    id: str
    query: str
    file: str = ""
    line: int = 0
    kinds: list[ChangeKind] = Field(default_factory=list, description="Empty when nothing changed.")
    runs: Delta = Field(description="Runs on each side: path and cost figures are means over them.")
    status: StatusDiff = Field(
        description="The query's status (regression and fixed follow it: correctness, forbidden tools, …)."
    )
    correctness: StatusDiff
    path: PathDiff
    cost: CostDiff

    @property
    def changed(self) -> bool:
        return bool(self.kinds)

    def has(self, kind: ChangeKind) -> bool:
        return kind in self.kinds


class TotalDiff(BaseModel):
    """Sums over each side's whole run; `correctness_passed` counts queries whose correctness did not fail."""

    queries: Delta
    correctness_passed: Delta
    counts: dict[str, int] = Field(description="Queries per change kind, plus 'changed' and 'unchanged'.")
    tool_calls: Delta
    loops: Delta
    handoffs: Delta
    cost_usd: Delta
    total_tokens: Delta
    llm_calls: Delta
    latency_ms: Delta
    suite: dict[str, Delta] = Field(
        default_factory=dict,
        description="Each side's summary.aggregates (pass_rate, p95_latency_ms, …), before → after.",
    )


class RunDiff(BaseModel):
    schema_version: str = DIFF_SCHEMA_VERSION
    agent: str
    before: str = Field(description="Label of the baseline side, e.g. a version.")
    after: str = Field(description="Label of the compared side: a version or 'current'.")
    total: TotalDiff
    uplift: dict[str, MetricChange] = Field(
        default_factory=dict,
        description="composite_score, pass_rate and cost_usd of the whole run, after against before: "
        "uplift = (after − before) / before, null when before is 0 or unknown.",
    )
    queries: list[QueryDiff]
    warnings: list[str] = Field(default_factory=list)

    @property
    def regressions(self) -> list[QueryDiff]:
        return [q for q in self.queries if q.has(ChangeKind.REGRESSION)]


@dataclass(frozen=True)
class Side:
    """One run to compare: a label, its results, and its traces by query id."""

    label: str
    run: RunResult
    traces: dict[str, list[Trace]]


@dataclass(frozen=True)
class _Figures:
    """What one side reports for one query: its status, its route (tools, handoffs, answer) from one trace, and
    its figures: means over the runs (QueryResult.figure), with `runs` to scale them back to totals."""

    status: Status | None
    correctness: Status | None
    tools: list[str]
    tool_calls: float | None
    precision: float | None
    recall: float | None
    loops: float | None
    handoffs: list[str]
    cost_usd: float | None
    total_tokens: float | None
    llm_calls: float | None
    latency_ms: float | None
    answer: str
    runs: int = 1


_NOTHING = _Figures(None, None, [], None, None, None, None, [], None, None, None, None, "")


def _figures(result: QueryResult, route: Trace | None) -> _Figures:
    """`result`'s figures (means over its runs) and the route of `route`, the trace that stands for the side."""
    return _Figures(
        status=result.status,
        correctness=result.correctness.status,
        tools=route.tool_names if route else [],
        tool_calls=result.figure("tool_calls"),
        precision=result.figure("tool_precision"),
        recall=result.figure("tool_recall"),
        loops=result.figure("loops_detected"),
        handoffs=[h.to for h in route.handoffs] if route else [],
        cost_usd=result.figure("cost_usd"),
        total_tokens=result.figure("total_tokens"),
        llm_calls=result.figure("llm_calls"),
        latency_ms=result.figure("latency_ms"),
        answer=route.final_answer if route else "",
        runs=result.runs,
    )


def _unevaluated(runs: list[Trace]) -> _Figures:
    """A query no longer in the spec (nothing to evaluate it by): its first trace's route and totals."""
    first = runs[0]
    return _Figures(
        None,
        None,
        first.tool_names,
        len(first.tool_calls),
        None,
        None,
        None,
        [h.to for h in first.handoffs],
        first.total_cost_usd,
        first.total_tokens,
        first.total_llm_calls,
        first.total_duration_ms,
        first.final_answer,
    )


def _kinds(before: _Figures | None, after: _Figures | None, path: PathDiff, cost: CostDiff) -> list[ChangeKind]:
    """Regression / fixed follow the query's status (what blocks the run: correctness, a forbidden tool, …)."""
    if before is None:
        return [ChangeKind.NEW_QUERY]
    if after is None:
        return [ChangeKind.REMOVED_QUERY]
    kinds = []
    if before.status not in FAILING and after.status in FAILING:
        kinds.append(ChangeKind.REGRESSION)
    if before.status in FAILING and after.status not in FAILING:
        kinds.append(ChangeKind.FIXED)
    if before.tools != after.tools:
        kinds.append(ChangeKind.TOOLS_CHANGED)
    if before.handoffs != after.handoffs:
        kinds.append(ChangeKind.ROUTING_CHANGED)
    if before.answer.strip() != after.answer.strip():
        kinds.append(ChangeKind.OUTPUT_CHANGED)
    if any(
        delta.moved_beyond(COST_TOLERANCE) for delta in (cost.cost_usd, cost.total_tokens, cost.llm_calls)
    ) or cost.latency_ms.moved_beyond(LATENCY_TOLERANCE):
        kinds.append(ChangeKind.COST_CHANGED)
    return kinds


def diff_query(
    result: QueryResult | None, before: _Figures | None, after: _Figures | None, key: str = "", text: str = ""
) -> QueryDiff:
    """The three-tier comparison of one query; `before` or `after` is None when the query is on one side only;
    `result` is None for a query no longer in the spec (then `key` and `text` name it)."""
    b, a = before or _NOTHING, after or _NOTHING
    similarity = metrics.lcs_similarity(a.tools, b.tools) if before and after else None
    path = PathDiff(
        tool_calls=Delta.of(b.tool_calls, a.tool_calls),
        tool_precision=Delta.of(b.precision, a.precision),
        tool_recall=Delta.of(b.recall, a.recall),
        sequence_similarity=similarity,
        loops=Delta.of(b.loops, a.loops),
        handoffs=Delta.of(len(b.handoffs) if before else None, len(a.handoffs) if after else None),
        tools_added=[t for t in dict.fromkeys(a.tools) if t not in b.tools],
        tools_removed=[t for t in dict.fromkeys(b.tools) if t not in a.tools],
        handoffs_before=b.handoffs,
        handoffs_after=a.handoffs,
    )
    cost = CostDiff(
        cost_usd=Delta.of(b.cost_usd, a.cost_usd),
        total_tokens=Delta.of(b.total_tokens, a.total_tokens),
        llm_calls=Delta.of(b.llm_calls, a.llm_calls),
        latency_ms=Delta.of(b.latency_ms, a.latency_ms),
    )
    return QueryDiff(
        id=result.id if result else key,
        query=result.query if result else text,
        file=result.file if result else "",
        line=result.line if result else 0,
        kinds=_kinds(before, after, path, cost),
        status=StatusDiff(before=b.status, after=a.status),
        correctness=StatusDiff(before=b.correctness, after=a.correctness),
        path=path,
        cost=cost,
        runs=Delta.of(b.runs if before else None, a.runs if after else None),
    )


def change_size(query: QueryDiff) -> float:
    """|Δcost %| + |Δlatency %|, a change from a zero base counting as 100 %: how much a query moved."""
    size = 0.0
    for delta in (query.cost.cost_usd, query.cost.latency_ms):
        if delta.new:
            size += 100.0
        elif delta.percent is not None:
            size += abs(delta.percent)
    return size


def _order(query: QueryDiff) -> tuple:
    rank = min((_RANK[k] for k in query.kinds), default=len(_RANK))
    return rank, -change_size(query), query.id


def _sum(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def _total(queries: list[QueryDiff]) -> TotalDiff:
    """Each side's totals over its runs: Σ per-query mean × runs (for cost and tokens, the summary's totals)."""

    def side(pick, when: str) -> float | None:
        return _sum(
            [
                None if pick(q) is None else pick(q) * getattr(q.runs, when)
                for q in queries
                if getattr(q.runs, when) is not None
            ]
        )

    def delta(pick) -> Delta:
        return Delta.of(side(lambda q: pick(q).before, "before"), side(lambda q: pick(q).after, "after"))

    def count(when: str, ok) -> int:
        return sum(ok(getattr(q.correctness, when)) for q in queries if getattr(q.runs, when) is not None)

    counts = {kind.value: sum(q.has(kind) for q in queries) for kind in ChangeKind}
    counts["changed"] = sum(q.changed for q in queries)
    counts["unchanged"] = len(queries) - counts["changed"]
    return TotalDiff(
        queries=Delta.of(count("before", lambda s: True), count("after", lambda s: True)),
        correctness_passed=Delta.of(
            count("before", lambda s: s not in (None, *FAILING)), count("after", lambda s: s not in (None, *FAILING))
        ),
        counts=counts,
        tool_calls=delta(lambda q: q.path.tool_calls),
        loops=delta(lambda q: q.path.loops),
        handoffs=delta(lambda q: q.path.handoffs),
        cost_usd=delta(lambda q: q.cost.cost_usd),
        total_tokens=delta(lambda q: q.cost.total_tokens),
        llm_calls=delta(lambda q: q.cost.llm_calls),
        latency_ms=delta(lambda q: q.cost.latency_ms),
    )


def chosen_variants(spec: AgentCISpec, variants: dict[str, list[Trace]], after: Side) -> dict[str, Trace]:
    """Per query, the golden variant the path layer chose for the after side's first run (closest_variant, the
    path layer's own choice; with one run it is that run's `baseline_variant`)."""
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


def diff_runs(
    before: Side,
    after: Side,
    warnings: list[str] | None = None,
    routes: dict[str, Trace] | None = None,
    removed: dict[str, list[Trace]] | None = None,
) -> RunDiff:
    """Compare every query of either side, ordered as the module docstring says.

    `routes` are the before side's route per query (the golden variant the path layer chose: chosen_variants),
    else its first run. `removed` are the before side's queries no longer in the spec, by saved key: shown as
    removed_query with their first trace's figures.
    """
    results_before = {r.id: r for r in before.run.results}
    results_after = {r.id: r for r in after.run.results}
    queries = []
    for key in [*results_after, *(k for k in results_before if k not in results_after)]:
        in_before, in_after = results_before.get(key), results_after.get(key)
        queries.append(
            diff_query(
                in_after or in_before,
                _figures(in_before, (routes or {}).get(key) or _first(before.traces.get(key))) if in_before else None,
                _figures(in_after, _first(after.traces.get(key))) if in_after else None,
            )
        )
    for key, runs in (removed or {}).items():
        if key not in results_before and key not in results_after and runs:
            queries.append(diff_query(None, _unevaluated(runs), None, key, runs[0].query or ""))
    queries.sort(key=_order)
    total = _total(queries)
    total.suite = suite_deltas(before.run.summary.aggregates, after.run.summary.aggregates)
    return RunDiff(
        agent=after.run.agent,
        before=before.label,
        after=after.label,
        total=total,
        uplift=run_uplift(after.run, before.run),
        queries=queries,
        warnings=list(warnings or []),
    )


def suite_deltas(before: Aggregates, after: Aggregates) -> dict[str, Delta]:
    """Every suite aggregate, before → after (each side over the queries it evaluated)."""
    return {name: Delta.of(getattr(before, name), getattr(after, name)) for name in Aggregates.model_fields}


def evaluate_side(
    spec: AgentCISpec,
    label: str,
    by_query: dict[str, list[Trace]],
    variants: dict[str, list[Trace]] | None = None,
    judge: Judge | None = None,
) -> Side:
    """Evaluate the queries of `spec` that have traces in `by_query` against the golden `variants`, with
    `judge` (None: judge checks skip): one side of a diff. Both sides of a diff are evaluated alike.

    A saved version keeps the runs it was recorded with: the spec's `runs` (raised since, say) is not asked of it."""
    queries = [q.model_copy(update={"runs": None}) for q in spec.queries if by_query.get(q.key)]
    run = run_spec(
        spec, [t for q in queries for t in by_query[q.key]], queries=queries, baselines=variants, judge=judge
    )
    return Side(label, run, by_query)


def _first(runs: list[Trace] | None) -> Trace | None:
    return runs[0] if runs else None


def diff_against(spec: AgentCISpec, reference: Reference, after: Side, judge: Judge | None = None) -> RunDiff:
    """The reference's traces evaluated as `after` was (same variants, same judge), then compared with it, each
    query with the variant the path layer chose. Baseline traces given as variants are evaluated per query on
    that chosen variant alone."""
    routes = chosen_variants(spec, reference.variants, after)
    runs = reference.runs if reference.runs is not None else {key: [trace] for key, trace in routes.items()}
    before = evaluate_side(spec, reference.label, runs, reference.variants, judge)
    return diff_runs(before, after, reference.warnings, routes, reference.removed)


def current_vs_baseline(
    spec: AgentCISpec, run: RunResult, traces: list[Trace], reference: Reference, judge: Judge | None = None
) -> RunDiff:
    """The diff `agentci test` (and the action) shows: the baseline evaluated now, as the current run was, against it."""
    return diff_against(spec, reference, Side("current", run, group_traces(spec.queries, traces).by_query), judge)
