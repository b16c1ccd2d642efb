"""Shared helpers: write specs and traces into a temporary directory, run the real CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


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


def hermetic_environment(**extra: str) -> dict[str, str]:
    """This process's environment without the judge's keys and endpoints, plus `extra`."""
    return {**{k: v for k, v in os.environ.items() if k not in JUDGE_VARIABLES}, **extra}


def run_cli(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """The real `agentci` command in a subprocess, in `env` (default: the hermetic environment)."""
    return subprocess.run([sys.executable, "-m", "agentci_action", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd or ROOT, env=env if env is not None else hermetic_environment())
