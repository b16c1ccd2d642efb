"""A run's model calls taken from the requests the replay proxy saw, where its trace does not show them.

An agent that prints only its answer and tools (`{"final_answer", "tool_calls"}`) reports no model calls: the
proxy's are its calls (`with_proxy_calls`), each the model and usage its answer reported (recorded, when replayed:
trace/pricing.py prices it as any call), and how long the proxy took to answer it (a stream's first bytes too: a
replayed call takes the proxy's time, a live one the provider's), so its budgets, tokens and cost are the calls'.

An agent's own trace often lists its model calls with their usage but not what they sent (a canonical trace the
agent writes, an SDK's usage alone). The proxy sees every request, replayed or live: the run's model calls (the
answered requests to Chat Completions, Responses and Anthropic Messages, trace/api_requests.py), in the order they
were made, are paired in order with the trace's model calls (a conversation's turns' calls in turn order), and each
trace call with no input breakdown gets its request's. Paired only when they are as many: an agent that made calls
its trace leaves out (or lists calls the proxy never saw: another provider, another route) cannot be paired call by
call, and its trace is left as it is.
"""

from __future__ import annotations

from typing import Any

from agentci_action.run.replay.recordings import RecordedCall, RecordedRequest
from agentci_action.run.replay.replay_session import MadeCall
from agentci_action.run.replay.wire_usage import usage_of
from agentci_action.spec.models import ModelPrice
from agentci_action.trace.api_requests import is_model_request, request_breakdown
from agentci_action.trace.canonical import UNRECORDED_KEY, InputBreakdown, LLMCall, Trace
from agentci_action.trace.pricing import price_trace


def with_proxy_calls(trace: Trace, made: list[MadeCall], pricing: dict[str, ModelPrice]) -> Trace:
    """`trace` with the model calls among `made` as its calls when it reports none, priced, its totals theirs.

    `trace` as it is when it reports model calls or model-call totals of its own, holds turns (each turn is filled as
    its own attempt), or the proxy answered none.
    """
    if trace.turns or trace.llm_calls or "total_llm_calls" not in trace.unrecorded_totals:
        return trace
    calls = [_llm_call(one) for one in made if _answered_model_call(one.call)]
    if not calls:
        return trace
    metadata = {name: value for name, value in trace.metadata.items() if name != UNRECORDED_KEY}
    unknown = dict.fromkeys(trace.unrecorded_totals)  # derived from nothing: derived again from the calls
    filled = trace.model_copy(update={"llm_calls": calls, "metadata": metadata, **unknown})
    return price_trace(filled, pricing).with_derived_totals()


def _answered_model_call(call: RecordedCall) -> bool:
    return is_model_request(call.request.path) and 200 <= call.response.status < 300


def _llm_call(made: MadeCall) -> LLMCall:
    """The model call the proxy saw: its model and the usage its answer reported (counts left out when unreported)."""
    usage = usage_of(made.call.request.provider, made.call.response)
    fields: dict[str, Any] = {
        "model": usage.model,
        "provider": made.call.request.provider,
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "cached_input_tokens": usage.cached_input_tokens,
        "cache_write_input_tokens": usage.cache_write_input_tokens,
        "duration_ms": made.duration_ms,
        "ttft_ms": made.ttft_ms,
    }
    return LLMCall(**{name: value for name, value in fields.items() if value is not None})


def with_recorded_requests(trace: Trace, calls: list[RecordedCall]) -> Trace:
    """`trace` with the input breakdowns of the model requests among `calls` (see the module docstring)."""
    requests = [c.request for c in calls if _answered_model_call(c)]
    owners = trace.turns or [trace]
    own = [call for owner in owners for call in owner.llm_calls]
    if not requests or len(requests) != len(own) or all(call.input_breakdown for call in own):
        return trace
    found = iter(requests)
    updated: list[list[LLMCall]] = []
    for owner in owners:
        updated.append([_attributed(call, _breakdown(next(found))) for call in owner.llm_calls])
    if not trace.turns:
        return trace.model_copy(update={"llm_calls": updated[0]})
    turns = [turn.model_copy(update={"llm_calls": made}) for turn, made in zip(trace.turns, updated)]
    flat = [call for made in updated for call in made]
    return trace.model_copy(
        update={"turns": turns, "llm_calls": flat if len(trace.llm_calls) == len(flat) else trace.llm_calls}
    )


def _breakdown(request: RecordedRequest) -> dict[str, Any] | None:
    return request_breakdown(request.path, request.content.get("body"))


def _attributed(call: LLMCall, breakdown: dict[str, Any] | None) -> LLMCall:
    if call.input_breakdown is not None or breakdown is None:
        return call
    return call.model_copy(update={"input_breakdown": InputBreakdown.model_validate(breakdown)})
