"""Adaptive runs on an unchanged agent, replayed end to end: the runs used against the fixed maximum.

    python benchmarks/bench_adaptive_replayed.py [--suites 5] [--queries 20] [--rate 0.9] [--seed 2026]

bench_significance simulates the verdicts' functions; this one goes through the commands a workflow runs. Each suite
has `--queries` queries with `runs: {min: 5, max: 20, batch: 5}`, each passing with the same true rate `--rate` before
and after (an unchanged agent). The baseline is 20 recorded runs a query saved with `agentci save`; the agent is a
`python:` runner that replays the current recorded runs, one per (query, run). Then, on the same recordings:

- CI: `agentci run` (what the run action runs, adaptive batches included) and `agentci test --traces` on what it wrote
  (what the action evaluates);
- the terminal: `agentci test`, the agent run by the command.

Printed per suite and in all: the runs used ÷ the fixed maximum (20 a query; the issue's figure: at most 0.5×), the
verdicts (a query called regressed is a false regression), and whether CI and the terminal agree query by query.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from helpers import run_cli  # noqa: E402

MAXIMUM = 20

AGENT = """
import json
from pathlib import Path

RECORDED = {}
for line in (Path(__file__).parent / "current.jsonl").read_text().splitlines():
    row = json.loads(line)
    RECORDED[row.pop("id"), row.pop("run")] = row


def answer(query, id, run):
    return RECORDED[id, run]
"""


def recorded_runs(queries: int, rate: float, rng: random.Random) -> str:
    """`MAXIMUM` runs of each query as JSON Lines, each passing (answer "yes") with probability `rate`."""
    rows = [
        {
            "id": f"q{index}",
            "run": run,
            "final_answer": "yes" if rng.random() < rate else "no",
            "llm_calls": [{"model": "m", "cost_usd": 0.001}],
        }
        for index in range(queries)
        for run in range(MAXIMUM)
    ]
    return "".join(json.dumps(row) + "\n" for row in rows)


def suite(directory: Path, queries: int, rate: float, rng: random.Random) -> Path:
    """A spec whose runner replays the current recorded runs, and its baseline v1 saved from the baseline's."""
    listed = "".join(f'  - {{id: q{i}, query: "Question {i}?"}}\n' for i in range(queries))
    spec = directory / "agentci_spec.yaml"
    spec.write_text(
        "agent: unchanged-agent\nrunner:\n  python: agent:answer\n  workers: 2\n"
        f"defaults:\n  runs: {{min: 5, max: {MAXIMUM}, batch: 5}}\n  min_pass_rate: 0.5\n"
        '  correctness: {expected_in_answer: ["yes"]}\n'
        f"queries:\n{listed}"
    )
    (directory / "agent.py").write_text(AGENT)
    (directory / "baseline.jsonl").write_text(recorded_runs(queries, rate, rng))
    (directory / "current.jsonl").write_text(recorded_runs(queries, rate, rng))
    saved = run_cli("save", "--spec", spec, "--traces", directory / "baseline.jsonl", "--version", "v1", cwd=directory)
    assert saved.returncode in (0, 1), saved.stderr
    return spec


def decided(results: dict) -> dict[str, tuple[str, int]]:
    """Each query's verdict against the baseline and its runs."""
    verdicts = {q["id"]: q["pass_rate"]["verdict"] for q in results["diff"]["queries"]}
    return {r["id"]: (verdicts[r["id"]], r["reliability"]["runs"]) for r in results["results"]}


def one_suite(directory: Path, queries: int, rate: float, rng: random.Random) -> tuple[dict, dict]:
    """(CI's verdicts and runs, the terminal's) for one suite."""
    spec = suite(directory, queries, rate, rng)
    ran = run_cli("run", "--spec", spec, "--output", directory / "ci-traces", cwd=directory)
    assert ran.returncode == 0, ran.stderr
    ci = run_cli("test", "--spec", spec, "--traces", directory / "ci-traces", "--format", "json", cwd=directory)
    terminal = run_cli("test", "--spec", spec, "--format", "json", cwd=directory)
    return decided(json.loads(ci.stdout)), decided(json.loads(terminal.stdout))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suites", type=int, default=5)
    parser.add_argument("--queries", type=int, default=20)
    parser.add_argument("--rate", type=float, default=0.9)
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    used = regressed = agreed = 0
    for number in range(1, args.suites + 1):
        with tempfile.TemporaryDirectory(prefix="agentci-bench-") as scratch:
            ci, terminal = one_suite(Path(scratch), args.queries, args.rate, rng)
        runs = sum(n for _, n in ci.values())
        verdicts = sorted({v for v, _ in ci.values()})
        counts = {v: sum(1 for w, _ in ci.values() if w == v) for v in verdicts}
        used, regressed, agreed = used + runs, regressed + counts.get("regressed", 0), agreed + (ci == terminal)
        print(
            f"suite {number}: {runs} runs of {args.queries * MAXIMUM} ({runs / (args.queries * MAXIMUM):.2f}×), "
            f"verdicts {counts}, CI {'=' if ci == terminal else '≠'} terminal"
        )
    queries = args.suites * args.queries
    print(
        f"in all: {used / queries:.1f} runs a query of {MAXIMUM} ({used / (queries * MAXIMUM):.2f}× the fixed "
        f"maximum; target ≤ 0.5×), {regressed} of {queries} queries falsely regressed, CI and the terminal agreed "
        f"on {agreed} of {args.suites} suites"
    )


if __name__ == "__main__":
    main()
