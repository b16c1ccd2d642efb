"""The action's image as the Dockerfile builds it (on the local stand-in for its base).

At most 250 MB, nothing in it that only installs software, the dependencies as bytecode only, and the release named on
the first line, before the verdict. The measurements are benchmarks/bench_container.py's own.

Needs Docker and the base image, like tests/e2e/test_action_in_act.py; builds the image once (its dependency stage is
usually Docker's cache by then).
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess

import pytest
from helpers import ROOT, base_image

import agentci_action

spec = importlib.util.spec_from_file_location("bench_container", ROOT / "benchmarks" / "bench_container.py")
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)

CEILING = 250_000_000  # bytes


@pytest.fixture(scope="module")
def image(container_engine):
    tag = f"agentci-image-test:{os.getpid()}"
    build = ["docker", "build", "-q", "--build-arg", f"BASE={base_image()}", "-t", tag, str(ROOT)]
    done = subprocess.run(build, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    yield tag
    subprocess.run(["docker", "image", "rm", "-f", tag], capture_output=True)


def test_the_image_is_at_most_250_mb(image):
    size, where = bench.image_bytes(image), bench.parts(image)
    assert size <= CEILING, f"{size / 1e6:.0f} MB: {where}"
    assert where["all"] <= CEILING  # its files, read inside: nothing deleted is still shipped in a lower layer


def test_the_image_has_no_installer_and_its_dependencies_are_bytecode_only(image):
    code = (
        "import importlib.util as u, pathlib; "
        "print(u.find_spec('pip') is None, u.find_spec('setuptools') is None, "
        "sum(1 for _ in pathlib.Path('/deps').rglob('*.py')), sum(1 for _ in pathlib.Path('/deps').rglob('*.pyc')))"
    )
    no_pip, no_setuptools, sources, compiled = bench.python_in(image, code).split()
    assert (no_pip, no_setuptools, sources) == ("True", "True", "0")
    assert int(compiled) > 1000


def test_the_release_is_the_first_line_and_the_verdict_follows(image):
    path = bench.workspace()
    try:
        done = subprocess.run(bench.docker_run(image, path), capture_output=True, text=True, timeout=120)
        results = json.loads((path / "agentci-results.json").read_text())  # the action's default results-path
    finally:
        shutil.rmtree(path, ignore_errors=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[0] == f"AgentCI {agentci_action.__version__}"
    assert "refund-policy" in done.stdout and "order-status" in done.stdout
    assert [result["id"] for result in results["results"]] == ["refund-policy", "order-status"]


def test_docker_run_image_version_prints_the_release_and_exits_0(image):
    done = subprocess.run(["docker", "run", "--rm", image, "--version"], capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout, done.stderr) == (0, f"AgentCI {agentci_action.__version__}\n", "")
