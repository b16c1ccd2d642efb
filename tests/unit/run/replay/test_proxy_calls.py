"""with_proxy_calls: a trace that reports no model calls gets the ones the proxy answered, priced and timed."""

from __future__ import annotations

from agentci_action.run.replay.recorded_requests import with_proxy_calls
from agentci_action.run.replay.recordings import RecordedCall, RecordedRequest, RecordedResponse
from agentci_action.run.replay.replay_session import MadeCall
from agentci_action.spec.models import ModelPrice
from agentci_action.trace.canonical import Trace

PRICES = {"m": ModelPrice(input=1_000_000, output=2_000_000)}  # $1 an input token, $2 an output one


def made(path: str = "/chat/completions", status: int = 200, usage: dict | None = None, ms: float = 3.0) -> MadeCall:
    body = {"model": "m", **({"usage": usage} if usage else {})}
    request = RecordedRequest(provider="openai", method="POST", path=path, content={"body": {"model": "m"}})
    response = RecordedResponse(status=status, headers={}, content={"body": body})
    return MadeCall(RecordedCall(request=request, response=response), duration_ms=ms)


def answer_only(**fields: object) -> Trace:
    return Trace.model_validate({"id": "q", "final_answer": "ok", **fields}).with_derived_totals()


def test_the_proxy_s_answered_model_calls_become_the_trace_s_priced_and_timed():
    calls = [
        made(usage={"prompt_tokens": 3, "completion_tokens": 1}),
        made("/embeddings", usage={"prompt_tokens": 9}),  # not a model call
        made(status=429),  # not answered
        made(usage={"prompt_tokens": 2, "completion_tokens": 2}, ms=5.0),
    ]
    filled = with_proxy_calls(answer_only(), calls, PRICES)
    assert [(c.model, c.input_tokens, c.output_tokens, c.duration_ms) for c in filled.llm_calls] == [
        ("m", 3, 1, 3.0),
        ("m", 2, 2, 5.0),
    ]
    assert (filled.total_llm_calls, filled.total_tokens, filled.total_cost_usd) == (2, 8, 3 + 2 + 2 + 4)
    assert filled.total_duration_ms == 8.0 and filled.unrecorded_totals == frozenset()


def test_an_answer_without_usage_leaves_the_cost_unknown_with_its_reason():
    filled = with_proxy_calls(answer_only(), [made()], PRICES)
    assert filled.total_llm_calls == 1 and filled.total_cost_usd is None
    assert filled.metadata["cost_unknown"] == ["an LLM call to m reports no token counts"]


def test_a_trace_with_calls_or_totals_of_its_own_keeps_them():
    proxy = [made(usage={"prompt_tokens": 3, "completion_tokens": 1})]
    own = answer_only(llm_calls=[{"model": "x", "input_tokens": 7}])
    assert with_proxy_calls(own, proxy, PRICES) is own
    totals = answer_only(total_llm_calls=4)
    assert with_proxy_calls(totals, proxy, PRICES) is totals
    assert with_proxy_calls(answer_only(), [made(status=500)], PRICES).unrecorded_totals  # none answered: none made
