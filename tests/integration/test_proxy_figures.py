"""Budgets judge only figures something recorded (issue 43, item 6).

A trace that reports no model calls (the README's `{final_answer, tool_calls}`) derives its model-call totals from
nothing: with no proxy to fill them (tests/e2e/test_proxy_figures.py has the proxy's), a budget on them is skipped
with its reason, in the results JSON and on the console, not passed with an actual of 0.
"""

from __future__ import annotations

import json

from helpers import hermetic_environment, run_cli

from agentci_action.engine.cost import NOTHING_RECORDED
from agentci_action.trace.canonical import Trace

SPEC = """\
agent: a
queries:
  - id: answer-only
    query: where is my order?
    cost: {max_llm_calls: 4, max_total_tokens: 1000, max_cost_usd: 0.01, max_cost_multiplier: 2}
  - id: totals-only
    query: refund
    cost: {max_llm_calls: 2}
"""
TRACES = [
    {"id": "answer-only", "final_answer": "It ships today.", "tool_calls": [{"name": "lookup_order"}]},
    {"id": "totals-only", "final_answer": "Refunded.", "total_llm_calls": 3},  # its own total: judged
]


def test_a_budget_on_a_figure_nothing_recorded_is_skipped_with_its_reason(write, write_traces):
    spec, traces = write("agentci_spec.yaml", SPEC), write_traces("t.jsonl", TRACES)
    done = run_cli("test", "--spec", spec, "--traces", traces, "--format", "json", env=hermetic_environment())
    answer_only, totals_only = json.loads(done.stdout)["results"]
    checks = {check["name"]: check for check in answer_only["cost"]["checks"]}
    for name in ("max_llm_calls", "max_total_tokens", "max_cost_usd"):
        assert checks[name]["status"] == "skip"
        assert checks[name]["message"] == f"{name} skipped: {NOTHING_RECORDED}"
        assert "actual" not in checks[name]["data"]
    assert answer_only["cost"]["details"]["llm_calls"] == 0  # the figures themselves are as before
    [calls] = totals_only["cost"]["checks"]
    assert (calls["status"], calls["data"]["actual"]) == ("warn", 3)
    console = run_cli("test", "--spec", spec, "--traces", traces, env=hermetic_environment())
    assert f"max_llm_calls skipped: {NOTHING_RECORDED}" in console.stdout


def test_the_baseline_multiplier_skips_a_cost_nothing_recorded(write, write_traces, tmp_path):
    spec = write("agentci_spec.yaml", SPEC)
    baseline = write_traces("b.jsonl", [{**TRACES[0], "total_cost_usd": 0.002}, TRACES[1]])
    saved = run_cli("save", "--spec", spec, "--traces", baseline, "--version", "v1", env=hermetic_environment())
    assert saved.returncode == 0, saved.stderr
    traces = write_traces("t.jsonl", TRACES)
    done = run_cli("test", "--spec", spec, "--traces", traces, "--format", "json", env=hermetic_environment())
    checks = {check["name"]: check for check in json.loads(done.stdout)["results"][0]["cost"]["checks"]}
    assert checks["max_cost_multiplier"]["status"] == "skip"
    assert checks["max_cost_multiplier"]["message"] == f"cost multiplier skipped: {NOTHING_RECORDED}"


def test_the_trace_remembers_what_it_derived_from_nothing_and_its_json_keeps_the_totals():
    answer_only = Trace.model_validate(TRACES[0]).with_derived_totals()
    assert answer_only.unrecorded_totals == {"total_tokens", "total_llm_calls", "total_cost_usd"}
    assert (answer_only.total_llm_calls, answer_only.total_tokens, answer_only.total_cost_usd) == (0, 0, 0)
    reloaded = Trace.model_validate_json(answer_only.model_dump_json(exclude_none=True)).with_derived_totals()
    assert reloaded.unrecorded_totals == answer_only.unrecorded_totals  # written by `agentci run`, read by `test`
    assert Trace.model_validate(TRACES[1]).with_derived_totals().unrecorded_totals == {"total_tokens", "total_cost_usd"}
    made = Trace.model_validate({"id": "q", "llm_calls": [{"model": "m", "input_tokens": 1}]}).with_derived_totals()
    assert made.unrecorded_totals == frozenset() and "agentci_unrecorded" not in made.metadata
    turns = [{"query": "hi"}, {"query": "bye", "llm_calls": [{"model": "m", "input_tokens": 1}]}]
    conversation = Trace.model_validate({"id": "c", "turns": turns}).with_derived_totals()
    assert conversation.unrecorded_totals == frozenset()  # one turn recorded its calls: the whole did
    assert conversation.turns[0].unrecorded_totals == {"total_tokens", "total_llm_calls", "total_cost_usd"}
