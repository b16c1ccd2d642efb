"""The three-tier comparison of two runs of one spec (baseline → current), per query and in total. Pure.

Both sides are evaluated alike (same golden variants, same judge and verdict cache, same embedder and
settings: an `Evaluator`), so identical traces show no change and no uplift. Each side is the run's results
(statuses, and figures that are means over a query's runs) and its traces: every run of the query (for
baseline traces given as variants, the golden variant the current run's path layer chose). A change is
classified on all runs, with the kinds trace-diffing tools use:

- regression / fixed / inconclusive: the query's pass-rate verdict (compare/pass_verdicts.py). Run once on each side:
  its status went from pass or warn to fail or error (correctness, a forbidden tool, or whatever else fails it),
  fixed the reverse. With repeated runs on either side: regressed or improved beyond noise by exact tests on the
  pass counts (Holm over the queries), inconclusive when neither that nor `unchanged` could be decided;
- not_run: the agent could not be run on the query for infrastructure reasons ([INFRA]: the model service down or
  rate-limited, a timeout), or each run stopped at a model call its recording has no answer for (runner.replay: the
  request changed): nothing to compare, no verdict, and no regression;
- new_query / removed_query: the query has a trace on one side only, or was removed from the spec;
- tools_changed: the distribution of routes (ordered lists of tool calls) over the runs differs;
  routing_changed: the distribution of handoff targets differs;
- output_changed: the distribution of final answers differs (ignoring surrounding whitespace);
- model_changed: the LLM models the runs called differ (both sides name some);
- cost_changed: the mean cost, tokens or LLM calls per run moved by more than COST_TOLERANCE of the baseline, or
  the mean latency by more than LATENCY_TOLERANCE (the noisiest figure); any rise from a zero baseline counts.
  With repeated runs on either side it is the bootstrap interval of the ratio after / before that must lie
  beyond the tolerance, not the ratio of the means (Delta.interval).

Where both sides saw the requests (engine/token_attribution.py), `tokens` says which components of the input moved,
largest change first, with the tool schemas, tool results and documents that moved in each (a schema's parameters too).

Per query every figure is a mean per run; a total is the sum of those means (one pass over the suite), so a
total moves only when some query's figure moved.

Queries are ordered regressions first, then removed, new, fixed, inconclusive, other changes, unchanged; within a
group, the largest cost-and-latency change first.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from agentci_action.compare.diff_schema import (
    MAX_ARGUMENT_CHANGES,
    AnswerDiff,
    ArgumentChange,
    ChangeKind,
    ComponentChange,
    CostDiff,
    Delta,
    ItemChange,
    NotRun,
    PathDiff,
    QueryDiff,
    RunDiff,
    StatusDiff,
    TokensDiff,
    TotalDiff,
    TurnDiff,
)
from agentci_action.compare.pass_verdicts import (
    PassVerdict,
    pass_verdict,
    run_ratio_interval,
    settle,
    suite_change,
    total_ratio_interval,
)
from agentci_action.compare.significance import ChangeVerdict
from agentci_action.engine import metrics
from agentci_action.engine.arguments import ABSENT, NOT_AN_OBJECT, as_mapping, inert_name, inert_value, same_json
from agentci_action.engine.evaluate_spec import summarize
from agentci_action.engine.results import (
    Aggregates,
    QueryResult,
    RunResult,
    SplitAnswers,
    Status,
    TokenAttribution,
    TurnResult,
)
from agentci_action.engine.score import run_uplift
from agentci_action.engine.stats import most_frequent
from agentci_action.spec.models import AgentCISpec, SignificanceSpec
from agentci_action.trace.canonical import ToolCall, Trace

COST_TOLERANCE = 0.25
LATENCY_TOLERANCE = 0.50
COST_FIGURES = ("cost_usd", "total_tokens", "llm_calls", "latency_ms")
FAILING = (Status.FAIL, Status.ERROR)

# Rank of a query's most important kind, for ordering (unchanged queries come last).
_RANK = {kind: rank for rank, kind in enumerate(ChangeKind)}
MAX_ITEM_CHANGES = 5


@dataclass(frozen=True)
class Side:
    """One run to compare: a label, its results, and its traces by query id."""

    label: str
    run: RunResult
    traces: dict[str, list[Trace]]


@dataclass(frozen=True)
class _Figures:
    """What one side reports for one query.

    Its status, its routes (tools, handoffs, answers) over every run, and its figures: means per run
    (QueryResult.figure).
    """

    status: Status | None
    correctness: Status | None
    routes: list[tuple[str, ...]]
    tool_calls: float | None
    precision: float | None
    recall: float | None
    loops: float | None
    handoffs: list[tuple[str, ...]]
    cost_usd: float | None
    total_tokens: float | None
    llm_calls: float | None
    latency_ms: float | None
    answers: list[str]
    runs: int = 1
    failures: tuple[str, ...] = ()
    models: tuple[str, ...] = ()
    answer: str | None = (
        None  # the most frequent answer, leaked values masked (QueryResult.answer); shown, not compared
    )
    calls: tuple[ToolCall, ...] = ()  # the tool calls of the first run that took the route shown
    not_run: NotRun | None = None  # every run failed without a trace: "infrastructure", "replay_miss" or "crashed"
    tokens: TokenAttribution | None = None  # where the input tokens went (means per run)
    run_statuses: tuple[Status, ...] = ()  # pass / fail / error per run, in run order (the pass counts)
    per_run: dict[str, list[float | None]] = field(default_factory=dict)  # cost figures per run, for their intervals
    turns: tuple[TurnResult, ...] = ()  # a conversation's turns (QueryResult.turns)
    # a conversation's runs, turn by turn: each run's routes and answers of its turns (a call moved from one turn to
    # another changes these, not the whole conversation's route)
    turn_routes: list[tuple[tuple[str, ...], ...]] = field(default_factory=list)
    turn_answers: list[tuple[str, ...]] = field(default_factory=list)
    split: SplitAnswers | None = None  # the most frequent passing and failing answers (QueryResult.split_answers)

    @property
    def tools(self) -> list[str]:
        """The most frequent route (the first seen among equals): the one shown and compared by LCS."""
        route: tuple[str, ...] | None = most_frequent(self.routes)
        return list(route or ())

    @property
    def handoff_targets(self) -> list[str]:
        targets: tuple[str, ...] | None = most_frequent(self.handoffs)
        return list(targets or ())


_NOTHING = _Figures(None, None, [], None, None, None, None, [], None, None, None, None, [])


def same_distribution(before: Sequence[Hashable], after: Sequence[Hashable]) -> bool:
    """Whether each value is as frequent in `before` as in `after` (counts scaled by the run counts)."""
    counts_b, counts_a = Counter(before), Counter(after)
    return set(counts_b) == set(counts_a) and all(
        counts_b[v] * len(after) == counts_a[v] * len(before) for v in counts_b
    )


def _figures(result: QueryResult, runs: list[Trace]) -> _Figures:
    """`result`'s figures (means over its runs) and the routes and answers of `runs`, the traces of the side.

    Those that gave a trace: a run the agent could not do has no route or answer to compare.
    """
    ran = [t for t in runs if t.run_error is None]
    return _Figures(
        status=result.status,
        correctness=result.correctness.status,
        routes=[t.tool_sequence for t in ran],
        tool_calls=result.figure("tool_calls"),
        precision=result.figure("tool_precision"),
        recall=result.figure("tool_recall"),
        loops=result.figure("loops_detected"),
        handoffs=[tuple(h.to for h in t.handoffs) for t in ran],
        cost_usd=result.figure("cost_usd"),
        total_tokens=result.figure("total_tokens"),
        llm_calls=result.figure("llm_calls"),
        latency_ms=result.figure("latency_ms"),
        answers=[t.final_answer.strip() for t in ran],
        runs=result.runs,
        failures=_failures(result),
        models=_models(ran),
        answer=result.answer if ran else None,
        calls=_route_calls(ran),
        not_run=_not_run(runs) if runs and not ran else None,
        tokens=result.tokens,
        run_statuses=_counted_statuses(result, runs),
        per_run=_per_run(ran),
        turns=tuple(result.turns),
        turn_routes=[tuple(turn.tool_sequence for turn in t.turns) for t in ran if t.turns],
        turn_answers=[tuple(turn.final_answer.strip() for turn in t.turns) for t in ran if t.turns],
        split=result.split_answers,
    )


def _failures(result: QueryResult) -> tuple[str, ...]:
    """The messages of its failing layers.

    A query run several times that still passed its gate: the correctness layer's messages, which name its failing runs.
    """
    failing = tuple(
        message
        for layer in (result.correctness, result.path, result.cost)
        if layer.status in FAILING
        for message in layer.messages
    )
    return failing or (tuple(result.correctness.messages) if result.runs > 1 else ())


def _counted_statuses(result: QueryResult, runs: list[Trace]) -> tuple[Status, ...]:
    """Each run's status in run order, the pass counts of its verdict.

    A run a model outage kept from running ([INFRA]) is left out while others ran (an outage is not the agent's doing:
    it would read as a fall).
    """
    statuses = tuple(result.reliability.run_statuses or [result.status])
    if len(statuses) != len(runs):
        return statuses
    counted = tuple(s for s, t in zip(statuses, runs) if not (t.run_error or "").startswith("[INFRA]"))
    return counted or statuses


def _per_run(runs: list[Trace]) -> dict[str, list[float | None]]:
    """Each cost figure of every run that gave a trace (None where unknown): what their bootstrap intervals resample."""
    return {
        "cost_usd": [t.total_cost_usd for t in runs],
        "total_tokens": [t.total_tokens for t in runs],
        "llm_calls": [t.total_llm_calls for t in runs],
        "latency_ms": [t.total_duration_ms for t in runs],
    }


def first_diverged_turn(before: tuple[TurnResult, ...], after: tuple[TurnResult, ...]) -> TurnDiff | None:
    """The first turn whose user message, status, answer or route differs between the sides.

    A turn on one side only differs; a simulated user may say something else. None when neither side is a conversation
    or every turn is the same.
    """
    for index in range(max(len(before), len(after))):
        b = before[index] if index < len(before) else None
        a = after[index] if index < len(after) else None
        if b and a and (b.user, b.status, b.answer, b.tools) == (a.user, a.status, a.answer, a.tools):
            continue
        shown = a or b
        assert shown is not None  # index < the longer side's length
        return TurnDiff(
            turn=shown.turn,
            user=shown.user,
            line=shown.line,
            status=StatusDiff(before=b.status if b else None, after=a.status if a else None),
            answer=AnswerDiff(before=b.answer if b else None, after=a.answer if a else None),
            route_before=b.tools if b else [],
            route_after=a.tools if a else [],
        )
    return None


def _route_calls(runs: list[Trace]) -> tuple[ToolCall, ...]:
    """The tool calls of the first run whose route is the most frequent one (the route the diff shows)."""
    route = most_frequent([t.tool_sequence for t in runs])
    return next((tuple(t.tool_calls) for t in runs if t.tool_sequence == route), ())


def _not_run(runs: list[Trace]) -> NotRun:
    """Why none of a side's runs gave a trace.

    "infrastructure" when each failed so ([INFRA]), "replay_miss" when each stopped at a model call with no recorded
    answer, else "crashed".
    """
    if all((t.run_error or "").startswith("[INFRA]") for t in runs):
        return "infrastructure"
    return "replay_miss" if all((t.model_calls or {}).get("missed") for t in runs) else "crashed"


def argument_changes(before: Sequence[ToolCall], after: Sequence[ToolCall]) -> list[ArgumentChange]:
    """The arguments that differ between the k-th call of each tool before and its k-th call after.

    A reordered route still compares refund with refund. In the order of the calls after; at most MAX_ARGUMENT_CHANGES.
    """
    earlier: dict[str, list[int]] = {}
    for position, call in enumerate(before):
        earlier.setdefault(call.name, []).append(position)
    seen: Counter[str] = Counter()
    changes: list[ArgumentChange] = []
    for position, call in enumerate(after):
        k, seen[call.name] = seen[call.name], seen[call.name] + 1
        positions = earlier.get(call.name, [])
        if k >= len(positions):
            continue
        old = before[positions[k]].arguments
        if same_json(old, call.arguments):
            continue
        for key, was, now in _differing(old, call.arguments):
            changes.append(
                ArgumentChange(
                    tool=inert_name(call.name),
                    step_before=positions[k],
                    step_after=position,
                    key=key,
                    before=was,
                    after=now,
                )
            )
            if len(changes) == MAX_ARGUMENT_CHANGES:
                return changes
    return changes


def _differing(before: object, after: object) -> list[tuple[str, str, str]]:
    """(key, before, after) as inert text for each key whose value differs.

    One '(arguments)' entry when either side is not an object.
    """
    old, new = as_mapping(before), as_mapping(after)
    if old is None or new is None:
        return [(NOT_AN_OBJECT, inert_value(before), inert_value(after))]
    return [
        (
            inert_name(key),
            inert_value(old[key]) if key in old else ABSENT,
            inert_value(new[key]) if key in new else ABSENT,
        )
        for key in dict.fromkeys([*old, *new])
        if key not in old or key not in new or not same_json(old[key], new[key])
    ]


def _shown_answer(side: _Figures | None) -> str | None:
    """The side's answer as reports show it.

    Its result's (leaked values masked), else the most frequent of its runs (a query no longer in the spec, not
    evaluated); None for a side without the query.
    """
    if side is None:
        return None
    return side.answer if side.answer is not None else most_frequent(side.answers)


def _models(runs: list[Trace]) -> tuple[str, ...]:
    return tuple(sorted({call.model for t in runs for call in t.llm_calls if call.model}))


def _unevaluated(runs: list[Trace]) -> _Figures:
    """A query no longer in the spec (nothing to evaluate it by): its runs' routes and mean totals."""

    def mean(values: list[float | None]) -> float | None:
        known = [v for v in values if v is not None]
        return sum(known) / len(values) if len(known) == len(values) else None

    return _Figures(
        None,
        None,
        [t.tool_sequence for t in runs],
        mean([len(t.tool_calls) for t in runs]),
        None,
        None,
        None,
        [tuple(h.to for h in t.handoffs) for t in runs],
        mean([t.total_cost_usd for t in runs]),
        mean([t.total_tokens for t in runs]),
        mean([t.total_llm_calls for t in runs]),
        mean([t.total_duration_ms for t in runs]),
        [t.final_answer.strip() for t in runs],
        len(runs),
        models=_models(runs),
    )


_VERDICT_KINDS = {
    ChangeVerdict.REGRESSED: ChangeKind.REGRESSION,
    ChangeVerdict.IMPROVED: ChangeKind.FIXED,
    ChangeVerdict.INCONCLUSIVE: ChangeKind.INCONCLUSIVE,
}


def _kinds(before: _Figures | None, after: _Figures | None, path: PathDiff, cost: CostDiff) -> list[ChangeKind]:
    """Every kind of change but the verdict's.

    The verdict's kinds (regression, fixed, inconclusive) are added by `_with_verdicts` once the verdicts are settled;
    routes, handoffs and answers are compared as distributions over the runs (a conversation's also turn by turn). A
    side whose runs all failed without a trace has nothing to compare: infrastructure, or a request its recording has no
    answer for, is not_run (not the agent's doing, nothing evaluated), a crash only its verdict.
    """
    if before is None:
        return [ChangeKind.NEW_QUERY]
    if after is None:
        return [ChangeKind.REMOVED_QUERY]
    if after.not_run in ("infrastructure", "replay_miss"):
        return [ChangeKind.NOT_RUN]
    if before.not_run or after.not_run:
        return []
    kinds = []
    if before.models and after.models and before.models != after.models:
        kinds.append(ChangeKind.MODEL_CHANGED)
    if not (
        same_distribution(before.routes, after.routes) and same_distribution(before.turn_routes, after.turn_routes)
    ):
        kinds.append(ChangeKind.TOOLS_CHANGED)
    if not same_distribution(before.handoffs, after.handoffs):
        kinds.append(ChangeKind.ROUTING_CHANGED)
    if not (
        same_distribution(before.answers, after.answers) and same_distribution(before.turn_answers, after.turn_answers)
    ):
        kinds.append(ChangeKind.OUTPUT_CHANGED)
    if any(
        delta.moved_beyond(COST_TOLERANCE) for delta in (cost.cost_usd, cost.total_tokens, cost.llm_calls)
    ) or cost.latency_ms.moved_beyond(LATENCY_TOLERANCE):
        kinds.append(ChangeKind.COST_CHANGED)
    return kinds


@dataclass(frozen=True)
class _RemovedQuery:
    """A query no longer in the spec, named as its saved traces name it: its key and text (no spec file or line)."""

    id: str
    query: str
    file: str = ""
    line: int = 0


def diff_query(
    result: QueryResult | _RemovedQuery,
    before: _Figures | None,
    after: _Figures | None,
    plan: tuple[int, ...] | None = None,
    significance: SignificanceSpec = SignificanceSpec(),
) -> QueryDiff:
    """The three-tier comparison of one query.

    `before` or `after` is None when the query is on one side only; `result` names the query (a _RemovedQuery for one no
    longer in the spec); `plan` the adaptive runs' looks (None: a fixed number of runs). Its verdict waits for
    `_with_verdicts`, which sees every query.
    """
    b, a = before or _NOTHING, after or _NOTHING
    name = result.id
    used_before = {tool for route in b.routes for tool in route}
    used_after = {tool for route in a.routes for tool in route}
    ran = before is not None and after is not None and not (b.not_run or a.not_run)  # both sides have routes to compare
    similarity = metrics.lcs_similarity(a.tools, b.tools) if ran else None
    path = PathDiff(
        tool_calls=Delta.of(b.tool_calls, a.tool_calls),
        tool_precision=Delta.of(b.precision, a.precision),
        tool_recall=Delta.of(b.recall, a.recall),
        sequence_similarity=similarity,
        loops=Delta.of(b.loops, a.loops),
        handoffs=Delta.of(_mean_length(b.handoffs) if before else None, _mean_length(a.handoffs) if after else None),
        tools_added=[t for route in a.routes for t in route if t not in used_before] if not b.not_run else [],
        tools_removed=[t for route in b.routes for t in route if t not in used_after] if not a.not_run else [],
        handoffs_before=b.handoff_targets,
        handoffs_after=a.handoff_targets,
        route_before=b.tools,
        route_after=a.tools,
        argument_changes=argument_changes(b.calls, a.calls) if ran else [],
    )
    path.tools_added = list(dict.fromkeys(path.tools_added))
    path.tools_removed = list(dict.fromkeys(path.tools_removed))
    deltas = {}
    for figure in COST_FIGURES:
        deltas[figure] = delta = Delta.of(getattr(b, figure), getattr(a, figure))
        if b.runs > 1 or a.runs > 1:  # one run per side: the tolerance alone decides
            delta.interval = run_ratio_interval(
                name, figure, b.per_run.get(figure, []), a.per_run.get(figure, []), significance.confidence
            )
    cost = CostDiff(**deltas)
    kinds = _kinds(before, after, path, cost)
    verdict = (
        pass_verdict(b.run_statuses, a.run_statuses, b.status, a.status, plan, significance.drop)
        if before and after and b.run_statuses and a.run_statuses and ChangeKind.NOT_RUN not in kinds
        else None
    )
    return QueryDiff(
        id=name,
        query=result.query,
        file=result.file,
        line=result.line,
        kinds=kinds,
        status=StatusDiff(before=b.status, after=a.status),
        correctness=StatusDiff(before=b.correctness, after=a.correctness),
        why=list(a.failures if ChangeKind.NOT_RUN in kinds else _why(verdict, b, a)),
        not_run=a.not_run if ChangeKind.NOT_RUN in kinds else None,
        pass_rate=verdict,
        answer=AnswerDiff(
            before=_shown_answer(before), after=_shown_answer(after), split_before=b.split, split_after=a.split
        ),
        first_diverged_turn=first_diverged_turn(b.turns, a.turns),
        models_before=list(b.models),
        models_after=list(a.models),
        path=path,
        cost=cost,
        runs=Delta.of(b.runs if before else None, a.runs if after else None),
        tokens=token_changes(b.tokens, a.tokens) if before and after else None,
    )


def _item_changes(component: str, before: TokenAttribution, after: TokenAttribution) -> list[ItemChange]:
    """The component's items whose tokens or parameters moved, largest token change first."""
    old, new = before.items.get(component, {}), after.items.get(component, {})
    changes = []
    for name in dict.fromkeys([*old, *new]):
        tokens = Delta.of(old.get(name, 0), new.get(name, 0))
        parameters = None
        if component == "tool_schemas" and before.parameters.get(name) != after.parameters.get(name):
            parameters = Delta.of(before.parameters.get(name, 0), after.parameters.get(name, 0))
        if tokens.change or parameters is not None:
            changes.append(ItemChange(name=name, tokens=tokens, parameters=parameters))
    changes.sort(key=lambda item: -abs(item.tokens.change or 0))
    return changes[:MAX_ITEM_CHANGES]


def token_changes(before: TokenAttribution | None, after: TokenAttribution | None) -> TokensDiff | None:
    """The components whose tokens moved between two attributions, largest change first; None unless both exist."""
    if before is None or after is None:
        return None
    components = []
    for name in dict.fromkeys([*before.components, *after.components]):
        tokens = Delta.of(before.components.get(name, 0), after.components.get(name, 0))
        if tokens.change:
            components.append(
                ComponentChange(
                    component=name,
                    tokens=tokens,
                    cost_usd=Delta.of(before.costs.get(name, 0.0), after.costs.get(name, 0.0)),
                    items=_item_changes(name, before, after),
                )
            )
    components.sort(key=lambda c: -abs(c.tokens.change or 0))
    return TokensDiff(
        exact=before.exact and after.exact,
        components=components,
        schema_overhead=Delta.of(before.schema_overhead, after.schema_overhead),
        skill_efficiency=Delta.of(before.skill_efficiency, after.skill_efficiency),
    )


def _why(verdict: PassVerdict | None, before: _Figures, after: _Figures) -> tuple[str, ...]:
    """What a regression or a fix is about, by the direction the pass rate moved.

    The failures now when it fell (one run: the status went to failing), those before when it rose; kept by
    `_with_verdicts` only for a regression, a fix or an inconclusive query.
    """
    if verdict is None:
        return ()
    if verdict.method == "one_run":
        fell = verdict.verdict is ChangeVerdict.REGRESSED
        rose = verdict.verdict is ChangeVerdict.IMPROVED
    else:
        rate_before, rate_after = verdict.passed_before / verdict.runs_before, verdict.passed_after / verdict.runs_after
        fell, rose = rate_after < rate_before, rate_after > rate_before
    return after.failures if fell else before.failures if rose else ()


def _with_verdicts(queries: list[QueryDiff], significance: SignificanceSpec) -> None:
    """Settle every query's verdict over all of them (Holm), and give each its verdict's kind in place.

    The kinds: regression, fixed or inconclusive; `why` stays only with those kinds and not_run.
    """
    settle([q.pass_rate for q in queries if q.pass_rate is not None], significance)
    for query in queries:
        verdict_kinds = set(_VERDICT_KINDS.values())
        kinds = [kind for kind in query.kinds if kind not in verdict_kinds]
        found = _VERDICT_KINDS.get(query.pass_rate.verdict) if query.pass_rate else None
        query.kinds = sorted([found, *kinds], key=_RANK.__getitem__) if found else kinds
        if found is None and ChangeKind.NOT_RUN not in kinds:
            query.why = []


def _mean_length(handoffs: list[tuple[str, ...]]) -> float:
    return sum(map(len, handoffs)) / len(handoffs) if handoffs else 0


def change_size(query: QueryDiff) -> float:
    """|Δcost %| + |Δlatency %|, a change from a zero base counting as 100 %: how much a query moved."""
    size = 0.0
    for delta in (query.cost.cost_usd, query.cost.latency_ms):
        if delta.new:
            size += 100.0
        elif delta.percent is not None:
            size += abs(delta.percent)
    return size


def _order(query: QueryDiff) -> tuple[int, float, str]:
    rank = min((_RANK[k] for k in query.kinds), default=len(_RANK))
    return rank, -change_size(query), query.id


def _sum(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def _total(queries: list[QueryDiff], significance: SignificanceSpec) -> TotalDiff:
    """Each side's totals.

    Σ over its queries of their per-run means; with repeated runs on either side, the cost figures' intervals clustered
    by query, and the suite's paired change in pass rate.
    """
    repeated = any(q.pass_rate is not None and q.pass_rate.method == "exact" for q in queries)

    def delta(pick: Callable[[QueryDiff], Delta], figure: str | None = None) -> Delta:
        found = Delta.of(
            _sum([pick(q).before for q in queries if q.runs.before is not None]),
            _sum([pick(q).after for q in queries if q.runs.after is not None]),
        )
        if figure is not None and repeated:
            means = [(q.id, pick(q).before, pick(q).after) for q in queries if q.pass_rate is not None]
            found.interval = total_ratio_interval(figure, means, significance.confidence)
        return found

    def count(when: str, ok: Callable[[Status | None], bool]) -> int:
        return sum(ok(getattr(q.status, when)) for q in queries if getattr(q.runs, when) is not None)

    def passed(status: Status | None) -> bool:
        return status is not None and status not in FAILING

    counts = {kind.value: sum(q.has(kind) for q in queries) for kind in ChangeKind}
    counts["changed"] = sum(q.changed for q in queries)
    counts["unchanged"] = len(queries) - counts["changed"]
    return TotalDiff(
        queries=Delta.of(count("before", lambda s: True), count("after", lambda s: True)),
        passed=Delta.of(count("before", passed), count("after", passed)),
        counts=counts,
        tool_calls=delta(lambda q: q.path.tool_calls),
        loops=delta(lambda q: q.path.loops),
        handoffs=delta(lambda q: q.path.handoffs),
        cost_usd=delta(lambda q: q.cost.cost_usd, "cost_usd"),
        total_tokens=delta(lambda q: q.cost.total_tokens, "total_tokens"),
        llm_calls=delta(lambda q: q.cost.llm_calls, "llm_calls"),
        latency_ms=delta(lambda q: q.cost.latency_ms, "latency_ms"),
        models_before=sorted({m for q in queries for m in q.models_before}),
        models_after=sorted({m for q in queries for m in q.models_after}),
        pass_rate_change=suite_change(
            [q.pass_rate for q in queries if q.pass_rate is not None], significance.confidence
        ),
    )


def diff_runs(
    before: Side,
    after: Side,
    warnings: list[str] | None = None,
    removed: dict[str, list[Trace]] | None = None,
    plans: dict[str, tuple[int, ...]] | None = None,
    significance: SignificanceSpec = SignificanceSpec(),
) -> RunDiff:
    """Compare every query of either side, ordered as the module docstring says.

    Each side's routes and answers are its traces of the query (all its runs). `removed` are the before side's queries
    no longer in the spec, by saved key: shown as removed_query with their traces' figures. `plans` are the looks of the
    queries with adaptive runs (QuerySpec.run_plan); the verdicts are decided at `significance`.
    """
    results_before = {r.id: r for r in before.run.results}
    results_after = {r.id: r for r in after.run.results}
    queries = []
    for key in [*results_after, *(k for k in results_before if k not in results_after)]:
        in_before, in_after = results_before.get(key), results_after.get(key)
        queries.append(
            diff_query(
                in_after or results_before[key],  # the key is on one side at least
                _figures(in_before, before.traces.get(key) or []) if in_before else None,
                _figures(in_after, after.traces.get(key) or []) if in_after else None,
                plan=(plans or {}).get(key),
                significance=significance,
            )
        )
    for key, runs in (removed or {}).items():
        if key not in results_before and key not in results_after and runs:
            queries.append(diff_query(_RemovedQuery(key, runs[0].query or ""), _unevaluated(runs), None))
    _with_verdicts(queries, significance)
    queries.sort(key=_order)
    diff = RunDiff(
        agent=after.run.agent,
        before=before.label,
        after=after.label,
        total=_total(queries, significance),
        queries=queries,
        warnings=list(warnings or []),
        significance=significance,
    )
    return _with_whole_run_figures(diff, before.run, after.run)


def _with_whole_run_figures(diff: RunDiff, before: RunResult, after: RunResult) -> RunDiff:
    """`diff` with what only the two whole runs give.

    Each side's suite aggregates, the scores' uplift, and the judge checks each side could not verify.
    """
    diff.total.suite = suite_deltas(before.summary.aggregates, after.summary.aggregates)
    diff.uplift = run_uplift(after, before)
    unverified: dict[Literal["before", "after"], dict[str, int]] = {
        "before": before.unverified(),
        "after": after.unverified(),
    }
    diff.unverified = {name: reasons for name, reasons in unverified.items() if reasons}
    return diff


MERGED_WITHOUT_BASELINE_RESULTS = (
    "a shard's results file carries no baseline results (written by an earlier AgentCI release): the merged diff "
    "has no uplift, suite figures or unverified counts"
)


def merge_diffs(spec: AgentCISpec, run: RunResult, shards: list[RunDiff]) -> RunDiff:
    """The shards' diffs (each of its own queries, and every removed query) as the diff of their merged `run`.

    Equal to the unsharded run's: every query's changes and the totals, the verdicts settled again over every query
    (Holm over the whole suite), and the whole runs' figures (the uplift, suite aggregates, unverified counts) from the
    baseline side rebuilt as one run of the results each shard carries (`baseline_results`), in spec order, summarised
    as the unsharded diff summarises it.
    """
    queries = list({q.id: q.model_copy(deep=True) for shard in reversed(shards) for q in shard.queries}.values())
    first = shards[0]
    _with_verdicts(queries, first.significance)
    queries.sort(key=_order)
    diff = RunDiff(
        agent=first.agent,
        before=first.before,
        after=first.after,
        total=_total(queries, first.significance),
        queries=queries,
        warnings=list(dict.fromkeys(w for shard in shards for w in shard.warnings)),
        baseline_commit=first.baseline_commit,
        significance=first.significance,
    )
    carried = [shard.baseline_results for shard in shards]
    if any(results is None for results in carried):
        diff.warnings.append(MERGED_WITHOUT_BASELINE_RESULTS)
        return diff
    by_id = {result.id: result for results in carried for result in results or []}
    results = [by_id[q.key] for q in spec.queries if q.key in by_id]
    summary = summarize(results, frozenset(run.summary.fail_on), spec.composite)
    before = RunResult(agent=run.agent, spec=run.spec, spec_hash=run.spec_hash, summary=summary, results=results)
    return _with_whole_run_figures(diff, before, run)


def suite_deltas(before: Aggregates, after: Aggregates) -> dict[str, Delta]:
    """Every suite aggregate, before → after (each side over the queries it evaluated)."""
    return {name: Delta.of(getattr(before, name), getattr(after, name)) for name in Aggregates.model_fields}
