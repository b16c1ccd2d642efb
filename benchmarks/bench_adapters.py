"""Framework adapters and pricing against canonical loading, side by side in one run.

    python benchmarks/bench_adapters.py [--runs 2000]

Writes the same support run (4 model calls, 3 tool calls, a handoff, a retrieval) `--runs` times as
canonical traces with costs, as canonical traces without costs (priced from the genai-prices table on
load), as OpenTelemetry GenAI spans (OTLP JSON Lines), as OpenInference spans, and as OpenInference spans whose
runs pair up into sessions of two (`session.id`: each session read as one conversation of two turns), then times
`load_traces` on each file and prints runs per second and each one's ratio to canonical loading.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from agentci_action.trace.load import load_traces

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "traces"


def _respan(lines: list[str], n: int) -> list[str]:
    """Fixture span lines with the trace ids made unique for copy `n` (so each copy is its own trace)."""
    out = []
    for line in lines:
        for old in ("5b8efff798038103d269b633813fc60c", "0af7651916cd43dd8448eb211c80319c"):
            line = line.replace(old, f"{n:032x}" if old.startswith("5b") else f"{n + 10**9:032x}")
        out.append(line)
    return out


def _in_session(span: dict, session: str) -> dict:
    """The span with OpenInference's `session.id` (what `using_session` adds to every span)."""
    return {**span, "attributes": {**span["attributes"], "session.id": session}}


def write_files(folder: Path, runs: int) -> dict[str, Path]:
    canonical = load_traces([str(FIXTURES / "otel_genai.jsonl")])[0].model_dump(by_alias=True, exclude_none=True)
    unpriced = {
        **canonical,
        "total_cost_usd": None,
        "llm_calls": [{**c, "cost_usd": None} for c in canonical["llm_calls"]],
    }
    files = {
        "canonical (costs given)": [json.dumps(canonical)] * runs,
        "canonical (priced on load)": [json.dumps({k: v for k, v in unpriced.items() if v is not None})] * runs,
    }
    for name, fixture in (("otel-genai", "otel_genai.jsonl"), ("openinference", "openinference.jsonl")):
        lines = (FIXTURES / fixture).read_text().splitlines()
        files[name] = [line for n in range(runs) for line in _respan(lines, n)]
    files["openinference (sessions)"] = [
        json.dumps(_in_session(json.loads(line), f"session-{n // 2}"))
        for n in range(runs)
        for line in _respan((FIXTURES / "openinference.jsonl").read_text().splitlines(), n)
    ]
    paths = {}
    for name, lines in files.items():
        paths[name] = folder / f"{name.split()[0]}-{len(paths)}.jsonl"
        paths[name].write_text("\n".join(lines) + "\n")
    return paths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        paths = write_files(Path(tmp), args.runs)
        seconds = {}
        for name, path in paths.items():
            start = time.perf_counter()
            load_traces([str(path)])
            seconds[name] = time.perf_counter() - start
    base = seconds["canonical (costs given)"]
    for name, took in seconds.items():
        print(f"{name:28} {args.runs / took:10,.0f} runs/s   {took / base:5.2f}× canonical")


if __name__ == "__main__":
    main()
