"""The action's container: image size, time from `docker run` to the first line of output and to the exit, for a
deterministic-only spec (tests/e2e), the time to import the action (and what importing the SDKs up front would
add), and each dependency's installed size.

    python benchmarks/bench_container.py [--runs 5] [--image NAME ...] [--top 12]

Needs Docker and the Dockerfile's base image (.ci/container-engine builds both). Builds the Dockerfile, or measures
images already built with --image (repeat it to compare, e.g. before and after a change, in one run), and lists
what each installed distribution costs.
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


# Installed bytes of every distribution on the image's import path, read inside the image.
BREAKDOWN = """
import importlib.metadata as m, importlib.util, json, os
sizes = {}
for d in m.distributions():
    listed = {str(d.locate_file(f)) for f in d.files or []}
    total = 0
    for path in listed:
        if os.path.isfile(path):
            total += os.path.getsize(path)
            if path.endswith(".py"):  # its byte-compiled file, when the install did not list it
                pyc = importlib.util.cache_from_source(path)
                total += os.path.getsize(pyc) if pyc not in listed and os.path.isfile(pyc) else 0
    sizes[d.metadata["Name"]] = sizes.get(d.metadata["Name"], 0) + total
print(json.dumps(sizes))
"""


def breakdown(image: str) -> dict[str, int]:
    """distribution name → installed bytes in the image (the files of its RECORD, and their byte-compiled files)."""
    done = subprocess.run(
        ["docker", "run", "--rm", "--entrypoint", "python", image, "-c", BREAKDOWN],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument(
        "--image",
        action="append",
        help="an image already built from a Dockerfile of this project; repeat to compare images side by side "
        "(their runs interleaved); default: build this Dockerfile",
    )
    parser.add_argument("--top", type=int, default=12, help="distributions listed in the size breakdown")
    args = parser.parse_args()
    images = args.image or [IMAGE]
    # the local stand-in for the Dockerfile's digest-pinned BASE (.ci/container-engine builds it)
    base = re.search(r"^ARG BASE=([^@\s]+)", (ROOT / "Dockerfile").read_text(), re.M).group(1)
    if not args.image:
        build = ["docker", "build", "-q", "--build-arg", f"BASE={base}", "-t", IMAGE, str(ROOT)]
        subprocess.run(build, check=True, capture_output=True)
    path = workspace()
    runs: dict[str, list] = {image: [] for image in images}
    for image in images:
        timed_run(image, path)  # warm the page cache once
    for _ in range(args.runs):
        for image in images:
            runs[image].append(timed_run(image, path))
    base_size = image_bytes(base)
    for image in images:
        size, deps_size = image_bytes(image), dependency_layer_bytes(image)
        lazy = import_seconds(image, "agentci_action.action", args.runs)
        eager = import_seconds(image, "agentci_action.action, github, anthropic, openai", args.runs)
        print(
            f"image {image}: {size / 1e6:.0f} MB ({base_size / 1e6:.0f} MB of it the base {base}, "
            f"{deps_size / 1e6:.0f} MB the dependency layer)"
        )
        print(
            f"  docker run → first line: median {statistics.median(r[0] for r in runs[image]):.2f} s; → exit: median "
            f"{statistics.median(r[1] for r in runs[image]):.2f} s ({args.runs} runs; first line "
            f"{runs[image][0][2][:40]!r}); importing the action {lazy * 1000:.0f} ms, with the SDKs up front "
            f"{eager * 1000:.0f} ms"
        )
        sizes = sorted(breakdown(image).items(), key=lambda item: -item[1])
        print("  " + ", ".join(f"{name} {bytes_ / 1e6:.0f}" for name, bytes_ in sizes[: args.top]) + " (MB)")
    shutil.rmtree(path)


if __name__ == "__main__":
    main()
