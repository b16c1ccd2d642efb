"""How the diff's figures read, shared by the console and markdown renderings.

A delta reads `before → after (▼ 12.5%)`: the arrow is the direction, the percentage 100·|change|/before;
"new" when the baseline is 0, "unchanged" when nothing moved. Ratios (precision, recall) show the
absolute change instead of a percentage.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any

from .text import unverified_note
from ..diff import COST_TOLERANCE, LATENCY_TOLERANCE, ChangeKind, Delta, QueryDiff, RunDiff


class Unit(str, Enum):
    COUNT = "count"
    USD = "usd"
    MS = "ms"
    RATIO = "ratio"


@dataclass(frozen=True)
class Metric:
    label: str
    field: str
    unit: Unit
    higher_is_better: bool = False


PATH_METRICS = (
    Metric("Tool calls", "tool_calls", Unit.COUNT),
    Metric("Tool precision", "tool_precision", Unit.RATIO, True),
    Metric("Tool recall", "tool_recall", Unit.RATIO, True),
    Metric("Loops", "loops", Unit.COUNT),
    Metric("Handoffs", "handoffs", Unit.COUNT),
)
COST_METRICS = (
    Metric("Total cost", "cost_usd", Unit.USD),
    Metric("Tokens", "total_tokens", Unit.COUNT),
    Metric("LLM calls", "llm_calls", Unit.COUNT),
    Metric("Latency", "latency_ms", Unit.MS),
)
# The suite's pass rate is compared under Scores (issue 7's uplift), so it is not repeated here.
SUITE_METRICS = (
    Metric("Hallucination rate", "hallucination_rate", Unit.RATIO),
    Metric("Mean latency", "mean_latency_ms", Unit.MS),
    Metric("p95 latency", "p95_latency_ms", Unit.MS),
    Metric("Timeout rate", "timeout_rate", Unit.RATIO),
    Metric("Safety findings", "safety_finding_rate", Unit.RATIO),
)


def rows(source: Any, metrics: tuple[Metric, ...], changed_only: bool = False) -> list[tuple[Metric, Delta]]:
    """The metrics `source` (a PathDiff, CostDiff, TotalDiff or the suite's dict) has figures for; handoffs only
    when there were any."""
    found = []
    for metric in metrics:
        delta = source.get(metric.field) if isinstance(source, dict) else getattr(source, metric.field, None)
        if (
            delta is None
            or (delta.before is None and delta.after is None)
            or (changed_only and delta.before == delta.after)
        ):
            continue
        if metric.field == "handoffs" and not (delta.before or delta.after):
            continue
        found.append((metric, delta))
    return found


# Change kinds as a reader says them.
KIND_LABELS = {kind: kind.value.replace("_", " ") for kind in ChangeKind}


def value(amount: float | None, unit: Unit) -> str:
    if amount is None:
        return "?"
    if unit is Unit.USD:
        return f"${amount:.4f}"
    if unit is Unit.MS:
        return f"{amount:,.0f} ms"
    if unit is Unit.RATIO:
        return f"{amount:.2f}"
    return f"{amount:,.0f}" if float(amount).is_integer() else f"{amount:,.2f}"


def _percent(amount: float) -> str:
    return f"{abs(amount):.1f}".removesuffix(".0") + "%"


def change(delta: Delta, unit: Unit) -> str:
    """'▼ 100%', '▲ 0.91' (ratios), 'new', 'unchanged'; '' when a side is unknown."""
    if delta.change is None:
        return ""
    if delta.change == 0:
        return "unchanged"
    if delta.new:
        return "new"
    arrow = "▲" if delta.change > 0 else "▼"
    if unit is Unit.RATIO:
        return f"{arrow} {abs(delta.change):.2f}"
    return f"{arrow} {_percent(delta.percent or 0.0)}"


def before_after(delta: Delta, unit: Unit) -> str:
    """'11 → 0', or one value when both sides agree ('?' for an unknown figure)."""
    if delta.change == 0 or delta.before == delta.after:
        return value(delta.after, unit)
    return f"{value(delta.before, unit)} → {value(delta.after, unit)}"


def figure(delta: Delta, unit: Unit, query: QueryDiff | None = None) -> str:
    """before_after, or only the side a new or removed query has."""
    if query is not None and query.has(ChangeKind.NEW_QUERY):
        return value(delta.after, unit)
    if query is not None and query.has(ChangeKind.REMOVED_QUERY):
        return value(delta.before, unit)
    return before_after(delta, unit)


UPLIFT_LABELS = {"composite_score": "composite", "pass_rate": "pass rate", "cost_usd": "cost"}


def uplift_text(diff: RunDiff) -> str:
    """'composite +15.1% · pass rate +33.3% · cost −40.2%': (after − before) / before of the whole runs; 'n/a' on a zero base."""
    parts = []
    for name, label in UPLIFT_LABELS.items():
        found = diff.uplift.get(name)
        if found is not None:
            amount = found.uplift
            parts.append(
                f"{label} " + ("n/a" if amount is None else f"{'+' if amount >= 0 else '−'}{_percent(100 * amount)}")
            )
    return " · ".join(parts)


def scores_text(diff: RunDiff) -> str:
    """'composite 0.86 → 0.99 · pass rate 75% → 100%' of the whole runs."""
    composite, rate = diff.uplift.get("composite_score"), diff.uplift.get("pass_rate")
    if composite is None or rate is None:
        return ""
    return (
        f"composite {composite.baseline:.2f} → {composite.current:.2f} · "
        f"pass rate {rate.baseline:.0%} → {rate.current:.0%}"
    )


def queries_text(diff: RunDiff) -> str:
    """'6 queries (5 before, 5 after)', or '4 queries' when both sides have the same."""
    before, after = diff.total.queries.before, diff.total.queries.after
    counts = "" if before == after else f" ({before:.0f} before, {after:.0f} after)"
    return f"{len(diff.queries)} queries{counts}"


def verdict(delta: Delta, unit: Unit, higher_is_better: bool = False) -> str:
    """'better' or 'worse' when the figure moved beyond its tolerance (ratios: by more than 0.01), else ''."""
    if delta.change is None or delta.change == 0:
        return ""
    tolerance = LATENCY_TOLERANCE if unit is Unit.MS else COST_TOLERANCE
    moved = abs(delta.change) > 0.01 if higher_is_better else delta.moved_beyond(tolerance)
    if not moved:
        return ""
    return "better" if (delta.change > 0) == higher_is_better else "worse"


def unverified_notes(diff: RunDiff) -> list[str]:
    """'v1: 2 correctness checks skipped, not passed: <reason>' per side with unverified checks (raw: escape it)."""
    labels = {"before": diff.before, "after": diff.after}
    return [f"{labels[side]}: {unverified_note(reasons)}" for side, reasons in diff.unverified.items() if reasons]


def headline_kind(query: QueryDiff) -> ChangeKind | None:
    """The kind a reader should see first (kinds are kept in ChangeKind order), None when unchanged."""
    return min(query.kinds, key=list(ChangeKind).index, default=None)


def kinds_text(query: QueryDiff) -> str:
    return ", ".join(KIND_LABELS[k] for k in query.kinds) or "unchanged"
