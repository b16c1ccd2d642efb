"""The action's container: its image size, start and import times, and what each dependency costs.

Image size and where it goes (the runtime under the dependencies, the dependencies, our package), time from `docker run`
to the first line of output and to the exit for a deterministic-only spec (tests/e2e) beside `docker run` of a bare
`python -c pass` (the container's own start, which no image change removes), the same first line timed inside the
container, the time to import the action (and what importing the SDKs up front would add), and what each dependency
costs: installed size, and import time when every feature's modules are loaded.

    python benchmarks/bench_container.py [--runs 5] [--image NAME ...] [--top 12]

Needs Docker and the Dockerfile's base image (.ci/container-engine builds both). Builds the Dockerfile, or measures
images already built with --image (repeat it to compare, e.g. before and after a change, in one run).
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
    shutil.copy(ROOT / "tests" / "fixtures" / "action" / "agentci.yaml", path / "agentci.yaml")
    (path / "traces.jsonl").write_text("".join(json.dumps(t) + "\n" for t in TRACES))
    return path


ENVIRONMENT = {"INPUT_SPEC": "agentci.yaml", "INPUT_TRACES": "traces.jsonl", "GITHUB_WORKSPACE": "/github/workspace"}


def docker_run(image: str, path: Path | None, *entrypoint: str) -> list[str]:
    """`docker run` of the image's entrypoint, or of `entrypoint` given instead, with the workspace at `path`.

    With the inputs the action's runs get (none without a workspace).
    """
    command = ["docker", "run", "--rm"]
    if path is not None:
        command += ["-v", f"{path}:/github/workspace", "-w", "/github/workspace"]
        for name, value in ENVIRONMENT.items():
            command += ["-e", f"{name}={value}"]
    if entrypoint:
        return [*command, "--entrypoint", entrypoint[0], image, *entrypoint[1:]]
    return [*command, image]


def python_in(image: str, code: str, *args: str, path: Path | None = None) -> str:
    """stdout of `python -c code args` in the image."""
    command = docker_run(image, path, "python", "-c", code, *args)
    return subprocess.run(command, capture_output=True, text=True, check=True).stdout


def timed_run(image: str, path: Path, *entrypoint: str) -> tuple[float, float, str]:
    """(seconds to the first line of output, seconds to the exit, that first line) of the image's entrypoint.

    Or of `entrypoint` (e.g. python -c pass) given instead.
    """
    command = docker_run(image, path, *entrypoint)
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    first = process.stdout.readline()
    first_at = time.perf_counter() - start
    process.stdout.read()
    process.wait()
    return first_at, time.perf_counter() - start, first.strip()


# From the interpreter's start to the entrypoint's first line, inside the container (no docker run around it).
INSIDE = """
import subprocess, sys, time
start = time.perf_counter()
process = subprocess.Popen([sys.executable, *sys.argv[1:]], stdout=subprocess.PIPE)
process.stdout.readline()
print(time.perf_counter() - start)
process.communicate()
"""


def import_seconds(image: str, modules: str, runs: int) -> float:
    code = f"import time; t = time.perf_counter(); import {modules}; print(time.perf_counter() - t)"
    return statistics.median(float(python_in(image, code)) for _ in range(runs))


def image_bytes(image: str) -> int:
    return int(
        subprocess.run(
            ["docker", "image", "inspect", "-f", "{{.Size}}", image], capture_output=True, text=True, check=True
        ).stdout
    )


# Bytes under the dependencies' and our package's directories, and in the whole file system, read in the image.
PARTS = """
import json, os, sys
def size(top):
    return sum(os.lstat(os.path.join(d, f)).st_size for d, _, fs in os.walk(top) for f in fs)
parts = {p: size(p) for p in ("/deps", "/app")}
tops = [os.path.join("/", top) for top in os.listdir("/") if top not in ("proc", "sys", "dev")]
parts["all"] = sum(size(top) for top in tops if not os.path.islink(top))  # /bin, /lib: links into /usr
print(json.dumps(parts))
"""


def parts(image: str) -> dict[str, int]:
    """Bytes of /deps, /app and the whole file system of the image."""
    return json.loads(python_in(image, PARTS))


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
        if path.endswith(".py"):  # its byte-compiled file (cached, or in its place), when the install did not list it
            for pyc in (importlib.util.cache_from_source(path), path + "c"):
                total += os.path.getsize(pyc) if pyc not in listed and os.path.isfile(pyc) else 0
    sizes[d.metadata["Name"]] = sizes.get(d.metadata["Name"], 0) + total
print(json.dumps(sizes))
"""


def breakdown(image: str) -> dict[str, int]:
    """distribution name → installed bytes in the image (the files of its RECORD, and their byte-compiled files)."""
    return json.loads(python_in(image, BREAKDOWN))


# Seconds of import (each module's own time, -X importtime) per distribution, every feature's modules loaded.
IMPORTS = """
import importlib.metadata as m, json, subprocess, sys
modules = "agentci_action.github.action, github, anthropic, openai, rouge_score.rouge_scorer, sacrebleu, numpy"
log = subprocess.run([sys.executable, "-X", "importtime", "-c", "import " + modules], capture_output=True, text=True)
owner = {top: names[0] for top, names in m.packages_distributions().items()}
owner["agentci_action"] = "agentci-action"
seconds = {}
for line in filter(lambda line: line.startswith("import time:"), log.stderr.splitlines()):
    own, _, name = line.removeprefix("import time:").split("|")
    if own.strip().isdigit():
        distribution = owner.get(name.strip().split(".")[0], "(standard library)")
        seconds[distribution] = seconds.get(distribution, 0) + int(own) / 1e6
print(json.dumps(seconds))
"""


def import_breakdown(image: str) -> dict[str, float]:
    """distribution → seconds its modules take to import (their own time) when every feature is loaded."""
    return json.loads(python_in(image, IMPORTS))


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
    bare: dict[str, list] = {image: [] for image in images}
    inside: dict[str, list] = {image: [] for image in images}
    for image in images:
        timed_run(image, path)  # warm the page cache once
    for _ in range(args.runs):
        for image in images:
            runs[image].append(timed_run(image, path))
            bare[image].append(timed_run(image, path, "python", "-c", "print()"))
            inside[image].append(float(python_in(image, INSIDE, "/app/entrypoint.py", path=path).splitlines()[0]))
    median = statistics.median
    for image in images:
        size, where = image_bytes(image), parts(image)
        lazy = import_seconds(image, "agentci_action.github.action", args.runs)
        eager = import_seconds(image, "agentci_action.github.action, github, anthropic, openai", args.runs)
        print(
            f"image {image}: {size / 1e6:.0f} MB; its files: {where['all'] / 1e6:.0f} MB, of them the dependencies "
            f"{where['/deps'] / 1e6:.0f} MB, agentci_action {where['/app'] / 1e6:.1f} MB, the rest (Python, the "
            f"base's libraries) {(where['all'] - where['/deps'] - where['/app']) / 1e6:.0f} MB"
        )
        print(
            f"  docker run → first line: median {median(r[0] for r in runs[image]):.2f} s, → exit "
            f"{median(r[1] for r in runs[image]):.2f} s ({args.runs} runs; first line {runs[image][0][2][:40]!r}); "
            f"docker run of python -c 'print()' {median(r[0] for r in bare[image]):.2f} s; inside the container, "
            f"interpreter start → first line {median(inside[image]):.2f} s"
        )
        print(
            f"  importing the action {lazy * 1000:.0f} ms, with the SDKs up front {eager * 1000:.0f} ms (medians of "
            f"{args.runs})"
        )
        sizes = sorted(breakdown(image).items(), key=lambda item: -item[1])
        print("  size: " + ", ".join(f"{name} {bytes_ / 1e6:.1f}" for name, bytes_ in sizes[: args.top]) + " (MB)")
        seconds = sorted(import_breakdown(image).items(), key=lambda item: -item[1])
        print("  import: " + ", ".join(f"{name} {s * 1000:.0f}" for name, s in seconds[: args.top]) + " (ms)")
    shutil.rmtree(path)


if __name__ == "__main__":
    main()
