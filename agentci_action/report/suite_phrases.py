"""The suite's aggregates, and what adaptive runs saved, as short phrases shared by the console and markdown reports."""

from __future__ import annotations

from agentci_action._util.text import milliseconds, usd
from agentci_action.engine.results import Aggregates, Summary


def _percent(value: float) -> str:
    return f"{value:.0%}"


def _of_queries(value: float) -> str:
    return f"{value:.0%} of queries"


LABELS = (  # (field, label, format)
    ("pass_rate", "pass rate", _of_queries),
    ("hallucination_rate", "hallucination rate", _percent),
    ("mean_latency_ms", "mean latency", milliseconds),
    ("p95_latency_ms", "p95 latency", milliseconds),
    ("timeout_rate", "timeout rate", _percent),
    ("safety_finding_rate", "queries with a safety finding", _percent),
)


def phrases(figures: Aggregates) -> list[str]:
    """e.g. ["pass rate 75% of queries", "mean latency 1,200 ms"]; figures that are N/A for the suite are left out."""
    return [
        f"{label} {fmt(getattr(figures, name))}" for name, label, fmt in LABELS if getattr(figures, name) is not None
    ]


def adaptive(summary: Summary) -> str:
    """'35 runs of 60 at the maximum (0.58×); at the maximum $0.6000, these $0.3500'.

    What adaptive runs saved ('' without them).
    """
    if summary.max_runs is None:
        return ""
    share = summary.runs / summary.max_runs if summary.max_runs else 1.0
    cost = (
        f"; the fixed maximum would have cost {usd(summary.cost_at_max_runs_usd)}, these cost {usd(summary.cost_usd)}"
        if summary.cost_at_max_runs_usd is not None
        else ""
    )
    return f"adaptive runs: {summary.runs} of {summary.max_runs} at the maximum ({share:.2f}×){cost}"
