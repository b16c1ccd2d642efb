"""Repeated runs and sharding at scale, side by side in one run.

    python benchmarks/bench_reliability.py [--queries 10000] [--runs 5] [--shards 8] [--tools 10]

Generates a suite of `queries` queries, each run `runs` times (a trace per run, some runs failing), then
times: json.loads of the trace file (Python's default GC, and paused as the engine runs); load_traces;
evaluate_spec, which evaluates every run and aggregates each query's runs (pass rate, pass@k, Wilson interval,
statistics of every metric, score); the `shards` shard runs one after another plus merge_shards, against
the unsharded run. The merged results must equal the unsharded ones exactly (as JSON).
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
from pathlib import Path

from bench_engine import timed  # benchmarks/ is on the path when a benchmark runs as a script

from agentci_action._util.gcpause import gc_paused
from agentci_action.engine.evaluate_spec import evaluate_spec
from agentci_action.engine.results import RunResult
from agentci_action.pipeline.merge import merge_shards
from agentci_action.pipeline.python_api import run_spec
from agentci_action.pipeline.shard import parse_shard
from agentci_action.spec.models import AgentCISpec, QuerySpec
from agentci_action.trace.load import load_traces

TOOLS = ["search", "rerank", "fetch_page", "summarize", "grade", "generate", "calculator", "sql_query"]


def make_trace(rng: random.Random, query_id: str, run: int, tools: int) -> dict:
    names = [rng.choice(TOOLS) for _ in range(tools)]
    answer = "The answer is 42, see the docs." if rng.random() < 0.85 else "Sorry, I could not find it."
    return {
        "id": query_id,
        "run": run,
        "final_answer": answer,
        "tool_calls": [
            {"name": n, "arguments": {"q": f"{n} {i}"}, "result": "ok", "duration_ms": 12.5}
            for i, n in enumerate(names)
        ],
        "llm_calls": [
            {
                "model": "gpt-4o-mini",
                "input_tokens": rng.randint(500, 1500),
                "output_tokens": 120,
                "cost_usd": rng.uniform(0.0001, 0.0004),
                "duration_ms": rng.uniform(300, 1200),
            }
            for _ in range(3)
        ],
    }


def make_query(query_id: str, runs: int) -> QuerySpec:
    return QuerySpec.model_validate(
        {
            "id": query_id,
            "query": f"Question {query_id}?",
            "runs": runs,
            "min_pass_rate": 0.6,
            "correctness": {"expected_in_answer": ["answer", "42"], "not_in_answer": ["sorry"]},
            "path": {
                "expected_tools": ["search", "generate"],
                "forbidden_tools": ["shell"],
                "max_tool_calls": 20,
                "max_loops": 3,
            },
            "cost": {"max_total_tokens": 5000, "max_llm_calls": 5},
        }
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--shards", type=int, default=8)
    parser.add_argument("--tools", type=int, default=10)
    args = parser.parse_args()
    rng = random.Random(1)
    ids = [f"q{i}" for i in range(args.queries)]
    spec = AgentCISpec(agent="bench", queries=[make_query(i, args.runs) for i in ids])
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp, "runs.jsonl")
        path.write_text(
            "".join(json.dumps(make_trace(rng, i, r, args.tools)) + "\n" for i in ids for r in range(args.runs))
        )
        size_mb = path.stat().st_size / 1e6
        _, parse_s = timed(lambda: [json.loads(line) for line in path.read_text().splitlines()])
        with gc_paused():
            _, parse_paused_s = timed(lambda: [json.loads(line) for line in path.read_text().splitlines()])
        traces, load_s = timed(lambda: load_traces([str(path)]))
    whole, eval_s = timed(lambda: evaluate_spec(spec, traces))

    def sharded() -> RunResult:
        shards = {
            f"shard-{i}.json": RunResult.model_validate_json(
                run_spec(spec, traces, shard=parse_shard(f"{i}/{args.shards}")).model_dump_json()
            )
            for i in range(1, args.shards + 1)
        }
        return merge_shards(spec, shards)

    merged, shard_s = timed(sharded)
    equal = merged.model_dump_json() == whole.model_dump_json()
    n = args.queries * args.runs
    s = whole.summary
    print(
        f"suite: {args.queries:,} queries × {args.runs} runs = {n:,} traces × {args.tools} tool calls ({size_mb:.1f} MB of JSON Lines)"
    )
    print(
        f"       pass rate {s.pass_rate:.1%}, {s.flaky:,} flaky queries, {s.failed:,} failed, composite {s.composite_score:.3f} ({s.grade})"
    )
    print(f"json.loads only               {parse_s:7.3f} s  {n / parse_s:9,.0f} traces/s   (Python's default GC)")
    print(
        f"json.loads, GC paused         {parse_paused_s:7.3f} s  {n / parse_paused_s:9,.0f} traces/s   (the engine's setting)"
    )
    print(
        f"load_traces (validated)       {load_s:7.3f} s  {n / load_s:9,.0f} traces/s   {load_s / parse_s:5.2f}× parse"
    )
    print(
        f"evaluation + aggregation      {eval_s:7.3f} s  {n / eval_s:9,.0f} traces/s   {eval_s / parse_s:5.2f}× parse, "
        f"{eval_s / parse_paused_s:5.2f}× GC-paused parse"
    )
    print(
        f"{args.shards} shards in turn + merge     {shard_s:7.3f} s  {shard_s / eval_s:5.2f}× unsharded "
        f"(each of {args.shards} parallel jobs: ≈ {shard_s / args.shards:.3f} s); merged == unsharded: {equal}"
    )
    if not equal:
        raise SystemExit("merged results differ from the unsharded run")


if __name__ == "__main__":
    main()
