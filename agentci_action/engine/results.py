"""The results of a run: pure, JSON-serialisable data. This file's shape is an interface (SCHEMA_VERSION).

A query's results (Check, LayerResult, MetricStats, Reliability, ScoreResult, QueryResult) are slotted dataclasses:
the engine makes about twenty per trace, and one costs 0.3 µs to make where a pydantic model costs 1 µs, a fifth of
evaluating a short trace. Pydantic still validates and serialises them inside the run-level models (RunResult and
the rest, pydantic models made once per run), and each keeps the pydantic methods callers use (`model_dump`,
`model_dump_json`, `model_copy`, `model_validate`, `model_validate_json`). Their constructors do not validate: the
engine passes values of each field's type (a Status, not "pass"; a judge's verdict goes through
correctness.judged_check); model_validate reads untrusted data.

A results file read back (the action's publish-only mode, a fork's artifact; `agentci merge`'s shards) is closed
wherever code reads a value for more than its text: statuses, grades and the fail-on layers are enums, the schema
version a constant, the release and the path layer's reference match patterns, and every figure a report formats
(RUN_FIGURES, a judge check's usage) must be a number. Every other string is free text, which every renderer
makes inert through _util/text.py.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from enum import Enum
from typing import Annotated, Any, ClassVar, Literal, Self

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    TypeAdapter,
    WithJsonSchema,
    create_model,
)

from agentci_action._version import __version__

SCHEMA_VERSION = "agentci.results/v2"
# Why a check comparing with the baseline skipped on a first run (sequence similarity without expected_tools, cost
# multiplier): said once per run (RunResult.without_baseline), not on every query.
NO_BASELINE = "no baseline trace"
LAYERS = ("correctness", "path", "cost")
Grade = Literal["A", "B", "C", "D", "F"]
FailOnLayer = Literal["correctness", "path", "cost", "suite"]  # the layers (and the suite's gates) fail-on can name
VERSION_PATTERN = r"^[0-9]+(\.[0-9]+)*((a|b|rc)[0-9]+)?(\.post[0-9]+)?(\.dev[0-9]+)?(\+[A-Za-z0-9.]+)?$"


class Status(str, Enum):
    PASS = "pass"
    FAIL = "fail"
    WARN = "warn"
    SKIP = "skip"
    ERROR = "error"


# The members as module constants: in Python 3.11 reading a member off its Enum class costs ~0.1 µs, and the engine
# reads statuses tens of times per query.
PASS, FAIL, WARN, SKIP, ERROR = Status.PASS, Status.FAIL, Status.WARN, Status.SKIP, Status.ERROR

# How bad a status is, for "worst of" combinations and for sorting reports.
SEVERITY = {Status.SKIP: 0, Status.PASS: 1, Status.WARN: 2, Status.FAIL: 3, Status.ERROR: 4}


def worst(statuses: list[Status], default: Status = Status.SKIP) -> Status:
    """The most severe status in `statuses` (error > fail > warn > pass > skip)."""
    return max(statuses, key=SEVERITY.__getitem__, default=default)


class ResultData:
    """pydantic's methods on a query's result dataclasses, by a TypeAdapter of the class (made on first use)."""

    __slots__ = ()
    _adapters: ClassVar[dict[type, TypeAdapter[Any]]] = {}

    @classmethod
    def _adapter(cls) -> TypeAdapter[Self]:
        adapter = cls._adapters.get(cls) or cls._adapters.setdefault(cls, TypeAdapter(cls))
        return adapter

    def model_dump(self, **options: Any) -> dict[str, Any]:
        dumped: dict[str, Any] = self._adapter().dump_python(self, **options)
        return dumped

    def model_dump_json(self, **options: Any) -> str:
        return self._adapter().dump_json(self, **options).decode()

    def model_copy(self, *, update: dict[str, Any] | None = None) -> Self:
        """A shallow copy with `update`'s fields replaced (unvalidated, as pydantic's model_copy)."""
        return dataclasses.replace(self, **(update or {}))  # type: ignore[type-var]  # every ResultData is a dataclass

    @classmethod
    def model_validate(cls, data: Any) -> Self:
        return cls._adapter().validate_python(data)

    @classmethod
    def model_validate_json(cls, text: str | bytes) -> Self:
        return cls._adapter().validate_json(text)


@dataclass(slots=True)
class Check(ResultData):
    """One assertion inside a layer: `name` is the spec key that asked for it."""

    name: str
    status: Status
    message: str = ""
    data: CheckData = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Finding:
    """One message of a layer, with the status and name of the check that said it.

    The layer's own status and '' for a message no check said, such as 'no path checks'.
    """

    status: Status
    rule: str
    message: str


_RUN_LABEL = re.compile(r"run \d+: ")  # how repeated runs label their messages (engine/repeated_runs.py)


@dataclass(slots=True)
class LayerResult(ResultData):
    status: Status
    details: LayerDetails = field(default_factory=dict)
    messages: list[str] = field(default_factory=list)
    checks: list[Check] = field(default_factory=list)

    def findings(self) -> list[Finding]:
        """Each message with its own check's status, the most severe first (in order among equals).

        In a failed layer a warning still reads as a warning, and a skip as a skip. A repeated run's message ('run 2:
        …') is its check's.
        """
        said: dict[str, Check] = {}
        for check in self.checks:
            if check.status is not Status.PASS and check.message:
                said.setdefault(check.message, check)
        found = []
        for message in self.messages:
            label = _RUN_LABEL.match(message)
            own = said.get(message) or (said.get(message[label.end() :]) if label else None)
            found.append(Finding(own.status, own.name, message) if own else Finding(self.status, "", message))
        found.sort(key=lambda finding: -SEVERITY[finding.status])
        return found

    @classmethod
    def from_checks(cls, checks: list[Check], details: dict[str, Any] | None = None) -> LayerResult:
        """Status = worst check status, pass when the rest are skipped (skip when there are none or all are).

        Messages = every non-pass check's message. `checks` and `details` become the layer's own.
        """
        status = SKIP
        messages: list[str] = []
        for check in checks:  # one loop, no set or comprehension: a layer has a few checks, made per run
            check_status = check.status
            if check_status is not PASS:
                if check.message:
                    messages.append(check.message)
                if SEVERITY[check_status] > SEVERITY[status]:
                    status = check_status
            elif status is SKIP:
                status = PASS
        return cls(status, {} if details is None else details, messages, checks)


@dataclass(slots=True)
class MetricStats(ResultData):
    """One metric over the runs where it was known.

    Count, mean, median, mode (smallest when tied), min, max, and std_dev, the population standard deviation.
    """

    count: int
    mean: float
    median: float
    mode: float
    min: float
    max: float
    std_dev: float


# math.inf is written as the JSON string "Infinity" (and read back as inf); null always means unknown.
_INFINITY_AS_STRING = ConfigDict(ser_json_inf_nan="strings")


@dataclass(slots=True)
class Reliability(ResultData):
    """A query over its n repeated runs.

    A run passes when no layer failed (correctness, a forbidden tool, a rule whose severity is fail).

    pass_rate = passed / runs; pass_at_k = 1 − C(n−c,k)/C(n,k), the chance that one of k runs drawn from the n passes
    (k = the spec's pass_k, default n: then 1.0 when any run passed); pass_hat_k = pass^k = C(c,k)/C(n,k), the chance
    that all k pass (k = n: 1.0 when every run passed); both None when k > n; pass_rate_ci95: the Wilson score interval;
    flaky: some runs passed and some failed; cost_usd: the total over the runs, None when a run's cost is unknown;
    cost_of_pass_usd = cost_usd / passed, the expected spend per pass ("Infinity" when no run passed, None when a
    cost is unknown); run_statuses: pass/fail/error per run, in run order; metrics: the statistics of every numeric
    figure over the runs (from two runs on: a single run's figures are its layers' details); k: pass@k's k;
    max_runs: the most runs adaptive runs (`runs: {min, max}`) allowed the query, None for a fixed number.
    """

    __pydantic_config__ = _INFINITY_AS_STRING

    runs: int
    passed: int
    pass_rate: float
    pass_at_k: float | None
    pass_hat_k: float | None
    pass_rate_ci95: tuple[float, float]
    flaky: bool
    cost_usd: float | None = None
    total_tokens: int = 0
    cost_of_pass_usd: float | None = None
    run_statuses: list[Status] = field(default_factory=list)
    metrics: dict[str, MetricStats] = field(default_factory=dict)
    k: int = 1
    max_runs: int | None = None


@dataclass(slots=True)
class SplitAnswers(ResultData):
    """A query run several times whose runs both passed and failed: the most frequent answer of each, and its runs.

    Leaked values masked, as QueryResult.answer.
    """

    passing: str
    passing_runs: int
    failing: str
    failing_runs: int


@dataclass(slots=True)
class ModelCalls(ResultData):
    """How the agent's model calls were answered under runner.replay, summed over a query's runs (or a suite's queries).

    `replayed` from the recordings, or `live` (sent to the provider); `paid_usd`, what the live ones cost (None when one
    could not be priced; the cost layer counts every call's tokens, replayed or not); `missed`, calls with no recorded
    answer that failed their run; `went_live`, why calls missed and were answered live (record-missing), a few per run.
    """

    replayed: int = 0
    live: int = 0
    paid_usd: float | None = 0.0
    missed: int = 0
    went_live: list[str] = field(default_factory=list)

    @classmethod
    def total(cls, parts: list[ModelCalls]) -> ModelCalls | None:
        """The parts summed (`went_live` kept for a query, not for the suite); None when there are none."""
        if not parts:
            return None
        paid = [part.paid_usd for part in parts]
        return cls(
            replayed=sum(part.replayed for part in parts),
            live=sum(part.live for part in parts),
            paid_usd=None if None in paid else sum(p or 0.0 for p in paid),
            missed=sum(part.missed for part in parts),
        )

    @classmethod
    def of_runs(cls, figures: list[dict[str, Any]]) -> ModelCalls | None:
        """A query's figures from its runs' trace metadata (`agentci_replay`); None when no run went through replay."""
        if not figures:
            return None
        paid = [f.get("paid_usd") for f in figures]
        return cls(
            replayed=sum(int(f.get("replayed") or 0) for f in figures),
            live=sum(int(f.get("live") or 0) for f in figures),
            paid_usd=None if None in paid else sum(float(p or 0.0) for p in paid),
            missed=sum(int(f.get("missed") or 0) for f in figures),
            went_live=[str(note) for f in figures for note in f.get("went_live") or []],
        )


# Every numeric figure a run reports: name → (layer, details key). Aggregated over repeated runs.
RUN_FIGURES = {
    "cost_usd": ("cost", "cost_usd"),
    "total_tokens": ("cost", "total_tokens"),
    "latency_ms": ("cost", "latency_ms"),
    "llm_calls": ("cost", "llm_calls"),
    "cost_multiplier": ("cost", "cost_multiplier"),
    "tool_calls": ("path", "tool_calls"),
    "loops_detected": ("path", "loops_detected"),
    "tool_recall": ("path", "tool_recall"),
    "tool_precision": ("path", "tool_precision"),
    "sequence_similarity": ("path", "sequence_similarity"),
    "progress_rate": ("path", "progress_rate"),
    "strategic_drift": ("path", "strategic_drift"),
}


# The path layer's reference sequence: its own expected_tools, the baseline, or the closest of its variants.
REFERENCE_PATTERN = r"^(expected_tools|baseline|baseline\[[0-9]+\] \(closest of [0-9]+ variants\))$"
_CLOSED = ConfigDict(strict=True, extra="ignore")  # the keys named are checked, any other is kept as it is
_Number = float | None  # strict: an int or a float (or null), never a numeric string or a bool


def _checked_by(model: type[BaseModel]) -> AfterValidator:
    """A validator of a free-form dict: the keys `model` names must be valid for it; the dict is kept whole."""

    def checked(value: dict[str, Any]) -> dict[str, Any]:
        model.model_validate(value)
        return value

    return AfterValidator(checked)


def _schema_of(model: type[BaseModel]) -> WithJsonSchema:
    """The JSON Schema of such a dict: the keys `model` names, and any other."""
    schema = {**model.model_json_schema(), "additionalProperties": True}
    schema.pop("title", None)
    return WithJsonSchema(schema)


_DetailsRead = create_model(
    "LayerDetails",
    __config__=_CLOSED,
    reference=(str | None, Field(None, pattern=REFERENCE_PATTERN)),
    cost_unknown_reason=(str | None, None),
    **{key: (_Number, None) for _, key in RUN_FIGURES.values()},  # type: ignore[call-overload]  # field definitions
)


class _JudgeUsageRead(BaseModel):
    model_config = _CLOSED
    requests: int = 0
    cache_hits: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: _Number = None


class _CheckDataRead(BaseModel):
    model_config = _CLOSED
    usage: Annotated[dict[str, Any], _checked_by(_JudgeUsageRead), _schema_of(_JudgeUsageRead)] | None = None


LayerDetails = Annotated[dict[str, Any], _checked_by(_DetailsRead), _schema_of(_DetailsRead)]
CheckData = Annotated[dict[str, Any], _checked_by(_CheckDataRead), _schema_of(_CheckDataRead)]


@dataclass(slots=True)
class TokenAttribution(ResultData):
    """Where a query's input tokens went (engine/token_attribution.py): means per run over its runs.

    components: tokens by component (system_prompt, tool_schemas, history, tool_results, retrieved_context, query,
    `framing`: what each call's format adds around its messages, `unexplained`: the rest of its reported input tokens
    (an estimate's gap), and `unattributed`: the input tokens of calls whose
    request the trace does not show), each part as its text counts; exact: the model's own tokenizer counted it and
    the count plus the format's framing is the reported input; gap: the reported input less count and framing (what
    an estimate leaves unexplained); costs: USD by component (each call's input cost shared by its parts' tokens), plus
    `output` (the attributed calls' output tokens) and `unattributed` (the whole cost of the other calls), so they
    add up to the query's cost; None where a price is unknown. items: tokens per tool schema, tool result and
    document source; parameters: each tool schema's top-level parameters. schema_overhead = Σ tool_schemas tokens;
    skill_tokens = system_prompt tokens; skill_efficiency = skill / (skill + schema) (None when both are 0);
    token_efficiency_ratio = schema / skill ("Infinity" when skill is 0 and schema is not; None when both are 0).
    """

    __pydantic_config__ = _INFINITY_AS_STRING

    calls: int
    llm_calls: int
    tokenizer: str
    exact: bool
    components: dict[str, int | float]
    costs: dict[str, float | None]
    gap: int | float = 0
    items: dict[str, dict[str, int | float]] = field(default_factory=dict)
    parameters: dict[str, int] = field(default_factory=dict)
    schema_overhead: int | float = 0
    skill_tokens: int | float = 0
    skill_efficiency: float | None = None
    token_efficiency_ratio: float | None = None


# The two classes below take their fields without a default by position, in field order, and the rest by keyword
# (`kw_only` fields: the dataclass moves them to the end of __init__, not of the serialised fields). The engine makes
# one of each per query, and a keyword argument costs a class call about 0.1 µs.


@dataclass(slots=True)
class ScoreResult(ResultData):
    """Weighted score (0-100, mean over runs), its dimensions (means, [0, 1]), composite score and grade.

    value = 100·Σwᵢsᵢ/Σwᵢ over the measured dimensions (0 on a forbidden tool); composite = (pass_rate·pass_weight
    + score/100·impl_weight) / (pass_weight + impl_weight), weights from the spec's `composite` (default 0.5 / 0.5),
    the pass rate alone without a score; grade: A ≥ 0.95, B ≥ 0.85, C ≥ 0.75, D ≥ 0.65, else F, of the composite.
    """

    value: float | None = field(default=None, kw_only=True)
    tool_accuracy: float | None = field(default=None, kw_only=True)
    output_quality: float | None = field(default=None, kw_only=True)
    sequence_correctness: float | None = field(default=None, kw_only=True)
    composite: float
    grade: Grade
    reason: str = field(default="", kw_only=True)


@dataclass(slots=True)
class TurnResult(ResultData):
    """One turn of a conversation.

    Its number (from 1), the user's message, its line in the spec, its status and layers over the runs (combined as a
    query's), and its answer and route (the most frequent over the runs).
    """

    turn: int
    user: str
    line: int
    status: Status
    correctness: LayerResult
    path: LayerResult
    cost: LayerResult
    answer: str = ""
    tools: list[str] = field(default_factory=list)

    def layer(self, name: str) -> LayerResult:
        layer: LayerResult = getattr(self, name)
        return layer


@dataclass(slots=True)
class QueryResult(ResultData):
    """One query's result.

    Blocking: a layer listed in fail-on failed (or warned, for path/cost). answer: the final answer in full, surrounding
    white space stripped, the most frequent over the runs (the first seen among equals), as the diff compares it. tools:
    the tools called, in order: the most frequent route over the runs. turns: a conversation's turns (empty for a single
    query); its layers hold every turn's checks too. split_answers: with runs that passed and runs that failed, the most
    frequent answer of each (the reviewer sees the failing one beside the passing one).
    """

    id: str
    query: str
    file: str
    line: int
    tags: list[str] = field(default_factory=list, kw_only=True)
    status: Status
    blocking: bool = field(default=False, kw_only=True)
    correctness: LayerResult
    path: LayerResult
    cost: LayerResult
    trace_source: str = field(default="", kw_only=True)
    runs: int = field(default=1, kw_only=True)
    reliability: Reliability
    score: ScoreResult
    answer: str = field(default="", kw_only=True)
    tools: list[str] = field(default_factory=list, kw_only=True)
    tokens: TokenAttribution | None = field(default=None, kw_only=True)
    model_calls: ModelCalls | None = field(default=None, kw_only=True)
    split_answers: SplitAnswers | None = field(default=None, kw_only=True)
    turns: list[TurnResult] = field(default_factory=list, kw_only=True)

    def layer(self, name: str) -> LayerResult:
        layer: LayerResult = getattr(self, name)
        return layer

    def figure(self, name: str) -> float | None:
        """A figure of RUN_FIGURES: its mean over the runs, or the single run's own value; None when not measured."""
        if self.runs > 1:
            found = self.reliability.metrics.get(name)
            return found.mean if found else None
        layer, key = RUN_FIGURES[name]
        return self.layer(layer).details.get(key)


class Aggregates(BaseModel):
    """Suite-wide rates (0-1) and latencies (ms); None (N/A) when no query gives the figure. See engine/suite_figures.py."""

    pass_rate: float | None = Field(None, description="Queries that passed (warnings allowed) / queries.")
    hallucination_rate: float | None = Field(
        None, description="Queries failing hallucination_check / queries where it gave a verdict."
    )
    mean_latency_ms: float | None = None
    p95_latency_ms: float | None = Field(
        None, description="95th percentile, linear interpolation between closest ranks."
    )
    timeout_rate: float | None = Field(None, description="Queries over max_latency_ms / queries with a latency budget.")
    safety_finding_rate: float | None = Field(
        None, description="Queries with a safety check not passing / queries where one ran."
    )


class JudgeUsage(BaseModel):
    """What the LLM judge itself spent, kept apart from the agent's cost: sums over every judge check's `usage`."""

    requests: int = Field(0, description="HTTP requests to judge providers, failed attempts included.")
    cache_hits: int = Field(0, description="Verdicts taken from the verdict cache (no request).")
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    cost_unknown: int = Field(0, description="Judge checks whose model has no known price.")

    @classmethod
    def total(cls, checks: list[Check]) -> JudgeUsage:
        return cls.of([c.data["usage"] for c in checks if isinstance(c.data.get("usage"), dict)])

    @classmethod
    def of(cls, usages: list[dict[str, Any]], hits: str = "cache_hits") -> JudgeUsage:
        """Sums over the judge checks' `usage` dicts, in order.

        `hits`: the key counted as cache hits; a simulated user's figures count its `replayed` messages.
        """
        return cls(
            requests=sum(u.get("requests", 0) for u in usages),
            cache_hits=sum(u.get(hits) or 0 for u in usages),
            input_tokens=sum(u.get("input_tokens", 0) for u in usages),
            output_tokens=sum(u.get("output_tokens", 0) for u in usages),
            cost_usd=sum(u.get("cost_usd") or 0.0 for u in usages),
            cost_unknown=sum(u.get("cost_usd") is None for u in usages),
        )


class Summary(BaseModel):
    model_config = _INFINITY_AS_STRING

    status: Status
    total: int
    passed: int
    failed: int
    warnings: int
    errors: int
    skipped_checks: int = 0
    cost_usd: float = 0.0
    cost_unknown: int = Field(0, description="Queries whose cost could not be determined.")
    total_tokens: int = 0
    judge: JudgeUsage = Field(
        default_factory=JudgeUsage, description="The LLM judge's own requests, tokens and USD (not the agent's)."
    )
    simulated_users: JudgeUsage | None = Field(
        None,
        description="The simulated users' own model calls over every conversation (not the agent's): requests, "
        "tokens and USD, cache_hits counting the messages replayed from their recordings; null without one.",
    )
    fail_on: list[FailOnLayer] = Field(default_factory=list)
    runs: int = Field(0, description="Runs evaluated over all queries.")
    runs_passed: int = 0
    pass_rate: float = Field(0.0, description="runs_passed / runs")
    flaky: int = Field(0, description="Queries with some runs passing and some failing.")
    mean_score: float | None = Field(None, description="Mean of the queries' scores (0-100).")
    composite_score: float = Field(
        0.0,
        description="Mean over every query of its composite (its pass rate and score / 100, or its pass rate "
        "alone without a score): one denominator, so it cannot contradict the counts.",
    )
    grade: Grade = "F"
    aggregates: Aggregates = Field(default_factory=Aggregates)
    cost_of_pass_usd: float | None = Field(None, description='cost_usd / runs_passed; "Infinity" when no run passed.')
    tokens: TokenAttribution | None = Field(
        None, description="Where the input tokens went, over every run of every query (null: no request was seen)."
    )
    max_runs: int | None = Field(
        None,
        description="With adaptive runs (`runs: {min, max}`): the runs a fixed maximum would have taken, each "
        "adaptive query at its max (the others as run); null without adaptive runs.",
    )
    cost_at_max_runs_usd: float | None = Field(
        None,
        description="What those runs would have cost, each query's mean cost per run times its runs at the maximum; "
        "null without adaptive runs or when a cost is unknown.",
    )
    model_calls: ModelCalls | None = Field(
        None,
        description="Under runner.replay: the agent's model calls replayed from the recordings and sent live, and "
        "what the live ones cost (paid_usd), over every query; null when no run went through replay.",
    )


class ShardInfo(BaseModel):
    """Which part of the suite a shard results file holds: queries whose id hashes to index − 1 modulo count."""

    index: int = Field(..., ge=1)
    count: int = Field(..., ge=1)


class GateResult(BaseModel):
    """One `suite:` gate judged on the whole run: its figure against its limit, where the spec sets it."""

    name: str = Field(..., description="The key under `suite:`, e.g. max_regressions.")
    status: Status = Field(
        ...,
        description="pass, fail, warn (repeated runs: the figure's interval straddles the limit, so the noise leaves "
        "it undecided; never blocks), or skip (the figure is unknown; the reason is the message).",
    )
    actual: float | None = Field(None, description="The suite's figure; null when it could not be known.")
    limit: float
    blocking: bool = Field(False, description="True when it failed and fail-on names `suite`.")
    message: str
    file: str = ""
    line: int = 0


class RunResult(BaseModel):
    schema_version: str = Field(SCHEMA_VERSION, pattern=f"^{re.escape(SCHEMA_VERSION)}$")  # this version alone
    agentci_version: str = Field(
        __version__, pattern=VERSION_PATTERN, description="The AgentCI release that evaluated the run."
    )
    agent: str
    spec: str
    spec_hash: str = Field(
        "", description="spec_hash() of the loaded spec (defaults merged, tags applied): shards must agree."
    )
    shard: ShardInfo | None = Field(None, description="Set on a shard results file, which `agentci merge` combines.")
    summary: Summary
    results: list[QueryResult]
    warnings: list[str] = Field(default_factory=list, description="Run-level notes, e.g. traces matching no query.")
    gates: list[GateResult] = Field(
        default_factory=list,
        description="The spec's `suite:` gates, judged on the whole run (empty in a shard's file: the merge judges them).",
    )
    # the tags its queries were selected by (AgentCISpec.selected_tags), for the advice a report prints; not written to
    # the results file: one read back says ()
    _selected_tags: tuple[str, ...] = PrivateAttr(())

    @property
    def selected_tags(self) -> tuple[str, ...]:
        return self._selected_tags

    def without_baseline(self) -> dict[str, list[str]]:
        """Queries with checks that skipped for want of a baseline trace (a first run, a new query).

        Query id → the checks' names. A report says it once, not on every query.
        """
        found: dict[str, list[str]] = {}
        for result in self.results:
            names = [
                check.name
                for layer in (result.path, result.cost)
                for check in layer.checks
                if check.status is Status.SKIP and check.data.get("reason") == NO_BASELINE
            ]
            if names:
                found[result.id] = names
        return found

    def unverified(self) -> dict[str, int]:
        """Correctness checks skipped in queries whose correctness did not fail (no judge, no embedding provider).

        Skip reason → how many. Checks skipped because an earlier check failed are not counted: that query failed.
        """
        reasons: dict[str, int] = {}
        for query in self.results:
            if query.correctness.status not in (Status.FAIL, Status.ERROR):
                for check in query.correctness.checks:
                    if check.status is Status.SKIP:
                        reasons[check.message] = reasons.get(check.message, 0) + 1
        return reasons


class MetricChange(BaseModel):
    """A run-level figure against the baseline run: uplift = (current − baseline) / baseline, null when undefined."""

    current: float | None
    baseline: float | None
    uplift: float | None
