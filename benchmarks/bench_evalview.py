"""AgentCI's deterministic evaluation against EvalView's, on the same suite, side by side in one run.

    python -m venv /tmp/evalview && /tmp/evalview/bin/pip install -e . evalview==0.8.1
    /tmp/evalview/bin/python benchmarks/bench_evalview.py [--queries 1000] [--tools 20] [--repeats 5]

EvalView is not a dependency of AgentCI: install it (from the package index, version 0.8.1) beside AgentCI
in a virtual environment of its own, as above. The suite is bench_engine's (every query with expected and
forbidden terms, a regex, expected and forbidden tools, a tool-call budget, a baseline trace), with a
forbidden `shell` call planted in every 10th trace. Each tool gets the same checks in its own terms
(EvalView: contains, not_contains, regex_patterns, expected tools, the baseline's tool sequence, forbidden
tools, min_score 0 so that only hard failures fail) and must flag exactly the planted failures. Timed: AgentCI's
`evaluate_spec` (three layers, the summary) and EvalView's `Evaluator(skip_llm_judge=True).evaluate` over every
query, each on traces already read into its own models, GC as each runs by default (AgentCI pauses it, EvalView
does not), and json.loads of the same traces for scale; the best of `repeats` interleaved rounds.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
from datetime import datetime, timedelta

from bench_engine import make_query, make_trace, timed  # benchmarks/ is on the path when a benchmark runs as a script
from evalview.core.types import ExecutionMetrics, ExecutionTrace, StepMetrics, StepTrace, TestCase, TokenUsage
from evalview.evaluators.evaluator import Evaluator

from agentci_action.engine.evaluate_spec import evaluate_spec
from agentci_action.engine.results import Status
from agentci_action.spec.models import AgentCISpec
from agentci_action.trace.canonical import Trace

PLANTED_EVERY = 10  # every 10th trace calls the forbidden tool


def suite(queries: int, tools: int) -> tuple[list[dict], list[dict]]:
    """(current trace dicts, baseline trace dicts), with a `shell` call planted in every 10th current trace."""
    rng = random.Random(1)
    ids = [f"q{i}" for i in range(queries)]
    current, baseline = [make_trace(rng, i, tools) for i in ids], [make_trace(rng, i, tools) for i in ids]
    for trace in current[::PLANTED_EVERY]:
        trace["tool_calls"][len(trace["tool_calls"]) // 2]["name"] = "shell"
    return current, baseline


def evalview_case(query_id: str, baseline: dict) -> TestCase:
    """The AgentCI query of bench_engine.make_query in EvalView's terms."""
    return TestCase.model_validate(
        {
            "name": query_id,
            "input": {"query": f"Question {query_id}?"},
            "expected": {
                "tools": ["search", "generate"],
                "tool_sequence": [call["name"] for call in baseline["tool_calls"]],
                "forbidden_tools": ["shell"],
                "output": {"contains": ["answer", "42"], "not_contains": ["sorry"], "regex_patterns": [r"\b42\b"]},
            },
            "thresholds": {"min_score": 0},
            "checks": {"hallucination": False, "safety": False, "pii": False},
        }
    )


def evalview_trace(trace: dict) -> ExecutionTrace:
    """A canonical trace as EvalView's ExecutionTrace: one step per tool call, LLM calls in the totals."""
    start = datetime(2026, 1, 1)
    llm = trace["llm_calls"]
    latency = sum(c["duration_ms"] for c in llm) + sum(c["duration_ms"] for c in trace["tool_calls"])
    return ExecutionTrace(
        session_id=trace["id"],
        start_time=start,
        end_time=start + timedelta(milliseconds=latency),
        steps=[
            StepTrace(
                step_id=str(i),
                step_name=call["name"],
                tool_name=call["name"],
                parameters=call["arguments"],
                output=call["result"],
                success=True,
                metrics=StepMetrics(latency=call["duration_ms"]),
            )
            for i, call in enumerate(trace["tool_calls"])
        ],
        final_output=trace["final_answer"],
        metrics=ExecutionMetrics(
            total_cost=sum(c["cost_usd"] for c in llm),
            total_latency=latency,
            total_tokens=TokenUsage(
                input_tokens=sum(c["input_tokens"] for c in llm), output_tokens=sum(c["output_tokens"] for c in llm)
            ),
        ),
    )


def run_evalview(evaluator: Evaluator, cases: list[TestCase], traces: list[ExecutionTrace]) -> list:
    async def every() -> list:
        return [await evaluator.evaluate(case, trace) for case, trace in zip(cases, traces)]

    return asyncio.run(every())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--tools", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    current, baseline = suite(args.queries, args.tools)
    lines = [json.dumps(t) for t in current]
    spec = AgentCISpec(agent="bench", queries=[make_query(t["id"]) for t in current])
    traces = [Trace.model_validate(t).with_derived_totals() for t in current]
    baselines = {t["id"]: [Trace.model_validate(t).with_derived_totals()] for t in baseline}
    evaluator = Evaluator(skip_llm_judge=True)
    cases = [evalview_case(t["id"], b) for t, b in zip(current, baseline)]
    ev_traces = [evalview_trace(t) for t in current]

    best = {"parse": float("inf"), "agentci": float("inf"), "evalview": float("inf")}
    for _ in range(args.repeats):
        best["parse"] = min(best["parse"], timed(lambda: [json.loads(line) for line in lines])[1])
        run, seconds = timed(lambda: evaluate_spec(spec, traces, baselines=baselines))
        best["agentci"] = min(best["agentci"], seconds)
        results, seconds = timed(lambda: run_evalview(evaluator, cases, ev_traces))
        best["evalview"] = min(best["evalview"], seconds)

    planted = {t["id"] for t in current[::PLANTED_EVERY]}
    flagged_agentci = {r.id for r in run.results if r.status is Status.FAIL}
    flagged_evalview = {r.test_case for r in results if not r.passed}
    assert flagged_agentci == planted, f"AgentCI flagged {sorted(flagged_agentci ^ planted)[:5]} differently"
    assert flagged_evalview == planted, f"EvalView flagged {sorted(flagged_evalview ^ planted)[:5]} differently"
    n = args.queries
    print(f"suite: {n:,} queries × {args.tools} tool calls; both flag exactly the {len(planted)} planted failures")
    print(f"json.loads of the traces   {best['parse']:7.3f} s")
    for name, label in (("agentci", "AgentCI evaluate_spec"), ("evalview", "EvalView 0.8.1 evaluate")):
        print(
            f"{label:26} {best[name]:7.3f} s  {n / best[name]:9,.0f} traces/s  {best[name] / best['parse']:6.2f}× parse"
        )
    print(f"AgentCI is {best['evalview'] / best['agentci']:.1f}× EvalView's speed (goal: at least 10×)")


if __name__ == "__main__":
    main()
