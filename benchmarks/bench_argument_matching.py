"""expected_tool_calls matching on 500-call traces against plain JSON parsing, side by side in one run.

    python benchmarks/bench_argument_matching.py [--traces 200] [--calls 500]

Generates traces of 500 tool calls with arguments, and two expectations per trace:
  hand-written  20 steps (every 25th call): equality, regex and tolerance rules, optional and any_of steps;
  golden        one step per call (500), each with its exact query: the worst case, a full recorded run.
For each match mode it times `match_calls` (argument tests + optimal pairing) and the whole path layer
with `expected_tool_calls` set, beside json.loads of the same trace. The engine's budget (bench_engine.py)
is that deterministic evaluation costs no more than parsing does: ratios ≤ 1 are within it.
"""

from __future__ import annotations

import argparse
import json
import random
import time

from agentci_action.engine.call_matching import match_calls
from agentci_action.engine.gcpause import gc_paused
from agentci_action.engine.path import evaluate_path
from agentci_action.spec.models import ExpectedToolCall, MatchMode, PathSpec
from agentci_action.trace.models import Trace

TOOLS = ["search", "rerank", "fetch_page", "summarize", "grade", "generate", "calculator", "sql_query"]
MODES = [MatchMode.STRICT, MatchMode.SUBSEQUENCE, MatchMode.SUBSET, MatchMode.UNORDERED, MatchMode.SUPERSET]


def make_trace(rng: random.Random, index: int, calls: int) -> dict:
    tool_calls = []
    for i in range(calls):
        name = rng.choice(TOOLS)
        arguments = {"q": f"{name} question {i}", "limit": rng.randint(1, 20), "lang": rng.choice(["en", "fr"]),
                     "filters": {"year": 2020 + i % 5, "tags": ["a", "b"]}}
        tool_calls.append({"name": name, "arguments": arguments, "result": "ok", "duration_ms": 12.5})
    return {"id": f"q{index}", "final_answer": "42", "tool_calls": tool_calls}


def hand_written(raw: dict, every: int = 25) -> list[dict]:
    """Every `every`-th call as a step: its query by equality, its limit ± 2, its language by regex."""
    steps = []
    for k, call in enumerate(raw["tool_calls"][::every]):
        arguments = call["arguments"]
        step = {"name": call["name"], "arguments": {"q": arguments["q"], "limit": arguments["limit"]},
                "argument_rules": {"limit": {"tolerance": 2}, "lang": {"regex": "^(en|fr)$"}}}
        if k % 5 == 3:
            step = {"any_of": [call["name"], "web_search"], "arguments": {"q": arguments["q"]}}
        if k % 7 == 6:
            step["optional"] = True
        steps.append(step)
    return steps


def golden(raw: dict) -> list[dict]:
    """One step per call, with the call's exact query."""
    return [{"name": call["name"], "arguments": {"q": call["arguments"]["q"]}} for call in raw["tool_calls"]]


def per_trace_ms(fn, items, repeats: int = 3) -> float:
    """Milliseconds per item, the best of `repeats` passes (the machine's other work only adds time)."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for item in items:
            fn(item)
        best = min(best, time.perf_counter() - start)
    return best / len(items) * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--traces", type=int, default=200)
    parser.add_argument("--calls", type=int, default=500)
    args = parser.parse_args()
    rng = random.Random(7)
    raws = [make_trace(rng, i, args.calls) for i in range(args.traces)]
    lines = [json.dumps(raw) for raw in raws]
    traces = [Trace.model_validate(raw) for raw in raws]
    expectations = {
        "hand-written (20 steps)": [[ExpectedToolCall.model_validate(s) for s in hand_written(raw)] for raw in raws],
        f"golden ({args.calls} steps)": [[ExpectedToolCall.model_validate(s) for s in golden(raw)] for raw in raws],
    }
    with gc_paused():
        parse_ms = per_trace_ms(json.loads, lines)
        print(f"{args.traces} traces × {args.calls} tool calls, {sum(map(len, lines)) / len(lines) / 1000:.0f} kB of JSON each")
        print(f"json.loads (GC paused, the engine's setting)  {parse_ms:8.3f} ms/trace   1.00× parse")
        for label, steps_per_trace in expectations.items():
            print(f"\n{label}")
            for mode in MODES:
                items = list(zip(steps_per_trace, traces))
                outcomes = [match_calls(steps, trace.tool_calls, mode) for steps, trace in items]
                matched = sum(o.matched for o in outcomes)
                ms = per_trace_ms(lambda item, m=mode: match_calls(item[0], item[1].tool_calls, m), items)
                specs = [PathSpec(match_mode=mode, expected_tool_calls=steps) for steps in steps_per_trace]
                layer_ms = per_trace_ms(lambda item: evaluate_path(item[0], item[1]), list(zip(specs, traces)))
                print(f"  {mode.value:<12} match_calls {ms:8.3f} ms/trace {ms / parse_ms:6.2f}× parse   "
                      f"path layer {layer_ms:8.3f} ms/trace {layer_ms / parse_ms:6.2f}× parse   matched {matched}/{len(items)}")


if __name__ == "__main__":
    main()
