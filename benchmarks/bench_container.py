"""The action's container: image size, time from `docker run` to the first line of output and to the exit, for a
deterministic-only spec (tests/e2e), and the import cost the lazy SDK imports save, measured side by side.

    python benchmarks/bench_container.py [--runs 5] [--image NAME]

Needs Docker and the Dockerfile's base image (.ci/container-engine builds both). Builds the Dockerfile, or measures
an image already built from it with --image.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
IMAGE = "agentci-bench:latest"
TRACES = [
    {
        "id": "refund-policy",
        "final_answer": "Refunds within 30 days.",
        "tool_calls": [{"name": "search_docs"}],
        "llm_calls": [{"model": "m", "input_tokens": 300, "output_tokens": 50, "cost_usd": 0.002}],
    },
    {
        "id": "order-status",
        "final_answer": "It has shipped.",
        "tool_calls": [{"name": "lookup_order"}, {"name": "track_parcel"}],
        "llm_calls": [{"model": "m", "input_tokens": 300, "output_tokens": 50, "cost_usd": 0.002}],
    },
]


def workspace() -> Path:
    path = Path(tempfile.mkdtemp(prefix="agentci-bench-"))
    shutil.copy(ROOT / "tests" / "e2e" / "agentci.yaml", path / "agentci.yaml")
    (path / "traces.jsonl").write_text("".join(json.dumps(t) + "\n" for t in TRACES))
    return path


def timed_run(image: str, path: Path) -> tuple[float, float, str]:
    """(seconds to the first line of output, seconds to the exit, that first line)."""
    command = [
        "docker",
        "run",
        "--rm",
        "-v",
        f"{path}:/github/workspace",
        "-w",
        "/github/workspace",
        "-e",
        "INPUT_SPEC=agentci.yaml",
        "-e",
        "INPUT_TRACES=traces.jsonl",
        "-e",
        "GITHUB_WORKSPACE=/github/workspace",
        image,
    ]
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    first = process.stdout.readline()
    first_at = time.perf_counter() - start
    process.stdout.read()
    process.wait()
    return first_at, time.perf_counter() - start, first.strip()


def import_seconds(image: str, modules: str, runs: int) -> float:
    code = f"import time; t = time.perf_counter(); import {modules}; print(time.perf_counter() - t)"
    return statistics.median(
        float(
            subprocess.run(
                ["docker", "run", "--rm", "--entrypoint", "python", image, "-c", code],
                capture_output=True,
                text=True,
                check=True,
            ).stdout
        )
        for _ in range(runs)
    )


def image_bytes(image: str) -> int:
    return int(
        subprocess.run(
            ["docker", "image", "inspect", "-f", "{{.Size}}", image], capture_output=True, text=True, check=True
        ).stdout
    )


def dependency_layer_bytes(image: str) -> int:
    """Size of the dependency layer: made by `pip install`, or copied into /deps (0 when the history shows neither)."""
    history = subprocess.run(
        ["docker", "history", "--no-trunc", "--human=false", "--format", "{{.Size}}\t{{.CreatedBy}}", image],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return sum(
        int(size)
        for size, _, created_by in (line.partition("\t") for line in history.splitlines())
        if "pip install" in created_by or " in /deps" in created_by  # one stage, or copied from the deps stage
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--image", help="an image already built from this Dockerfile (default: build it)")
    args = parser.parse_args()
    image = args.image or IMAGE
    # the local stand-in for the Dockerfile's digest-pinned BASE (.ci/container-engine builds it)
    base = re.search(r"^ARG BASE=([^@\s]+)", (ROOT / "Dockerfile").read_text(), re.M).group(1)
    if not args.image:
        build = ["docker", "build", "-q", "--build-arg", f"BASE={base}", "-t", IMAGE, str(ROOT)]
        subprocess.run(build, check=True, capture_output=True)
    size, base_size, deps_size = image_bytes(image), image_bytes(base), dependency_layer_bytes(image)
    path = workspace()
    timed_run(image, path)  # warm the page cache once
    runs = [timed_run(image, path) for _ in range(args.runs)]
    lazy = import_seconds(image, "agentci_action.action", args.runs)
    eager = import_seconds(image, "agentci_action.action, github, anthropic, openai", args.runs)
    print(
        f"image {image}: {size / 1e6:.0f} MB ({base_size / 1e6:.0f} MB of it the base {base}, "
        f"{deps_size / 1e6:.0f} MB the dependency layer)"
    )
    print(
        f"docker run → first line: median {statistics.median(r[0] for r in runs):.2f} s; → exit: median "
        f"{statistics.median(r[1] for r in runs):.2f} s ({args.runs} runs; first line {runs[0][2][:40]!r})"
    )
    print(
        f"import at start-up: lazy {lazy * 1000:.0f} ms vs eager SDKs {eager * 1000:.0f} ms "
        f"(eager/lazy = {eager / lazy:.1f}×)"
    )
    shutil.rmtree(path)


if __name__ == "__main__":
    main()
