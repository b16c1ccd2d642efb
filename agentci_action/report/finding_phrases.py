"""A layer's findings as plain lines, for the reports that cannot show each finding's status beside it.

Those reports: annotations, JUnit. A finding whose status differs from its layer's says so first, so a warning inside a
failed layer never reads as the failure ('forbidden tools used: …', 'warning: match mode …').
"""

from __future__ import annotations

from agentci_action.engine.results import Finding, LayerResult, Status

WORDS = {
    Status.PASS: "passed",
    Status.WARN: "warning",
    Status.FAIL: "failed",
    Status.ERROR: "error",
    Status.SKIP: "skipped",
}


def said(layer: LayerResult) -> list[Finding]:
    """The layer's findings, or its status alone when it has no message."""
    return layer.findings() or [Finding(layer.status, "", layer.status.value)]


def lines(layer: LayerResult) -> list[str]:
    """Each finding's message, labelled with its status where that is not the layer's."""
    return [f.message if f.status is layer.status else f"{WORDS[f.status]}: {f.message}" for f in said(layer)]
