"""Pricing unpriced LLM calls: the spec's `pricing:` first, then the bundled genai-prices table, by model and date."""

from __future__ import annotations

import json
import socket

import pytest
from helpers import run_cli

from agentci_action._util.errors import SpecError
from agentci_action.engine.cost import evaluate_cost
from agentci_action.spec.loader import load_spec
from agentci_action.spec.models import CostSpec, ModelPrice
from agentci_action.trace.canonical import LLMCall, Trace
from agentci_action.trace.load import load_traces
from agentci_action.trace.pricing import price_call, price_trace, spec_price, table_price

MAY_2026 = "2026-05-01T10:00:00Z"


def test_spec_price_charges_each_token_kind_at_its_rate():
    price = ModelPrice(input=3, output=15, cached_input=0.3, cache_write_input=3.75)
    call = LLMCall(
        model="m", input_tokens=10_000, cached_input_tokens=4_000, cache_write_input_tokens=1_000, output_tokens=2_000
    )
    # 5,000 uncached × $3 + 4,000 cached × $0.30 + 1,000 written × $3.75 + 2,000 out × $15, per million
    assert spec_price(call, price) == pytest.approx((15_000 + 1_200 + 3_750 + 30_000) / 1e6)


def test_spec_price_without_cache_rates_charges_cache_tokens_as_input():
    call = LLMCall(model="m", input_tokens=1_000, cached_input_tokens=400, output_tokens=100)
    assert spec_price(call, ModelPrice(input=2, output=8)) == pytest.approx((1_000 * 2 + 100 * 8) / 1e6)


def test_table_prices_gpt_4o_mini_with_cached_input_at_its_own_rate():
    # gpt-4o-mini: $0.15 input, $0.075 cached input, $0.60 output per million tokens
    plain = LLMCall(model="gpt-4o-mini-2024-07-18", input_tokens=820, output_tokens=40, timestamp=MAY_2026)
    cached = LLMCall(
        model="gpt-4o-mini-2024-07-18",
        input_tokens=1_010,
        cached_input_tokens=768,
        output_tokens=12,
        timestamp=MAY_2026,
    )
    assert table_price(plain) == pytest.approx((820 * 0.15 + 40 * 0.60) / 1e6)
    assert table_price(cached) == pytest.approx((242 * 0.15 + 768 * 0.075 + 12 * 0.60) / 1e6)


def test_table_prices_anthropic_cache_writes_and_reads_at_their_own_rates():
    # claude-sonnet-4: $3 input, $3.75 cache write (5 min), $0.30 cache read, $15 output per million tokens
    call = LLMCall(
        model="claude-sonnet-4-20250514",
        input_tokens=1_010,
        cache_write_input_tokens=232,
        cached_input_tokens=768,
        output_tokens=12,
        timestamp=MAY_2026,
    )
    assert table_price(call) == pytest.approx((10 * 3 + 232 * 3.75 + 768 * 0.30 + 12 * 15) / 1e6)


def test_the_table_prices_a_call_at_the_rates_of_its_date():
    # deepseek-v4-flash per million tokens: $0.14 in / $0.28 out until 2026-08-17, $0.22 / $0.66 from then, $0.15 / $0.60 from 2026-09-10
    def on(day: str) -> float:
        return table_price(LLMCall(model="deepseek-v4-flash", input_tokens=1_000, output_tokens=1_000, timestamp=day))

    assert on("2026-08-01T00:00:00Z") == pytest.approx((1_000 * 0.14 + 1_000 * 0.28) / 1e6)
    assert on("2026-08-20T00:00:00+00:00") == pytest.approx((1_000 * 0.22 + 1_000 * 0.66) / 1e6)
    assert on("2026-10-01T00:00:00") == pytest.approx((1_000 * 0.15 + 1_000 * 0.60) / 1e6)


def test_reasoning_tokens_are_charged_at_their_own_rate_under_the_calls_provider():
    # perplexity sonar-deep-research per million tokens: $2 input, $8 output, $3 reasoning (part of the output)
    call = LLMCall(
        model="sonar-deep-research",
        provider="perplexity",
        input_tokens=1_000,
        output_tokens=1_000,
        reasoning_tokens=600,
    )
    assert table_price(call) == pytest.approx((1_000 * 2 + 400 * 8 + 600 * 3) / 1e6)
    with pytest.raises(LookupError):  # without its provider the name alone does not find it
        table_price(call.model_copy(update={"provider": None}))


def test_an_unknown_provider_falls_back_to_the_model_name():
    call = LLMCall(model="gpt-4o-mini", provider="my-gateway", input_tokens=1_000, output_tokens=0, timestamp=MAY_2026)
    assert table_price(call) == pytest.approx(1_000 * 0.15 / 1e6)


def test_the_spec_price_wins_over_the_table_and_names_match_case_insensitively():
    call = LLMCall(model="GPT-4o-mini-2024-07-18", input_tokens=1_000_000, output_tokens=0)
    cost, reason = price_call(call, {"gpt-4o-mini-2024-07-18": ModelPrice(input=1, output=1)})
    assert (cost, reason) == (pytest.approx(1.0), None)


def test_a_stated_cost_is_kept():
    call = LLMCall(model="gpt-4o-mini", input_tokens=1_000, output_tokens=1_000, cost_usd=0.5)
    assert price_call(call, {"gpt-4o-mini": ModelPrice(input=1, output=1)}) == (0.5, None)


def test_an_unknown_model_leaves_the_cost_unknown_and_says_why():
    trace = Trace(
        id="q",
        llm_calls=[
            LLMCall(model="gpt-4o-mini", input_tokens=100, output_tokens=10, timestamp=MAY_2026),
            LLMCall(model="acme-llm-9", input_tokens=100, output_tokens=10),
        ],
    ).with_derived_totals()
    priced = price_trace(trace)
    assert priced.llm_calls[0].cost_usd == pytest.approx((100 * 0.15 + 10 * 0.6) / 1e6)
    assert priced.llm_calls[1].cost_usd is None
    assert priced.total_cost_usd is None  # never a silent zero
    (reason,) = priced.metadata["cost_unknown"]
    assert "acme-llm-9" in reason and "pricing:" in reason
    layer = evaluate_cost(CostSpec(max_cost_usd=1.0), priced)
    assert layer.details["cost_usd"] is None and "acme-llm-9" in layer.details["cost_unknown_reason"]
    (check,) = layer.checks
    assert check.status.value == "skip" and "acme-llm-9" in check.message


def test_a_call_without_tokens_or_model_is_unknown_not_free():
    assert price_call(LLMCall(model="gpt-4o-mini"), {})[0] is None
    assert price_call(LLMCall(input_tokens=10), {})[0] is None


def test_pricing_reads_no_network(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("pricing tried to open a network connection")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    call = LLMCall(model="o3-mini", input_tokens=1_000_000, output_tokens=0, timestamp=MAY_2026)
    assert table_price(call) == pytest.approx(1.10)


def test_the_loader_prices_with_the_spec_pricing(write, write_traces):
    spec = load_spec(
        write(
            "agentci_spec.yaml",
            """
        agent: a
        pricing:
          acme-llm-9: {input: 2.0, output: 10.0, cached_input: 0.5}
        queries:
          - {id: q, query: hello}
    """,
        )
    )
    path = write_traces(
        "t.jsonl",
        [
            {
                "id": "q",
                "llm_calls": [
                    {"model": "acme-llm-9", "input_tokens": 3_000, "cached_input_tokens": 1_000, "output_tokens": 500}
                ],
            }
        ],
    )
    (unpriced,) = load_traces([str(path)])
    (priced,) = load_traces([str(path)], pricing=spec.pricing)
    assert unpriced.total_cost_usd is None
    assert priced.total_cost_usd == pytest.approx((2_000 * 2.0 + 1_000 * 0.5 + 500 * 10.0) / 1e6)


def test_a_misspelt_price_key_is_a_spec_error_with_its_line(write):
    path = write(
        "agentci_spec.yaml",
        """
        agent: a
        pricing:
          acme-llm-9: {input: 2.0, output: 10.0, cached: 0.5}
        queries:
          - {id: q, query: hello}
    """,
    )
    with pytest.raises(SpecError) as caught:
        load_spec(path)
    (problem,) = caught.value.problems
    assert problem.line == 3 and "cached" in problem.message


def test_the_cli_prices_traces_with_the_spec_pricing(write, write_traces):
    spec = write(
        "agentci_spec.yaml",
        """
        agent: a
        pricing:
          acme-llm-9: {input: 2.0, output: 10.0}
        queries:
          - id: q
            query: hello
            cost: {max_cost_usd: 0.001}
    """,
    )
    traces = write_traces(
        "t.jsonl",
        [
            {
                "id": "q",
                "final_answer": "hi",
                "llm_calls": [{"model": "acme-llm-9", "input_tokens": 1_000, "output_tokens": 100}],
            }
        ],
    )
    result = run_cli("test", "--spec", spec, "--traces", traces, "--format", "json")
    report = json.loads(result.stdout)
    assert report["results"][0]["cost"]["details"]["cost_usd"] == pytest.approx((1_000 * 2.0 + 100 * 10.0) / 1e6)
    assert report["results"][0]["cost"]["status"] == "warn"


def test_an_undated_call_is_priced_at_the_traces_date_else_at_a_fixed_date_never_today():
    """deepseek-v4-flash's price changes with the date (see above) and the time of day.

    An undated call takes the trace's earliest dated call's time, else UNDATED_PRICE_DATE, so the price never depends on
    when CI runs.
    """
    from agentci_action.trace.pricing import UNDATED_PRICE_DATE

    def call(timestamp=None):
        return LLMCall(model="deepseek-v4-flash", input_tokens=1_000, output_tokens=1_000, timestamp=timestamp)

    august, fixed = "2026-08-01T00:00:00Z", UNDATED_PRICE_DATE.isoformat()
    assert UNDATED_PRICE_DATE.isoformat() == "2026-11-01T12:00:00+00:00"
    assert table_price(call(august)) == pytest.approx((1_000 * 0.14 + 1_000 * 0.28) / 1e6)
    assert table_price(call(august)) != pytest.approx(table_price(call(fixed)))
    mixed = price_trace(Trace(id="q", llm_calls=[call("2026-08-02T00:00:00Z"), call(august), call()]))
    assert mixed.llm_calls[2].cost_usd == pytest.approx(table_price(call(august)))
    undated = price_trace(Trace(id="q", llm_calls=[call(), call()]))
    assert [c.cost_usd for c in undated.llm_calls] == [pytest.approx(table_price(call(fixed)))] * 2


def test_the_console_says_why_a_cost_is_unknown_without_a_cost_check(write, write_traces):
    spec = write("agentci_spec.yaml", "agent: a\nqueries:\n  - id: q\n    query: hi\n")
    traces = write_traces(
        "t.jsonl",
        [
            {
                "id": "q",
                "final_answer": "x",
                "llm_calls": [{"model": "my-finetune-v3", "input_tokens": 10, "output_tokens": 5}],
            }
        ],
    )
    result = run_cli("test", "--spec", spec, "--traces", traces)
    assert result.returncode == 0, result.stderr
    assert (
        "cost unknown (model 'my-finetune-v3' is not in the price table; add it under `pricing:` in the spec)"
        in result.stdout
    )
