"""Price LLM calls that report tokens but no cost.

Prices come from the spec's `pricing:` first (USD per million tokens, by exact model name, case-insensitive),
else from the price table bundled with the pinned `genai-prices` package, looked up by the response model
and the call's date. The table is never refreshed over the network (its `UpdatePrices` is opt-in and never
started here). A call without a `timestamp` is priced at the trace's earliest dated call, else at
UNDATED_PRICE_DATE, never at "now" (the table holds prices that start on future dates and time-of-day
prices), so one AgentCI version always gives one price for one trace.

    cost = (uncached·input + cached·cached_input + cache_write·cache_write_input + output·output) / 1e6
    uncached = input_tokens − cached_input_tokens − cache_write_input_tokens

A call with an input breakdown (trace/input_parts.py) also gets `input_breakdown.input_cost_usd`, the cost of its
input tokens alone (the first term of the sum, by the same price), which the token attribution shares among the
components; a call whose cost the trace gave is priced for that alone.

Reasoning tokens are part of `output_tokens`; the table prices them at their own rate where it has one,
a spec price at the output rate. A call whose model is unknown, or whose token counts are absent (neither
`input_tokens` nor `output_tokens` given: the format recorded no usage), keeps `cost_usd = None` and the
reason is recorded in `trace.metadata["cost_unknown"]`, so the trace's total stays unknown (never a silent
zero). A count of 0 is a known count: such a call costs $0.
"""

from __future__ import annotations

from datetime import UTC, datetime

from genai_prices import Usage, calc_price

from agentci_action.spec.models import ModelPrice
from agentci_action.trace.canonical import LLMCall, Trace

PER_MILLION = 1_000_000
TOKEN_COUNTS = frozenset({"input_tokens", "output_tokens"})
UNDATED_PRICE_DATE = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)  # for traces with no dated call; README says so


def _uncached(call: LLMCall) -> int:
    return max(call.input_tokens - call.cached_input_tokens - call.cache_write_input_tokens, 0)


def spec_price(call: LLMCall, price: ModelPrice) -> float:
    """Cost of `call` at a spec price (formula in the module docstring)."""
    cached_rate = price.input if price.cached_input is None else price.cached_input
    write_rate = price.input if price.cache_write_input is None else price.cache_write_input
    return (
        _uncached(call) * price.input
        + call.cached_input_tokens * cached_rate
        + call.cache_write_input_tokens * write_rate
        + call.output_tokens * price.output
    ) / PER_MILLION


def _call_date(call: LLMCall) -> datetime | None:
    """The call's time as an aware datetime; None when absent or unreadable."""
    if not call.timestamp:
        return None
    try:
        moment = datetime.fromisoformat(call.timestamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def price_date(calls: list[LLMCall]) -> datetime:
    """The date undated calls are priced at: the earliest dated call among `calls`, else UNDATED_PRICE_DATE."""
    dates = [date for date in map(_call_date, calls) if date is not None]
    return min(dates) if dates else UNDATED_PRICE_DATE


def table_price(call: LLMCall, undated: datetime = UNDATED_PRICE_DATE) -> float:
    """Cost of `call` from the bundled genai-prices table at the call's date (else `undated`).

    Under the call's provider when the table knows it there, else under the provider the model name points to. Raises
    LookupError for a model it does not know.
    """
    return table_prices(call, undated)[0]


def table_prices(call: LLMCall, undated: datetime = UNDATED_PRICE_DATE) -> tuple[float, float]:
    """(cost, cost of the input tokens alone) of `call`, as table_price finds them (one look-up)."""
    usage = Usage(
        input_tokens=call.input_tokens,
        cache_read_tokens=call.cached_input_tokens,
        cache_write_tokens=call.cache_write_input_tokens,
        output_tokens=call.output_tokens,
        output_reasoning_tokens=call.reasoning_tokens,
    )
    when = _call_date(call) or undated
    try:
        if call.provider:
            try:
                result = calc_price(usage, call.model or "", provider_id=call.provider, genai_request_timestamp=when)
                return float(result.total_price), float(result.input_price)
            except LookupError:  # a provider the table does not know, or a model it lists under another
                pass
        result = calc_price(usage, call.model or "", genai_request_timestamp=when)
    except ValueError as exc:  # inconsistent usage, e.g. more cached than input tokens
        raise LookupError(str(exc)) from None
    return float(result.total_price), float(result.input_price)


def price_call(
    call: LLMCall, pricing: dict[str, ModelPrice], undated: datetime = UNDATED_PRICE_DATE
) -> tuple[float | None, str | None]:
    """(cost, None) when the call can be priced (an undated call at `undated`), else (None, why not)."""
    if call.cost_usd is not None:
        return call.cost_usd, None
    cost, _, reason = _prices(call, pricing, undated)
    return cost, reason


def _prices(
    call: LLMCall, pricing: dict[str, ModelPrice], undated: datetime
) -> tuple[float | None, float | None, str | None]:
    """(cost, input cost, None) of the call at its price, ignoring a cost the trace gave; (None, None, why not)."""
    if not call.model:
        return None, None, "an LLM call names no model"
    if call.input_tokens == 0 and call.output_tokens == 0:
        if TOKEN_COUNTS.isdisjoint(call.model_fields_set):
            return None, None, f"an LLM call to {call.model} reports no token counts"
        return 0.0, 0.0, None
    overrides = {name.lower(): price for name, price in pricing.items()}
    if call.model.lower() in overrides:
        price = overrides[call.model.lower()]
        return spec_price(call, price), spec_price(call.model_copy(update={"output_tokens": 0}), price), None
    try:
        return *table_prices(call, undated), None
    except LookupError:
        return None, None, f"model {call.model!r} is not in the price table; add it under `pricing:` in the spec"


def _unpriced(call: LLMCall) -> bool:
    """Whether pricing has something to add: the call's cost, or its input breakdown's input cost."""
    breakdown = call.input_breakdown
    return call.cost_usd is None or (breakdown is not None and breakdown.input_cost_usd is None)


def _priced(call: LLMCall, pricing: dict[str, ModelPrice], undated: datetime) -> tuple[LLMCall, str | None]:
    """The call with its cost (and its breakdown's input cost) filled where they can be priced; why not, if not."""
    if not _unpriced(call):
        return call, None
    cost, input_cost, reason = _prices(call, pricing, undated)
    update: dict[str, object] = {} if call.cost_usd is not None else {"cost_usd": cost}
    if call.input_breakdown is not None and input_cost is not None:
        update["input_breakdown"] = call.input_breakdown.model_copy(update={"input_cost_usd": input_cost})
    if call.cost_usd is not None:
        reason = None  # the trace's own cost stands; only the breakdown's share is left unknown
    return (call.model_copy(update=update) if update else call), reason


def price_trace(trace: Trace, pricing: dict[str, ModelPrice] | None = None) -> Trace:
    """The trace with every unpriced call priced where possible and the total re-derived when it was unknown.

    A conversation's turns are priced each, and its calls and cost are theirs.
    """
    if trace.turns:
        return _price_turns(trace, pricing)
    if not any(map(_unpriced, trace.llm_calls)):
        return trace
    calls, reasons = [], []
    undated = price_date(trace.llm_calls)
    for call in trace.llm_calls:
        priced_call, reason = _priced(call, pricing or {}, undated)
        calls.append(priced_call)
        if reason and reason not in reasons:
            reasons.append(reason)
    metadata = {**trace.metadata, "cost_unknown": reasons} if reasons else trace.metadata
    priced = trace.model_copy(update={"llm_calls": calls, "metadata": metadata})
    if trace.total_cost_usd is None and not reasons:
        priced.total_cost_usd = sum(call.cost_usd or 0.0 for call in calls)
    priced._source = trace.source
    return priced


def _price_turns(trace: Trace, pricing: dict[str, ModelPrice] | None) -> Trace:
    """A conversation priced turn by turn.

    Its calls the priced turns' calls, its cost their sum (unknown when a turn's is, with the turns' reasons).
    """
    turns = [price_trace(turn, pricing) for turn in trace.turns]
    reasons = list(dict.fromkeys(reason for turn in turns for reason in turn.metadata.get("cost_unknown") or []))
    costs = [turn.total_cost_usd for turn in turns]
    update: dict[str, object] = {"turns": turns, "llm_calls": [call for turn in turns for call in turn.llm_calls]}
    if reasons:
        update["metadata"] = {**trace.metadata, "cost_unknown": reasons}
    if trace.total_cost_usd is None and None not in costs:
        update["total_cost_usd"] = sum(cost or 0.0 for cost in costs)
    priced = trace.model_copy(update=update)
    priced._source = trace.source
    return priced
