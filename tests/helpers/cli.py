"""The `agentci` command as tests run it.

In this process by default, in a subprocess where only a process will do, in an environment without the judge's keys or
the runner's markers.
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import TextIO

from helpers.paths import ROOT

# Tests never reach a real LLM provider: the judge's keys and endpoints are taken out of the CLI's environment.
JUDGE_VARIABLES = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_BASE_URL", "OPENAI_BASE_URL")


RUNNER_VARIABLES = ("GITHUB_ACTIONS", "GITHUB_WORKSPACE")  # they change what the CLI prints (stop-commands, paths)


def hermetic_environment(**extra: str) -> dict[str, str]:
    """This process's environment without the judge's keys and endpoints or the runner's markers, plus `extra`."""
    return {**{k: v for k, v in os.environ.items() if k not in JUDGE_VARIABLES + RUNNER_VARIABLES}, **extra}


_WORKING_DIRECTORY = threading.Lock()  # one process, one working directory: in-process runs take turns


def run_cli(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None, stderr: TextIO | None = None
) -> subprocess.CompletedProcess:
    """The real `agentci` command, run in this process (cli.main.main with its streams captured).

    From `cwd` (default: the repository) in `env` (default: the hermetic environment): exit code, stdout and stderr as
    run_cli_process gives them, without starting an interpreter. `stderr` (e.g. a pseudo-terminal) gets what the
    command writes there instead of the result's stderr, which is then empty.
    """
    from agentci_action.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    with _WORKING_DIRECTORY, contextlib.chdir(cwd or ROOT):
        environ = hermetic_environment() if env is None else env
        code = main(list(map(str, args)), env=environ, out=out, err=err if stderr is None else stderr)
    return subprocess.CompletedProcess(["agentci", *map(str, args)], code, out.getvalue(), err.getvalue())


def run_cli_process(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    """`python -m agentci_action` in a subprocess, for what only a process shows.

    Signals, its exit, the interpreter's own output, settings read when it starts; in `env` (default: the hermetic
    environment).
    """
    return subprocess.run(
        [sys.executable, "-m", "agentci_action", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd or ROOT,
        env=env if env is not None else hermetic_environment(),
    )
