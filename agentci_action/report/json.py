"""The results JSON (schema_version agentci.results/v1): the interface other tools read."""

from __future__ import annotations

from ..engine.results import RunResult


def render(run: RunResult) -> str:
    return run.model_dump_json(indent=2) + "\n"
