"""The diff of two runs as it is written (results JSON `diff`, `agentci diff --format json`).

Pydantic models, versioned by DIFF_SCHEMA_VERSION. The classification that fills them is compare/diff.py.
"""

from __future__ import annotations

import re
from enum import Enum
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, Field, WithJsonSchema

from agentci_action.compare.bootstrap import beyond
from agentci_action.compare.pass_verdicts import (
    PassVerdict,
)
from agentci_action.compare.suite_change import PassRateChange
from agentci_action.engine.results import (
    GateResult,
    MetricChange,
    QueryResult,
    SplitAnswers,
    Status,
)
from agentci_action.engine.stats import tidy
from agentci_action.spec.models import SignificanceSpec

DIFF_SCHEMA_VERSION = "agentci.diff/v3"
MAX_ARGUMENT_CHANGES = 20


class ChangeKind(str, Enum):
    REGRESSION = "regression"
    NOT_RUN = "not_run"
    REMOVED_QUERY = "removed_query"
    NEW_QUERY = "new_query"
    FIXED = "fixed"
    INCONCLUSIVE = "inconclusive"
    MODEL_CHANGED = "model_changed"
    TOOLS_CHANGED = "tools_changed"
    ROUTING_CHANGED = "routing_changed"
    OUTPUT_CHANGED = "output_changed"
    COST_CHANGED = "cost_changed"


NotRun = Literal["infrastructure", "replay_miss", "crashed"]  # why no run of a side gave a trace
COUNTED = (*(kind.value for kind in ChangeKind), "changed", "unchanged")  # TotalDiff.counts' keys, every one


def _every_count(counts: dict[str, int]) -> dict[str, int]:
    """The counts of a diff read back hold exactly COUNTED: the reports read each (a results file may be forged)."""
    if set(counts) != set(COUNTED):
        raise ValueError(f"counts must hold exactly {', '.join(COUNTED)}")
    return counts


Counts = Annotated[
    dict[str, int],
    AfterValidator(_every_count),
    WithJsonSchema(
        {
            "type": "object",
            "properties": {name: {"type": "integer"} for name in COUNTED},
            "required": list(COUNTED),
            "additionalProperties": False,
        }
    ),
]


class Delta(BaseModel):
    """before → after. change = after − before; percent = 100·change/before, None when before is 0 or unknown.

    `new` is true when before is 0 and after is not: the percentage would divide by zero. `interval`: with repeated
    runs, the bootstrap interval of after / before (a cost or latency figure; compare/pass_verdicts.py).
    """

    before: int | float | None  # counts stay integers in the JSON
    after: int | float | None
    change: int | float | None = None
    percent: float | None = None
    new: bool = False
    interval: tuple[float, float] | None = None

    @classmethod
    def of(cls, before: float | None, after: float | None) -> Delta:
        """The figures as JSON shows them.

        To 12 significant digits (stats.tidy: 0.28, not 0.2800000000000001), a whole number as an integer (a mean of 3
        and 3 is 3, not 3.0).
        """
        before, after = _plain(before), _plain(after)
        if before is None or after is None:
            return cls(before=before, after=after)
        change = _plain(float(after - before))
        return cls(
            before=before,
            after=after,
            change=change,
            percent=tidy(100.0 * (after - before) / before) if before else None,
            new=before == 0 and after != 0,
        )

    def moved_beyond(self, tolerance: float) -> bool:
        """With an interval: it lies wholly beyond 1 ± tolerance.

        Without: |change| > tolerance × |before|, or any change from a zero base.
        """
        if self.interval is not None:
            return beyond(self.interval, tolerance)
        if self.change is None or self.change == 0:
            return False
        return self.new or abs(self.change) > tolerance * abs(self.before or 0)


def _plain(value: float | None) -> int | float | None:
    """A float without float noise (stats.tidy), as an int when it is a whole number; anything else as it is."""
    if isinstance(value, float):
        value = tidy(value)
        return int(value) if value.is_integer() else value
    return value


class StatusDiff(BaseModel):
    """A status before → after; null on the side without the query (or, before, for a query no longer in the spec)."""

    before: Status | None
    after: Status | None


class ArgumentChange(BaseModel):
    """One argument of one call that changed.

    The k-th call of `tool` on each side (`step_before`, `step_after`: its 0-based position in each route), with both
    values as inert JSON text ('(absent)' on the side without the key).
    """

    tool: str
    step_before: int
    step_after: int
    key: str
    before: str
    after: str


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
    route_before: list[str] = Field(
        default_factory=list, description="The tools called before, in order: the most frequent route over the runs."
    )
    route_after: list[str] = Field(default_factory=list, description="The same, after.")
    argument_changes: list[ArgumentChange] = Field(
        default_factory=list,
        description="Arguments that differ between the k-th call of a tool before and its k-th call after, in the "
        f"runs of the two routes shown (at most {MAX_ARGUMENT_CHANGES}).",
    )


class AnswerDiff(BaseModel):
    """The final answer on each side, in full (the most frequent over the runs); null on a side without the query.

    With repeated runs some of which passed and some failed, `split_before` / `split_after` hold the most frequent
    passing and failing answers of that side and how many runs gave each.
    """

    before: str | None = None
    after: str | None = None
    split_before: SplitAnswers | None = None
    split_after: SplitAnswers | None = None


class TurnDiff(BaseModel):
    """The first turn of a conversation whose status, answer or route differs between the two sides.

    Each is the turn's most frequent over its runs; a turn one side did not reach is its status null.
    """

    turn: int = Field(description="The turn's number, from 1.")
    user: str = Field(description="The user's message of that turn.")
    line: int = Field(0, description="The turn's line in the spec.")
    status: StatusDiff
    answer: AnswerDiff
    route_before: list[str] = Field(default_factory=list)
    route_after: list[str] = Field(default_factory=list)


class CostDiff(BaseModel):
    cost_usd: Delta
    total_tokens: Delta
    llm_calls: Delta
    latency_ms: Delta


class ItemChange(BaseModel):
    """One tool schema, tool result or document source whose tokens (mean per run) moved; a schema's parameters."""

    name: str
    tokens: Delta
    parameters: Delta | None = None


class ComponentChange(BaseModel):
    """One input component before → after (tokens and USD, means per run), with its items that moved, largest first.

    At most MAX_ITEM_CHANGES.
    """

    component: str
    tokens: Delta
    cost_usd: Delta
    items: list[ItemChange] = Field(default_factory=list)


class TokensDiff(BaseModel):
    """Which components of the input moved: those whose tokens changed, largest change first."""

    exact: bool = Field(description="Both sides were counted exactly: own tokenizers, count plus framing as reported.")
    components: list[ComponentChange]
    schema_overhead: Delta
    skill_efficiency: Delta


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
    why: list[str] = Field(
        default_factory=list,
        description="For a regression, a query not run or an inconclusive query whose pass rate fell, the messages "
        "of the layers failing now (with repeated runs, the failing runs'); for a fixed query, those that failed "
        "before. Empty otherwise.",
    )
    pass_rate: PassVerdict | None = Field(
        None,
        description="The pass-rate verdict, baseline → current; null for a query on one side only or not run.",
    )
    not_run: NotRun | None = Field(
        None,
        description="For a query not run: why no current run gave a trace (the model service's outage, "
        "'infrastructure', or a model call its recording has no answer for, 'replay_miss'); null otherwise.",
    )
    answer: AnswerDiff = Field(default_factory=AnswerDiff)
    first_diverged_turn: TurnDiff | None = Field(
        None, description="In a conversation, the first turn that differs between the sides; null otherwise."
    )
    models_before: list[str] = Field(default_factory=list, description="LLM models the before side's runs called.")
    models_after: list[str] = Field(default_factory=list)
    path: PathDiff
    cost: CostDiff
    tokens: TokensDiff | None = Field(
        None, description="Where the input tokens moved, when both sides saw the requests."
    )

    @property
    def changed(self) -> bool:
        return bool(self.kinds)

    def has(self, kind: ChangeKind) -> bool:
        return kind in self.kinds


class TotalDiff(BaseModel):
    """Per side, the sum over its queries of their figures (each a mean per run): one pass over the suite.

    `passed` counts the queries whose status is pass or warn, as the run's summary does.
    """

    queries: Delta
    passed: Delta = Field(description="Queries that passed (warnings allowed): as summary.passed.")
    counts: Counts = Field(description="Queries per change kind, plus 'changed' and 'unchanged'.")
    tool_calls: Delta
    loops: Delta
    handoffs: Delta
    cost_usd: Delta
    total_tokens: Delta
    llm_calls: Delta
    latency_ms: Delta
    models_before: list[str] = Field(default_factory=list, description="LLM models called on the before side.")
    models_after: list[str] = Field(default_factory=list)
    pass_rate_change: PassRateChange | None = Field(
        None,
        description="The suite's change in pass rate: the mean over the queries run on both sides of (current − "
        "baseline pass rate), with its query-clustered standard error and interval (Miller 2024).",
    )
    suite: dict[str, Delta] = Field(
        default_factory=dict,
        description="Each side's summary.aggregates (pass_rate, p95_latency_ms, …), before → after.",
    )


class RunDiff(BaseModel):
    schema_version: str = Field(DIFF_SCHEMA_VERSION, pattern=f"^{re.escape(DIFF_SCHEMA_VERSION)}$")  # this version
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
    unverified: dict[Literal["before", "after"], dict[str, int]] = Field(
        default_factory=dict,
        description="Per side ('before', 'after'), correctness checks skipped in queries that did not fail "
        "(no judge key or cached verdict, no embedding provider): reason → how many. Empty when all ran.",
    )
    baseline_commit: str | None = Field(
        None,
        description="The commit the baseline side was read at (--baseline-ref, `baseline: base`); null: the working tree.",
    )
    gates: list[GateResult] = Field(
        default_factory=list,
        description="`agentci diff`: the spec's `suite:` gates judged on the compared side against the baseline "
        "(in a results file they are the run's own `gates`).",
    )
    baseline_results: list[QueryResult] | None = Field(
        None,
        description="Only in a shard's results file: the baseline side's results of the shard's queries, from which "
        "`agentci merge` rebuilds the whole run's uplift, suite aggregates and unverified counts.",
    )
    significance: SignificanceSpec = Field(
        default_factory=SignificanceSpec,
        description="The spec's `significance:` the verdicts and intervals were decided at.",
    )

    @property
    def repeated(self) -> bool:
        """Whether some query was run more than once on either side (verdicts and intervals with a confidence)."""
        return any(q.pass_rate is not None and q.pass_rate.method == "exact" for q in self.queries)

    @property
    def regressions(self) -> list[QueryDiff]:
        return [q for q in self.queries if q.has(ChangeKind.REGRESSION)]
