"""Deterministic evaluation against plain JSON parsing, side by side in one run.

    python benchmarks/bench_engine.py [--queries 10000] [--tools 50] [--repeats 3]

Generates a suite (every query with correctness, path and cost checks, a 50-call trace and a
baseline trace), then times: json.loads of the trace file; load_traces (parse + validation into
canonical traces); evaluate_spec (the three layers, no judge). Prints traces per second and the ratio
of evaluation time to parse time (json.loads as Python runs it by default, and with the garbage
collector paused as the engine runs): evaluation should cost no more than parsing does.
Each step is timed (CPU time) `repeats` times, the rounds interleaved, and the best time kept: the machine's
other work only ever adds time, to whichever step it happens to overlap.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import tempfile
import time
from pathlib import Path

from agentci_action._util.gcpause import gc_paused
from agentci_action.engine.evaluate_spec import evaluate_spec, group_traces
from agentci_action.spec.models import AgentCISpec, QuerySpec
from agentci_action.trace.load import load_traces

TOOLS = ["search", "rerank", "fetch_page", "summarize", "grade", "generate", "calculator", "sql_query"]


def make_trace(rng: random.Random, query_id: str, tools: int) -> dict:
    names = [rng.choice(TOOLS) for _ in range(tools)]
    return {
        "id": query_id,
        "final_answer": f"The answer for {query_id} is 42, see the docs. " * 3,
        "tool_calls": [
            {"name": n, "arguments": {"q": f"{n} {i}"}, "result": "ok", "duration_ms": 12.5}
            for i, n in enumerate(names)
        ],
        "llm_calls": [
            {"model": "gpt-4o-mini", "input_tokens": 900, "output_tokens": 120, "cost_usd": 0.0002, "duration_ms": 800}
            for _ in range(5)
        ],
    }


def make_query(query_id: str) -> QuerySpec:
    query = QuerySpec.model_validate(
        {
            "id": query_id,
            "query": f"Question {query_id}?",
            "correctness": {
                "expected_in_answer": ["answer", "42"],
                "not_in_answer": ["sorry"],
                "regex_match": r"\b42\b",
            },
            "path": {
                "expected_tools": ["search", "generate"],
                "forbidden_tools": ["shell"],
                "max_tool_calls": 60,
                "max_loops": 10,
                "min_tool_recall": 1.0,
                "min_sequence_similarity": 0.3,
                "match_mode": "subset",
            },
            "cost": {
                "max_cost_multiplier": 2.0,
                "max_total_tokens": 10000,
                "max_llm_calls": 8,
                "max_latency_ms": 10000,
            },
        }
    )
    return query


# sha256 of the results JSON of the generated suites (seed 1), by (queries, tools per trace): evaluation is made
# faster, never different; a suite of another size is not checked. Recorded again when the results JSON itself
# changed: at b5cd9ab (issue 20's suite composite moved `composite_score` in its last digits) and at cb607d0 (the
# `suite` gates: `fail_on` gained "suite" by default, the run gained `gates`), and when each result gained its
# `answer` and `tools` (issue 20: the full answer with or without a baseline), and when a failing path or cost
# check gained `data.severity` and the summary's cost lost its float noise (issue 31: with those two left out, the
# 1,000 × 20 suite's results were compared key by key with the previous release's and found equal), and when each
# result and the summary gained `tokens` (issue 36: null here, no request to split; with those keys left out, each
# size's results JSON hashed to its previous digest), and when each result gained its conversation's `turns` (issue
# 35: `"turns": []` on every one of these single queries; with those lines left out, likewise), and when the results
# became v2 with the replayed `model_calls`, `reliability.k`/`max_runs` and the summary's `max_runs`,
# `cost_at_max_runs_usd` (issues 33 and 34: null or the default here; compared key by key with c8079a4's results of
# each of the three suites, nothing else differed), and when the summary gained `simulated_users` (issue 35's
# simulated users: null here; with that one line left out, each of the three suites hashed to its previous digest),
# and when each result gained `split_answers` (issue 44's flaky runs told straight: null here, one run each; with
# that key left out, each of the three suites hashed to its previous digest); every speed-up was checked against the output of the code it replaced, byte for byte.
RESULTS_DIGESTS = {
    (1000, 20): "18cc83552563fb377cba9cf60fd8fd2750ebb8417e1d816e9985972fdf32679f",
    (10_000, 50): "b2fecaad5012e9082f0f1da3b4765de5ebafca332e2cf1dffb2130b54668812e",
    (200, 500): "4ec222079a13006422bd31ffb286cb03125eed6d23958449fc5289feb2fc7525",
}


def results_digest(run, folder: str) -> str:
    """sha256 of the run's results JSON with the temporary folder (in trace sources) and the release left out."""
    from agentci_action._version import __version__
    from agentci_action.report import results_json

    text = results_json.render(run).replace(folder, "TMP").replace(f'"agentci_version": "{__version__}"', "")
    return hashlib.sha256(text.encode()).hexdigest()


def check_results(run, folder: str, queries: int, tools: int) -> str:
    """'identical to the recorded results', or 'not recorded' for an unrecorded size; raises when they differ."""
    expected = RESULTS_DIGESTS.get((queries, tools))
    if expected is None:
        return "not recorded for this size"
    found = results_digest(run, folder)
    assert found == expected, f"results JSON changed for {queries} × {tools}: sha256 {found}, recorded {expected}"
    return "byte-identical to the recorded results JSON"


def timed(fn):
    """(fn(), the CPU time it took in this process).

    On a shared machine the others' work stretches wall time far more than CPU time, and every step timed here runs on
    this one thread.
    """
    start = time.process_time()
    value = fn()
    return value, time.process_time() - start


def suite_arguments() -> argparse.Namespace:
    """--queries (default 10,000) and --tools per trace (default 50): the generated suite's size."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--tools", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=3, help="rounds of timing; the best time of each step is kept")
    return parser.parse_args()


def main() -> None:
    args = suite_arguments()
    rng = random.Random(1)
    ids = [f"q{i}" for i in range(args.queries)]
    spec = AgentCISpec(agent="bench", queries=[make_query(i) for i in ids])
    with tempfile.TemporaryDirectory() as tmp:
        current, baseline = Path(tmp, "current.jsonl"), Path(tmp, "baseline.jsonl")
        for path in (current, baseline):
            path.write_text("".join(json.dumps(make_trace(rng, i, args.tools)) + "\n" for i in ids))
        size_mb = current.stat().st_size / 1e6
        baselines = group_traces(spec.queries, load_traces([str(baseline)])).by_query
        parse_s = parse_paused_s = load_s = eval_s = float("inf")
        for _ in range(args.repeats):
            _, seconds = timed(lambda: [json.loads(line) for line in current.read_text().splitlines()])
            parse_s = min(parse_s, seconds)
            with gc_paused():
                _, seconds = timed(lambda: [json.loads(line) for line in current.read_text().splitlines()])
            parse_paused_s = min(parse_paused_s, seconds)
            traces, seconds = timed(lambda: load_traces([str(current)]))
            load_s = min(load_s, seconds)
            run, seconds = timed(lambda traces=traces: evaluate_spec(spec, traces, baselines=baselines))
            eval_s = min(eval_s, seconds)
        verdict = check_results(run, tmp, args.queries, args.tools)
    n = args.queries
    print(
        f"suite: {n:,} queries × {args.tools} tool calls ({size_mb:.1f} MB of JSON Lines); statuses: "
        f"{run.summary.passed} passed, {run.summary.warnings} warned, {run.summary.failed} failed; results {verdict}"
    )
    print(f"json.loads only          {parse_s:7.3f} s  {n / parse_s:10,.0f} traces/s   (Python's default GC)")
    print(
        f"json.loads, GC paused    {parse_paused_s:7.3f} s  {n / parse_paused_s:10,.0f} traces/s   (the engine's setting)"
    )
    print(f"load_traces (validated)  {load_s:7.3f} s  {n / load_s:10,.0f} traces/s   {load_s / parse_s:5.2f}× parse")
    print(
        f"evaluation (3 layers)    {eval_s:7.3f} s  {n / eval_s:10,.0f} traces/s   {eval_s / parse_s:5.2f}× parse, "
        f"{eval_s / parse_paused_s:5.2f}× GC-paused parse"
    )


if __name__ == "__main__":
    main()
