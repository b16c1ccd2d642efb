"""The canonical trace: one run of one query, whatever framework produced it.

Totals missing from the file are derived from the calls (see `Trace.with_derived_totals`).
"""

from __future__ import annotations

from collections.abc import Callable
from sys import intern
from typing import Annotated, Any, Literal, NotRequired

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, model_validator, with_config
from typing_extensions import TypedDict


class _StrictTraceModel(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, allow_inf_nan=False)  # 1e400 parses as inf


class ToolCall(_StrictTraceModel):
    name: str
    arguments: Any = None
    result: Any = None
    error: str | None = None
    duration_ms: float | None = Field(None, ge=0)
    agent: str | None = None


# The components of a model call's input (trace/input_parts.py says what each holds).
Component = Literal["system_prompt", "tool_schemas", "history", "tool_results", "retrieved_context", "query"]
_PART_NAME = "The tool (schemas, results) or the document's source (retrieved context)."
_PART_PARAMETERS = "Tool schemas: the schema's top-level parameters."


# A dict, not a model: a suite's traces hold tens of thousands of parts, and pydantic validates a dict four times
# faster than it builds a model (benchmarks/engine.md#token-attribution).
@with_config(ConfigDict(extra="forbid"))
class InputPart(TypedDict):
    """One part of a model call's input: a component, what it names, its tokens."""

    component: Component
    name: NotRequired[Annotated[str | None, Field(description=_PART_NAME)]]
    tokens: Annotated[int, Field(ge=0, description="As the tokenizer counted them.")]
    parameters: NotRequired[Annotated[int | None, Field(ge=0, description=_PART_PARAMETERS)]]


class InputBreakdown(_StrictTraceModel):
    """A model call's input split by component, counted by `tokenizer` (the model's own when `exact`)."""

    tokenizer: str
    exact: bool = False
    parts: list[InputPart]
    input_cost_usd: float | None = Field(
        None, ge=0, description="What the call's input tokens cost, set when the call is priced."
    )
    framing: int | None = Field(
        None,
        ge=0,
        description="The tokens the provider's chat format adds around the messages, as OpenAI documents it (3 a "
        "message, 3 to prime the reply); absent in traces written before it was counted.",
    )


class LLMCall(_StrictTraceModel):
    model: str | None = None
    provider: str | None = Field(
        None, description="Who served the call (openai, anthropic, azure, ...), to find its price."
    )
    input_tokens: int = Field(0, ge=0)
    output_tokens: int = Field(0, ge=0)
    cached_input_tokens: int = Field(
        0, ge=0, description="Input tokens served from a prompt cache (included in input_tokens)."
    )
    cache_write_input_tokens: int = Field(
        0, ge=0, description="Input tokens written to a prompt cache (included in input_tokens)."
    )
    reasoning_tokens: int = Field(0, ge=0, description="Reasoning tokens (included in output_tokens).")
    cost_usd: float | None = Field(None, ge=0)
    duration_ms: float | None = Field(None, ge=0)
    ttft_ms: float | None = Field(None, ge=0)
    timestamp: str | None = Field(None, description="ISO 8601 time of the call, used to price it by date.")
    input_breakdown: InputBreakdown | None = Field(
        None, description="The request's input tokens by component, where the trace records what was sent."
    )


class Handoff(_StrictTraceModel):
    from_agent: str | None = Field(None, alias="from")
    to: str


class RetrievedDoc(_StrictTraceModel):
    id: str | None = None
    text: str = ""
    score: float | None = None


RUN_ERROR_KEY = "agentci_error"  # metadata of a run the runner could not get a trace from: its error message
EXAMPLE_KEY = "agentci_example"  # metadata of `agentci init`'s example trace: a run of no agent, never a baseline
REPLAY_KEY = "agentci_replay"  # metadata of a run whose model calls went through the replay proxy: its figures
UNRECORDED_KEY = "agentci_unrecorded"  # metadata: the totals derived from no model calls (see with_derived_totals)
MODEL_CALL_TOTALS = ("total_tokens", "total_llm_calls", "total_cost_usd")  # the totals derived from llm_calls alone
_NONE_UNRECORDED: frozenset[str] = frozenset()  # what most traces' unrecorded_totals are: one shared, not one a read


class Trace(_StrictTraceModel):
    """One run of one query. Matched to its query by `id`, else by exact `query` text."""

    id: str | None = None
    query: str | None = None
    final_answer: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    llm_calls: list[LLMCall] = Field(default_factory=list)
    handoffs: list[Handoff] = Field(default_factory=list)
    retrieved_context: list[RetrievedDoc] = Field(default_factory=list)
    total_duration_ms: float | None = Field(None, ge=0)
    total_cost_usd: float | None = Field(None, ge=0)
    total_tokens: int | None = Field(None, ge=0)
    total_llm_calls: int | None = Field(None, ge=0)
    run: int | None = Field(None, ge=0, description="Repetition index when a query was run several times.")
    turns: list[Trace] = Field(
        default_factory=list,
        description="A conversation's turns in order, each a trace of one exchange (`query`: the user's message). "
        "The conversation's own calls, handoffs and context are its turns' in order, its answer the last turn's.",
    )
    metadata: dict[str, Any] = Field(
        default_factory=dict,
        description="Free-form; `status` is the task's final status for the agent checks (completed, success, … or failed).",
    )

    _source: str = PrivateAttr("")  # "file:line" the trace was read from, for messages
    # (the calls read, how many, what was derived from them): see _kept
    _tool_names: tuple[list[ToolCall], int, tuple[str, ...]] | None = PrivateAttr(None)
    _breakdown: tuple[list[LLMCall], int, bool] | None = PrivateAttr(None)

    @property
    def source(self) -> str:
        private = self.__pydantic_private__  # not self._source: pydantic's __getattr__ is slow, read per query
        assert private is not None  # pydantic sets it on every instance of a model with private attributes
        source: str = private["_source"]
        return source

    @model_validator(mode="after")
    def _needs_a_key(self) -> Trace:
        if not self.id and not self.query:
            raise ValueError("a trace needs `id` or `query` to be matched to its spec query")
        if self.turns:
            if any(turn.turns for turn in self.turns):
                raise ValueError("a turn holds no turns of its own")
            self._whole_from_turns()
        return self

    def _whole_from_turns(self) -> None:
        """The conversation's calls, handoffs and context, when the trace does not give them.

        Its turns' in order; its answer, when empty: the last turn's.
        """
        turns = self.turns
        if not self.final_answer:
            self.final_answer = turns[-1].final_answer
        for name in ("tool_calls", "llm_calls", "handoffs", "retrieved_context"):
            if not getattr(self, name):
                setattr(self, name, [item for turn in turns for item in getattr(turn, name)])

    @property
    def run_error(self) -> str | None:
        """Why `agentci run` got no trace from this run (`metadata.agentci_error`), or None for a real trace."""
        error = self.metadata.get(RUN_ERROR_KEY)
        return str(error) if error else None

    @property
    def model_calls(self) -> dict[str, Any] | None:
        """How a run's model calls were answered under runner.replay, or None for a run made without it.

        From `metadata.agentci_replay`: replayed, live, paid_usd, misses.
        """
        figures = self.metadata.get(REPLAY_KEY)
        return figures if isinstance(figures, dict) else None

    @property
    def unrecorded_totals(self) -> frozenset[str]:
        """The totals nothing recorded: derived from a trace that reports no model calls (`metadata.agentci_unrecorded`)."""
        names = self.metadata.get(UNRECORDED_KEY)
        return frozenset(names) if isinstance(names, list) else _NONE_UNRECORDED

    @property
    def tool_names(self) -> list[str]:
        """The tool calls' names in order, as a fresh list (tool_sequence, copied)."""
        return list(self.tool_sequence)

    @property
    def tool_sequence(self) -> tuple[str, ...]:
        """The tool calls' names in order, kept (`_kept`) in one tuple, returned itself.

        Reading them off 20 scattered models, for the run and again for its baseline, cost a query more than the rest of
        its path layer.
        """
        names: tuple[str, ...] = _kept(self, "_tool_names", self.tool_calls, _names)
        return names

    @property
    def shows_input_breakdown(self) -> bool:
        """Whether a model call shows its input breakdown (token attribution asks, per run), kept (`_kept`)."""
        shown: bool = _kept(self, "_breakdown", self.llm_calls, _breakdown_shown)
        return shown

    def with_derived_totals(self) -> Trace:
        """Fill absent totals from the calls.

        total_tokens = Σ (input_tokens + output_tokens) over llm_calls
        total_llm_calls = |llm_calls|
        total_cost_usd = Σ cost_usd over llm_calls, left unknown (None) if any call's cost is unknown
        total_duration_ms = Σ duration_ms over llm_calls and tool_calls (an upper bound when calls overlap)
        A conversation's totals are the sums of its turns' (`_with_turn_totals`). Totals derived from a trace that
        reports no model calls are 0, and named in `metadata.agentci_unrecorded` (`unrecorded_totals`): "no model calls
        reported" is not "no model calls made", and a budget on them is skipped.
        """
        if self.turns:
            return self._with_turn_totals()
        updates: dict[str, Any] = {}
        if self.total_tokens is None:
            updates["total_tokens"] = sum(c.input_tokens + c.output_tokens for c in self.llm_calls)
        if self.total_llm_calls is None:
            updates["total_llm_calls"] = len(self.llm_calls)
        if self.total_cost_usd is None and all(c.cost_usd is not None for c in self.llm_calls):
            updates["total_cost_usd"] = sum(c.cost_usd or 0.0 for c in self.llm_calls)
        if self.total_duration_ms is None:
            calls: list[LLMCall | ToolCall] = [*self.llm_calls, *self.tool_calls]
            durations = [c.duration_ms for c in calls if c.duration_ms is not None]
            if durations:
                updates["total_duration_ms"] = sum(durations)
        if not self.llm_calls:
            self._mark_unrecorded(updates, [name for name in MODEL_CALL_TOTALS if name in updates])
        return self.model_copy(update=updates) if updates else self

    def _mark_unrecorded(self, updates: dict[str, Any], names: list[str]) -> None:
        """Name `names` in the metadata `updates` will give the trace, as totals nothing recorded."""
        if names:
            updates["metadata"] = {**self.metadata, UNRECORDED_KEY: names}

    def _with_turn_totals(self) -> Trace:
        """A conversation: each turn's totals derived, then the conversation's missing totals summed over turns.

        Each total absent from the conversation is the sum of its turns' (its cost unknown when a turn's is).
        """
        turns = [turn.with_derived_totals() for turn in self.turns]
        updates: dict[str, Any] = {"turns": turns}
        for name in ("total_tokens", "total_llm_calls", "total_duration_ms", "total_cost_usd"):
            values = [getattr(turn, name) for turn in turns]
            if getattr(self, name) is None and (name != "total_cost_usd" or None not in values):
                known = [value for value in values if value is not None]
                updates[name] = sum(known) if known or name != "total_duration_ms" else None
        unrecorded = [n for n in MODEL_CALL_TOTALS if n in updates and all(n in t.unrecorded_totals for t in turns)]
        self._mark_unrecorded(updates, unrecorded)
        return self.model_copy(update=updates)

    def turn(self, index: int) -> Trace | None:
        """The turn at `index` (0-based), or None past the last; a trace without turns is a conversation of one."""
        if not self.turns:
            return self if index == 0 else None
        return self.turns[index] if index < len(self.turns) else None


def _kept(trace: Trace, name: str, calls: list[Any], derive: Callable[[list[Any]], Any]) -> Any:
    """derive(calls), worked out once per list of calls and kept in the trace's private attribute `name`.

    Again for another list, or one of another length (a list changed in place is otherwise not noticed: traces are
    data, replaced with model_copy, never edited). `compact` asks while the calls are in cache. A function, not a
    method: a pydantic model's attribute reads are slow (benchmarks/engine.md), and this is read per run.
    """
    private = trace.__pydantic_private__
    assert private is not None  # as in Trace.source
    known: tuple[list[Any], int, Any] | None = private.get(name)
    if known is None or known[0] is not calls or known[1] != len(calls):
        known = private[name] = (calls, len(calls), derive(calls))
    return known[2]


def _names(calls: list[ToolCall]) -> tuple[str, ...]:
    return tuple([call.name for call in calls])


def _breakdown_shown(calls: list[LLMCall]) -> bool:
    return any(call.input_breakdown is not None for call in calls)


_set = object.__setattr__
_FIELDS_SETS: dict[frozenset[str], set[str]] = {}  # one fields-set per distinct set of fields given, like sys.intern


def compact(trace: Trace) -> Trace:
    """`trace` kept in less memory, every value the same.

    Its models share one fields-set per distinct set of fields given (pydantic keeps a set per instance, after its
    __dict__ the biggest part of a tool call; nothing assigns to a loaded trace's fields, which would add to the shared
    set), and tool and model names are interned (a suite calls a few dozen tools; each call held its own copy of the
    name). Returns `trace` itself.
    """
    models: list[BaseModel] = [trace, *trace.tool_calls, *trace.llm_calls, *trace.handoffs, *trace.retrieved_context]
    for model in models:
        fields = model.__pydantic_fields_set__
        shared = _FIELDS_SETS.get(key := frozenset(fields))
        if shared is None:
            shared = _FIELDS_SETS[key] = set(fields)  # a copy of its own: the first model's set is not shared
        _set(model, "__pydantic_fields_set__", shared)
    for call in trace.tool_calls:
        call.__dict__["name"] = intern(call.name)
    trace.tool_sequence  # noqa: B018 (kept beside the calls now, while they are in cache)
    for llm in trace.llm_calls:
        if llm.model is not None:
            llm.__dict__["model"] = intern(llm.model)
    trace.shows_input_breakdown  # noqa: B018 (as tool_sequence)
    return trace
