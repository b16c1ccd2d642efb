"""The suite's aggregates as short phrases, shared by the console and the markdown reports."""

from __future__ import annotations

from agentci_action._util.text import milliseconds
from agentci_action.engine.results import Aggregates


def _percent(value: float) -> str:
    return f"{value:.0%}"


LABELS = (  # (field, label, format)
    ("pass_rate", "pass rate", _percent),
    ("hallucination_rate", "hallucination rate", _percent),
    ("mean_latency_ms", "mean latency", milliseconds),
    ("p95_latency_ms", "p95 latency", milliseconds),
    ("timeout_rate", "timeout rate", _percent),
    ("safety_finding_rate", "queries with a safety finding", _percent),
)


def phrases(figures: Aggregates) -> list[str]:
    """e.g. ["pass rate 75%", "mean latency 1,200 ms"]; figures that are N/A for the suite are left out."""
    return [
        f"{label} {fmt(getattr(figures, name))}" for name, label, fmt in LABELS if getattr(figures, name) is not None
    ]
