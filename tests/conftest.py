"""Fixtures every tier shares; the helpers tests import are in tests/helpers/.

Everything under tests/e2e/ is marked `e2e` (tests/README.md): `python -m pytest -m "not e2e"` is the fast loop, `python
-m pytest` runs every tier.
"""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path

import pytest
from helpers import missing_engine, real_traces_dir, shared_fixture

E2E = Path(__file__).resolve().parent / "e2e"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test under tests/e2e/ `e2e` (containers, act, browsers, packaging, real SDKs and frameworks)."""
    for item in items:
        if item.path.is_relative_to(E2E):
            item.add_marker(pytest.mark.e2e)


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


@pytest.fixture(scope="module")
def container_engine():
    """Skips a container test where Docker, the base image or `act` is missing; fails instead under AGENTCI_REQUIRE_E2E=1."""
    reason = missing_engine()
    if reason and os.environ.get("AGENTCI_REQUIRE_E2E") == "1":
        pytest.fail(f"AGENTCI_REQUIRE_E2E=1 but {reason}")
    if reason:
        pytest.skip(reason)
