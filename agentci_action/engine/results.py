"""The results of a run: pure, JSON-serialisable data. This file's shape is an interface (SCHEMA_VERSION)."""

from __future__ import annotations

from enum import Enum
from typing import Any, Self, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from .._version import __version__

SCHEMA_VERSION = "agentci.results/v1"
# Why a check comparing with the baseline skipped on a first run (sequence similarity without expected_tools, cost
# multiplier): said once per run (RunResult.without_baseline), not on every query.
NO_BASELINE = "no baseline trace"
LAYERS = ("correctness", "path", "cost")


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


_set = object.__setattr__
_Model = TypeVar("_Model", bound=BaseModel)
_FIELDS: dict[type[BaseModel], tuple[tuple[str, ...], set[str]]] = {}


def _fields(cls: type[BaseModel]) -> tuple[tuple[str, ...], set[str]]:
    """The field names of `cls` in declaration order, and as the one fields-set its built instances share
    (callers read _FIELDS first: this runs once per class)."""
    found = _FIELDS[cls] = (tuple(cls.model_fields), set(cls.model_fields))
    return found


def _built(cls: type[_Model], values: dict[str, Any]) -> _Model:
    """An instance of `cls` holding `values` (every field, each already of its type) without validation:
    what pydantic's model_construct does, minus its per-field loop, for models without aliases, extra keys,
    private attributes or post-init. The engine builds tens of results per trace; validating data it made
    itself took a tenth of evaluation, and model_construct is slower still (pydantic 2.14).
    Every field is set, so the instances of a class share one fields-set (pydantic copies it on model_copy
    and only ever adds field names to it, which it already holds)."""
    model = cls.__new__(cls)
    _set(model, "__dict__", values)
    _set(model, "__pydantic_fields_set__", (_FIELDS.get(cls) or _fields(cls))[1])
    _set(model, "__pydantic_extra__", None)
    _set(model, "__pydantic_private__", None)
    return model


class _EngineMade(BaseModel):
    """A result model the engine fills from values it computed, each already of its field's type."""

    @classmethod
    def built(cls, **fields: Any) -> Self:
        """cls(...) for fields the engine made and knows valid (every field given, each of its type), unvalidated.
        Fields are kept in declaration order, the order they are written in."""
        return _built(cls, {name: fields[name] for name in (_FIELDS.get(cls) or _fields(cls))[0]})


class Check(BaseModel):
    """One assertion inside a layer: `name` is the spec key that asked for it."""

    name: str
    status: Status
    message: str = ""
    data: dict[str, Any] = Field(default_factory=dict)

    @classmethod
    def built(cls, name: str, status: Status, message: str = "", data: dict[str, Any] | None = None) -> Check:
        """Check(...) for arguments the engine made and knows valid (a Status, strings, a fresh dict), unvalidated."""
        return _built(cls, {"name": name, "status": status, "message": message, "data": {} if data is None else data})


# Layer status from the statuses of its checks: the first of these present (see LayerResult.from_checks).
_LAYER_STATUS_ORDER = (ERROR, FAIL, WARN, PASS)


class LayerResult(BaseModel):
    status: Status
    details: dict[str, Any] = Field(default_factory=dict)
    messages: list[str] = Field(default_factory=list)
    checks: list[Check] = Field(default_factory=list)

    @classmethod
    def from_checks(cls, checks: list[Check], details: dict[str, Any] | None = None) -> LayerResult:
        """Status = worst check status, pass when the rest are skipped (skip when there are none or all are);
        messages = every non-pass check's message. `checks` (Check instances) and `details` become the layer's own."""
        present = {c.status for c in checks}
        for status in _LAYER_STATUS_ORDER:
            if status in present:
                break
        else:
            status = SKIP
        messages = [c.message for c in checks if c.message and c.status is not PASS]  # most pass, without a message
        return _built(
            cls,
            {"status": status, "details": {} if details is None else details, "messages": messages, "checks": checks},
        )


class MetricStats(BaseModel):
    """One metric over the runs where it was known: count, mean, median, mode (smallest when tied), min, max, std_dev."""

    count: int
    mean: float
    median: float
    mode: float
    min: float
    max: float
    std_dev: float = Field(..., description="Population standard deviation.")


# math.inf is written as the JSON string "Infinity" (and read back as inf); null always means unknown.
_INFINITY_AS_STRING = ConfigDict(ser_json_inf_nan="strings")


class Reliability(_EngineMade):
    """A query over its k repeated runs. A run passes when neither correctness nor the path (forbidden tools) failed."""

    model_config = _INFINITY_AS_STRING

    runs: int
    passed: int
    pass_rate: float = Field(..., description="passed / runs")
    pass_at_k: float = Field(..., description="1 − C(n−c,k)/C(n,k) with k = runs: 1.0 when any run passed.")
    pass_hat_k: float = Field(..., description="pass^k = C(c,k)/C(n,k) with k = runs: 1.0 when every run passed.")
    pass_rate_ci95: tuple[float, float] = Field(..., description="Wilson score interval for the pass rate.")
    flaky: bool = Field(..., description="Some runs passed and some failed.")
    cost_usd: float | None = Field(None, description="Total over the runs; null when a run's cost is unknown.")
    total_tokens: int = 0
    cost_of_pass_usd: float | None = Field(
        None,
        description='cost_usd / passed: expected spend per pass. "Infinity" when no run passed; null when a cost is unknown.',
    )
    run_statuses: list[Status] = Field(default_factory=list, description="pass/fail/error per run, in run order.")
    metrics: dict[str, MetricStats] = Field(
        default_factory=dict,
        description="Statistics of every numeric figure over the runs (from two runs on; "
        "a single run's figures are its layers' details).",
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


class ScoreResult(_EngineMade):
    """Weighted score (0-100, mean over runs), its dimensions (means, [0, 1]), composite score and grade."""

    value: float | None = Field(None, description="100·Σwᵢsᵢ/Σwᵢ over measured dimensions; 0 on a forbidden tool.")
    tool_accuracy: float | None = None
    output_quality: float | None = None
    sequence_correctness: float | None = None
    composite: float = Field(
        ...,
        description="(pass_rate·pass_weight + score/100·impl_weight) / (pass_weight + impl_weight), "
        "weights from the spec's `composite` (default 0.5 / 0.5); pass_rate alone without a score.",
    )
    grade: str = Field(..., description="A ≥ 0.95, B ≥ 0.85, C ≥ 0.75, D ≥ 0.65, else F, of the composite score.")
    reason: str = ""


class QueryResult(_EngineMade):
    id: str
    query: str
    file: str
    line: int
    tags: list[str] = Field(default_factory=list)
    status: Status
    blocking: bool = Field(False, description="True when a layer listed in fail-on failed (or warned, for path/cost).")
    correctness: LayerResult
    path: LayerResult
    cost: LayerResult
    trace_source: str = ""
    runs: int = 1
    reliability: Reliability
    score: ScoreResult
    answer: str = Field(
        "",
        description="The final answer in full, surrounding whitespace stripped: the most frequent over the runs "
        "(the first seen among equals), as the diff compares it.",
    )
    tools: list[str] = Field(
        default_factory=list, description="The tools called, in order: the most frequent route over the runs."
    )

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
    """Suite-wide rates (0-1) and latencies (ms); None (N/A) when no query gives the figure. See engine/aggregates.py."""

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
    def of(cls, usages: list[dict[str, Any]]) -> JudgeUsage:
        """Sums over the judge checks' `usage` dicts, in order."""
        return cls(
            requests=sum(u.get("requests", 0) for u in usages),
            cache_hits=sum(u.get("cache_hits", 0) for u in usages),
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
    fail_on: list[str] = Field(default_factory=list)
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
    grade: str = "F"
    aggregates: Aggregates = Field(default_factory=Aggregates)
    cost_of_pass_usd: float | None = Field(None, description='cost_usd / runs_passed; "Infinity" when no run passed.')


class ShardInfo(BaseModel):
    """Which part of the suite a shard results file holds: queries whose id hashes to index − 1 modulo count."""

    index: int = Field(..., ge=1)
    count: int = Field(..., ge=1)


class GateResult(BaseModel):
    """One `suite:` gate judged on the whole run: its figure against its limit, where the spec sets it."""

    name: str = Field(..., description="The key under `suite:`, e.g. max_regressions.")
    status: Status = Field(..., description="pass, fail, or skip (the figure is unknown; the reason is the message).")
    actual: float | None = Field(None, description="The suite's figure; null when it could not be known.")
    limit: float
    blocking: bool = Field(False, description="True when it failed and fail-on names `suite`.")
    message: str
    file: str = ""
    line: int = 0


class RunResult(BaseModel):
    schema_version: str = SCHEMA_VERSION
    agentci_version: str = Field(__version__, description="The AgentCI release that evaluated the run.")
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

    def without_baseline(self) -> dict[str, list[str]]:
        """Queries with checks that skipped for want of a baseline trace (a first run, a new query): query id → the
        checks' names. A report says it once, not on every query."""
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
        """Correctness checks skipped in queries whose correctness did not fail (no judge, no embedding provider):
        skip reason → how many. Checks skipped because an earlier check failed are not counted: that query failed."""
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
