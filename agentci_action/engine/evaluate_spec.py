"""Evaluate a spec's queries against their traces: correctness → path → cost, then the summary.

Each trace of a query is one run, evaluated on its own; engine/repeated_runs.py combines a query's runs
(pass-rate gate, reliability statistics, score). With a shard, only that shard's queries are evaluated.

A query blocks the merge (exit 1) when a layer named in fail-on fails: `correctness` blocks on any check
failing hard (severity fail) in any layer, e.g. a forbidden tool; `path` and `cost` also block on their warnings.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from agentci_action._util.errors import Problem, TraceError
from agentci_action._util.gcpause import gc_paused
from agentci_action.engine.checks import evaluate_checks, mask_layers
from agentci_action.engine.checks.answer import Embedder
from agentci_action.engine.checks.leakage import Leak, redact
from agentci_action.engine.conversation import (
    EvaluateExchange,
    cut_short,
    evaluate_turns,
    left_unrun,
    merged_layers,
    secrets_masked,
    simulated_turn_results,
    turn_query,
    user_checks,
)
from agentci_action.engine.correctness import Judge, asks_for_judge, evaluate_correctness
from agentci_action.engine.cost import evaluate_cost
from agentci_action.engine.path import evaluate_path
from agentci_action.engine.process_metrics import evaluate_process
from agentci_action.engine.repeated_runs import Run, combine_runs
from agentci_action.engine.results import (
    ERROR,
    FAIL,
    LAYERS,
    PASS,
    SKIP,
    WARN,
    Check,
    JudgeUsage,
    LayerResult,
    ModelCalls,
    QueryResult,
    RunResult,
    ShardInfo,
    SplitAnswers,
    Status,
    Summary,
    TurnResult,
)
from agentci_action.engine.score import letter_grade, suite_composite_score
from agentci_action.engine.stats import cost_of_pass, most_frequent, tidy
from agentci_action.engine.suite_figures import CheckTally, TallyCounter, aggregate, check_tally
from agentci_action.engine.token_attribution import query_tokens, suite_tokens
from agentci_action.spec.models import (
    AgentCISpec,
    CompositeWeights,
    ProcessSpec,
    QuerySpec,
    private_attributes,
    spec_hash,
)
from agentci_action.trace.canonical import Trace

DEFAULT_FAIL_ON = frozenset({"correctness", "suite"})  # suite: the spec's `suite:` gates (compare/suite_gates.py)
OnResult = Callable[[QueryResult], None]
# Told that `count` queries of a side (e.g. "current run", a baseline version) are about to be evaluated; returns
# what to call with each one's result, or None to be told nothing (e.g. progress, when nothing slow is to come).
Observe = Callable[[str, int], OnResult | None]
MAX_VARIANTS = 5  # accepted golden traces per query


@dataclass(frozen=True)
class Settings:
    fail_on: frozenset[str] = DEFAULT_FAIL_ON
    workers: int = 4


@dataclass
class Matched:
    """Traces grouped by query id, plus notes on traces that matched nothing."""

    by_query: dict[str, list[Trace]]
    unmatched: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # spans without message content (once per file), extra runs


def content_notes(traces: list[Trace]) -> list[str]:
    """One note per trace file whose spans carry no message content, naming the instrumentation's switch."""
    notes: dict[str, str] = {}
    for trace in traces:
        switch = trace.metadata.get("content_missing")
        if not switch:
            continue
        file = trace.source.rpartition(":")[0] or trace.source
        if file not in notes:
            notes[file] = (
                f"{file}: the spans record no message content (no prompt, answer or tool call), so answer and "
                f"path checks see nothing: {switch}"
            )
    return list(notes.values())


def group_traces(
    queries: list[QuerySpec],
    traces: list[Trace],
    all_queries: list[QuerySpec] | None = None,
    keys: list[str] | None = None,
) -> Matched:
    """Group traces by query: by `id`, else by exact `query` text; runs sorted by their `run` index.

    A trace matching no query of the spec at all is noted in `unmatched`; one matching a query
    of `all_queries` that is not in `queries` (filtered out by tags) is ignored. `keys`: those queries' keys, in order,
    when the caller has read them.
    """
    universe = all_queries or queries
    if keys is None:
        keys = [q.key for q in universe]  # read once: a property of a pydantic model, slow to read
    every: dict[str, list[Trace]] = {key: [] for key in keys}  # each query's traces, by its key (its id)
    by_text: dict[str, QuerySpec] | None = None  # made when a trace first needs it: most are matched by id
    unmatched = []
    for trace in traces:
        runs = every.get(trace_id) if (trace_id := trace.id) else None
        if runs is None and trace.query is not None:
            if by_text is None:
                by_text = {}
                for q in universe:
                    by_text.setdefault(q.query, q)
            query = by_text.get(trace.query)
            runs = None if query is None else every[query.key]
        if runs is None:
            label = f"id {trace.id!r}" if trace.id else f"query {trace.query!r}"
            unmatched.append(f"{trace.source}: trace with {label} matches no query in the spec")
            continue
        runs.append(trace)
    # Over every query of the spec, like `unmatched`: each shard then warns alike and merged shards equal the run.
    extra = [
        extra_runs_note(q, runs)
        for q, key in zip(universe, keys)
        if len(runs := every[key]) > 1 and unasked_runs(q, runs)  # most queries have one trace: no call
    ]
    grouped = every if universe is queries else {q.key: list(every[q.key]) for q in queries}
    for runs in grouped.values():
        if len(runs) > 1:
            runs.sort(key=_run_order)
    return Matched(grouped, unmatched, content_notes(traces) + extra)


def _run_order(trace: Trace) -> int:
    return trace.run if trace.run is not None else -1


def check_variant_counts(queries: list[QuerySpec], baselines: dict[str, list[Trace]]) -> None:
    """Raises TraceError for a query whose baseline holds more than MAX_VARIANTS accepted traces."""
    if all(len(variants) <= MAX_VARIANTS for variants in baselines.values()):
        return  # most often told without reading each query's key (a property of a pydantic model, slow to read)
    problems = [
        Problem(
            query.file,
            query.line,
            f"query {query.key!r} has {len(variants)} baseline traces (variants); at most {MAX_VARIANTS} are "
            f"accepted, the first extra one is {variants[MAX_VARIANTS].source or 'unnamed'}",
        )
        for query in queries
        if len(variants := baselines.get(query.key) or []) > MAX_VARIANTS
    ]
    if problems:
        raise TraceError(problems)


def match_traces(queries: list[QuerySpec], traces: list[Trace], all_queries: list[QuerySpec] | None = None) -> Matched:
    """group_traces, then raise TraceError naming every query in `queries` with no trace or fewer than its `runs`."""
    matched = group_traces(queries, traces, all_queries)
    require_traces(queries, [q.key for q in queries], matched.by_query)
    return matched


def require_traces(queries: list[QuerySpec], keys: list[str], by_query: dict[str, list[Trace]]) -> None:
    """Raise TraceError naming every query with no trace in `by_query` or fewer than its `runs`.

    `keys` are the queries' keys, in order (the caller's: a property of a pydantic model, slow to read).
    """
    problems = []
    for q, key in zip(queries, keys):
        found = len(by_query.get(key) or ())
        if not found:
            problems.append(Problem(q.file, q.line, f"no trace for query {key!r} ({q.query[:60]!r})"))
        elif q.runs is not None and found < q.min_runs:
            asked = f"at least {q.min_runs} runs" if q.run_plan else f"runs: {q.min_runs}"
            problems.append(
                Problem(q.file, q.line, f"query {key!r} expects {asked} but has {found} trace{'s' * (found != 1)}")
            )
    if problems:
        raise TraceError(problems)


def unasked_runs(query: QuerySpec, traces: list[Trace]) -> bool:
    """More traces than the runs the spec asks for, not told apart as repeats: the mark of a file appended to by reruns.

    The runs asked for: 1 without `runs:`, a range's max. Not told apart as intended repeats by their `run` indices (an
    index missing or repeated).
    """
    if len(traces) <= query.max_runs:
        return False
    indexes = [t.run for t in traces]
    return None in indexes or len(set(indexes)) < len(indexes)


def extra_runs_note(query: QuerySpec, traces: list[Trace]) -> str:
    """The warning for a query with more traces than the runs its spec asks for (1 without `runs:`, a range's max)."""
    asked = query.max_runs
    files = list(dict.fromkeys(t.source.rpartition(":")[0] or t.source for t in traces))
    return (
        f"{query.file}:{query.line}: query {query.key!r} has {len(traces)} traces but the spec asks for "
        f"{asked} run{'s' * (asked != 1)}: each trace is evaluated as a repeated run. A trace file that several "
        f"recordings appended to holds old runs too ({', '.join(files[:3])}): write each recording to a fresh "
        f"file, or set `runs: {len(traces)}` if the repeats are meant."
    )


_SOFT_BLOCKING = (FAIL, WARN)  # what a path or cost layer named in fail-on blocks on


def is_blocking(statuses: list[Status], fail_on: frozenset[str]) -> bool:
    """Whether a query whose layers have these statuses (correctness, path, cost) blocks under fail-on."""
    if "correctness" in fail_on and FAIL in statuses:
        return True
    _, path, cost = statuses
    return ("path" in fail_on and path in _SOFT_BLOCKING) or ("cost" in fail_on and cost in _SOFT_BLOCKING)


def query_status(statuses: list[Status], blocking: bool) -> Status:
    """From its layers' statuses: error > fail (a layer failed, or a warning blocks) > warn > pass."""
    if ERROR in statuses:
        return ERROR
    if blocking or FAIL in statuses:
        return FAIL
    if WARN in statuses:
        return WARN
    return PASS


def _with_process(process: ProcessSpec, trace: Trace, path: LayerResult) -> LayerResult:
    """The path layer with the process metrics (and their threshold checks) added."""
    details, checks = evaluate_process(process, trace)
    if checks:
        return LayerResult.from_checks(path.checks + checks, {**path.details, **details})
    return path.model_copy(update={"details": {**path.details, **details}}) if details else path


def _evaluate_run(
    query: QuerySpec, trace: Trace, variants: list[Trace], exchange: EvaluateExchange, fail_on: frozenset[str]
) -> tuple[dict[str, LayerResult], list[dict[str, LayerResult]]]:
    """The run's layers, and a conversation's turns' layers.

    engine/conversation.py: each turn, and the whole, by `exchange`, the query's _evaluate_exchange. A run `agentci run`
    got no trace from is an error, with nothing else evaluated.
    """
    if trace.run_error is not None:
        return failed_run_layers(trace.run_error), []
    if query.simulated_user is not None:
        return _simulated_run(query, trace, variants, exchange), []
    whole = exchange(query, trace, variants)
    if query.turns is None:
        return whole, []
    turns = evaluate_turns(query, trace, variants, exchange, lambda layers: _blocks(layers, fail_on))
    return merged_layers(whole, turns), turns


def _simulated_run(
    query: QuerySpec, trace: Trace, variants: list[Trace], exchange: EvaluateExchange
) -> dict[str, LayerResult]:
    """A simulated user's conversation, judged whole.

    How the user ended it first (user_checks), then the query's own correctness checks; one the spend cap cut short is
    left unfinished (its other checks not evaluated).
    """
    ended = user_checks(query, trace)
    if cut_short(trace):
        skipped = LayerResult.from_checks(
            [Check("simulated_user", SKIP, "not evaluated: the conversation is unfinished")]
        )
        return {"correctness": LayerResult.from_checks(ended), "path": skipped, "cost": skipped}
    whole = exchange(query, trace, variants)
    own = whole["correctness"]
    return {**whole, "correctness": LayerResult.from_checks(ended + own.checks, own.details)}


def _blocks(layers: dict[str, LayerResult], fail_on: frozenset[str]) -> bool:
    return is_blocking([layers[name].status for name in LAYERS], fail_on)


def turn_stops(query: QuerySpec, index: int, reply: Trace, fail_on: frozenset[str] = DEFAULT_FAIL_ON) -> bool:
    """Whether a conversation's runner ends it after turn `index` (from 0).

    The query says stop_on_failure and the turn's checks block, judged as the evaluation will judge them but without a
    judge or baseline (those checks skip here), so the runner never calls a model of its own.
    """
    if not query.stop_on_failure:
        return False
    return _blocks(_evaluate_exchange(turn_query(query, index), reply, [], None, None, []), fail_on)


def _evaluate_exchange(
    query: QuerySpec,
    trace: Trace,
    variants: list[Trace],
    judge: Judge | None,
    embedder: Embedder | None,
    leaks: list[Leak],
) -> dict[str, LayerResult]:
    """Path compares with the closest baseline variant; cost with that same variant (the route the agent took).

    The query's `checks:` block is evaluated once and merged into each layer; leaked values are masked in all, and added
    to `leaks` (the query's answer is masked with them too).
    """
    extra = evaluate_checks(query, trace, judge, embedder)
    path = evaluate_path(query.path, trace, variants, extra.by_layer["path"])
    baseline = variants[path.details["baseline_variant"]] if variants else None
    process = query.process
    layers = {
        "correctness": evaluate_correctness(query, trace, judge, extra.by_layer["correctness"]),
        "path": path if process is None else _with_process(process, trace, path),  # most queries: no process block
        "cost": evaluate_cost(query.cost, trace, baseline, extra.by_layer["cost"]),
    }
    leaks.extend(extra.leaks)
    return mask_layers(layers, extra.leaks)


def failed_run_layers(error: str) -> dict[str, LayerResult]:
    """Correctness errors with the runner's message; path and cost are skipped, having no trace to look at."""
    skipped = Check("agent_run", SKIP, "not evaluated: the agent run produced no trace")
    return {
        "correctness": LayerResult.from_checks([Check("agent_run", ERROR, error)]),
        "path": LayerResult.from_checks([skipped]),
        "cost": LayerResult.from_checks([skipped]),
    }


def _split_answers(
    query: QuerySpec, runs: list[Run], answers: list[str], traces: list[Trace], leaks: list[Leak]
) -> SplitAnswers | None:
    """The most frequent answer of the runs that passed and of those that failed (each with a trace), leaks masked.

    None unless both kinds of run gave one.
    """
    passing: list[str] = []
    failing: list[str] = []
    for run, answer, trace in zip(runs, answers, traces):
        if trace.run_error is None:
            (failing if run.status in (FAIL, ERROR) else passing).append(answer)
    shown_passing, shown_failing = most_frequent(passing), most_frequent(failing)
    if shown_passing is None or shown_failing is None:
        return None

    def masked(text: str) -> str:
        return secrets_masked(query, redact(text, leaks) if leaks else text)

    return SplitAnswers(
        masked(shown_passing), passing.count(shown_passing), masked(shown_failing), failing.count(shown_failing)
    )


@dataclass(frozen=True, slots=True)
class _QueryContext:
    """What every query of one evaluate_spec call is evaluated with, built once for them all."""

    judge: Judge | None
    embedder: Embedder | None
    fail_on: frozenset[str]
    composite: CompositeWeights


def evaluate_query(
    query: QuerySpec, traces: list[Trace], variants: list[Trace], context: _QueryContext, key: str | None = None
) -> QueryResult:
    """The query's result over its runs (`traces`); `key` is query.key, when the caller has read it."""
    judge, embedder, fail_on, composite = context.judge, context.embedder, context.fail_on, context.composite
    leaks: list[Leak] = []  # values a safety check found leaked, in any run
    runs: list[Run] = []
    answers: list[str] = []
    sequences: list[tuple[str, ...]] = []
    replayed: list[dict[str, Any]] = []
    turn_runs: list[tuple[int, Trace, list[dict[str, LayerResult]]]] = []  # a conversation's runs, turn by turn

    def exchange(asked: QuerySpec, trace: Trace, baseline: list[Trace]) -> dict[str, LayerResult]:
        return _evaluate_exchange(asked, trace, baseline, judge, embedder, leaks)

    for i, trace in enumerate(traces):  # one loop, not a comprehension per list: most queries have one run
        number = i if trace.run is None else trace.run
        layers, turn_layers = _evaluate_run(query, trace, variants, exchange, fail_on)
        runs.append(Run(number, layers))
        if turn_layers:
            turn_runs.append((number, trace, turn_layers))
        answers.append(trace.final_answer.strip())
        sequences.append(trace.tool_sequence)
        if (figures := trace.model_calls) is not None:
            replayed.append(figures)
    answer = most_frequent(answers) or ""
    shown_answer = redact(answer, leaks) if leaks else answer
    simulated = query.simulated_user is not None  # read once: a pydantic attribute
    if simulated:
        shown_answer = secrets_masked(query, shown_answer)
    combined = combine_runs(query, runs, composite)
    layers = combined.layers
    correctness, path, cost = layers["correctness"], layers["path"], layers["cost"]
    statuses = [correctness.status, path.status, cost.status]
    blocking = is_blocking(statuses, fail_on)
    where = private_attributes(query)  # its file and line, as the properties read them: one read, not two
    result = QueryResult(  # the fields without a default by position (see QueryResult)
        key or query.key,  # id
        query.query,
        where["_file"],
        where["_line"],
        query_status(statuses, blocking),  # status
        correctness,
        path,
        cost,
        combined.reliability,
        combined.score,
    )
    # The defaulted (kw_only) fields set after, not passed as keywords: a class call's keywords go into a dict and out
    # again on 3.11, about 350 machine instructions each (bench_hot_path).
    if tags := query.tags:  # most queries: none, and the default's empty list stands
        result.tags = list(tags)
    result.blocking = blocking
    result.trace_source = traces[0].source
    result.runs = len(traces)
    result.answer = shown_answer
    if route := most_frequent(sequences):
        result.tools = list(route)
    result.tokens = query_tokens(traces)
    if replayed:  # most runs: no replay
        result.model_calls = _paid_tidied(ModelCalls.of_runs(replayed))
    if len(runs) > 1:
        result.split_answers = _split_answers(query, runs, answers, traces, leaks)
    if turn_runs:
        result.turns = _turn_results(query, turn_runs, fail_on, composite, leaks)
    elif simulated:
        result.turns = _simulated_turns(query, traces, answer, leaks)
    return result


def _simulated_turns(query: QuerySpec, traces: list[Trace], answer: str, leaks: list[Leak]) -> list[TurnResult]:
    """A simulated user's conversation as the report shows it.

    The turns of the first run whose answer is the one shown (the most frequent); none when no run gave a conversation.
    """
    shown = next((t for t in traces if t.turns and t.final_answer.strip() == answer), None)
    if shown is None:
        return []
    return simulated_turn_results(query, shown, (lambda text: redact(text, leaks)) if leaks else (lambda text: text))


def _paid_tidied(calls: ModelCalls | None) -> ModelCalls | None:
    """The model calls with what the live ones cost without float noise (stats.tidy), as the suite's cost is."""
    if calls is not None and calls.paid_usd is not None:
        calls.paid_usd = tidy(calls.paid_usd)
    return calls


def _turn_results(
    query: QuerySpec,
    turn_runs: list[tuple[int, Trace, list[dict[str, LayerResult]]]],
    fail_on: frozenset[str],
    composite: CompositeWeights,
    leaks: list[Leak],
) -> list[TurnResult]:
    """Each scripted turn over the conversation's runs.

    Its layers combined as a query's runs are (combine_runs), its status as a query's, its answer and route the most
    frequent among the runs that reached it.
    """
    results = []
    for index, turn in enumerate(query.turns or ()):
        runs = [Run(number, turns[index]) for number, _, turns in turn_runs]
        layers = combine_runs(turn_query(query, index), runs, composite).layers
        statuses = [layers[name].status for name in LAYERS]
        replies = [reply for _, trace, _ in turn_runs if (reply := trace.turn(index)) is not None]
        answer = most_frequent([reply.final_answer.strip() for reply in replies]) or ""
        route = most_frequent([reply.tool_sequence for reply in replies])
        results.append(
            TurnResult(
                index + 1,
                turn.user,
                turn.line,
                SKIP
                if all(left_unrun(turns[index]) for _, _, turns in turn_runs)
                else query_status(statuses, is_blocking(statuses, fail_on)),
                layers["correctness"],
                layers["path"],
                layers["cost"],
                redact(answer, leaks) if leaks else answer,
                list(route) if route else [],
            )
        )
    return results


def summarize(
    results: list[QueryResult],
    fail_on: frozenset[str],
    composite: CompositeWeights = CompositeWeights(),
    tally: CheckTally | None = None,
) -> Summary:
    """Counts by status.

    Totals over every run; pass rate = passed runs / runs; the suite composite is the mean of the queries' composites
    (suite_composite_score); with adaptive runs, the runs and cost at their maximum. `tally` is check_tally(results)
    when the caller has it.
    """
    counts = dict.fromkeys(Status, 0)
    runs = runs_passed = total_tokens = flaky = cost_unknown = 0
    known_costs: list[float] = []
    scores: list[float] = []
    adaptive = False
    model_calls: list[ModelCalls] = []
    for result in results:  # one pass, not one per figure: a suite has thousands of queries
        counts[result.status] += 1
        reliability = result.reliability
        runs += reliability.runs
        if reliability.max_runs is not None:
            adaptive = True
        runs_passed += reliability.passed
        total_tokens += reliability.total_tokens
        flaky += reliability.flaky
        if (cost := reliability.cost_usd) is None:
            cost_unknown += 1
        else:
            known_costs.append(cost)
        if (score := result.score.value) is not None:
            scores.append(score)
        if result.model_calls is not None:
            model_calls.append(result.model_calls)
    known_cost = tidy(sum(known_costs))  # sum(), as elsewhere: the same floating-point rounding, then tidied
    suite_composite = suite_composite_score(results)
    tally = tally or check_tally(results)
    overall = ERROR if counts[ERROR] else FAIL if counts[FAIL] else WARN if counts[WARN] else PASS
    at_max = _at_maximum(results) if adaptive else (None, None)
    return Summary(
        status=overall,
        total=len(results),
        passed=counts[PASS] + counts[WARN],
        failed=counts[FAIL],
        warnings=counts[WARN],
        errors=counts[ERROR],
        skipped_checks=tally.skipped,
        cost_usd=known_cost,
        cost_unknown=cost_unknown,
        total_tokens=total_tokens,
        fail_on=sorted(fail_on),
        aggregates=aggregate(results, tally),
        judge=JudgeUsage.of(tally.judge_usages),
        simulated_users=JudgeUsage.of(tally.simulator_usages, "replayed") if tally.simulator_usages else None,
        runs=runs,
        runs_passed=runs_passed,
        pass_rate=runs_passed / runs if runs else 0.0,
        flaky=flaky,
        mean_score=sum(scores) / len(scores) if scores else None,
        composite_score=suite_composite,
        grade=letter_grade(suite_composite),
        cost_of_pass_usd=None if cost_unknown or not runs else cost_of_pass([known_cost], runs_passed),
        tokens=suite_tokens((result.tokens, result.runs) for result in results),
        max_runs=at_max[0],
        cost_at_max_runs_usd=at_max[1],
        model_calls=_paid_tidied(ModelCalls.total(model_calls)),
    )


def _at_maximum(results: list[QueryResult]) -> tuple[int, float | None]:
    """What a fixed maximum would have taken.

    Each adaptive query at its max runs (the others as run), and their cost at each query's mean cost per run (None when
    a cost is unknown).
    """
    runs = 0
    cost: float | None = 0.0
    for result in results:
        reliability = result.reliability
        at_max = reliability.max_runs or reliability.runs
        runs += at_max
        if cost is not None:
            cost = None if reliability.cost_usd is None else cost + reliability.cost_usd / reliability.runs * at_max
    return runs, cost


def evaluate_spec(
    spec: AgentCISpec,
    traces: list[Trace],
    *,
    queries: list[QuerySpec] | None = None,
    baselines: dict[str, list[Trace]] | None = None,
    judge: Judge | None = None,
    embedder: Embedder | None = None,
    settings: Settings = Settings(),
    shard: ShardInfo | None = None,
    on_result: OnResult | None = None,
    release_traces: bool = False,
) -> RunResult:
    """Evaluate `queries` (default: all of the spec's) against `traces`.

    `shard` names the shard they are, chosen by the caller (pipeline/shard.py), in the run's results.

    `baselines` maps a query id to its accepted golden traces (variants, at most MAX_VARIANTS).
    With a judge and a query that asks for one, queries run on `settings.workers` threads (judge calls wait on
    the network); otherwise on this thread with the garbage collector paused (pure CPU work).
    `on_result` is called with each query's result as it is evaluated (on the worker's thread), e.g. for progress.
    With `release_traces` (a caller that needs the traces no more: no diff against a baseline to make), `traces` is
    emptied and each query's traces are dropped once it is evaluated, so the run's traces and its results are not
    both held whole: the results of 10k queries × 5 runs take the memory their traces leave.
    """
    selected = queries if queries is not None else spec.queries
    keys = [q.key for q in selected]  # read once: a property of a pydantic model, slow to read
    if queries is None or release_traces:  # the whole suite, once: the spec is not made to hold on to the traces
        index = group_traces(spec.queries, traces, keys=keys if queries is None else None)
        if release_traces:
            traces.clear()
    else:  # indexed once per spec and trace list: a pytest suite evaluates one query per call
        index = spec.memoised("traces_by_query", (traces,), lambda: group_traces(spec.queries, traces))
    require_traces(selected, keys, index.by_query)
    matched = Matched({key: index.by_query[key] for key in keys}, list(index.unmatched), list(index.notes))
    del index  # matched holds the selected queries' traces alone
    baselines = baselines or {}
    check_variant_counts(selected, baselines)
    composite = spec.composite  # read once, as the keys
    context = _QueryContext(judge=judge, embedder=embedder, fail_on=settings.fail_on, composite=composite)

    def one(query: QuerySpec, key: str) -> QueryResult:
        result = evaluate_query(
            query,
            matched.by_query.pop(key) if release_traces else matched.by_query[key],
            baselines.get(key) or [],
            context,
            key,
        )
        if on_result is not None:
            on_result(result)
        return result

    if settings.workers > 1 and (
        (judge is not None and any(asks_for_judge(q) for q in selected)) or embedder is not None
    ):
        with ThreadPoolExecutor(max_workers=settings.workers) as pool:
            results = list(pool.map(one, selected, keys))
        tally = check_tally(results)
    else:
        counter = TallyCounter()
        results = []
        with gc_paused():
            for query, key in zip(selected, keys):
                results.append(result := one(query, key))
                counter.add(result)  # while its checks are in cache
        tally = counter.tally()
    run = RunResult(
        agent=spec.agent,
        spec=spec.path,
        spec_hash=spec_hash(spec),
        shard=shard,
        summary=summarize(results, settings.fail_on, composite, tally),
        results=results,
        warnings=matched.unmatched + matched.notes,
    )
    private_attributes(run)["_selected_tags"] = spec.selected_tags
    return run
