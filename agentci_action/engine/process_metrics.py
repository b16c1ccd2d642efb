"""Process metrics (Scylla): how far a run got through the expected steps, and how far it drifted from the goal.

Both need expectations from the spec (`process.expected_steps`, `process.aligned_tools`); tool names are
compared case- and separator-insensitively, like forbidden tools.
"""

from __future__ import annotations

from typing import Any

from agentci_action.engine.metrics import normalize_tool_name
from agentci_action.engine.results import PASS, Check
from agentci_action.engine.severity import failed
from agentci_action.spec.models import ProcessSpec
from agentci_action.trace.canonical import Trace


def progress_rate(used: list[str], steps: list[tuple[str, float]]) -> float:
    """R_Prog = achieved weighted steps / expected weighted steps.

    Steps are achieved in order: walking the used tools once, step j is achieved when its tool appears
    after step j − 1 was; the first step never reached stops the progress (that is where the agent got
    stuck). [search, generate] against steps [search ×1, rerank ×1, generate ×2] → 1/4 = 0.25.
    1.0 when no step is expected.
    """
    total = sum(weight for _, weight in steps)
    if total == 0:
        return 1.0
    achieved, j = 0.0, 0
    for name in used:
        if j < len(steps) and name == steps[j][0]:
            achieved += steps[j][1]
            j += 1
    return achieved / total


def strategic_drift(used: list[str], aligned: set[str]) -> float:
    """1 − goal-aligned actions / total actions, an action being one tool call. 0.0 when nothing was called."""
    if not used:
        return 0.0
    return 1 - sum(name in aligned for name in used) / len(used)


def evaluate_process(spec: ProcessSpec | None, trace: Trace) -> tuple[dict[str, Any], list[Check]]:
    """(details, checks) for the spec's process expectations.

    Checks warn, like the rest of the path layer, unless the block's `severity` makes them fail.
    """
    if spec is None:
        return {}, []
    used = [normalize_tool_name(name) for name in trace.tool_names]
    details: dict[str, Any] = {}
    checks: list[Check] = []
    if spec.expected_steps is not None:
        steps = [(normalize_tool_name(step.tool), step.weight) for step in spec.weighted_steps()]
        rate = details["progress_rate"] = progress_rate(used, steps)
        if (minimum := spec.min_progress_rate) is not None:
            data = {"actual": rate, "min": minimum}
            checks.append(
                Check("min_progress_rate", PASS, "", data)
                if rate >= minimum
                else failed(spec, "min_progress_rate", f"progress rate: {rate:.2f} < min {minimum:g}", data)
            )
    if spec.aligned_tools is not None:
        drift = details["strategic_drift"] = strategic_drift(used, {normalize_tool_name(n) for n in spec.aligned_tools})
        if (maximum := spec.max_strategic_drift) is not None:
            data = {"actual": drift, "max": maximum}
            checks.append(
                Check("max_strategic_drift", PASS, "", data)
                if drift <= maximum
                else failed(spec, "max_strategic_drift", f"strategic drift: {drift:.2f} > max {maximum:g}", data)
            )
    return details, checks
