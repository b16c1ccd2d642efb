"""A run's model calls attributed from the requests the replay proxy saw, where its trace does not show them.

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
from agentci_action.trace.api_requests import is_model_request, request_breakdown
from agentci_action.trace.canonical import InputBreakdown, LLMCall, Trace


def with_recorded_requests(trace: Trace, calls: list[RecordedCall]) -> Trace:
    """`trace` with the input breakdowns of the model requests among `calls` (see the module docstring)."""
    requests = [c.request for c in calls if is_model_request(c.request.path) and 200 <= c.response.status < 300]
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
