"""How the diff's figures read, shared by the console and markdown renderings.

A delta reads `before → after (▼ 12.5%)`: the arrow is the direction, the percentage 100·|change|/before;
"▲ from 0" when the baseline is 0 (no percentage of nothing), "unchanged" when nothing moved. Ratios (precision,
recall) show the absolute change instead of a percentage, rates the change in percentage points.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from enum import Enum
from typing import Any

from agentci_action._util.text import milliseconds, one_line, plural, points, unverified_note, usd
from agentci_action.compare.diff import COST_TOLERANCE, LATENCY_TOLERANCE
from agentci_action.compare.diff_schema import ChangeKind, Delta, QueryDiff, RunDiff, TurnDiff
from agentci_action.compare.pass_verdicts import verdict_words
from agentci_action.compare.suite_change import interval_words
from agentci_action.engine.results import Status


class Unit(str, Enum):
    COUNT = "count"
    USD = "usd"
    MS = "ms"
    RATIO = "ratio"
    PERCENT = "percent"  # a rate shown as a percentage, its change in percentage points


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
    Metric("Hallucination rate", "hallucination_rate", Unit.PERCENT),
    Metric("Mean latency", "mean_latency_ms", Unit.MS),
    Metric("p95 latency", "p95_latency_ms", Unit.MS),
    Metric("Timeout rate", "timeout_rate", Unit.PERCENT),
    Metric("Safety findings", "safety_finding_rate", Unit.PERCENT),
)


def rows(source: Any, metrics: tuple[Metric, ...], changed_only: bool = False) -> list[tuple[Metric, Delta]]:
    """The metrics `source` (a PathDiff, CostDiff, TotalDiff or the suite's dict) has figures for.

    Handoffs only when there were any.
    """
    found = []
    for metric in metrics:
        delta = source.get(metric.field) if isinstance(source, dict) else getattr(source, metric.field, None)
        if (
            delta is None
            or (delta.before is None and delta.after is None)
            or (changed_only and not moved(delta, metric.unit))
        ):
            continue
        if metric.field == "handoffs" and not (delta.before or delta.after):
            continue
        found.append((metric, delta))
    return found


# Change kinds as a reader says them (a query's label), and counted: (one, many).
KIND_LABELS = {kind: kind.value.replace("_", " ") for kind in ChangeKind}
_KIND_COUNTED = {
    ChangeKind.REGRESSION: ("regression", "regressions"),
    ChangeKind.NOT_RUN: ("query not run or evaluated", "queries not run or evaluated"),
    ChangeKind.REMOVED_QUERY: ("removed query", "removed queries"),
    ChangeKind.NEW_QUERY: ("new query", "new queries"),
    ChangeKind.FIXED: ("fixed", "fixed"),
    ChangeKind.INCONCLUSIVE: ("inconclusive", "inconclusive"),
    ChangeKind.MODEL_CHANGED: ("model change", "model changes"),
    ChangeKind.TOOLS_CHANGED: ("tool change", "tool changes"),
    ChangeKind.ROUTING_CHANGED: ("routing change", "routing changes"),
    ChangeKind.OUTPUT_CHANGED: ("output change", "output changes"),
    ChangeKind.COST_CHANGED: ("cost change", "cost changes"),
}


def kind_count(kind: ChangeKind, count: int) -> str:
    """'1 regression', '2 regressions', '1 tool change', '3 tool changes' (each a query with that change)."""
    one, many = _KIND_COUNTED[kind]
    return f"{count} {one if count == 1 else many}"


WHOLE_COUNTS = 100  # a mean count this large reads as a whole number: 556 → 555 tokens, not 555.20


def value(amount: float | None, unit: Unit) -> str:
    """A figure as the reports print it; counts as counts ('555', '1.5'), '?' when unknown."""
    if amount is None:
        return "?"
    if unit is Unit.USD:
        return usd(amount)
    if unit is Unit.MS:
        return milliseconds(amount)
    if unit is Unit.RATIO:
        return f"{amount:.2f}"
    if unit is Unit.PERCENT:
        return _percent(100 * amount)
    if float(amount).is_integer() or abs(amount) >= WHOLE_COUNTS:
        return f"{amount:,.0f}"
    return f"{amount:,.2f}".rstrip("0").rstrip(".")  # a mean of a few calls: 1.5, 2.33


def moved(delta: Delta, unit: Unit) -> bool:
    """The figure changed as printed: $0.0100 → $0.0100 is float noise, not a change."""
    return delta.change is not None and delta.change != 0 and value(delta.before, unit) != value(delta.after, unit)


def _percent(amount: float) -> str:
    return f"{abs(amount):.1f}".removesuffix(".0") + "%"


def change(delta: Delta, unit: Unit) -> str:
    """'▼ 100%', '▲ 0.91' (ratios), '▲ 12 pts' (rates), '▲ from 0' (from nothing), 'unchanged'.

    '' when a side is unknown.
    """
    if delta.change is None:
        return ""
    if not moved(delta, unit):
        return "unchanged"
    arrow = "▲" if delta.change > 0 else "▼"
    if unit is Unit.RATIO:
        return f"{arrow} {abs(delta.change):.2f}"
    if unit is Unit.PERCENT:
        return f"{arrow} {abs(100 * delta.change):.1f}".removesuffix(".0") + " pts"
    if delta.new:
        return f"{arrow} from {value(0, unit).replace('.0000', '')}"
    return f"{arrow} {_percent(delta.percent or 0.0)}"


def change_with_interval(delta: Delta, unit: Unit) -> str:
    """change() and, with repeated runs, the ratio's interval: '▲ 47.8%; ×1.01-×2.41'."""
    return "; ".join(note for note in (change(delta, unit), interval_text(delta, unit)) if note)


def before_after(delta: Delta, unit: Unit) -> str:
    """'11 → 0', or one value when both sides agree ('?' for an unknown figure)."""
    if not moved(delta, unit):
        return value(delta.after, unit)
    return f"{value(delta.before, unit)} → {value(delta.after, unit)}"


def figure(delta: Delta, unit: Unit, query: QueryDiff | None = None) -> str:
    """before_after, or only the side a new or removed query has."""
    if query is not None and query.has(ChangeKind.NEW_QUERY):
        return value(delta.after, unit)
    if query is not None and query.has(ChangeKind.REMOVED_QUERY):
        return value(delta.before, unit)
    return before_after(delta, unit)


def scores_text(diff: RunDiff) -> str:
    """'composite 0.86 → 0.99 (+15.1%) · pass rate 75% → 100% of runs (+33.3%)' of the whole runs, with their uplift."""
    parts = []
    for name, label, shown in (
        ("composite_score", "composite", "{:.2f}"),
        ("pass_rate", "pass rate", "{:.0%} of runs"),
    ):
        found = diff.uplift.get(name)
        if found is None or found.baseline is None or found.current is None:
            continue
        before, after = shown.format(found.baseline), shown.format(found.current)
        amount = found.uplift
        lift = "" if before == after or amount is None else f" ({'+' if amount >= 0 else '−'}{_percent(100 * amount)})"
        parts.append(
            f"{label} {after}" if before == after else f"{label} {before.removesuffix(' of runs')} → {after}{lift}"
        )
    return " · ".join(parts)


def queries_text(diff: RunDiff) -> str:
    """'6 queries (5 before, 5 after)', or '1 query' when both sides have the same."""
    before, after = diff.total.queries.before, diff.total.queries.after
    counts = "" if before == after else f" ({before:.0f} before, {after:.0f} after)"
    return plural(len(diff.queries), "query", "queries") + counts


def per_run(diff: RunDiff) -> bool:
    """Some query ran more than once: its figures, and so the totals, are means per run."""
    return any((q.runs.before or 0) > 1 or (q.runs.after or 0) > 1 for q in diff.queries)


def verdict(delta: Delta, unit: Unit, higher_is_better: bool = False) -> str:
    """'better' or 'worse' when the figure moved beyond its tolerance (ratios: by more than 0.01), else ''."""
    if not moved(delta, unit) or delta.change is None:
        return ""
    tolerance = LATENCY_TOLERANCE if unit is Unit.MS else COST_TOLERANCE
    beyond = abs(delta.change) > 0.01 if higher_is_better else delta.moved_beyond(tolerance)
    if not beyond:
        return ""
    return "better" if (delta.change > 0) == higher_is_better else "worse"


def tested(query: QueryDiff) -> bool:
    """The query's pass rate was compared by tests (repeated runs on either side): the reports show its verdict.

    With one run per side the status before → after already says it (the JSON's `method: one_run`, and JUnit, say how).
    """
    return query.pass_rate is not None and query.pass_rate.method == "exact"


def verdict_text(query: QueryDiff, diff: RunDiff) -> str:
    """The query's pass-rate verdict in words (raw: escape it); '' for a query on one side only (verdict_words)."""
    return verdict_words(query.pass_rate, diff.before, diff.significance) if query.pass_rate else ""


def suite_change_text(diff: RunDiff) -> str:
    """'−16.7 points per query (95% interval −70.4 to +37 over 8 queries)'.

    The suite's paired change in pass rate (each query's rate, the mean over the queries), its interval as
    compare.suite_change shows it; '' without one, or when no query was run more than once.
    """
    change = diff.total.pass_rate_change
    if change is None or not diff.repeated:
        return ""
    return f"{points(change.change)} points per query ({interval_words(change)})"


def one_sided_turn(turn: TurnDiff) -> str:
    """'Turn 1: new (the baseline has no turn 1)', 'Turn 3: not reached now (the baseline reached it)'.

    For a first diverged turn that one side does not have; '' when both have it.
    """
    if turn.status.before is None:
        return f"Turn {turn.turn}: new (the baseline has no turn {turn.turn})"
    if turn.status.after is None:
        return f"Turn {turn.turn}: not reached now (the baseline reached it)"
    return ""


def interval_text(delta: Delta, unit: Unit) -> str:
    """'×1.10-×1.58': a cost figure's bootstrap interval of after / before.

    '' without one or when the figure did not move as printed.
    """
    if delta.interval is None or not moved(delta, unit):
        return ""
    return f"×{delta.interval[0]:.2f}-×{delta.interval[1]:.2f}"


def unverified_notes(diff: RunDiff) -> list[str]:
    """'v1: 2 correctness checks skipped, not passed: <reason>' per side with unverified checks (raw: escape it)."""
    labels = {"before": diff.before, "after": diff.after}
    return [f"{labels[side]}: {unverified_note(reasons)}" for side, reasons in diff.unverified.items() if reasons]


def headline_kind(query: QueryDiff) -> ChangeKind | None:
    """The kind a reader should see first (kinds are kept in ChangeKind order), None when unchanged."""
    return min(query.kinds, key=list(ChangeKind).index, default=None)


def kinds_text(query: QueryDiff) -> str:
    """The query's kinds as a reader says them ('tools changed, cost changed'); 'unchanged' without any."""
    labels = (
        not_run_words(query).partition(" (")[0] if k is ChangeKind.NOT_RUN else KIND_LABELS[k] for k in query.kinds
    )
    return ", ".join(labels) or "unchanged"


NOT_RUN_WORDS = {
    "infrastructure": ("not run (infrastructure)", "Not run: the agent could not be run for infrastructure reasons"),
    "replay_miss": (
        "not evaluated (replay miss)",
        "Not evaluated: a model call's request is not in the recording (runner.replay), the run stopped there",
    ),
}


def not_run_words(query: QueryDiff) -> str:
    """'not run (infrastructure)' or 'not evaluated (replay miss)' for a query not run."""
    return NOT_RUN_WORDS[query.not_run or "infrastructure"][0]


def not_run_reason(query: QueryDiff) -> str:
    """Why a query not run has nothing to compare: 'Not run: the agent could not be run for infrastructure reasons'."""
    return NOT_RUN_WORDS[query.not_run or "infrastructure"][1]


_WORDS = re.compile(r"\s+|\S+")
SIMILAR_ENOUGH = 0.4  # below this share of words in common, a word diff is harder to read than the two answers


def word_chunks(before: str, after: str) -> list[list[str]] | None:
    """The word diff of two answers as chunks.

    [kept] or [removed, added] (either may be ''), changes apart only by whitespace joined; None when fewer than
    SIMILAR_ENOUGH of the words are shared (then show the answers side by side).
    """
    old, new = _WORDS.findall(before), _WORDS.findall(after)
    matcher = SequenceMatcher(None, old, new, autojunk=False)
    if matcher.ratio() < SIMILAR_ENOUGH:
        return None
    chunks: list[list[str]] = []  # [kept] or [removed, added]; changes apart only by whitespace become one
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        kept, removed, added = "".join(old[i1:i2]), "".join(old[i1:i2]), "".join(new[j1:j2])
        if op == "equal":
            chunks.append([kept])
        elif len(chunks) >= 2 and len(chunks[-2]) == 2 and not chunks[-1][0].strip():
            space = chunks.pop()[0]
            chunks[-1] = [chunks[-1][0] + space + removed, chunks[-1][1] + space + added]
        else:
            chunks.append([removed, added])
    return chunks


def word_diff(before: str, after: str) -> str | None:
    """git's plain word diff of two answers (word_chunks).

    Words in common as they are, removed ones in [-…-], added ones in {+…+}; None when they share too few words.
    """
    chunks = word_chunks(before, after)
    if chunks is None:
        return None
    return marked(chunks, str, lambda text: f"[-{text}-]", lambda text: f"{{+{text}+}}")


def marked(
    chunks: list[list[str]], kept: Callable[[str], str], removed: Callable[[str], str], added: Callable[[str], str]
) -> str:
    """word_chunks joined: each kept, removed and added run of words through its own markup (an empty side none)."""
    return "".join(
        kept(chunk[0])
        if len(chunk) == 1
        else (removed(chunk[0]) if chunk[0] else "") + (added(chunk[1]) if chunk[1] else "")
        for chunk in chunks
    )


def trimmed(text: str, limit: int) -> str:
    """`text` cut to `limit` characters with the count of what was cut: 'It costs… (+120 characters)'."""
    return text if len(text) <= limit else f"{text[:limit]}… (+{len(text) - limit} characters)"


def shows_answer(query: QueryDiff) -> bool:
    """The answers are worth showing: they changed, or the query regressed or was fixed."""
    if query.answer.before is None and query.answer.after is None:
        return False
    return any(query.has(k) for k in (ChangeKind.OUTPUT_CHANGED, ChangeKind.REGRESSION, ChangeKind.FIXED))


def models_text(before: list[str], after: list[str]) -> str:
    """'gpt-4o-mini → gpt-4.1', or '' when the models did not change (or a side named none)."""
    if not before or not after or before == after:
        return ""
    return f"{', '.join(before)} → {', '.join(after)}"


ROUTE_STEPS = 10  # steps of a route shown (around its first difference); the JSON has them all


def first_difference(before: Sequence[object], after: Sequence[object]) -> int | None:
    """The first position at which two routes differ (one ending counts); None when they are equal."""
    for position, (old, new) in enumerate(zip(before, after)):
        if old != new:
            return position
    return None if len(before) == len(after) else min(len(before), len(after))


def route_texts(before: Sequence[str], after: Sequence[str], steps: int = ROUTE_STEPS) -> tuple[str, str, int]:
    """Both routes as 'lookup_order → refund ×2 → …', and where the two texts first differ.

    A tool called several times in a row is shown once with its count, at most `steps` of those from a little before
    where they first differ ('… 4 calls → ' before, ' → … 3 more' after, cut alike on both sides), names inert; where
    they first differ is for a caret under it. 'no tool called' for an empty route.
    """
    old, new = _runs(before), _runs(after)
    index = first_difference(old, new) or 0
    start = max(0, index - 2) if max(len(old), len(new)) > steps else 0
    skipped = sum(count for _, count in old[:start])  # the same on both sides: they agree up to `index`
    lead = f"… {plural(skipped, 'call')} → " if start else ""

    def text(runs: list[tuple[str, int]]) -> str:
        shown = [
            one_line(tool, 60) + (f" ×{count}" if count > 1 else "") for tool, count in runs[start : start + steps]
        ]
        rest = sum(count for _, count in runs[start + steps :])
        return (lead + " → ".join(shown) + (f" → … {rest} more" if rest else "")) if runs else "no tool called"

    shown_before, shown_after = text(old), text(new)
    same = next((k for k, (a, b) in enumerate(zip(shown_before, shown_after)) if a != b), None)
    return shown_before, shown_after, min(len(shown_before), len(shown_after)) if same is None else same


def _runs(route: Sequence[str]) -> list[tuple[str, int]]:
    """[a, a, b] → [(a, 2), (b, 1)]."""
    return [(tool, len(list(repeats))) for tool, repeats in itertools.groupby(route)]


def route_changed(query: QueryDiff) -> bool:
    """The route shown changed (a tools change whose most frequent route differs, not only how often each ran)."""
    return query.has(ChangeKind.TOOLS_CHANGED) and query.path.route_before != query.path.route_after


def path_changed(query: QueryDiff) -> bool:
    """The route or the handoffs changed (the Path tier says so even when no figure of it moved)."""
    return query.has(ChangeKind.TOOLS_CHANGED) or query.has(ChangeKind.ROUTING_CHANGED)


def routing_text(query: QueryDiff) -> str:
    """'routing changed: TechnicalAgent ⇒ AccountAgent' (handoffs in order, names inert; raw: escape it)."""
    path = query.path

    def side(targets: list[str]) -> str:
        return " → ".join(one_line(target, 60) for target in targets) or "no handoff"

    return f"routing changed: {side(path.handoffs_before)} ⇒ {side(path.handoffs_after)}"


def correctness_reason(query: QueryDiff) -> str:
    """What changed the query's status: its first reason (`why`), else its verdict's kind; '' when it held."""
    if query.status.before == query.status.after:
        return ""
    if query.why:
        return query.why[0]
    return ", ".join(KIND_LABELS[k] for k in query.kinds if k in (ChangeKind.REGRESSION, ChangeKind.FIXED))


ARGUMENTS_SHOWN = 5  # changed arguments listed per query; the JSON has up to MAX_ARGUMENT_CHANGES


def argument_lines(query: QueryDiff) -> list[str]:
    """'refund (step 1 → 0): amount 20 → 200' for the first ARGUMENTS_SHOWN changed arguments.

    Then how many more. The lines are raw: escape them.
    """
    changes = query.path.argument_changes
    lines = [
        f"{c.tool} ({'step ' + str(c.step_after) if c.step_before == c.step_after else f'step {c.step_before} → {c.step_after}'}): "
        f"{c.key} {c.before} → {c.after}"
        for c in changes[:ARGUMENTS_SHOWN]
    ]
    if len(changes) > ARGUMENTS_SHOWN:
        lines.append(f"and {len(changes) - ARGUMENTS_SHOWN} more (the JSON has them)")
    return lines


def status_change(query: QueryDiff) -> str:
    """The query's status before → after as words: 'pass → fail', 'pass', 'pass → not run (infrastructure)'."""
    before, after = query.status.before, query.status.after
    if query.has(ChangeKind.NOT_RUN):
        return f"{before.value if before else '—'} → {not_run_words(query)}"
    if before is None or after is None or before == after:
        one = after or before
        return one.value if one else "—"
    return f"{before.value} → {after.value}"


def split_answers(query: QueryDiff) -> list[tuple[str, str, str]]:
    """("Passed now", "12 of 20 runs", <answer>) and ("Failed now", …) per side whose runs passed and failed.

    The most frequent passing answer beside the most frequent failing one, each with how many runs gave it (raw: escape
    it); [] for a side run once or whose runs all agreed.
    """
    found = []
    for side, split, runs in (
        ("before", query.answer.split_before, query.runs.before),
        ("now", query.answer.split_after, query.runs.after),
    ):
        if split is not None:
            found.append((f"Passed {side}", f"{split.passing_runs} of {runs} runs", split.passing))
            found.append((f"Failed {side}", f"{split.failing_runs} of {runs} runs", split.failing))
    return found


def why_heading(query: QueryDiff) -> str:
    """What a query's `why` lists, as its heading.

    'Why it failed before' (fixed), 'Why it fails now' only for a query failing now, 'Why it was not evaluated' (not
    run), else 'What failed in its runs' (a query that passed, some of its runs failing).
    """
    if query.has(ChangeKind.FIXED):
        return "Why it failed before"
    if query.has(ChangeKind.NOT_RUN):
        return "Why it was not " + ("evaluated" if query.not_run == "replay_miss" else "run")
    if query.status.after in (Status.FAIL, Status.ERROR):
        return "Why it fails now"
    return "What failed in its runs"


def same_answer_note(query: QueryDiff) -> str:
    """What an answer shown once (equal on both sides) means.

    With repeated runs whose answers changed, that the most frequent one held while others changed; otherwise that it
    did not change.
    """
    repeated = (query.runs.before or 0) > 1 or (query.runs.after or 0) > 1
    if repeated and query.has(ChangeKind.OUTPUT_CHANGED):
        return "the most frequent on both sides; other runs' answers changed"
    return "unchanged"
