"""`agentci test` as a whole process, against the time to parse its input files, side by side in one run.

And the start of the CLI.

    python benchmarks/bench_cli.py [--queries 20000] [--tools 20] [--repeats 3]
    python benchmarks/bench_cli.py --start-up [--repeats 15]

Writes a spec YAML of `queries` queries (bench_engine's checks) and a JSON Lines file of one `tools`-call trace
each, then times: parsing both files (the spec with PyYAML's C loader where available, the traces with
json.loads, in this process); `agentci test --spec S --traces T --baseline none --format json --output F` in a
fresh process (start, loading, evaluation, the results file); `agentci validate S`; and the start of the CLI.

The start-up (alone with --start-up): `agentci --help`, and `agentci validate` of a one-query spec with a regex and
without it and of the rag and support-router examples' specs (goal: at most 0.15 s each), beside the floor under
them: a Python process that imports PyYAML and pydantic and defines one model. Each runs as users run it: the
`agentci` script beside this Python, with the bytecode cache written (PYTHONDONTWRITEBYTECODE is dropped and each
command runs once before timing). Run it with the Python of an environment the package was installed into
(`pip install .`): an editable checkout's import hook adds about 10 ms to every start, and the benchmark says so.
Prints each time (wall and CPU time: on a shared machine the others' work stretches the wall time) and the whole
process's time as a multiple of the parse time. Best of `repeats` interleaved rounds.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml
from bench_engine import make_query, make_trace  # benchmarks/ is on the path when a benchmark runs as a script


def write_suite(folder: Path, queries: int, tools: int) -> tuple[Path, Path]:
    rng = random.Random(1)
    ids = [f"q{i}" for i in range(queries)]
    spec = {"agent": "bench", "queries": [make_query(i).model_dump(mode="json", exclude_defaults=True) for i in ids]}
    folder.mkdir(exist_ok=True)
    spec_path, traces_path = folder / "agentci_spec.yaml", folder / "traces.jsonl"
    spec_path.write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    traces_path.write_text("".join(json.dumps(make_trace(rng, i, tools)) + "\n" for i in ids), encoding="utf-8")
    return spec_path, traces_path


def parse(spec_path: Path, traces_path: Path) -> None:
    yaml.load(spec_path.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    [json.loads(line) for line in traces_path.read_text(encoding="utf-8").splitlines()]


FLOOR = "import yaml\nfrom pydantic import BaseModel\nclass Model(BaseModel):\n    x: int = 0\n"
EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
SCRIPT = Path(sys.executable).parent / "agentci"  # the console script `pip install` wrote beside this Python
CACHED = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}  # bytecode cached, as installed


def process(*args: str) -> tuple[float, float]:
    """(wall, CPU) seconds of `agentci ARGS` in a fresh process (`python -c FLOOR` for `-c FLOOR`)."""
    agentci = [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "agentci_action"]
    command = [sys.executable, *args] if args[0] == "-c" else [*agentci, *args]
    before, start = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False, env=CACHED)
    seconds, after = time.perf_counter() - start, resource.getrusage(resource.RUSAGE_CHILDREN)
    assert done.returncode in (0, 1), done.stderr[-2000:]
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return seconds, cpu


def start_up_commands(folder: Path, tools: int) -> dict[str, tuple[str, tuple[str, ...]]]:
    """{name: (label, agentci arguments)} of the start-up figures."""
    with_regex, _ = write_suite(folder / "small", 1, tools)
    without_regex = folder / "small-no-regex.yaml"
    without_regex.write_text(
        "".join(line for line in with_regex.read_text().splitlines(True) if "regex_match" not in line)
    )
    return {
        "help": ("agentci --help", ("--help",)),
        "small": ("agentci validate, a one-query spec", ("validate", str(with_regex))),
        "small-no-regex": ("  the same without its regex", ("validate", str(without_regex))),
        "rag": ("agentci validate, the rag example", ("validate", str(EXAMPLES / "rag/agentci_spec.yaml"))),
        "router": (
            "agentci validate, the support-router example",
            ("validate", str(EXAMPLES / "support-router/agentci_spec.yaml")),
        ),
        "floor": ("floor: python, PyYAML, pydantic, one model", ("-c", FLOOR)),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--queries", type=int, default=20_000)
    parser.add_argument("--tools", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=None, help="rounds (default 3, or 15 with --start-up)")
    parser.add_argument("--start-up", action="store_true", help="time only the start of the CLI")
    args = parser.parse_args()
    repeats = args.repeats or (15 if args.start_up else 3)
    with tempfile.TemporaryDirectory() as tmp:
        start_up = start_up_commands(Path(tmp), args.tools)
        for _, command in start_up.values():  # writes the bytecode cache, as an install has it
            process(*command)
        best_start = dict.fromkeys(start_up, (float("inf"), float("inf")))
        if not args.start_up:
            spec, traces = write_suite(Path(tmp), args.queries, args.tools)
            output = Path(tmp, "results.json")
            test = ("test", "--spec", str(spec), "--traces", str(traces), "--baseline", "none", "--format", "json")
            best = dict.fromkeys(("parse", "test", "validate"), float("inf"))
        for _ in range(repeats):
            if not args.start_up:
                start = time.perf_counter()
                parse(spec, traces)
                best["parse"] = min(best["parse"], time.perf_counter() - start)
                best["test"] = min(best["test"], process(*test, "--output", str(output))[0])
                best["validate"] = min(best["validate"], process("validate", str(spec))[0])
            for name, (_, command) in start_up.items():
                wall, cpu = process(*command)
                best_start[name] = (min(best_start[name][0], wall), min(best_start[name][1], cpu))
        if not args.start_up:
            results = json.loads(output.read_text(encoding="utf-8"))
            spec_mb, traces_mb = spec.stat().st_size / 1e6, traces.stat().st_size / 1e6
    if not args.start_up:
        print(
            f"suite: {args.queries:,} queries × {args.tools} tool calls (spec {spec_mb:.1f} MB, traces {traces_mb:.1f} MB); "
            f"{results['summary']['total']:,} results"
        )
        print(f"parse spec (C loader) + traces (json.loads)  {best['parse']:7.3f} s")
        print(
            f"agentci test, whole process                   {best['test']:7.3f} s  {best['test'] / best['parse']:5.2f}× parse"
        )
        print(f"agentci validate, whole process               {best['validate']:7.3f} s")
    import agentci_action

    checkout = Path(agentci_action.__file__).resolve().parent.parent == EXAMPLES.parent
    source = "this checkout (its editable import hook adds ~10 ms)" if checkout else "the installed package"
    runner = "the agentci script" if SCRIPT.exists() else "python -m agentci_action"
    print(f"start-up, best of {repeats} rounds: {runner}, agentci_action from {source}")
    for name, (label, _) in start_up.items():
        wall, cpu = best_start[name]
        note = "under every command" if name == "floor" else "goal 0.15 s"
        print(f"{label:<46}{wall:6.3f} s  ({cpu:.3f} s CPU; {note})")


if __name__ == "__main__":
    main()
