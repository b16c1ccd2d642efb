"""The AgentCI spec as pydantic models. Unknown keys are errors, so a typo never disables a check silently.

No `from __future__ import annotations` here (nor in checks.py and runner.py): pydantic would compile and evaluate
the text of every field's annotation, about 3 ms of each `agentci validate`. Forward references are quoted.
"""

import hashlib
import re
import warnings
from collections.abc import Callable
from enum import Enum
from typing import TYPE_CHECKING, Annotated, Any, Final, Literal, TypeVar, get_args

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator, model_validator

from agentci_action._util.limits import MAX_REGEX_ITEMS
from agentci_action.spec.check_models import Checks, Severity
from agentci_action.spec.pattern_syntax import expanded_items, needs_regex_check
from agentci_action.spec.rubric_templates import RUBRIC_TEMPLATES
from agentci_action.spec.runner_config import RunnerSpec

if TYPE_CHECKING:
    from pydantic import GetJsonSchemaHandler
    from pydantic.json_schema import JsonSchemaValue
    from pydantic_core import CoreSchema

SPEC_VERSION: Final = 1
T = TypeVar("T")
ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]*$"


def no_names() -> list[str]:
    """An empty list: the default of a list field.

    Not `default_factory=list`: for that pydantic reads list's signature from its text form with tokenize's regular
    expressions, 1.5 ms of `agentci validate`.
    """
    return []


def private_attributes(model: BaseModel) -> dict[str, Any]:
    """The model's private attributes (`_file`, `_line`, ...), read from their dict.

    pydantic's __getattr__ is slow, and some are read per query.
    """
    private = model.__pydantic_private__
    assert private is not None, f"{type(model).__name__} declares no private attributes"
    return private


# Fields as a dict: where the engine reads three or more fields of one block per run, it reads them as
# `block.__dict__[name]`. pydantic keeps every field in the instance __dict__ (defaults included, validated or not), and
# on CPython 3.11 an attribute read of a pydantic model takes the slow, unspecialised path (BaseModel defines
# __getattr__): about 400 machine instructions a field, where `__dict__` costs one such read and a key then about 150
# (docs/performance.md, "Many short traces").


class _StrictSpecModel(BaseModel):
    model_config = ConfigDict(extra="forbid")


class _Part(_StrictSpecModel):
    """A block validated as part of the one model that holds it, its own validator built only when needed.

    A block: a rubric, an expected call, the judge's configuration... The holder's validator carries its schema, so its
    own validator is built only if it is ever validated alone (defer_build), not on every start. A model two others hold
    stays a _StrictSpecModel: deferred, its schema would be generated for each holder.
    """

    model_config = ConfigDict(defer_build=True)


class _Aliased(str, Enum):
    """A str Enum that also accepts other names for its values (ALIASES[its class]).

    It lists them in its JSON Schema, so an editor completes them too.
    """

    @classmethod
    def _missing_(cls, value: object) -> "_Aliased | None":
        return ALIASES[cls].get(value) if isinstance(value, str) else None

    @classmethod
    def __get_pydantic_json_schema__(
        cls, core_schema: "CoreSchema", handler: "GetJsonSchemaHandler"
    ) -> "JsonSchemaValue":
        schema = handler(core_schema)
        schema = handler.resolve_ref_schema(schema)
        schema["enum"] = [*schema["enum"], *ALIASES[cls]]
        return schema


class MatchMode(_Aliased):
    """How the used tool sequence P is compared with the reference sequence R.

    Named from the reference's side. LangChain agentevals names them from the agent's side, so the
    unambiguous aliases `contains_reference` (= subset) and `within_reference` (= superset) are accepted.
    """

    STRICT = "strict"  # P == R
    UNORDERED = "unordered"  # set(P) == set(R)
    SUBSET = "subset"  # set(R) ⊆ set(P): every reference tool appears, extras allowed
    SUPERSET = "superset"  # set(P) ⊆ set(R): every used tool is in the reference
    SUBSEQUENCE = "subsequence"  # R appears in P in order, extras allowed (EvalView)


MATCH_MODE_ALIASES = {"contains_reference": MatchMode.SUBSET, "within_reference": MatchMode.SUPERSET}


class SequenceMetric(str, Enum):
    LCS = "lcs"  # 2·|LCS(P,R)| / (|P|+|R|)
    EDIT_DISTANCE = "edit_distance"  # 1 − ED(P,R) / max(|P|,|R|)


class ArgumentMatch(_Aliased):
    """How an expected tool call's `arguments` are compared with the arguments of a call in the trace.

    Named from the expected side, like MatchMode: agentevals' `tool_args_match_mode` names them from the call's, so
    its `superset` is our `subset` and its `subset` our `superset`; the aliases `contains_expected` (= subset) and
    `within_expected` (= superset) say it unambiguously.
    """

    EXACT = "exact"  # the call has exactly these keys, each value matching
    SUBSET = "subset"  # the call has at least these keys, each value matching; other keys are ignored
    SUPERSET = "superset"  # every key of the call is expected and matches; expected keys may be absent
    IGNORE = "ignore"  # arguments are not checked


ARGUMENT_MATCH_ALIASES = {"contains_expected": ArgumentMatch.SUBSET, "within_expected": ArgumentMatch.SUPERSET}
ALIASES: dict[type[_Aliased], dict[str, Any]] = {
    MatchMode: MATCH_MODE_ALIASES,
    ArgumentMatch: ARGUMENT_MATCH_ALIASES,
}


class ArgumentRule(_Part):
    """A per-key rule used instead of equality: one of `regex` or `tolerance`."""

    regex: str | None = Field(
        None, description="The value must be a string in which this pattern is found (re.search, Python syntax)."
    )
    tolerance: float | None = Field(
        None, ge=0, description="|value − expected| ≤ tolerance, with the expected number given under `arguments`."
    )

    @field_validator("regex")
    @classmethod
    def _regex_compiles(cls, pattern: str | None) -> str | None:
        return _compiled(pattern)

    @model_validator(mode="after")
    def _exactly_one(self) -> "ArgumentRule":
        if (self.regex is None) == (self.tolerance is None):
            raise ValueError("an argument rule takes exactly one of `regex` or `tolerance`")
        return self


class ExpectedToolCall(_Part):
    """One step of `expected_tool_calls`: a tool (or one of several), optionally with its arguments."""

    name: str | None = Field(None, min_length=1, description="The tool called at this step.")
    any_of: list[Annotated[str, Field(min_length=1)]] | None = Field(
        None, min_length=1, description="Any one of these tools is accepted at this step (instead of `name`)."
    )
    arguments: dict[str, Any] | None = Field(
        None,
        description="Expected argument values, compared by `argument_match`. A value {regex: P} or {value: N, tolerance: T} "
        "is that key's rule, as under `argument_rules`.",
    )
    argument_match: ArgumentMatch = Field(
        ArgumentMatch.SUBSET,
        description="exact; subset (default, alias contains_expected): the call has these keys, others ignored; "
        "superset (alias within_expected): every key of the call is among these, some may be absent; ignore.",
    )
    argument_rules: dict[str, ArgumentRule] | None = Field(
        None, description="Per-key rules (regex, numeric tolerance) used instead of equality for those keys."
    )
    optional: bool = Field(False, description="The call may be absent.")

    @field_validator("arguments")
    @classmethod
    def _json_values(cls, arguments: dict[str, Any] | None) -> dict[str, Any] | None:
        """YAML reads an unquoted 2024-05-01 as a date; traces carry JSON, so compare its ISO text.

        Inline rules are checked here, so their errors point at `arguments`.
        """
        if arguments is None:
            return None
        import json  # imported where used: `agentci validate` of a spec without arguments needs none of it

        for key, value in arguments.items():
            _inline_rule(key, value)
        as_json: dict[str, Any] = json.loads(
            json.dumps(arguments, default=lambda v: v.isoformat() if hasattr(v, "isoformat") else str(v))
        )
        return as_json

    @model_validator(mode="after")
    def _consistent(self) -> "ExpectedToolCall":
        if (self.name is None) == (self.any_of is None):
            raise ValueError("an expected tool call takes exactly one of `name` or `any_of`")
        self._move_inline_rules()
        rules = self.argument_rules or {}
        values = self.arguments or {}
        if self.argument_match is ArgumentMatch.IGNORE and (rules or values):
            raise ValueError("argument_match is `ignore` but `arguments` or `argument_rules` are given")
        for key, rule in rules.items():
            if rule.regex is not None and key in values:
                raise ValueError(f"argument {key!r} has both a value and a regex rule; keep one")
            expected = values.get(key)
            if rule.tolerance is not None and (isinstance(expected, bool) or not isinstance(expected, (int, float))):
                raise ValueError(
                    f"argument {key!r} has a tolerance rule, so it needs an expected number: "
                    f"`arguments: {{{key}: {{value: N, tolerance: {rule.tolerance:g}}}}}`"
                )
        return self

    def _move_inline_rules(self) -> None:
        """Rules under `arguments` become `argument_rules`, so one code path matches rules however written.

        `arguments: {k: {regex: P}}` and `{k: {value: N, tolerance: T}}` become `argument_rules` (and the expected
        number N).
        """
        inline = {key: rule for key, value in (self.arguments or {}).items() if (rule := _inline_rule(key, value))}
        if not inline:
            return
        if twice := sorted(inline.keys() & (self.argument_rules or {}).keys()):
            raise ValueError(
                f"argument(s) {', '.join(map(repr, twice))} have a rule both under `arguments` and `argument_rules`; keep one"
            )
        values = {key: value.get("value") if key in inline else value for key, value in (self.arguments or {}).items()}
        self.arguments = {key: value for key, value in values.items() if key not in inline or value is not None}
        self.argument_rules = {**(self.argument_rules or {}), **inline}

    @property
    def names(self) -> list[str]:
        """The tools accepted at this step."""
        return [self.name] if self.name is not None else list(self.any_of or [])


INLINE_RULE_KEYS = frozenset({"regex", "tolerance"})


def _inline_rule(key: str, value: Any) -> ArgumentRule | None:
    """The rule a value under `arguments` spells, or None for a plain expected value.

    The rules: {regex: P} or {value: N, tolerance: T}. Raises ValueError naming the key when the rule is invalid.
    """
    if not (
        isinstance(value, dict) and INLINE_RULE_KEYS & value.keys() and value.keys() <= INLINE_RULE_KEYS | {"value"}
    ):
        return None
    try:
        return ArgumentRule.model_validate({k: v for k, v in value.items() if k in INLINE_RULE_KEYS})
    except ValidationError as exc:
        raise ValueError(f"argument {key!r}: {exc.errors()[0]['msg'].removeprefix('Value error, ')}") from None


def _compiled(pattern: str | None) -> str | None:
    """The pattern itself, once it is known to compile in Python's syntax and in the `regex` package.

    The `regex` package runs it (_util/patterns.py: re's syntax with a time bound). re's error wins when both reject
    it; regex is imported only for a pattern on whose validity the two may differ (pattern_syntax.py).
    """
    if pattern is None:
        return None
    try:
        with warnings.catch_warnings():  # re's notice of a later reading ("possible nested set"): regex runs it
            warnings.simplefilter("ignore", FutureWarning)
            re.compile(pattern)
    except (re.error, ValueError) as exc:  # ValueError: incompatible flags, e.g. (?a)(?u)
        raise ValueError(f"regex does not compile: {exc}") from None
    if (items := expanded_items(pattern)) > MAX_REGEX_ITEMS:
        raise ValueError(
            f"regex is too large once its repeat counts are expanded ({items:,} items, at most "
            f"{MAX_REGEX_ITEMS:,}): the engine builds every repeat of {{m}} and {{m,n}} in memory; use smaller counts"
        )
    if needs_regex_check(pattern):
        import regex

        try:
            regex.compile(pattern)
        except regex.error as exc:
            raise ValueError(f"regex does not compile: {exc}") from None
    return pattern


class FewShotExample(_Part):
    input: str | None = Field(None, description="The query of the example.")
    output: str = Field(..., description="The answer being judged in the example.")
    score: int = Field(..., ge=1, le=5, description="The score (1-5) this answer deserves.")
    rationale: str | None = None


class JudgeRubric(_Part):
    """A rubric for an LLM judge; passes when score ≥ int(threshold × 5 + 0.5), clamped to 1..5.

    `template` names a built-in rubric (polite_refusal, factual_grounded, actionable_steps, toxicity, bias) whose
    rule, scale and recommended threshold apply unless the rubric sets its own.
    """

    template: Literal["polite_refusal", "factual_grounded", "actionable_steps", "toxicity", "bias"] | None = Field(
        None, description="A built-in rubric to start from; the rubric's own keys override it."
    )
    rule: str = Field(..., min_length=1, description="The criterion, in plain language.")
    scale: list[str] | None = Field(None, description="Score anchors, e.g. ['1: off-topic', '5: fully correct'].")
    threshold: float = Field(0.5, ge=0.0, le=1.0, description="Minimum passing score in [0, 1].")
    few_shot_examples: list[FewShotExample] | None = Field(None, description="Calibration examples.")

    @model_validator(mode="before")
    @classmethod
    def _apply_template(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("template") in RUBRIC_TEMPLATES:
            return {**RUBRIC_TEMPLATES[data["template"]], **data}
        return data


class CorrectnessSpec(_StrictSpecModel):
    """Layer 1, hard fail. Deterministic checks run in this order, then the judge checks."""

    expected_in_answer: list[str] | None = Field(None, description="Every term must appear (case-insensitive).")
    not_in_answer: list[str] | None = Field(None, description="No term may appear (case-insensitive).")
    exact_match: str | None = Field(None, description="answer.strip() == exact_match.strip().")
    regex_match: str | None = Field(None, description="re.search(pattern, answer) must match (Python syntax).")
    json_schema: dict[str, Any] | None = Field(
        None, description="The answer must parse as JSON valid against this schema."
    )
    llm_judge: list[JudgeRubric] | None = Field(
        None, description="Judge rubrics; run only when every deterministic check passed."
    )
    safety_check: JudgeRubric | None = Field(None, description="Run only when every llm_judge rubric passed.")
    hallucination_check: JudgeRubric | None = Field(
        None, description="Grounding against retrieved context and tool results; run only when safety passed."
    )

    @field_validator("regex_match")
    @classmethod
    def _regex_compiles(cls, pattern: str | None) -> str | None:
        return _compiled(pattern)

    @field_validator("json_schema")
    @classmethod
    def _schema_is_valid(cls, schema: dict[str, Any] | None) -> dict[str, Any] | None:
        if schema is not None:
            import jsonschema  # only for specs with a json_schema check: a third of the spec's import time

            from agentci_action.spec.json_schemas import ref_cycles, unresolvable_refs

            try:
                jsonschema.validators.validator_for(schema).check_schema(schema)
            except jsonschema.SchemaError as exc:
                where = "/".join(str(p) for p in exc.path)
                raise ValueError(f"invalid JSON Schema{f' at {where}' if where else ''}: {exc.message}") from None
            unusable = unresolvable_refs(schema) or ref_cycles(schema)
            if unusable:
                raise ValueError(f"invalid JSON Schema: {'; '.join(unusable)}")
        return schema


PathRule = Literal[
    "forbidden_tools",
    "allowed_tools",
    "max_tool_calls",
    "min_tool_recall",
    "min_tool_precision",
    "min_sequence_similarity",
    "match_mode",
    "expected_tool_calls",
    "max_loops",
    "expected_handoff",
    "expected_handoffs_available",
    "max_handoff_count",
]
CostRule = Literal[
    "max_cost_multiplier", "max_total_tokens", "max_llm_calls", "max_latency_ms", "max_cost_usd", "max_turns"
]
ProcessRule = Literal["min_progress_rate", "max_strategic_drift"]
# What a rule's failure is unless the block's `severity` says otherwise: the allow- and deny-lists fail, the rest warn.
DEFAULT_SEVERITY: dict[str, Severity] = {
    **dict.fromkeys((*get_args(PathRule), *get_args(CostRule), *get_args(ProcessRule)), Severity.WARN),
    "forbidden_tools": Severity.FAIL,
    "allowed_tools": Severity.FAIL,
}


def _severity_map(layer: str) -> Any:
    return Field(
        default_factory=dict,
        description=f"Per-rule severity of this block's {layer} rules, {{rule: fail | warn}}: fail makes the rule's "
        "failure fail the query (it blocks under the default fail-on); warn makes it a warning.",
    )


class RuleBlock(_StrictSpecModel):
    """A block of path, process or cost rules with a `severity` map (each block declares it with its own rules)."""

    severity: dict[Any, Severity]

    def severity_of(self, rule: str) -> Severity:
        """The rule's severity: the block's `severity` map, else DEFAULT_SEVERITY."""
        return self.severity.get(rule) or DEFAULT_SEVERITY[rule]


class RepeatedCalls(str, Enum):
    """How repeated calls count against `expected_tool_calls` in the unordered modes (unordered, superset)."""

    COUNT = "count"  # each call pairs with at most one step: a second refund where one is expected is unexpected
    IGNORE = "ignore"  # a call may fit a step another call already paired with (repeats pass)


class PathSpec(RuleBlock):
    """Layer 2, soft warning; a forbidden tool fails hard. `severity` changes either, rule by rule."""

    severity: dict[PathRule, Severity] = _severity_map("path")

    max_tool_calls: int | None = Field(None, ge=0, description="At most this many tool calls.")
    expected_tools: list[str] | None = Field(
        None, description="Tools that should be used (recall, precision, reference when no baseline)."
    )
    forbidden_tools: list[str] | None = Field(None, description="Tools that must never be used: a hard failure.")
    allowed_tools: list[str] | None = Field(
        None, description="Every call must be to one of these tools: a hard failure otherwise."
    )
    tool_name_normalization: bool = Field(
        True,
        description="allowed_tools and forbidden_tools ignore case, '-', '_' and spaces (EditFile = edit_file); false: exact names.",
    )
    expected_tool_calls: list[ExpectedToolCall] | None = Field(
        None, description="Expected calls with their arguments, in order, compared with the trace under `match_mode`."
    )
    repeated_calls: RepeatedCalls = Field(
        RepeatedCalls.COUNT,
        description="count (default): each call of the trace pairs with at most one expected_tool_calls step in "
        "every mode, so a second refund where one is expected is unexpected; ignore: under unordered and superset, "
        "a call may fit a step another call already paired with.",
    )
    max_loops: int | None = Field(None, ge=0, description="At most this many consecutive repeats of the same tool.")
    match_mode: MatchMode = Field(
        MatchMode.SUBSET, description="How the used tools are compared with the reference sequence."
    )
    min_tool_recall: float | None = Field(None, ge=0.0, le=1.0)
    min_tool_precision: float | None = Field(None, ge=0.0, le=1.0)
    min_sequence_similarity: float | None = Field(None, ge=0.0, le=1.0)
    sequence_metric: SequenceMetric = Field(SequenceMetric.LCS, description="lcs (default) or edit_distance.")
    expected_handoff: str | None = Field(None, description="An agent the run must hand off to.")
    expected_handoffs_available: list[str] | None = Field(
        None, description="Every handoff must go to one of these agents."
    )
    max_handoff_count: int | None = Field(None, ge=0)


class CostSpec(RuleBlock):
    """Layer 3, soft warning; `severity` makes a rule fail instead, rule by rule."""

    severity: dict[CostRule, Severity] = _severity_map("cost")

    max_cost_multiplier: float | None = Field(
        None, gt=0, description="cost / baseline cost ≤ this; skipped without a baseline cost."
    )
    max_total_tokens: int | None = Field(None, ge=0)
    max_llm_calls: int | None = Field(None, ge=0)
    max_latency_ms: float | None = Field(None, ge=0)
    max_cost_usd: float | None = Field(None, ge=0)
    max_turns: int | None = Field(
        None,
        ge=1,
        description="The turn budget of a conversation (a query with `turns:`): the turns the trace holds; a "
        "single-turn trace counts 1.",
    )


class ScoreWeights(_StrictSpecModel):
    """Weights of the score's dimensions (EvalView's defaults); only their ratios matter."""

    tool_accuracy: float = Field(0.3, ge=0, description="Tool recall against expected_tools.")
    output_quality: float = Field(
        0.5, ge=0, description="Normalised judge score, or the deterministic checks' pass ratio."
    )
    sequence_correctness: float = Field(
        0.2, ge=0, description="Sequence similarity against the baseline or expected_tools."
    )

    @model_validator(mode="after")
    def _some_weight(self) -> "ScoreWeights":
        if self.tool_accuracy + self.output_quality + self.sequence_correctness <= 0:
            raise ValueError("at least one score weight must be positive")
        return self


class CompositeWeights(_StrictSpecModel):
    """composite = (pass_rate·pass_weight + impl_rate·impl_weight) / (pass_weight + impl_weight), impl_rate = score / 100."""

    pass_weight: float = Field(0.5, ge=0)
    impl_weight: float = Field(0.5, ge=0)

    @model_validator(mode="after")
    def _some_weight(self) -> "CompositeWeights":
        if self.pass_weight + self.impl_weight <= 0:
            raise ValueError("at least one composite weight must be positive")
        return self


class WeightedStep(_Part):
    tool: str = Field(..., min_length=1)
    weight: float = Field(1.0, gt=0)


class ProcessSpec(RuleBlock):
    """Process metrics, reported when their expectations are given.

    Thresholds warn in the path layer, or fail when `severity` says so.
    """

    severity: dict[ProcessRule, Severity] = _severity_map("process")

    expected_steps: list[str | WeightedStep] | None = Field(
        None, description="Tools the run should reach, in order; a name or {tool, weight}. Gives progress_rate."
    )
    aligned_tools: list[str] | None = Field(None, description="Tools that serve the goal. Gives strategic_drift.")
    min_progress_rate: float | None = Field(None, ge=0.0, le=1.0)
    max_strategic_drift: float | None = Field(None, ge=0.0, le=1.0)

    def weighted_steps(self) -> list[WeightedStep]:
        return [WeightedStep(tool=s) if isinstance(s, str) else s for s in self.expected_steps or []]


class RunRange(_Part):
    """Adaptive runs: `min` runs of every query, then `batch` more at a time of the undecided ones.

    The undecided: the queries whose verdict against the baseline is still inconclusive, each until decided or at `max`
    (compare/pass_verdicts.py).
    """

    min: int = Field(..., ge=1, description="Runs of every query first.")
    max: int = Field(..., ge=1, le=1000, description="Runs a query may take at most.")
    batch: int | None = Field(None, ge=1, description="Runs added per round to an undecided query (default: `min`).")

    @model_validator(mode="after")
    def _ordered(self) -> "RunRange":
        if self.min > self.max:
            raise ValueError(f"min ({self.min}) is more than max ({self.max})")
        return self

    @property
    def plan(self) -> tuple[int, ...]:
        """The run counts a verdict is taken at: min, then every `batch` more, max last. {3, 20, 5} → (3, 8, 13, 18, 20)."""
        return (*range(self.min, self.max, self.batch or self.min), self.max)


class QueryDefaults(_StrictSpecModel):
    """Applied to every query; the query's own values win (deep merge, lists replaced)."""

    correctness: CorrectnessSpec | None = None
    path: PathSpec | None = None
    cost: CostSpec | None = None
    checks: Checks | None = Field(
        None, description="Answer, RAG, safety, agent, performance and validity checks, each in its layer."
    )
    process: ProcessSpec | None = None
    runs: Annotated[int, Field(ge=1)] | RunRange | None = Field(
        None,
        description="Repeated runs per query: the runner runs the agent this often; fewer traces is an error. "
        "{min, max, batch}: adaptive runs, as many as the verdict against the baseline needs.",
    )
    pass_k: int | None = Field(
        None, ge=1, description="k of pass@k and pass^k over the repeated runs (default: every run, k = runs)."
    )
    min_pass_rate: float | None = Field(
        None,
        ge=0.0,
        le=1.0,
        description="Correctness gate across runs: passed runs / runs must reach this. Unset: no floor (failing runs "
        "warn, a query no run of which passed fails; against a baseline the verdict decides).",
    )
    min_score: float | None = Field(
        None, ge=0.0, le=100.0, description="Correctness gate: the mean weighted score (0-100) must reach this."
    )
    weights: ScoreWeights | None = Field(None, description="Score weights; defaults 0.3 / 0.5 / 0.2.")

    @field_validator("runs", mode="before")
    @classmethod
    def _one_shape(cls, value: Any) -> Any:
        """A count or a range, each checked as itself: one error for a bad value, not one per shape it is not."""
        if value is None or isinstance(value, RunRange):
            return value
        if isinstance(value, dict):
            return RunRange.model_validate(value)  # its errors keep their place (runs.max, ...)
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError("a number of runs, or a range {min, max, batch}")
        if value < 1:
            raise ValueError("Input should be greater than or equal to 1")
        return value


class TurnSpec(_Part):
    """One turn of a scripted conversation.

    The user's message and the checks on the agent's reply to it (its answer, and the tools, model calls and handoffs of
    that turn alone).
    """

    user: str = Field(..., description="The user's message of this turn.")
    description: str | None = None
    correctness: CorrectnessSpec | None = Field(None, description="On this turn's answer (layer 1, hard fail).")
    path: PathSpec | None = Field(None, description="On this turn's tool calls and handoffs (layer 2).")
    cost: CostSpec | None = Field(None, description="On this turn's tokens, model calls, cost and latency (layer 3).")
    checks: Checks | None = Field(
        None,
        description="Answer, RAG, safety, agent, performance and validity checks on this turn alone, each in its layer.",
    )
    reference_answer: str | None = Field(
        None, description="The gold answer of this turn that checks.answer compares with."
    )
    expected_sources: list[str] | None = Field(
        None, description="Ids of the documents this turn's retrieval should find (checks.rag recall@k, precision@k)."
    )

    _line: int = PrivateAttr(0)
    _as_query: Any = PrivateAttr(None)  # this turn as a query of its own (engine/conversation.py's turn_query)

    @field_validator("user")
    @classmethod
    def _not_blank(cls, text: str) -> str:
        if not text.strip():
            raise ValueError("a turn's `user` message must not be empty")
        return text

    @field_validator("cost")
    @classmethod
    def _no_turn_budget(cls, cost: CostSpec | None) -> CostSpec | None:
        if cost is not None and cost.max_turns is not None:
            raise ValueError("max_turns is the whole conversation's budget: set it in the query's own `cost:` block")
        return cost

    @property
    def line(self) -> int:
        """The line of this turn in the spec (0 until the loader sets it)."""
        line: int = private_attributes(self)["_line"]
        return line


DEFAULT_SIMULATED_TURNS = 8


class UserStopWhen(_Part):
    """A stopping condition on the agent's reply, checked after every turn of a simulated conversation.

    Beside the simulated user's own stop signal: any one given that holds ends the conversation.
    """

    tool_called: list[str] | None = Field(
        None, min_length=1, description="The agent called one of these tools in its reply (e.g. the refund itself)."
    )
    answer_matches: str | None = Field(
        None, description="The agent's reply matches this regular expression (re.search, Python syntax)."
    )

    @field_validator("answer_matches")
    @classmethod
    def _regex_compiles(cls, pattern: str | None) -> str | None:
        return _compiled(pattern)

    @model_validator(mode="after")
    def _some_condition(self) -> "UserStopWhen":
        if self.tool_called is None and self.answer_matches is None:
            raise ValueError("stop_when needs `tool_called` or `answer_matches`")
        return self


class SimulatedUserSpec(_Part):
    """A user played by an LLM (the judge's providers and keys), instead of scripted `turns:`.

    It pursues `goal` as `persona`, says what it `knows` when asked, never says what it `must_not_reveal`, and ends the
    conversation by saying the goal is reached or giving up, when `stop_when` holds, or after `max_turns` turns.
    """

    persona: str = Field(..., min_length=1, description="Who the user is and how they write.")
    goal: str = Field(..., min_length=1, description="What the user wants from the agent; reaching it ends the talk.")
    knows: list[str] = Field(
        default_factory=no_names, description="Facts the user knows and gives when the agent asks (an order number)."
    )
    must_not_reveal: list[str] = Field(
        default_factory=no_names,
        description="Values the user knows but must never write (a password, a card number): told to the simulator as "
        "secret, and every message it writes is checked for them (a message holding one fails the conversation).",
    )
    does_not_know: list[str] = Field(
        default_factory=no_names,
        description="Things the user does not know and says so when asked (tau2-bench's unknown info).",
    )
    opening: str | None = Field(
        None, min_length=1, description="The user's first message, sent as written (default: the simulator writes it)."
    )
    max_turns: int | None = Field(
        None,
        ge=1,
        le=50,
        description="The most turns the conversation may take: the runner stops there. Default: the query's "
        f"cost.max_turns, else {DEFAULT_SIMULATED_TURNS}.",
    )
    stop_when: UserStopWhen | None = Field(
        None, description="End the conversation when the agent's reply meets this (beside the user's own stop)."
    )
    model: str | None = Field(
        None,
        min_length=1,
        description="The simulator's model (default: judge_config.model), called with the judge's "
        "keys, base_url, timeout and retries.",
    )
    temperature: float = Field(
        1.0,
        ge=0.0,
        le=2.0,
        description="Sent to OpenAI-compatible models: above 0 the repeated runs meet different users (Anthropic's "
        "Messages API takes none).",
    )

    _line: int = PrivateAttr(0)

    @property
    def line(self) -> int:
        """The line of the `simulated_user:` block in the spec (0 until the loader sets it)."""
        line: int = private_attributes(self)["_line"]
        return line

    @field_validator("knows", "must_not_reveal", "does_not_know")
    @classmethod
    def _no_blank(cls, items: list[str]) -> list[str]:
        if any(not item.strip() for item in items):
            raise ValueError("an item must not be empty")
        return items


def _query_or_turns(schema: dict[str, Any]) -> None:
    """In the JSON Schema, a query needs `query`, `turns` or `simulated_user`.

    A conversation is named by its first message, a simulated one by its opening or goal.
    """
    schema["required"] = [key for key in schema.get("required", []) if key != "query"]
    if not schema["required"]:
        del schema["required"]
    schema["anyOf"] = [{"required": ["query"]}, {"required": ["turns"]}, {"required": ["simulated_user"]}]
    schema["not"] = {"required": ["turns", "simulated_user"]}


class Provenance(_Part):
    """Where a promoted golden came from (`agentci goldens`): the source trace, its framework and time, the commit.

    Metadata for the reviewer: it changes nothing a query is evaluated by, so it is left out of the spec's hash.
    """

    source: str = Field(..., min_length=1, description="The trace file (relative to the spec) or URL it came from.")
    trace_id: str | None = Field(None, description="The trace's own id in that source (run, session or span id).")
    framework: str | None = Field(None, description="The trace format it was read as, e.g. openai-agents, langgraph.")
    timestamp: str | None = Field(None, description="When the source trace was recorded (ISO 8601), if it says.")
    promoted_commit: str | None = Field(None, description="The commit HEAD was at when the query was promoted.")
    incident: bool = Field(
        False,
        description="Promoted from a failing trace with a corrected expectation: it fails on its source trace by design.",
    )


class QuerySpec(QueryDefaults):
    """One golden query and its three layers of assertions.

    With `turns:`, a conversation whose own layers judge it as a whole (correctness the final answer, path every turn's
    calls, cost the totals and `max_turns`).
    """

    model_config = ConfigDict(json_schema_extra=_query_or_turns)

    id: str | None = Field(
        None,
        pattern=ID_PATTERN,
        description="Stable id matching traces and baselines; derived from the query when absent.",
    )
    query: str = Field(
        ...,
        description="The input given to the agent; in a conversation, its name (default: the first turn's message).",
    )
    description: str | None = None
    turns: list[TurnSpec] | None = Field(
        None,
        min_length=1,
        description="A scripted conversation: the user's messages in order, each with the checks on its own turn. "
        "The query's own correctness, path and cost blocks then judge the whole conversation.",
    )
    simulated_user: SimulatedUserSpec | None = Field(
        None,
        description="A conversation with a user an LLM plays (persona, goal, what they know) instead of scripted "
        "`turns:`; judged as a whole by the query's own checks (docs/guides/conversations.md#simulated-users).",
    )
    stop_on_failure: bool = Field(
        False,
        description="In a conversation, a turn that fails a blocking check ends it: later turns are not run and are "
        "reported skipped.",
    )
    tags: list[str] = Field(default_factory=no_names, description="For --tags filtering.")
    reference_answer: str | None = Field(None, description="The gold answer that checks.answer compares with.")
    expected_sources: list[str] | None = Field(
        None, description="Ids of the documents retrieval should find (checks.rag recall@k, precision@k)."
    )
    provenance: Provenance | None = Field(
        None, description="Where the query was promoted from (`agentci goldens`); not part of the spec's hash."
    )

    _file: str = PrivateAttr("")
    _line: int = PrivateAttr(0)

    @model_validator(mode="before")
    @classmethod
    def _conversation_named(cls, data: Any) -> Any:
        """A conversation without `query:` is named by its first turn's message.

        A simulated one by its opening message, else its goal.
        """
        if not isinstance(data, dict) or "query" in data:
            return data
        if isinstance(turns := data.get("turns"), list) and turns:
            first = turns[0]
            if isinstance(first, dict) and isinstance(first.get("user"), str):
                return {**data, "query": first["user"]}
        if isinstance(user := data.get("simulated_user"), dict) and "turns" not in data:
            named = user.get("opening") or user.get("goal")
            if isinstance(named, str) and named.strip():
                return {**data, "query": named}
        return data

    @field_validator("query")
    @classmethod
    def _not_blank(cls, text: str) -> str:
        if not text.strip():
            raise ValueError("query must not be empty")
        return text

    @model_validator(mode="after")
    def _turns_fit(self) -> "QuerySpec":
        if self.simulated_user is not None:
            if self.turns is not None:
                raise ValueError(
                    "a query takes scripted `turns:` or a `simulated_user:`, not both: keep the one that plays the user"
                )
            if self.stop_on_failure:
                raise ValueError(
                    "stop_on_failure applies to scripted turns (a simulated user's turns have no checks of their own)"
                )
            return self
        if self.turns is None:
            if self.stop_on_failure:
                raise ValueError("stop_on_failure applies to a conversation: add `turns:` or remove it")
            return self
        budget = self.cost.max_turns if self.cost else None
        if budget is not None and len(self.turns) > budget:
            raise ValueError(
                f"the script has {len(self.turns)} turns but cost.max_turns is {budget}: it could never pass"
            )
        return self

    @property
    def file(self) -> str:
        file: str = private_attributes(self)["_file"]
        return file

    @property
    def line(self) -> int:
        line: int = private_attributes(self)["_line"]
        return line

    @property
    def key(self) -> str:
        """The id, always set once the loader has run."""
        return self.id or ""

    @property
    def simulated_turns(self) -> int:
        """The turn budget of a simulated conversation.

        simulated_user.max_turns, else cost.max_turns, else DEFAULT_SIMULATED_TURNS (0 for a query without a simulated
        user).
        """
        if self.simulated_user is None:
            return 0
        budget = self.cost.max_turns if self.cost else None
        return self.simulated_user.max_turns or budget or DEFAULT_SIMULATED_TURNS

    @property
    def min_runs(self) -> int:
        """The runs every evaluation of the query needs: `runs`, a range's `min`, 1 without `runs:`."""
        runs = self.runs
        return runs.min if isinstance(runs, RunRange) else runs or 1

    @property
    def max_runs(self) -> int:
        """The most runs the query may take: `runs`, a range's `max`, 1 without `runs:`."""
        runs = self.runs
        return runs.max if isinstance(runs, RunRange) else runs or 1

    @property
    def run_plan(self) -> tuple[int, ...] | None:
        """The run counts adaptive runs look at (RunRange.plan); None for a fixed number of runs."""
        return self.runs.plan if isinstance(self.runs, RunRange) else None


class EnsembleConfig(_Part):
    enabled: bool = Field(
        False,
        description="Judge every check with `models`; when false they judge only the share --sample-ensemble picks.",
    )
    models: list[str] = Field(
        default_factory=no_names, description="Judge models (an odd number, cross-family recommended)."
    )
    strategy: Literal["majority_vote"] = "majority_vote"

    @model_validator(mode="after")
    def _enough_models(self) -> "EnsembleConfig":
        if (self.enabled or self.models) and len(self.models) < 2:
            raise ValueError("an ensemble needs at least two models (list none to leave it unused)")
        return self


DEFAULT_JUDGE_MODEL = "claude-sonnet-4-6"
Provider = Literal["anthropic", "openai"]


def provider_of(model: str) -> Provider | None:
    """The provider a model name belongs to: claude-* → anthropic; gpt-*, o1/o3/o4-*, chatgpt-* → openai."""
    name = model.lower().removeprefix("ft:")
    if name.startswith("claude"):
        return "anthropic"
    if name.startswith(("gpt", "chatgpt", "o1", "o3", "o4")):
        return "openai"
    return None


class JudgeConfig(_Part):
    """How the LLM judge is called. Keys come from ANTHROPIC_API_KEY / OPENAI_API_KEY, never from the spec."""

    model: str = Field(DEFAULT_JUDGE_MODEL, min_length=1, description="Judge model; its name selects the provider.")
    provider: Provider | None = Field(
        None, description="The provider of `model`, when its name does not say (e.g. a self-hosted model)."
    )
    temperature: float = Field(
        0.0,
        ge=0.0,
        le=2.0,
        description="Sent to OpenAI-compatible judges (Anthropic's Messages API takes none); part of the cache key.",
    )
    base_url: str | None = Field(
        None, description="Endpoint for `model`'s provider, e.g. any OpenAI-compatible server."
    )
    structured_output: Literal[True] = Field(True, description="Always on: verdicts are schema-enforced.")
    ensemble: EnsembleConfig | None = None
    embedding_model: str = Field(
        "text-embedding-3-small", description="Embedding model for checks.answer.min_semantic_similarity."
    )
    embedding_base_url: str | None = Field(
        None,
        description="An OpenAI-compatible embeddings endpoint; default: base_url when the judge's provider is openai, else the OpenAI API.",
    )
    timeout_s: float = Field(60.0, gt=0, description="Seconds to wait for one judge reply.")
    max_attempts: int = Field(
        4, ge=1, le=10, description="Attempts per judge call on 429, 5xx, connection errors and timeouts."
    )
    max_output_tokens: int = Field(1024, ge=64, description="The verdict's token budget.")
    max_cost_usd: float | None = Field(
        None,
        ge=0,
        description="Spend cap of one run's judge calls in USD (cached verdicts cost nothing): once reached, no "
        "further judge call starts and the checks left are reported unverified.",
    )

    def provider_for(self, model: str) -> Provider:
        """`provider` for the main model; otherwise the name decides.

        Validation leaves one case unnamed: the main model with only a base_url, which is taken as an OpenAI-compatible
        server.
        """
        if model == self.model and self.provider:
            return self.provider
        return provider_of(model) or "openai"

    @model_validator(mode="after")
    def _providers_known(self) -> "JudgeConfig":
        models = [self.model] + (
            self.ensemble.models if self.ensemble else []
        )  # disabled ones too: --sample-ensemble runs them
        unknown = [
            m for m in models if provider_of(m) is None and not (m == self.model and (self.provider or self.base_url))
        ]
        if unknown:
            raise ValueError(
                f"cannot tell the provider of judge model(s) {', '.join(unknown)}: "
                "use a claude-* or gpt-*/o*-* model, or set `provider` (and `base_url`) for the main model"
            )
        return self


class ModelPrice(_Part):
    """Prices of one model in USD per million tokens; overrides or extends the bundled price table."""

    input: float = Field(..., ge=0, description="USD per million uncached input tokens.")
    output: float = Field(..., ge=0, description="USD per million output tokens (reasoning tokens included).")
    cached_input: float | None = Field(
        None, ge=0, description="USD per million input tokens read from a prompt cache; defaults to `input`."
    )
    cache_write_input: float | None = Field(
        None, ge=0, description="USD per million input tokens written to a prompt cache; defaults to `input`."
    )


class SuiteGates(_Part):
    """Limits on the whole suite, judged once every query is evaluated (on the merged run when sharded).

    A gate that fails blocks when fail-on names `suite` (the default does).
    """

    min_pass_rate: float | None = Field(
        None, ge=0.0, le=1.0, description="Queries that passed (warnings allowed) / queries must reach this."
    )
    max_total_cost_usd: float | None = Field(
        None, ge=0, description="The agent's cost over every run of every query (summary.cost_usd) stays within."
    )
    max_cost_multiplier: float | None = Field(
        None,
        gt=0,
        description="The suite's cost / the baseline's (the diff's totals: the sum over queries of the mean cost "
        "per run) ≤ this; skipped without a baseline or when its cost is 0.",
    )
    max_regressions: int | None = Field(
        None, ge=0, description="At most this many queries regressed against the baseline; skipped without one."
    )
    max_inconclusive: int | None = Field(
        None,
        ge=0,
        description="At most this many queries whose verdict against the baseline is inconclusive (repeated runs: "
        "neither regressed, improved nor unchanged at the confidence of `significance:`); skipped without a baseline.",
    )
    max_pass_rate_drop: float | None = Field(
        None,
        gt=0.0,
        lt=1.0,
        description="The suite's pass rate fell by at most this much against the baseline (0.05: 5 points), read on "
        "the interval of the paired change at the confidence of `significance:`: fails when the whole interval lies "
        "below −limit, warns when it straddles it; skipped without a baseline.",
    )

    _file: str = PrivateAttr("")
    _lines: dict[str, int] = PrivateAttr(default_factory=dict)

    def where(self, key: str) -> tuple[str, int]:
        """(spec file, line) of `key` in the `suite:` block, else of the block itself."""
        private = private_attributes(self)
        lines: dict[str, int] = private["_lines"]
        return private["_file"], lines.get(key) or lines.get("", 0)


class SignificanceSpec(_Part):
    """How a comparison with the baseline tells a regression from noise when a query has repeated runs on either side.

    See compare/pass_verdicts.py and docs/explanation/regression-or-noise.md. Frozen: shared as a default argument.
    """

    model_config = ConfigDict(frozen=True)

    confidence: float = Field(
        0.95,
        ge=0.5,
        lt=1.0,
        description="1 − the chance of calling an unchanged query regressed (Holm over the queries); also the level "
        "of the suite's interval and of the cost and latency intervals.",
    )
    power: float = Field(
        0.8,
        gt=0.0,
        lt=1.0,
        description="`unchanged` needs the runs to rule out a drop of `drop` this surely: a drop that large is "
        "called unchanged at most 1 − power of the time.",
    )
    drop: float = Field(
        0.3, gt=0.0, lt=1.0, description="The fall in a query's pass rate worth catching (0.3: 30 points)."
    )


class AgentCISpec(_StrictSpecModel):
    """Root of agentci_spec.yaml."""

    version: Literal[1] = Field(SPEC_VERSION, description="Spec format version.")
    agent: str = Field(..., min_length=1, description="Agent identifier, e.g. rag-agent.")
    baseline_dir: str = Field("./baselines", description="Golden baselines, relative to the spec file.")
    defaults: QueryDefaults | None = None
    judge_config: JudgeConfig | None = None
    pricing: dict[str, ModelPrice] | None = Field(
        None,
        description="Per-model prices (USD per million tokens) used before the bundled price table; keys are model names.",
    )
    composite: CompositeWeights = Field(
        default_factory=CompositeWeights, description="Weights of the composite score (default 0.5 / 0.5)."
    )
    runner: RunnerSpec | None = Field(
        None, description="How to run the agent on a query (`agentci run`; `test` and `save` without --traces)."
    )
    suite: SuiteGates | None = Field(
        None, description="Gates on the whole suite: pass rate, total cost, cost against the baseline, regressions."
    )
    significance: SignificanceSpec = Field(
        default_factory=SignificanceSpec,
        description="Verdicts against the baseline with repeated runs: confidence 0.95, power 0.8, drop 0.3.",
    )
    queries: list[QuerySpec] = Field(..., min_length=1)

    _path: str = PrivateAttr("")
    _memo: dict[str, tuple[tuple[int, ...], tuple[object, ...], Any]] = PrivateAttr(default_factory=dict)
    _tags: tuple[str, ...] = PrivateAttr(())  # set by spec/loader.py's select_tags

    @property
    def path(self) -> str:
        return self._path

    @property
    def selected_tags(self) -> tuple[str, ...]:
        """The tags this spec's queries were selected by from the file at `path` (select_tags); () for them all."""
        return self._tags

    def memoised(self, name: str, inputs: tuple[object, ...], compute: Callable[[], T]) -> T:
        """compute(), worked out once for this spec object and its queries list, and for the objects in `inputs`.

        The objects by identity; a list also by length. What depends only on the spec (its hash) or on the spec and one
        trace list (the traces by query) is not redone when the same spec is evaluated again, e.g. once per query in a
        pytest suite. A spec is data: change one with model_copy (a new object), not in place.
        """
        guarded = (self, self.queries, *inputs)
        key = tuple(id(item) for item in guarded) + tuple(len(item) for item in guarded if isinstance(item, list))
        memo = private_attributes(self)["_memo"]
        found = memo.get(name)
        if found is not None and found[0] == key:
            known: T = found[2]
            return known
        value = compute()
        memo[name] = (key, guarded, value)  # holding the objects keeps their ids from being reused
        return value


def spec_hash(spec: AgentCISpec) -> str:
    """'sha256:' + the first 16 hex digits of sha256 over the validated spec as sorted JSON (ids included).

    The spec as loaded: includes resolved, defaults merged, tags applied. Values equal to their default are
    left out, so a new optional spec key in a later release leaves the hash alone. The `runner:`, the `suite:`
    gates, `significance:`, the judge's spend cap and each query's `provenance:` are left out too: how the agent is
    run, what limits the whole run, how sure a comparison must be and where a query came from change nothing a query
    is evaluated by, so adding one keeps every baseline's hash.
    """

    def compute() -> str:
        import json

        dumped = spec.model_dump(
            mode="json",
            exclude_defaults=True,
            exclude={
                "runner": True,
                "suite": True,
                "significance": True,
                "judge_config": {"max_cost_usd"},
                "queries": {"__all__": {"provenance"}},
            },
        )
        canonical = json.dumps(dumped, sort_keys=True, separators=(",", ":"))
        return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()[:16]

    return spec.memoised("spec_hash", (), compute)
