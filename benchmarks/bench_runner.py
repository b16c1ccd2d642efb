"""The runner's overhead.

With an agent that sleeps 1 s, 200 queries on 8 workers against the ideal 25 s; and the runner's own cost per run with
spawning excluded (an in-process agent that returns at once), per run.

    python benchmarks/bench_runner.py [--queries 200] [--workers 8] [--sleep 1.0]

Prints wall time / ideal (target ≤ 1.1) for a Python agent and for a shell agent (whose start-up is negligible, so
the ratio is the runner's own), and milliseconds of runner work per run (target < 5 ms): in-process, and through a
`python:` runner's worker process (the same function, plus the worker's start and a JSON round trip per run).
"""

from __future__ import annotations

import argparse
import io
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agentci_action._util.progress import Progress, ProgressOutput
from agentci_action.run import RunOptions, RunSetup, run_agent
from agentci_action.spec.loader import load_spec

AGENT = """
import json, sys, time
job = json.load(sys.stdin)
time.sleep({sleep})
print(json.dumps({{"final_answer": "done " + job["id"], "tool_calls": [{{"name": "search", "arguments": {{"q": job["query"]}}}}],
                  "llm_calls": [{{"model": "gpt-4o", "input_tokens": 120, "output_tokens": 30}}]}}))
"""

SHELL_AGENT = """cat > /dev/null
sleep {sleep}
echo '{{"final_answer": "done", "tool_calls": [{{"name": "search"}}]}}'
"""


INSTANT = """
def instant_agent(query: str, id: str) -> dict:
    return {
        "final_answer": "done " + id,
        "tool_calls": [{"name": "search", "arguments": {"q": query}}],
        "llm_calls": [{"model": "gpt-4o", "input_tokens": 120, "output_tokens": 30}],
    }
"""


def project(directory: Path, queries: int, runner: str) -> Path:
    spec = directory / "spec.yaml"
    body = "".join(f"  - id: q{i:04d}\n    query: question {i}\n" for i in range(queries))
    spec.write_text(f"agent: bench\nrunner:\n{runner}queries:\n{body}")
    return spec


def timed(spec: Path, output: Path, **kwargs) -> float:
    started = time.perf_counter()
    outcome = run_agent(
        load_spec(spec),
        RunOptions(output),
        RunSetup(progress=Progress("bench", 1, "run", output=ProgressOutput(stream=io.StringIO())), **kwargs),
    )
    assert outcome.ok and outcome.ran, outcome.errors[:3]
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--sleep", type=float, default=1.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        (root / "agent.py").write_text(AGENT.format(sleep=args.sleep))
        spec = project(root, args.queries, f"  command: {sys.executable} agent.py\n  workers: {args.workers}\n")
        ideal = -(-args.queries // args.workers) * args.sleep
        print(f"agent sleeping {args.sleep:g} s, {args.queries} queries, {args.workers} workers, ideal {ideal:.2f} s:")
        wall = timed(spec, root / "out")
        print(
            f"  python agent: wall {wall:.2f} s · ratio {wall / ideal:.3f} (target ≤ 1.1; includes Python's start-up)"
        )
        (root / "agent.sh").write_text(SHELL_AGENT.format(sleep=args.sleep))
        shell = project(root, args.queries, f"  command: sh agent.sh\n  workers: {args.workers}\n")
        wall = timed(shell, root / "out-sh")
        print(
            f"  shell agent:  wall {wall:.2f} s · ratio {wall / ideal:.3f} (the runner's own overhead, spawn included)"
        )

        (root / "instant.py").write_text(INSTANT)
        inproc = project(root, 2000, "  python: instant:instant_agent\n  workers: 1\n")
        sys.path.insert(0, str(root))
        from instant import instant_agent  # the same function in this process

        per_run = timed(inproc, root / "out2", agent=instant_agent) / 2000
        print("runner work per run (an agent that returns at once: no spawn; validation, pricing, atomic file):")
        print(f"  in-process callable: {per_run * 1000:.2f} ms per run over 2000 runs (target < 5 ms)")
        per_run = timed(inproc, root / "out3") / 2000
        print(f"  python: runner (worker process): {per_run * 1000:.2f} ms per run over 2000 runs")


if __name__ == "__main__":
    main()
