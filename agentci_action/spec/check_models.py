"""Declarative answer, RAG, safety, agent, performance and validity checks: the `checks:` block of a query.

Every check has a default layer and a default severity (CHECK_INFO); a failing check takes its severity
(`fail` or `warn`) as its status, and `severity: {check: fail|warn}` in its group overrides the default.
Pattern heuristics default to `warn`: they are diagnostics, not proof. (No `from __future__ import annotations`:
models.py says why.)
"""

from dataclasses import dataclass
from enum import Enum
from typing import Any, ClassVar, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, model_validator


class Severity(str, Enum):
    FAIL = "fail"
    WARN = "warn"


@dataclass(frozen=True)
class CheckInfo:
    """Where a check's result goes and how bad its failure is unless the spec says otherwise.

    A check of a measured value against a limit also says which side the limit bounds and the value's unit.
    """

    layer: str  # correctness, path or cost
    severity: Severity
    heuristic: bool = False
    bound: Literal["min", "max"] | None = None  # the value must be at least ("min") or at most ("max") the limit
    unit: str = ""  # after each number in the check's message, e.g. " ms"


FAIL, WARN = Severity.FAIL, Severity.WARN
CHECK_INFO: dict[str, CheckInfo] = {
    # answer vs reference_answer
    "normalized_exact_match": CheckInfo("correctness", FAIL),
    "min_rouge_1": CheckInfo("correctness", FAIL, bound="min"),
    "min_rouge_2": CheckInfo("correctness", FAIL, bound="min"),
    "min_rouge_l": CheckInfo("correctness", FAIL, bound="min"),
    "min_bleu": CheckInfo("correctness", FAIL, bound="min"),
    "min_semantic_similarity": CheckInfo("correctness", FAIL, bound="min"),
    # RAG
    "min_recall_at_k": CheckInfo("path", WARN, bound="min"),
    "min_precision_at_k": CheckInfo("path", WARN, bound="min"),
    "max_context_intrusion": CheckInfo("correctness", WARN, heuristic=True, bound="max"),
    "require_citations": CheckInfo("correctness", WARN, heuristic=True),
    # safety
    "no_pii_leakage": CheckInfo("correctness", WARN, heuristic=True),
    "expect_refusal": CheckInfo("correctness", WARN, heuristic=True),
    "no_injection_echo": CheckInfo("correctness", WARN, heuristic=True),
    "toxicity": CheckInfo("correctness", FAIL),
    "bias": CheckInfo("correctness", FAIL),
    # agent
    "task_completion": CheckInfo("correctness", FAIL),
    "expected_steps": CheckInfo("path", WARN, bound="min"),
    "min_tool_success_rate": CheckInfo("path", WARN, bound="min"),
    "error_recovery": CheckInfo("path", WARN),
    # performance
    "max_ttft_ms": CheckInfo("cost", WARN, bound="max", unit=" ms"),
    "max_token_latency_ms": CheckInfo("cost", WARN, bound="max", unit=" ms/token"),
    "min_throughput": CheckInfo("cost", WARN, bound="min", unit=" tokens/s"),
    # output validity
    "min_length": CheckInfo("correctness", FAIL, bound="min", unit=" characters"),
    "max_length": CheckInfo("correctness", FAIL, bound="max", unit=" characters"),
    "no_html": CheckInfo("correctness", FAIL),
    "ends_with_punctuation": CheckInfo("correctness", FAIL),
}
SafetyCheck = Literal["no_pii_leakage", "expect_refusal", "no_injection_echo", "toxicity", "bias"]
SAFETY_CHECKS: tuple[str, ...] = get_args(SafetyCheck)


class CheckGroup(BaseModel):
    """A group of checks; its `severity` map overrides the default severity of any of its checks.

    Validated only inside `Checks`, so its own validator is deferred (models.py's _Part).
    """

    model_config = ConfigDict(extra="forbid", defer_build=True)
    CHECKS: ClassVar[tuple[str, ...]] = ()
    severity: dict[Any, Severity]  # each group's keys are its own check names (a Literal), checked by pydantic

    def severity_of(self, check: str) -> Severity:
        return self.severity.get(check, CHECK_INFO[check].severity)


def _severity_map() -> Any:
    return Field(default_factory=dict, description="Per-check override of the default severity: {check: fail | warn}.")


AnswerCheck = Literal[
    "normalized_exact_match", "min_rouge_1", "min_rouge_2", "min_rouge_l", "min_bleu", "min_semantic_similarity"
]


class AnswerChecks(CheckGroup):
    """The answer against the query's `reference_answer` (skipped, with the reason, when it has none)."""

    CHECKS: ClassVar = get_args(AnswerCheck)
    severity: dict[AnswerCheck, Severity] = _severity_map()

    normalized_exact_match: bool | None = Field(
        None, description="answer.strip().lower() == reference.strip().lower(). correctness, fail."
    )
    min_rouge_1: float | None = Field(
        None, ge=0.0, le=1.0, description="ROUGE-1 F1 (rouge-score, Porter stemmer) ≥ this. correctness, fail."
    )
    min_rouge_2: float | None = Field(None, ge=0.0, le=1.0, description="ROUGE-2 F1 ≥ this. correctness, fail.")
    min_rouge_l: float | None = Field(None, ge=0.0, le=1.0, description="ROUGE-L F1 ≥ this. correctness, fail.")
    min_bleu: float | None = Field(
        None, ge=0.0, le=1.0, description="sacrebleu sentence BLEU / 100 ≥ this. correctness, fail."
    )
    min_semantic_similarity: float | None = Field(
        None, ge=0.0, le=1.0, description="Cosine of the embeddings, clamped to [0, 1], ≥ this. correctness, fail."
    )


RagCheck = Literal["min_recall_at_k", "min_precision_at_k", "max_context_intrusion", "require_citations"]


class RagChecks(CheckGroup):
    """Retrieval against the query's `expected_sources`, and how the answer uses the retrieved context."""

    CHECKS: ClassVar = get_args(RagCheck)
    severity: dict[RagCheck, Severity] = _severity_map()

    k: int = Field(5, ge=1, description="How many of the top retrieved documents recall@k and precision@k look at.")
    min_recall_at_k: float | None = Field(
        None, ge=0.0, le=1.0, description="Expected sources in the top k / expected sources ≥ this. path, warn."
    )
    min_precision_at_k: float | None = Field(
        None, ge=0.0, le=1.0, description="Relevant documents in the top k / min(k, retrieved) ≥ this. path, warn."
    )
    max_context_intrusion: float | None = Field(
        None,
        ge=0.0,
        le=100.0,
        description="Verbatim copying score (0-100) from the longest common substrings ≤ this. correctness, warn (heuristic).",
    )
    require_citations: bool | None = Field(
        None, description="The answer cites: [1], [Source name] or 'according to …'. correctness, warn (heuristic)."
    )


class SafetyChecks(CheckGroup):
    """Leakage, refusal and injection patterns in the answer (heuristics); toxicity and bias by the judge."""

    CHECKS: ClassVar = get_args(SafetyCheck)
    severity: dict[SafetyCheck, Severity] = _severity_map()

    no_pii_leakage: bool | None = Field(
        None,
        description="No email, phone, Luhn-valid card, SSN, IPv4, API key or token in the answer (masked in reports). correctness, warn (heuristic).",
    )
    expect_refusal: bool | None = Field(
        None,
        description="true: the answer must refuse (out of scope); false: it must not. correctness, warn (heuristic).",
    )
    no_injection_echo: bool | None = Field(
        None,
        description="The answer does not repeat injection markers or chat-template tokens. correctness, warn (heuristic).",
    )
    toxicity: bool | None = Field(None, description="The built-in `toxicity` judge rubric. correctness, fail.")
    bias: bool | None = Field(None, description="The built-in `bias` judge rubric. correctness, fail.")


AgentCheck = Literal["task_completion", "expected_steps", "min_tool_success_rate", "error_recovery"]


class AgentChecks(CheckGroup):
    """The run as a task: completion (trace metadata.status), steps, tool errors."""

    CHECKS: ClassVar = get_args(AgentCheck)
    severity: dict[AgentCheck, Severity] = _severity_map()

    task_completion: bool | None = Field(
        None, description="The trace's metadata.status says the task completed. correctness, fail."
    )
    expected_steps: int | None = Field(
        None,
        ge=1,
        description="Step efficiency = min(expected_steps / tool calls, 1) ≥ min_step_efficiency. path, warn.",
    )
    min_step_efficiency: float = Field(
        1.0, ge=0.0, le=1.0, description="The threshold for expected_steps (default 1: no more steps than expected)."
    )
    min_tool_success_rate: float | None = Field(
        None, ge=0.0, le=1.0, description="Tool calls without error / tool calls ≥ this. path, warn."
    )
    error_recovery: bool | None = Field(
        None, description="When a tool call failed, the task still completed. path, warn."
    )

    @model_validator(mode="after")
    def _threshold_needs_steps(self) -> "AgentChecks":
        if "min_step_efficiency" in self.model_fields_set and self.expected_steps is None:
            raise ValueError("min_step_efficiency needs expected_steps")
        return self


PerformanceCheck = Literal["max_ttft_ms", "max_token_latency_ms", "min_throughput"]


class PerformanceChecks(CheckGroup):
    """Speed from the trace's LLM calls (cost layer)."""

    CHECKS: ClassVar = get_args(PerformanceCheck)
    severity: dict[PerformanceCheck, Severity] = _severity_map()

    max_ttft_ms: float | None = Field(
        None, ge=0, description="The slowest LLM call's time to first token ≤ this. cost, warn."
    )
    max_token_latency_ms: float | None = Field(
        None, ge=0, description="Σ duration / Σ output tokens (ms per token) ≤ this. cost, warn."
    )
    min_throughput: float | None = Field(
        None, ge=0, description="Σ output tokens / Σ duration (tokens per second) ≥ this. cost, warn."
    )


ValidityCheck = Literal["min_length", "max_length", "no_html", "ends_with_punctuation"]


class ValidityChecks(CheckGroup):
    """The shape of the answer text."""

    CHECKS: ClassVar = get_args(ValidityCheck)
    severity: dict[ValidityCheck, Severity] = _severity_map()

    min_length: int | None = Field(
        None, ge=0, description="len(answer.strip()) ≥ this (characters). correctness, fail."
    )
    max_length: int | None = Field(None, ge=0, description="len(answer) ≤ this (characters). correctness, fail.")
    no_html: bool | None = Field(None, description="No HTML tag or comment in the answer. correctness, fail.")
    ends_with_punctuation: bool | None = Field(
        None, description="The answer ends with . ! ? : or ; (closing quotes and brackets ignored). correctness, fail."
    )


class Checks(BaseModel):
    """The `checks:` block of a query (or of `defaults`)."""

    model_config = ConfigDict(extra="forbid")

    answer: AnswerChecks | None = None
    rag: RagChecks | None = None
    safety: SafetyChecks | None = None
    agent: AgentChecks | None = None
    performance: PerformanceChecks | None = None
    validity: ValidityChecks | None = None
