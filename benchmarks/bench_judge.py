"""Judge throughput: 200 queries × 2 judge rubrics against a local provider that answers after a fixed delay.

    python benchmarks/bench_judge.py [--queries 200] [--delay 0.1]

For 4 and 16 workers it prints the wall time of a full run beside the ideal ceil(calls / workers) × delay,
then reruns with the verdict cache the first run wrote and counts the requests the server saw (must be 0).
Everything runs in this process against 127.0.0.1: the real anthropic SDK, the real runner.
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agentci_action.engine.evaluate_spec import Settings, evaluate_spec
from agentci_action.engine.judge import build_judge
from agentci_action.spec.models import AgentCISpec, JudgeConfig, QuerySpec
from agentci_action.trace.canonical import Trace
from tests.fakes.llm_server import FakeLLMServer


def build(queries: int) -> tuple[AgentCISpec, list[Trace]]:
    rubrics = {"llm_judge": [{"rule": "Answers the question."}], "safety_check": {"rule": "Contains nothing harmful."}}
    spec = AgentCISpec(
        agent="bench",
        queries=[QuerySpec(id=f"q{i}", query=f"question {i}", correctness=rubrics) for i in range(queries)],
    )
    return spec, [Trace(id=f"q{i}", final_answer=f"answer {i}") for i in range(queries)]


def timed_run(spec, traces, server: FakeLLMServer, cache: Path, workers: int) -> tuple[float, int, object]:
    judge = build_judge(
        JudgeConfig(model="claude-haiku-4-5", base_url=server.anthropic_url),
        {"ANTHROPIC_API_KEY": "bench-key"},
        cache_path=cache,
    )
    server.reset()
    start = time.perf_counter()
    result = evaluate_spec(spec, traces, judge=judge, settings=Settings(workers=workers))
    elapsed = time.perf_counter() - start
    judge.cache.save()
    return elapsed, server.count, result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--delay", type=float, default=0.1, help="seconds the server takes per reply")
    args = parser.parse_args()
    spec, traces = build(args.queries)
    calls = args.queries * 2
    print(f"{args.queries} queries × 2 rubrics = {calls} judge calls, server delay {args.delay * 1000:.0f} ms")
    print(
        f"{'workers':>7} {'requests':>8} {'wall s':>8} {'ideal s':>8} {'ideal/wall':>10} {'cached rerun requests':>22} {'cached wall s':>13}"
    )
    failures = []
    with FakeLLMServer(delay=args.delay) as server, tempfile.TemporaryDirectory() as tmp:
        for workers in (4, 16):
            cache = Path(tmp) / f"cache-{workers}.json"
            wall, requests, result = timed_run(spec, traces, server, cache, workers)
            ideal = math.ceil(calls / workers) * args.delay
            cached_wall, cached_requests, cached_result = timed_run(spec, traces, server, cache, workers)
            print(
                f"{workers:>7} {requests:>8} {wall:>8.2f} {ideal:>8.2f} {ideal / wall:>10.2f} {cached_requests:>22} {cached_wall:>13.2f}"
            )
            if (
                result.summary.status.value != "pass"
                or cached_result.summary.status.value != "pass"
                or requests != calls
                or cached_requests
            ):
                failures.append(workers)
    if failures:
        print(
            f"FAILED at workers {failures}: expected {calls} requests, all passing, then 0 requests on the cached rerun"
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
