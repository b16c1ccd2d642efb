"""The pytest pattern (one test per golden query: `evaluate_spec(SPEC, TRACES, queries=[q])`) at two suite sizes.

    python benchmarks/bench_pytest_pattern.py [--small 100] [--large 5000] [--tests 200] [--tools 20] [--repeats 3]

Generates a suite of `large` queries (each with a 20-call trace) and one of its first `small`, loads both
once as a test module does, then times `tests` such calls on each suite, spread over its queries, with the
garbage collector as pytest leaves it. A test's overhead must not grow with the suite: what depends only on
the spec (its hash) and the traces by query are worked out once, not on every call. Prints the time per test
on each suite and their ratio (the goal: within 2×), the best of `repeats` interleaved rounds.
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from pathlib import Path

from bench_engine import make_query, make_trace  # benchmarks/ is on the path when a benchmark runs as a script

from agentci_action.engine.evaluate_spec import evaluate_spec
from agentci_action.spec.models import AgentCISpec
from agentci_action.trace.load import load_traces


def suite(size: int, tools: int, folder: str) -> tuple[AgentCISpec, list]:
    rng = random.Random(1)
    ids = [f"q{i}" for i in range(size)]
    path = Path(folder, f"traces-{size}.jsonl")
    path.write_text("".join(json.dumps(make_trace(rng, i, tools)) + "\n" for i in ids))
    return AgentCISpec(agent="bench", queries=[make_query(i) for i in ids]), load_traces([str(path)])


def per_test(spec: AgentCISpec, traces: list, tests: int) -> float:
    """Seconds per `evaluate_spec(spec, traces, queries=[q])` over `tests` queries spread across the suite."""
    step = max(1, len(spec.queries) // tests)
    chosen = spec.queries[::step][:tests]
    start = time.perf_counter()
    for query in chosen:
        (result,) = evaluate_spec(spec, traces, queries=[query]).results
        assert result.id == query.key
    return (time.perf_counter() - start) / len(chosen)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--small", type=int, default=100)
    parser.add_argument("--large", type=int, default=5000)
    parser.add_argument("--tests", type=int, default=200, help="tests timed on each suite")
    parser.add_argument("--tools", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        small, large = suite(args.small, args.tools, tmp), suite(args.large, args.tools, tmp)
        best = {"small": float("inf"), "large": float("inf")}
        for _ in range(args.repeats):
            best["small"] = min(best["small"], per_test(*small, args.tests))
            best["large"] = min(best["large"], per_test(*large, args.tests))
    print(f"per test, {args.small:>6,} queries: {best['small'] * 1e3:7.3f} ms")
    print(f"per test, {args.large:>6,} queries: {best['large'] * 1e3:7.3f} ms")
    print(f"ratio {args.large:,} / {args.small:,} queries: {best['large'] / best['small']:.2f}× (goal: at most 2×)")


if __name__ == "__main__":
    main()
