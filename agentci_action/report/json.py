"""The results JSON (agentci.results/v1) and the diff JSON (agentci.diff/v1): interfaces other tools read."""

from __future__ import annotations

from ..diff import RunDiff
from ..engine.results import RunResult


def render(run: RunResult, diff: RunDiff | None = None) -> str:
    """The results JSON; with a diff against the baseline, it is the top-level `diff` field (agentci.diff/v1)."""
    text = run.model_dump_json(indent=2)
    if diff is None:
        return text + "\n"
    nested = diff.model_dump_json(indent=2).replace("\n", "\n  ")
    return text.removesuffix("\n}") + f',\n  "diff": {nested}\n}}\n'  # the run's own fields stay as they were


def render_diff(diff: RunDiff) -> str:
    """The diff JSON (schema_version agentci.diff/v1)."""
    return diff.model_dump_json(indent=2) + "\n"
