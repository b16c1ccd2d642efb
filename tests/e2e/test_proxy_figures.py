"""Figures from the calls the proxy saw (issue 43, item 6), through the real `openai` SDK.

An agent that prints only `{final_answer, tool_calls}` reports no model calls; under `runner.replay` the proxy served
them, live and replayed, so its budgets, tokens and cost are theirs: `max_llm_calls` fails when they exceed it, the
cost is the priced usage, each call has the proxy's duration and a stream its time to first bytes, and the diff of
two versions sees their costs (tests/integration/test_proxy_figures.py: with no proxy, the budgets are skipped).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from fakes.scripted_openai import Turn
from fakes.scripted_providers import ScriptedProviders
from helpers import hermetic_environment, run_cli

from agentci_action.trace.load import load_traces
from e2e.test_replay_run import QUESTION, SCRIPT, WEATHER_AGENT, with_provider, write_spec

ANSWER_ONLY = [sys.executable, str(WEATHER_AGENT), "chat", "stream", "answer-only"]
BUDGETS = {"max_llm_calls": 1, "max_total_tokens": 10_000, "max_cost_usd": 1, "severity": {"max_llm_calls": "fail"}}
LONGER = {QUESTION: [*SCRIPT[QUESTION][:-1], Turn(tool_calls=[("get_time", {"tz": "UTC"})]), SCRIPT[QUESTION][-1]]}


def spec_of(folder: Path) -> Path:
    return write_spec(
        folder, {"command": ANSWER_ONLY, "replay": {}}, [{"id": "paris", "query": QUESTION, "cost": BUDGETS}]
    )


def run_test(spec: Path, traces: Path, env: dict[str, str], *options: str) -> dict[str, Any]:
    """`agentci test` of `spec`, its traces kept in `traces`: the query's result (it fails: 2 calls > 1)."""
    done = run_cli("test", "--spec", spec, "--record", traces, "--format", "json", *options, env=env)
    assert done.returncode == 1, done.stderr
    [result] = json.loads(done.stdout)["results"]
    return result


@pytest.mark.parametrize("mode", ["live", "replayed"])
def test_the_proxy_s_calls_are_the_run_s_when_the_agent_prints_only_its_answer_and_tools(tmp_path, mode):
    spec = spec_of(tmp_path)
    with ScriptedProviders(SCRIPT) as provider:
        live = run_test(spec, tmp_path / "live", with_provider(provider), "--replay", "record")
    result = live if mode == "live" else run_test(spec, tmp_path / "replayed", hermetic_environment())
    calls = result["model_calls"]
    assert (calls["live"], calls["replayed"]) == ((2, 0) if mode == "live" else (0, 2))
    figures = result["cost"]["details"]
    assert (figures["llm_calls"], figures["total_tokens"]) == (2, 120 + 30 + 180 + 14)
    assert figures["cost_usd"] == pytest.approx(live["model_calls"]["paid_usd"]) and figures["cost_usd"] > 0
    checks = {check["name"]: check for check in result["cost"]["checks"]}
    assert (checks["max_llm_calls"]["status"], checks["max_llm_calls"]["data"]["actual"]) == ("fail", 2)
    assert checks["max_total_tokens"]["status"] == checks["max_cost_usd"]["status"] == "pass"
    [trace] = load_traces([str(tmp_path / mode)])
    assert [(c.model, c.provider, c.input_tokens, c.output_tokens) for c in trace.llm_calls] == [
        ("gpt-4o-mini-2024-07-18", "openai", 120, 30),
        ("gpt-4o-mini-2024-07-18", "openai", 180, 14),
    ]
    for call in trace.llm_calls:  # timed by the proxy; what each sent, as the proxy saw it
        assert call.duration_ms is not None and call.ttft_ms is not None and 0 <= call.ttft_ms <= call.duration_ms
        assert call.input_breakdown is not None and call.cost_usd is not None and call.cost_usd > 0
    assert trace.unrecorded_totals == frozenset()
    if mode == "replayed":
        console = run_cli("test", "--spec", spec, env=hermetic_environment())
        assert "2 LLM calls" in console.stdout and "max_llm_calls" in console.stdout
        assert "0 LLM calls" not in console.stdout


def test_the_diff_of_two_versions_sees_the_proxy_s_costs(tmp_path):
    spec = spec_of(tmp_path)
    for version, script in (("v1", SCRIPT), ("v2", LONGER)):
        with ScriptedProviders(script) as provider:
            run_test(spec, tmp_path / version, with_provider(provider), "--replay", "record")
        saved = run_cli("save", "--spec", spec, "--traces", tmp_path / version, "--version", version, "--force-save")
        assert saved.returncode == 0, saved.stderr
    done = run_cli("diff", "--spec", spec, "--baseline", "v1", "--compare", "v2", "--format", "json")
    total = json.loads(done.stdout)["total"]
    assert total["counts"]["cost_changed"] == 1
    assert (total["llm_calls"]["before"], total["llm_calls"]["after"]) == (2, 3)
    assert (total["total_tokens"]["before"], total["total_tokens"]["after"]) == (344, 344 + 10 + 5)
    assert 0 < total["cost_usd"]["before"] < total["cost_usd"]["after"]  # $0 → $0 before the proxy's calls counted
