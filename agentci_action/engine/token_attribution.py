"""Where a query's input tokens went.

Each model call's input breakdown (trace/input_parts.py) as counted, the rest of its reported input as framing,
priced, and summed per run; the metrics reference's token tracking over them. Pure.

Per call with a breakdown: each part keeps the tokens its text counts, tᵢ of T = Σ t, so a part whose text did not
change does not move. Of the rest of the call's reported input tokens I, I − T, `framing` is what the call's format
adds around the messages (InputBreakdown.framing, at most I − T; 0 where the trace does not record it), and
`unexplained` the gap, I − T − framing: the count's error where the tokenizer is not the provider's own, or framing
not recorded. Nothing is scaled, so the components add up to I exactly. A part's cost is input_cost · tᵢ / I, the
call's input cost (as the cost layer priced it) shared by tokens, so a prompt cache's discount is shared in
proportion. The count is `exact` only when the model's own tokenizer counted it and the gap is 0; `gap` sums the
unexplained tokens over the calls. A call
that reports no input tokens (I = 0) while its request holds text did not report its usage (some instrumentations
write 0 for a streamed call): it is not attributed, like a call whose request the trace does not show, so every
figure stays a share of the reported tokens; so is a call whose parts count no token (T = 0). A query's figures are
means per run over its runs; a suite's are sums over every run of every query (as its cost and tokens are).

    schema_overhead = Σ tokens of tool_schemas          skill_tokens = Σ tokens of system_prompt
    skill_efficiency = skill / (skill + schema)          token_efficiency_ratio = schema / skill

The reference separates a base system prompt from skill prompts and domain expertise; a trace cannot tell them
apart, so every instruction in the system prompt counts as skill tokens.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from agentci_action.engine.results import TokenAttribution
from agentci_action.engine.stats import tidy
from agentci_action.trace.canonical import LLMCall, Trace

UNATTRIBUTED, OUTPUT, FRAMING, UNEXPLAINED = "unattributed", "output", "framing", "unexplained"
ITEMISED = ("tool_schemas", "tool_results", "retrieved_context")  # the components whose parts are named


class _Sums:
    """Token and cost sums over calls: by component, by item, the cost parts that may be unknown."""

    def __init__(self) -> None:
        self.tokens: dict[str, float] = {}
        self.costs: dict[str, float | None] = {}
        self.items: dict[str, dict[str, float]] = {}
        self.parameters: dict[str, int] = {}
        self.calls = self.llm_calls = 0
        self.tokenizers: dict[str, None] = {}
        self.exact = True
        self.gap: float = 0

    def add_cost(self, key: str, cost: float | None) -> None:
        known = self.costs.get(key, 0.0)
        self.costs[key] = None if known is None or cost is None else known + cost

    def add(self, call: LLMCall) -> None:
        self.llm_calls += 1
        breakdown, reported = call.input_breakdown, call.input_tokens
        counts = [part["tokens"] for part in breakdown.parts] if breakdown is not None and reported > 0 else []
        if breakdown is None or not any(counts):
            self.tokens[UNATTRIBUTED] = self.tokens.get(UNATTRIBUTED, 0) + reported
            self.add_cost(UNATTRIBUTED, call.cost_usd)
            return
        self.calls += 1
        self.tokenizers[breakdown.tokenizer] = None
        rest = reported - sum(counts)
        framing = min(breakdown.framing or 0, max(rest, 0))
        gap = rest - framing
        self.exact = self.exact and breakdown.exact and breakdown.framing is not None and gap == 0
        self.gap += gap
        input_cost, sums = breakdown.input_cost_usd, self.tokens
        shares = [
            (part["component"], part.get("name"), part.get("parameters"), part["tokens"]) for part in breakdown.parts
        ]
        rests = [(FRAMING, None, None, framing)] + ([(UNEXPLAINED, None, None, gap)] if gap else [])
        for component, name, parameters, tokens in [*shares, *rests]:
            sums[component] = sums.get(component, 0) + tokens
            self.add_cost(component, None if input_cost is None else input_cost * tokens / reported)
            if component in ITEMISED:
                named = self.items.setdefault(component, {})
                named[name or "?"] = named.get(name or "?", 0) + tokens
            if parameters is not None and name:
                self.parameters[name] = max(self.parameters.get(name, 0), parameters)
        output = None if call.cost_usd is None or input_cost is None else max(call.cost_usd - input_cost, 0.0)
        self.add_cost(OUTPUT, output)

    def attribution(self, runs: int) -> TokenAttribution | None:
        """The sums divided by `runs` (1 for totals), with the reference's figures; None when no call was attributed."""
        if not self.calls:
            return None

        def per_run(value: float) -> float:
            if type(value) is int and value % runs == 0:
                return value // runs
            mean = tidy(value / runs)
            return int(mean) if mean.is_integer() else mean

        components = {name: per_run(value) for name, value in self.tokens.items()}
        schema, skill = components.get("tool_schemas", 0), components.get("system_prompt", 0)
        return TokenAttribution(
            calls=self.calls,
            llm_calls=self.llm_calls,
            tokenizer=", ".join(self.tokenizers),
            exact=self.exact,
            gap=per_run(self.gap),
            components=components,
            costs={name: None if cost is None else tidy(cost / runs) for name, cost in self.costs.items()},
            items={c: {name: per_run(v) for name, v in named.items()} for c, named in self.items.items()},
            parameters=dict(self.parameters),
            schema_overhead=schema,
            skill_tokens=skill,
            skill_efficiency=tidy(skill / (skill + schema)) if skill + schema else None,
            token_efficiency_ratio=tidy(schema / skill) if skill else (math.inf if schema else None),
        )


def query_tokens(traces: list[Trace]) -> TokenAttribution | None:
    """A query's attribution: means per run over `traces` (its runs); None when no call is attributed."""
    if not _any_breakdown(traces):
        return None
    sums = _Sums()
    for trace in traces:
        for call in trace.llm_calls:
            sums.add(call)
    return sums.attribution(len(traces))


def _any_breakdown(traces: list[Trace]) -> bool:
    """Whether a model call of `traces` shows its input breakdown (none does on bench_hot_path's traces: each asks)."""
    for trace in traces:  # noqa: SIM110 (a loop, not any() over a generator: asked per query)
        if trace.shows_input_breakdown:
            return True
    return False


def suite_tokens(queries: Iterable[tuple[TokenAttribution | None, int]]) -> TokenAttribution | None:
    """Totals over every run of every query: each query's means times its runs, summed; None when none is attributed."""
    sums = _Sums()
    for found, runs in queries:
        if found is None:
            continue
        sums.calls += found.calls
        sums.llm_calls += found.llm_calls
        sums.tokenizers.update(dict.fromkeys(found.tokenizer.split(", ")))
        sums.exact = sums.exact and found.exact
        sums.gap += found.gap * runs
        for name, tokens in found.components.items():
            sums.tokens[name] = sums.tokens.get(name, 0) + tokens * runs
        for name, cost in found.costs.items():
            sums.add_cost(name, None if cost is None else cost * runs)
        for component, named in found.items.items():
            into = sums.items.setdefault(component, {})
            for name, tokens in named.items():
                into[name] = into.get(name, 0) + tokens * runs
        for name, count in found.parameters.items():
            sums.parameters[name] = max(sums.parameters.get(name, 0), count)
    return sums.attribution(1)
