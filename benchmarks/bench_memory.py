"""Peak memory of `agentci test` against the memory it takes to parse the same traces, side by side in one run.

    python benchmarks/bench_memory.py [--queries 10000] [--runs 5] [--tools 10]

Writes bench_reliability's suite (`queries` queries, each run `runs` times: one JSON Lines file of
queries × runs traces) and its spec as YAML, then measures the maximum resident set size of fresh processes:
Python alone; parsing the traces (the file read, then json.loads of every line, all kept); and the whole
`agentci test --spec S --traces T --baseline none --format json --output F` process (spec, traces, evaluation
and the results file). Prints each peak, and `agentci test`'s as a multiple of the parse's (goal: at most 1.5×).
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml
from bench_reliability import make_query, make_trace  # benchmarks/ is on the path when a benchmark runs as a script

# Each measured child prints its own peak as its last line of output: VmHWM, in kB (Linux), which starts afresh at
# exec, where ru_maxrss would count the pages the child shared with this process between fork and exec.
PEAK = "print(next(line.split()[1] for line in open('/proc/self/status') if line.startswith('VmHWM:')))"
PARSE = "import json, sys; text = open(sys.argv[1], encoding='utf-8').read(); traces = [json.loads(line) for line in text.splitlines()]"
CLI = (
    "import runpy, sys; sys.argv = ['agentci', *sys.argv[1:]]\n"
    "try:\n    runpy.run_module('agentci_action', run_name='__main__')\nexcept SystemExit as exit:\n"
    "    assert exit.code in (0, 1, None), exit.code"
)


def peak_mb(code: str, *args: str) -> float:
    """The maximum resident set size of a fresh Python running `code` with `args`, in MB."""
    done = subprocess.run([sys.executable, "-c", f"{code}\n{PEAK}", *args], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return int(done.stdout.split()[-1]) / 1024


def write_suite(folder: Path, queries: int, runs: int, tools: int) -> tuple[Path, Path]:
    rng = random.Random(1)
    ids = [f"q{i}" for i in range(queries)]
    spec = {
        "agent": "bench",
        "queries": [make_query(i, runs).model_dump(mode="json", exclude_defaults=True) for i in ids],
    }
    spec_path, traces_path = folder / "agentci_spec.yaml", folder / "runs.jsonl"
    spec_path.write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    with traces_path.open("w", encoding="utf-8") as out:
        for i in ids:
            for r in range(runs):
                out.write(json.dumps(make_trace(rng, i, r, tools)) + "\n")
    return spec_path, traces_path


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--tools", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        spec, traces = write_suite(Path(tmp), args.queries, args.runs, args.tools)
        output = Path(tmp, "results.json")
        python = peak_mb("pass")
        parse = peak_mb(PARSE, str(traces))
        test = peak_mb(
            CLI,
            "test",
            "--spec",
            str(spec),
            "--traces",
            str(traces),
            "--baseline",
            "none",
            "--format",
            "json",
            "--output",
            str(output),
        )
        results = json.loads(output.read_text(encoding="utf-8"))
        traces_mb, spec_mb = traces.stat().st_size / 1e6, spec.stat().st_size / 1e6
    print(
        f"suite: {args.queries:,} queries × {args.runs} runs × {args.tools} tool calls "
        f"(traces {traces_mb:.0f} MB of JSON Lines, spec {spec_mb:.1f} MB); {results['summary']['runs']:,} runs evaluated"
    )
    print(f"python alone                 {python:7.0f} MB")
    print(f"parse the traces             {parse:7.0f} MB")
    print(f"agentci test, whole process  {test:7.0f} MB  {test / parse:5.2f}× parse (goal: at most 1.5×)")


if __name__ == "__main__":
    main()
