"""Machine instructions per query of deterministic evaluation.

A count that, unlike a time, does not move with the machine's other work.

    python benchmarks/bench_instructions.py [--queries 300] [--tools 20] [--rounds 3]

Needs valgrind (Debian: `apt-get install valgrind`). Runs bench_engine's generated suite under cachegrind twice,
with PYTHONHASHSEED fixed: once evaluating it once, once evaluating it `rounds` more times. The difference, divided
by rounds × queries, is what one evaluation of one query costs (loading, imports and the first evaluation's warm-up
cancel out). Each process runs twice and the lower count is kept: a process now and then does extra one-off work
(seen once in a dozen runs, 8% of the figure), never less. Compare two trees with PYTHONPATH=<tree>.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def evaluate(queries: int, tools: int, rounds: int) -> None:
    """The measured process: the suite made and evaluated once, then `rounds` more times."""
    import json
    import random
    import tempfile

    sys.path.insert(0, str(HERE))
    from bench_engine import make_query, make_trace

    from agentci_action.engine.evaluate_spec import evaluate_spec, group_traces
    from agentci_action.spec.models import AgentCISpec
    from agentci_action.trace.load import load_traces

    rng = random.Random(1)
    ids = [f"q{i}" for i in range(queries)]
    spec = AgentCISpec(agent="bench", queries=[make_query(i) for i in ids])
    with tempfile.TemporaryDirectory() as tmp:
        current, baseline = Path(tmp, "current.jsonl"), Path(tmp, "baseline.jsonl")
        for path in (current, baseline):
            path.write_text("".join(json.dumps(make_trace(rng, i, tools)) + "\n" for i in ids))
        baselines = group_traces(spec.queries, load_traces([str(baseline)])).by_query
        traces = load_traces([str(current)])
        for _ in range(1 + rounds):
            evaluate_spec(spec, traces, baselines=baselines)


def instructions(queries: int, tools: int, rounds: int) -> int:
    """Instructions cachegrind counts for the whole measured process."""
    command = [
        "valgrind",
        "--tool=cachegrind",
        "--cache-sim=no",
        "--cachegrind-out-file=/dev/null",
        sys.executable,
        __file__,
        "--evaluate",
        f"--queries={queries}",
        f"--tools={tools}",
        f"--rounds={rounds}",
    ]
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    found = re.search(r"I\s+refs:\s+([\d,]+)", done.stderr)
    assert found, f"no instruction count in valgrind's output:\n{done.stderr[-2000:]}"
    return int(found.group(1).replace(",", ""))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--tools", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3, help="evaluations counted (after a first, uncounted one)")
    parser.add_argument("--evaluate", action="store_true", help=argparse.SUPPRESS)  # the process under valgrind
    args = parser.parse_args()
    if args.evaluate:
        evaluate(args.queries, args.tools, args.rounds)
        return
    if shutil.which("valgrind") is None:
        sys.exit("valgrind is not installed (Debian: apt-get install valgrind)")
    base = min(instructions(args.queries, args.tools, 0) for _ in range(2))
    more = min(instructions(args.queries, args.tools, args.rounds) for _ in range(2))
    per_query = (more - base) / (args.rounds * args.queries)
    print(f"suite: {args.queries:,} queries × {args.tools} tool calls; {args.rounds} evaluations counted")
    print(f"instructions per query: {per_query:,.0f}")


if __name__ == "__main__":
    main()
