"""The results JSON (agentci.results/v1) and the diff JSON (agentci.diff/v1): interfaces other tools read."""

from __future__ import annotations

from ..diff import RunDiff
from ..engine.results import RunResult


def render(run: RunResult) -> str:
    return run.model_dump_json(indent=2) + "\n"


def render_diff(diff: RunDiff) -> str:
    """The diff JSON (schema_version agentci.diff/v1)."""
    return diff.model_dump_json(indent=2) + "\n"
