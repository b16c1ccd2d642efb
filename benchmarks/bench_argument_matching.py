"""expected_tool_calls matching on 500-call traces against plain JSON parsing, side by side in one run.

    python benchmarks/bench_argument_matching.py [--traces 100] [--calls 500] [--rounds 3]

Generates traces of 500 tool calls with arguments, and three expectations per trace:
  hand-written  20 steps (every 25th call): equality, regex and tolerance rules, optional and any_of steps;
  golden        one step per call (500), each with its exact query: a whole recorded run as the expectation;
  golden, changed trace   the same expectation against the trace with 6 scattered changes (two calls
                dropped, two strangers inserted, two neighbours swapped): the search between the diagonals.
For each match mode it times the whole path layer with `expected_tool_calls` (and `match_calls` alone) on a
query's first run, which compiles the expectation, and per run of a query evaluated 5 times (runs: 5),
beside json.loads of the same trace. The engine's budget (bench_engine.py) is that deterministic evaluation
costs no more than parsing does: ratios ≤ 1 are within it. Every round times everything once, parse
included; the best of the rounds is kept (the machine's other work only ever adds time).
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections.abc import Callable

from agentci_action._util.gcpause import gc_paused
from agentci_action.engine.call_matching import match_calls
from agentci_action.engine.path import evaluate_path
from agentci_action.spec.models import ExpectedToolCall, MatchMode, PathSpec
from agentci_action.trace.canonical import Trace

TOOLS = ["search", "rerank", "fetch_page", "summarize", "grade", "generate", "calculator", "sql_query"]
MODES = [MatchMode.STRICT, MatchMode.SUBSEQUENCE, MatchMode.SUBSET, MatchMode.UNORDERED, MatchMode.SUPERSET]
RUNS = 5


def make_trace(rng: random.Random, index: int, calls: int) -> dict:
    tool_calls = []
    for i in range(calls):
        name = rng.choice(TOOLS)
        arguments = {
            "q": f"{name} question {i}",
            "limit": rng.randint(1, 20),
            "lang": rng.choice(["en", "fr"]),
            "filters": {"year": 2020 + i % 5, "tags": ["a", "b"]},
        }
        tool_calls.append({"name": name, "arguments": arguments, "result": "ok", "duration_ms": 12.5})
    return {"id": f"q{index}", "final_answer": "42", "tool_calls": tool_calls}


def changed(rng: random.Random, raw: dict) -> dict:
    """The trace with 6 scattered changes: two calls dropped, two strangers inserted, two neighbours swapped."""
    calls = list(raw["tool_calls"])
    for _ in range(2):
        calls.pop(rng.randrange(len(calls)))
    for k in range(2):
        calls.insert(rng.randrange(len(calls)), {"name": "web_search", "arguments": {"q": f"stranger {k}"}})
    i = rng.randrange(len(calls) - 1)
    calls[i], calls[i + 1] = calls[i + 1], calls[i]
    return {**raw, "tool_calls": calls}


def hand_written(raw: dict, every: int = 25) -> list[dict]:
    """Every `every`-th call as a step: its query by equality, its limit ± 2, its language by regex."""
    steps = []
    for k, call in enumerate(raw["tool_calls"][::every]):
        arguments = call["arguments"]
        step = {
            "name": call["name"],
            "arguments": {"q": arguments["q"], "limit": arguments["limit"]},
            "argument_rules": {"limit": {"tolerance": 2}, "lang": {"regex": "^(en|fr)$"}},
        }
        if k % 5 == 3:
            step = {"any_of": [call["name"], "web_search"], "arguments": {"q": arguments["q"]}}
        if k % 7 == 6:
            step["optional"] = True
        steps.append(step)
    return steps


def golden(raw: dict) -> list[dict]:
    """One step per call, with the call's exact query."""
    return [{"name": call["name"], "arguments": {"q": call["arguments"]["q"]}} for call in raw["tool_calls"]]


def ms_per_item(fn: Callable, items: list) -> float:
    start = time.perf_counter()
    for item in items:
        fn(item)
    return (time.perf_counter() - start) / len(items) * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--traces", type=int, default=100)
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    rng = random.Random(7)
    raws = [make_trace(rng, i, args.calls) for i in range(args.traces)]
    lines = [json.dumps(raw) for raw in raws]
    traces = [Trace.model_validate(raw) for raw in raws]
    changed_traces = [Trace.model_validate(changed(rng, raw)) for raw in raws]
    kinds = {
        "hand-written (20 steps)": (
            [[ExpectedToolCall.model_validate(s) for s in hand_written(raw)] for raw in raws],
            traces,
        ),
        f"golden ({args.calls} steps)": (
            [[ExpectedToolCall.model_validate(s) for s in golden(raw)] for raw in raws],
            traces,
        ),
        f"golden ({args.calls} steps), changed trace": (
            [[ExpectedToolCall.model_validate(s) for s in golden(raw)] for raw in raws],
            changed_traces,
        ),
    }

    timings: dict[str, Callable[[], float]] = {"parse": lambda: ms_per_item(json.loads, lines)}
    matched: dict[tuple[str, MatchMode], int] = {}
    for kind, (expectations, kind_traces) in kinds.items():
        for mode in MODES:
            items = list(zip(expectations, kind_traces))
            # fresh PathSpecs and expectation lists hold the same step objects: the compiled form is found by them
            specs = [(PathSpec(match_mode=mode, expected_tool_calls=steps), trace) for steps, trace in items]
            matched[kind, mode] = sum(match_calls(steps, trace.tool_calls, mode).matched for steps, trace in items)
            # more expectations than are kept compiled (64), visited in turn: every first run compiles
            timings[f"{kind}|{mode.value}|match"] = lambda items=items, m=mode: ms_per_item(
                lambda item: match_calls(item[0], item[1].tool_calls, m), items
            )
            timings[f"{kind}|{mode.value}|first"] = lambda specs=specs: ms_per_item(
                lambda item: evaluate_path(*item), specs
            )
            timings[f"{kind}|{mode.value}|runs"] = lambda specs=specs: (
                ms_per_item(lambda item: [evaluate_path(*item) for _ in range(RUNS)], specs) / RUNS
            )

    best = dict.fromkeys(timings, float("inf"))
    with gc_paused():
        for _ in range(args.rounds):
            for name, timing in timings.items():
                best[name] = min(best[name], timing())

    parse = best["parse"]
    print(
        f"{args.traces} traces × {args.calls} tool calls, {sum(map(len, lines)) / len(lines) / 1000:.0f} kB of JSON each; "
        f"best of {args.rounds} interleaved rounds, GC paused as the engine runs"
    )
    print(f"json.loads {parse:.3f} ms/trace = 1.00× parse\n")
    print(
        f"{'':14}{'match_calls, first run':>24}{'path layer, first run':>24}{f'path layer, runs: {RUNS}':>24}   matched"
    )
    for kind in kinds:
        print(kind)
        for mode in MODES:
            cells = [best[f"{kind}|{mode.value}|{column}"] for column in ("match", "first", "runs")]
            print(
                f"  {mode.value:<12}"
                + "".join(f"{ms:9.3f} ms {ms / parse:6.2f}× " for ms in cells)
                + f"  {matched[kind, mode]}/{args.traces}"
            )


if __name__ == "__main__":
    main()
