"""The diff in a terminal: a box with the totals, then each changed query in three tiers, regressions first."""

from __future__ import annotations

import textwrap

from ..diff import ChangeKind, QueryDiff, RunDiff
from ..engine.results import Status
from . import diff_format as fmt
from .text import one_line

WIDTH = 76  # characters inside the box
HEADS = {
    ChangeKind.REGRESSION: "✗ REGRESSION",
    ChangeKind.REMOVED_QUERY: "- REMOVED",
    ChangeKind.NEW_QUERY: "+ NEW",
    ChangeKind.FIXED: "✓ FIXED",
}


def _boxed(text: str) -> str:
    return f"║ {one_line(text, WIDTH).ljust(WIDTH)} ║"


def _rule(left: str, right: str) -> str:
    return left + "═" * (WIDTH + 2) + right


def _status(status: Status | None) -> str:
    return "—" if status is None else status.value.upper()


def _metric_lines(
    source, metrics: tuple[fmt.Metric, ...], query: QueryDiff | None = None, changed_only: bool = False
) -> list[str]:
    lines = []
    for metric, delta in fmt.rows(source, metrics, changed_only):
        change = fmt.change(delta, metric.unit)
        lines.append(
            f"    {metric.label:<16} {fmt.figure(delta, metric.unit, query)}" + (f"  ({change})" if change else "")
        )
    return lines


def _correctness_line(query: QueryDiff) -> str:
    before, after = query.correctness.before, query.correctness.after
    line = (
        f"  Correctness      unchanged ({_status(before)})"
        if before == after
        else f"  Correctness      {_status(before)} → {_status(after)}"
    )
    if before == after and (
        query.has(ChangeKind.REGRESSION) or query.has(ChangeKind.FIXED)
    ):  # another layer, e.g. a forbidden tool
        line += f" · query {_status(query.status.before)} → {_status(query.status.after)}"
    return line


def query_lines(query: QueryDiff) -> list[str]:
    """One changed query: its kinds, then correctness and the path and cost figures that moved."""
    head = HEADS.get(fmt.headline_kind(query), "~ CHANGED")
    lines = [
        f"{head}  {query.id}",
        f"  {fmt.kinds_text(query)}",
        f"  {query.query}",
        *([f"  {query.file}:{query.line}"] if query.file else []),
        "",
        _correctness_line(query),
    ]
    lines += _tier("Path", _metric_lines(query.path, fmt.PATH_METRICS, query, changed_only=True) + _tool_lines(query))
    lines += _tier("Cost", _metric_lines(query.cost, fmt.COST_METRICS, query, changed_only=True))
    return lines


def _tier(name: str, lines: list[str]) -> list[str]:
    return [f"  {name}", *lines] if lines else [f"  {name:<16} unchanged"]


def _tool_lines(query: QueryDiff) -> list[str]:
    lines = []
    if query.has(ChangeKind.TOOLS_CHANGED) and query.path.sequence_similarity is not None:
        lines.append(f"    {'Sequence sim.':<16} {query.path.sequence_similarity:.2f} (LCS, after vs before)")
    if query.path.tools_added:
        lines.append(f"    {'Tools added':<16} {', '.join(query.path.tools_added)}")
    if query.path.tools_removed:
        lines.append(f"    {'Tools removed':<16} {', '.join(query.path.tools_removed)}")
    if query.has(ChangeKind.ROUTING_CHANGED):
        lines.append(
            f"    {'Routing':<16} {' → '.join(query.path.handoffs_before) or 'none'}  ⇒  {' → '.join(query.path.handoffs_after) or 'none'}"
        )
    return lines


def total_lines(diff: RunDiff) -> list[str]:
    t = diff.total
    counts = [f"{t.counts[k.value]} {fmt.KIND_LABELS[k]}" for k in ChangeKind if t.counts[k.value]]
    lines = [
        f"Total · {fmt.queries_text(diff)} · {t.counts['changed']} changed · {t.counts['unchanged']} unchanged",
        *(textwrap.wrap(" · ".join(counts), WIDTH, initial_indent="  ", subsequent_indent="  ") or ["  no changes"]),
        "",
        f"  Passed           {fmt.before_after(t.passed, fmt.Unit.COUNT)} of {fmt.before_after(t.queries, fmt.Unit.COUNT)}",
    ]
    if diff.uplift:
        lines += [f"  Scores           {fmt.scores_text(diff)}", f"  Uplift           {fmt.uplift_text(diff)}"]
    lines.append("  Path")
    lines += _metric_lines(t, fmt.PATH_METRICS)
    lines.append("  Cost")
    lines += _metric_lines(t, fmt.COST_METRICS)
    suite = _metric_lines(t.suite, fmt.SUITE_METRICS)
    return lines + (["  Suite", *suite] if suite else [])


def render_diff(diff: RunDiff) -> str:
    lines = [_rule("╔", "╗"), _boxed(f"AgentCI diff · {diff.agent} · {diff.before} → {diff.after}"), _rule("╠", "╣")]
    lines += [_boxed(line) for line in total_lines(diff)]
    for query in (q for q in diff.queries if q.changed):
        lines.append(_rule("╠", "╣"))
        lines += [_boxed(line) for line in query_lines(query)]
    unchanged = [q.id for q in diff.queries if not q.changed]
    if unchanged:
        lines += [_rule("╠", "╣"), _boxed(f"Unchanged: {', '.join(unchanged)}")]
    lines.append(_rule("╚", "╝"))
    lines += [f"warning: {one_line(w, 300)}" for w in diff.warnings]
    lines += [f"not verified: {one_line(note, 1500)}" for note in fmt.unverified_notes(diff)]
    return "\n".join(lines) + "\n"
