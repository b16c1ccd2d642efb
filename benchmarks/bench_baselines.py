"""Saving, reading and diffing baselines against loading the same traces, side by side in one run.

    python benchmarks/bench_baselines.py [--queries 10000] [--tools 50]

Uses bench_engine's generated suite (every query with checks in all three layers, 50-call traces).
Times: load_traces of the run (the reference: parse + validation); save_baseline (precheck, JSON,
atomic write); read_baseline; the diff of two versions (both sides evaluated, then compared); and the
markdown rendering. Prints each as seconds and as a ratio to load_traces: a baseline should cost about
what reading its traces costs, and the comparison itself little beside evaluating.
"""

from __future__ import annotations

import json
import random
import tempfile
from pathlib import Path

from bench_engine import make_query, make_trace, suite_arguments, timed  # same directory

from agentci_action.compare.baselines import SaveOptions, read_baseline, reference_variants, save_baseline
from agentci_action.compare.diff import diff_runs
from agentci_action.compare.diff_sides import evaluate_side
from agentci_action.report.diff_markdown import render_markdown
from agentci_action.spec.models import AgentCISpec
from agentci_action.trace.load import load_traces


def main() -> None:
    args = suite_arguments()
    rng = random.Random(1)
    ids = [f"q{i}" for i in range(args.queries)]
    with tempfile.TemporaryDirectory() as tmp:
        spec = AgentCISpec(
            agent="bench", baseline_dir=str(Path(tmp, "baselines")), queries=[make_query(i) for i in ids]
        )
        runs = {}
        for version in ("v1", "v2"):
            path = Path(tmp, f"{version}.jsonl")
            path.write_text("".join(json.dumps(make_trace(rng, i, args.tools)) + "\n" for i in ids))
            runs[version] = path
        traces, load_s = timed(lambda: load_traces([str(runs["v1"])]))
        (file, _, _), save_s = timed(lambda: save_baseline(spec, traces, "v1", SaveOptions(force=True)))
        save_baseline(spec, load_traces([str(runs["v2"])]), "v2", SaveOptions(force=True))
        size_mb = file.stat().st_size / 1e6
        before, read_s = timed(lambda: read_baseline(file))
        after = read_baseline(file.with_name("v2.json"))
        variants = {key: reference_variants(runs) for key, runs in before.queries.items()}
        sides, eval_s = timed(
            lambda: (
                evaluate_side(spec, "v1", before.queries, variants),
                evaluate_side(spec, "v2", after.queries, variants),
            )
        )
        diff, diff_s = timed(lambda: diff_runs(*sides))
        text, render_s = timed(lambda: render_markdown(diff))
    n = args.queries
    print(
        f"suite: {n:,} queries × {args.tools} tool calls; baseline file {size_mb:.1f} MB; "
        f"{diff.total.counts['changed']:,} queries changed; markdown {len(text) / 1e3:,.0f} kB"
    )
    rows = [
        ("load_traces (reference)", load_s),
        ("save_baseline", save_s),
        ("read_baseline", read_s),
        ("evaluate both sides", eval_s),
        ("diff_runs", diff_s),
        ("render_markdown", render_s),
    ]
    for name, seconds in rows:
        print(f"{name:<24} {seconds:7.3f} s  {n / seconds:10,.0f} queries/s  {seconds / load_s:5.2f}× load_traces")


if __name__ == "__main__":
    main()
