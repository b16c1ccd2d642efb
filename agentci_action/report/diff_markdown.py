"""The diff as markdown, for the job summary and the PR comment.

Order: a headline with the totals, warnings, a table of the changed queries (regressions first; a figure
that improved beyond the tolerance is marked ✅, one that got worse ⚠️), charts of cost and latency per
query, baseline against current, for the queries that changed most (mermaid `xychart-beta`, which GitHub
renders; at most MAX_CHART_QUERIES queries, so at most 30 bars over the two charts), then one collapsible
block of three-tier details per changed query.

Untrusted text (query ids and text, tool names, labels, warnings) goes through `inline`/`html_text`;
chart labels keep only [A-Za-z0-9._-], so nothing can close the mermaid block or inject a directive.
"""

from __future__ import annotations

import re
from decimal import Decimal

from agentci_action._util.text import code_block, fit, html_text, inline, one_line, plural, utf8_size
from agentci_action.compare.diff import change_size
from agentci_action.compare.diff_schema import ChangeKind, Delta, QueryDiff, RunDiff
from agentci_action.engine.results import Status
from agentci_action.report import diff_format, gate_phrases, token_phrases
from agentci_action.report.icons import ICONS

MAX_CHART_QUERIES = 15
MAX_QUERIES = 100  # changed queries listed in the table and the details; the JSON has all of them
KIND_ICONS: dict[ChangeKind | None, str] = {  # None: a query without changes
    ChangeKind.REGRESSION: "🔴",
    ChangeKind.NOT_RUN: "💥",
    ChangeKind.REMOVED_QUERY: "➖",
    ChangeKind.NEW_QUERY: "🆕",
    ChangeKind.FIXED: "🟢",
    ChangeKind.INCONCLUSIVE: "🟡",
}
MARKS = {"better": " ✅", "worse": " ⚠️", "": ""}
VERDICT_KINDS = (ChangeKind.REGRESSION, ChangeKind.FIXED, ChangeKind.INCONCLUSIVE)


def _icon(query: QueryDiff) -> str:
    return KIND_ICONS.get(diff_format.headline_kind(query), "🔶")


def _status(query: QueryDiff) -> str:
    """The query's status before → after, with icons: '✅ pass → ❌ fail', '✅ pass'."""
    before, after = query.status.before, query.status.after
    if query.has(ChangeKind.NOT_RUN):
        return f"{_icon_status(before)} → 💥 {diff_format.not_run_words(query)}"
    if before is None or after is None or before == after:
        return _icon_status(after or before)
    return f"{_icon_status(before)} → {_icon_status(after)}"


def _icon_status(status: Status | None) -> str:
    return "—" if status is None else f"{ICONS[status]} {status.value}"


WHY_SHOWN = 150  # characters of the first reason in the table's row


def _why(query: QueryDiff, limit: int = WHY_SHOWN) -> str:
    """The first failing message (inline, trimmed), and how many more."""
    if not query.why:
        return ""
    more = f" (+{len(query.why) - 1} more)" if len(query.why) > 1 else ""
    return inline(query.why[0], limit) + more


def _why_in_row(query: QueryDiff) -> bool:
    """The table's row gave every reason in full (one, short enough), so the fold need not repeat it."""
    return not diff_format.tested(query) and len(query.why) == 1 and len(one_line(query.why[0])) <= WHY_SHOWN


def _route_cell(query: QueryDiff) -> str:
    """'lookup\\_order → refund ⇒ refund → lookup\\_order' when the route changed, else its number of calls."""
    if diff_format.route_changed(query):
        before, after, _ = diff_format.route_texts(query.path.route_before, query.path.route_after, 6)
        return f"{inline(before, 300)} ⇒ {inline(after, 300)}"
    return _cell(query.path.tool_calls, diff_format.PATH_METRICS[0], query, ("call", "calls"))


def _cell(
    delta: Delta, metric: diff_format.Metric, query: QueryDiff | None = None, noun: tuple[str, str] | None = None
) -> str:
    """'2 → 3 (▲ 50% ⚠️)'; with `noun` (one, many), the figure's noun after it: '1 call', '2 → 3 calls (▲ 50% ⚠️)'.

    With repeated runs, a cost figure's interval follows its change.
    """
    change = diff_format.change_with_interval(delta, metric.unit)
    mark = MARKS[diff_format.verdict(delta, metric.unit, metric.higher_is_better)]
    figure = diff_format.figure(delta, metric.unit, query)
    if noun is not None:
        count = delta.after if delta.after is not None else delta.before
        figure += f" {noun[0] if count == 1 else noun[1]}"
    return figure + (f" ({change}{mark})" if change and change != "unchanged" else "")


def headline(diff: RunDiff) -> str:
    """Three short lines.

    What changed (counts by kind), the figures that decide (passed, cost, latency, models, scores), and the suite
    aggregates that moved.
    """
    t = diff.total
    regressions = t.counts[ChangeKind.REGRESSION.value]
    lead = f"🔴 **{diff_format.kind_count(ChangeKind.REGRESSION, regressions)}**" if regressions else "no regressions"
    others = [
        diff_format.kind_count(k, t.counts[k.value])
        for k in ChangeKind
        if k is not ChangeKind.REGRESSION and t.counts[k.value]
    ]
    changes = [diff_format.queries_text(diff), lead, *others, f"{t.counts['unchanged']} unchanged"]
    cost, latency = diff_format.COST_METRICS[0], diff_format.COST_METRICS[3]
    figures = [
        f"passed {diff_format.before_after(t.passed, diff_format.Unit.COUNT)} of {diff_format.before_after(t.queries, diff_format.Unit.COUNT)}",
        *(
            f"{name} {_cell(delta, metric)}"
            for name, delta, metric in (("cost", t.cost_usd, cost), ("latency", t.latency_ms, latency))
            if delta.before is not None or delta.after is not None
        ),
    ]
    models = diff_format.models_text(t.models_before, t.models_after)
    if models:
        figures.append(f"models {inline(models, 300)}")
    if diff_format.suite_change_text(diff):
        figures.append(f"pass rate change {diff_format.suite_change_text(diff)}")
    if diff.uplift and diff_format.scores_text(diff):
        figures.append(diff_format.scores_text(diff))
    suite = [
        f"{m.label.lower()} {_cell(d, m)}"
        for m, d in diff_format.rows(t.suite, diff_format.SUITE_METRICS, changed_only=True)
    ]
    per_run = " _(figures are means per run, summed over the queries)_" if diff_format.per_run(diff) else ""
    return (
        f"### AgentCI diff: {inline(diff.before, 80)} → {inline(diff.after, 80)}\n\n"
        f"Agent **{inline(diff.agent, 100)}** · "
        + " · ".join(changes)
        + "\n\n"
        + " · ".join(figures).capitalize()[:1]
        + " · ".join(figures)[1:]
        + per_run
        + "\n"
        + (f"\nSuite: {' · '.join(suite)}\n" if suite else "")
        + (f"\n{gate_phrases.markdown_line(diff.gates)}" if diff.gates else "")
    )


TABLE_HEAD = (
    "| | Query | Changes | Status | Route | Cost | Tokens | LLM calls | Latency |\n"
    "|---|---|---|---|---|---|---|---|---|\n"
)


def table_row(query: QueryDiff, diff: RunDiff, why: bool = True) -> str:
    """One changed query.

    After its status, its pass-rate verdict when repeated runs were compared, else with `why` its first failing reason
    (the comment, which lists every reason above the diff, leaves it out).
    """
    cost = query.cost
    cells = [_route_cell(query)] + [_cell(getattr(cost, m.field), m, query) for m in diff_format.COST_METRICS]
    if query.has(ChangeKind.NOT_RUN):  # no run now: no route or figures to compare
        cells = ["—"] * len(cells)
    reason = (
        inline(diff_format.verdict_text(query, diff), 300) if diff_format.tested(query) else _why(query) if why else ""
    )
    return (
        f"| {_icon(query)} | {inline(query.id, 120)} | {diff_format.kinds_text(query)} | "
        f"{_status(query)}{f': {reason}' if reason else ''} | " + " | ".join(cells) + " |\n"
    )


SUB_CENT = 0.01  # USD: a cost chart whose every figure is below it is folded


def _label(text: str) -> str:
    """Inert chart text: letters, digits, '.', '_' and '-' kept (never a quote, a fence or a directive), ≤ 24 characters."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", text)[:24] or "query"


def _quoted(text: str) -> str:
    """A mermaid quoted string, so an id such as `line-items` is not read as the `line` keyword."""
    return f'"{_label(text)}"'


def _number(amount: float) -> str:
    """Three significant digits as a plain decimal: 2e-05 → 0.00002, 0.0001234567 → 0.000123.

    Three digits is what a chart can show: no float noise such as 0.000123456789; a plain decimal as mermaid's grammar
    requires (it rejects exponents).
    """
    return format(Decimal(f"{amount:.3g}"), "f")


def charted(diff: RunDiff) -> list[QueryDiff]:
    """The queries on both sides whose cost and latency moved most, at most MAX_CHART_QUERIES.

    Moved: change_size, at least 1% (less is float noise); none when fewer than two moved.
    """
    both = [q for q in diff.queries if q.correctness.before is not None and q.correctness.after is not None]
    moved = sorted((q for q in both if change_size(q) >= 1), key=lambda q: (-change_size(q), q.id))
    return moved[:MAX_CHART_QUERIES] if len(moved) > 1 else []  # one bar is no chart: the table says it


def chart(diff: RunDiff, queries: list[QueryDiff], field: str, title: str, axis: str) -> str:
    """A mermaid chart of one cost figure: bars for the baseline, a line for the current run; '' when it did not move.

    A cost chart whose figures are all under SUB_CENT is folded into the details: no reviewer reads a $0.00002 bar.
    """
    picked = [q for q in queries if getattr(q.cost, field).change is not None]
    deltas = [getattr(q.cost, field) for q in picked]
    if not any(d.change for d in deltas):
        return ""
    drawn = (
        "```mermaid\nxychart-beta\n"
        f'    title "{title}: {_label(diff.before)} (bars) vs {_label(diff.after)} (line)"\n'
        f"    x-axis [{', '.join(_quoted(q.id) for q in picked)}]\n"
        f'    y-axis "{axis}"\n'
        f"    bar [{', '.join(_number(d.before) for d in deltas)}]\n"
        f"    line [{', '.join(_number(d.after) for d in deltas)}]\n```\n"
    )
    if field == "cost_usd" and max(max(d.before or 0, d.after or 0) for d in deltas) < SUB_CENT:
        return f"<details><summary>{title} (USD, each under a cent): the baseline's bars, this run's line</summary>\n\n{drawn}\n</details>\n"
    return drawn


def details_block(query: QueryDiff, diff: RunDiff, why: bool = True) -> str:
    """One changed query, collapsed.

    Its pass-rate verdict, its route and handoffs before → after (first difference marked, changed arguments listed),
    the figures that moved, the reasons (with `why`) and the answers.
    """
    verdict = diff_format.verdict_text(query, diff) if diff_format.tested(query) else ""
    lines = [
        f"<details><summary>{_icon(query)} {html_text(query.id)} — {diff_format.kinds_text(query)}</summary>\n\n",
        f"Query: {inline(query.query, 500)}"
        + (f" ({inline(f'{query.file}:{query.line}', 200)})" if query.file else "")
        + "\n\n",
        f"Pass rate: {inline(verdict, 600)}\n\n" if verdict else "",
    ]
    if query.has(ChangeKind.NOT_RUN):
        lines.append(
            f"{diff_format.not_run_reason(query)}, so there is nothing to compare.\n\n"
            + ("".join(f"- {inline(m, 600)}\n" for m in query.why[:10]) if why else "")
        )
        lines.append("\n</details>\n")
        return "".join(lines)
    lines.append(turn_block(query))
    lines.append(_routes(query))
    lines.append(
        "| Tier | Metric | Before → after | Change |\n|---|---|---|---|\n"
        f"| Correctness | status | {_status(query)} | {_correctness_change(query, why)} |\n"
    )
    models = diff_format.models_text(query.models_before, query.models_after)
    if models:
        lines.append(f"| Model | models | {inline(models, 300)} | model changed |\n")
    one_side = query.has(ChangeKind.NEW_QUERY) or query.has(ChangeKind.REMOVED_QUERY)  # its figures, not changes
    unchanged = []
    for tier, source, metrics in (
        ("Path", query.path, diff_format.PATH_METRICS),
        ("Cost", query.cost, diff_format.COST_METRICS),
    ):
        shown = diff_format.rows(source, metrics, changed_only=not one_side)
        if not shown and not (tier == "Path" and diff_format.path_changed(query)):
            unchanged.append(tier)
        for metric, delta in shown:
            change = diff_format.change_with_interval(delta, metric.unit)
            lines.append(
                f"| {tier} | {metric.label} | {diff_format.figure(delta, metric.unit, query)} | "
                f"{change or '—'}{MARKS[diff_format.verdict(delta, metric.unit, metric.higher_is_better)]} |\n"
            )
        if tier == "Path" and query.path.sequence_similarity is not None and query.has(ChangeKind.TOOLS_CHANGED):
            lines.append(f"| Path | Sequence similarity (LCS) | {query.path.sequence_similarity:.2f} | — |\n")
    if unchanged:  # a tier that did not change says so, in one line
        lines.append(f"| {', '.join(unchanged)} | — | unchanged | — |\n")
    notes = []
    routes = diff_format.route_changed(query)  # the routes above show what was added and removed
    if query.path.tools_added and not routes:
        notes.append("Tools added: " + ", ".join(inline(t, 80) for t in query.path.tools_added))
    if query.path.tools_removed and not routes:
        notes.append("Tools removed: " + ", ".join(inline(t, 80) for t in query.path.tools_removed))
    lines.append("".join(f"\n{note}\n" for note in notes))
    moved = token_phrases.moved_lines(query.tokens)
    if moved:
        lines.append("\n**Where the input tokens moved:**\n\n" + "".join(f"- {inline(m, 600)}\n" for m in moved))
    # with `why`, the table's row gave the first reason: the fold lists them when that was not all; without, the run's
    # report gave the reasons a failing query fails now, but why a fixed query failed before, or what failed in an
    # inconclusive query's runs, is said nowhere else
    if query.why and (
        not _why_in_row(query) if why else query.has(ChangeKind.FIXED) or query.has(ChangeKind.INCONCLUSIVE)
    ):
        lines.append(
            f"\n**{diff_format.why_heading(query)}:**\n\n" + "".join(f"- {inline(m, 600)}\n" for m in query.why[:10])
        )
    lines.append(answer_block(query))
    split = diff_format.split_answers(query)
    if split:
        lines.append(
            "\n**The runs' answers** (the most frequent that passed and that failed):\n\n"
            + "".join(f"- {label} ({runs}): {inline(text, ANSWER_LIMIT)}\n" for label, runs, text in split)
        )
    lines.append("\n</details>\n")
    return "".join(lines)


def _correctness_change(query: QueryDiff, why: bool) -> str:
    """The Correctness tier's change: the verdict's kind and the reason that changed the status, 'unchanged' when it held.

    Without `why` (the comment, whose table above gives every reason) the reason is not repeated.
    """
    if query.status.before == query.status.after:
        return "unchanged"
    kinds = ", ".join(diff_format.KIND_LABELS[k] for k in query.kinds if k in VERDICT_KINDS)
    reason = inline(diff_format.correctness_reason(query), WHY_SHOWN) if why else ""
    return ": ".join(part for part in (kinds, reason) if part) or "—"


def _routes(query: QueryDiff) -> str:
    """The tool route before and after in a code block, with a caret under the first difference; the handoffs' change.

    The code block makes the route inert; then the arguments that changed. '' when neither changed.
    """
    parts = []
    if diff_format.route_changed(query):
        before, after = query.path.route_before, query.path.route_after
        old, new, at = diff_format.route_texts(before, after)
        parts.append(
            f"**Tool calls** in order, first difference at step {diff_format.first_difference(before, after)}:\n\n"
            + code_block([f"before  {old}", f"after   {new}", " " * (8 + at) + "^"], "text")
            + "\n"
        )
    if query.has(ChangeKind.ROUTING_CHANGED):
        parts.append(f"**Handoffs:** {inline(diff_format.routing_text(query), 600)}\n\n")
    arguments = diff_format.argument_lines(query)
    if arguments:
        parts.append("**Arguments changed:**\n\n" + "".join(f"- {inline(line, 400)}\n" for line in arguments) + "\n")
    return "".join(parts)


ANSWER_LIMIT = 600  # characters of each answer shown; the JSON has them in full


def turn_block(query: QueryDiff) -> str:
    """A conversation's first diverged turn.

    Its number, line and message, its status on each side, and its answers before (-) and after (+) in an inert `diff`
    block; a turn one side does not have is said in words, and only the other side's answer shown. '' for a query that is no conversation.
    """
    turn = query.first_diverged_turn
    if turn is None:
        return ""
    where = f" ({inline(f'{query.file}:{turn.line}', 200)})" if query.file and turn.line else ""
    sides = [
        (sign, text, f"tools {side}:{pad} {', '.join(route) or '—'}")
        for sign, side, pad, status, text, route in (
            ("-", "before", "", turn.status.before, turn.answer.before, turn.route_before),
            ("+", "after", " ", turn.status.after, turn.answer.after, turn.route_after),
        )
        if status is not None
    ]
    lines = [
        f"{sign} {line}"
        for sign, text, _ in sides
        for line in diff_format.trimmed(text or "", ANSWER_LIMIT).splitlines() or [""]
    ]
    statuses = (
        diff_format.one_sided_turn(turn) or f"{_icon_status(turn.status.before)} → {_icon_status(turn.status.after)}"
    )
    return (
        f"**First diverged at turn {turn.turn}**{where}: {inline(turn.user, 300)} — {statuses}\n\n"
        + code_block(lines + [routes for _, _, routes in sides], "diff")
        + "\n"
    )


def answer_block(query: QueryDiff) -> str:
    """The answer before (-) and after (+) in a `diff` block, trimmed, then their word diff when they are alike.

    The word diff as [-removed-] {+added+}; both inert in fenced code blocks. '' when the answers are not worth showing.
    """
    if not diff_format.shows_answer(query):
        return ""
    before, after = query.answer.before, query.answer.after
    if before == after and before is not None:
        return f"\n**Answer** ({diff_format.same_answer_note(query)}):\n\n" + code_block(
            diff_format.trimmed(before, ANSWER_LIMIT).splitlines() or [""], "text"
        )
    lines = [
        f"{sign} {line}"
        for sign, text in (("-", before), ("+", after))
        if text is not None
        for line in diff_format.trimmed(text, ANSWER_LIMIT).splitlines() or [""]
    ]
    if after is None and query.status.after is not None:  # the query ran, but gave no trace
        lines.append("+ (no answer: the run gave no trace)")
    block = "\n**Answer** (`-` baseline, `+` now; the JSON has both in full):\n\n" + code_block(lines, "diff")
    changes = (
        diff_format.word_diff(before, after) if before is not None and after is not None and before != after else None
    )
    if changes is not None:
        block += "\nWord diff (`[-removed-]` `{+added+}`):\n\n" + code_block(
            diff_format.trimmed(changes, 2 * ANSWER_LIMIT).splitlines(), "text"
        )
    return block


LEFT_OUT = (
    "_The diff against the baseline did not fit here; the JSON report has it (the results file's `diff`; the same "
    "command with `--format json`)._\n"
)
_CUT_NOTE_RESERVE = 400  # room kept for the note on what was cut


def render_markdown(
    diff: RunDiff, budget: int | None = None, why: bool = True, queries_shown: int = MAX_QUERIES
) -> str:
    """Headline, warnings, changed-query table, charts, collapsible details; unchanged queries named in one line.

    At most `queries_shown` changed queries are listed; with `why` False the failing reasons are left out (the run's
    report above the diff already gives each once).

    With `budget` (UTF-8 bytes, e.g. what is left of a PR comment) the result never exceeds it: the headline,
    then table rows, warnings, the unchanged line (else its count), charts and detail blocks are kept in that
    order of priority while they fit, and a note says what was left out; when not even the headline fits,
    LEFT_OUT alone (or nothing, below its size).
    """
    changed = [q for q in diff.queries if q.changed]
    shown = changed[:queries_shown]
    head = headline(diff) + "\n"
    rows = [table_row(q, diff, why) for q in shown]
    warnings = [f"> ⚠️ {inline(w, 500)}\n>\n" for w in diff.warnings[:20]] + [
        f"> {ICONS[Status.SKIP]} not verified · {inline(note, 1500)}\n>\n"
        for note in diff_format.unverified_notes(diff)
    ]
    unchanged = [q.id for q in diff.queries if not q.changed]
    names = ", ".join(inline(name, 80) for name in unchanged[:50]) + (
        f" and {len(unchanged) - 50} more" if len(unchanged) > 50 else ""
    )
    unchanged_line = [f"Unchanged: {names}\n\n"] if unchanged else []
    queries = charted(diff)
    charts = [
        drawn + "\n"
        for field, title, axis in (("cost_usd", "Cost per query", "USD"), ("latency_ms", "Latency per query", "ms"))
        if (drawn := chart(diff, queries, field, title, axis))
    ]
    blocks = [details_block(q, diff, why) for q in shown]
    all_charts, all_warnings = len(charts), len(warnings)
    if budget is not None:
        used = utf8_size(head) + len(TABLE_HEAD) + 1 + _CUT_NOTE_RESERVE
        if used > budget:
            return LEFT_OUT if utf8_size(LEFT_OUT) <= budget else ""
        rows, used = fit(rows, used, budget)
        warnings, used = fit(warnings, used + 1, budget)
        kept, used = fit(unchanged_line, used, budget)
        if unchanged_line and not kept:
            kept, used = fit([f"Unchanged: {plural(len(unchanged), 'query', 'queries')}\n\n"], used, budget)
        unchanged_line = kept
        charts, used = fit(charts, used, budget)
        blocks, used = fit(blocks, used, budget)
    cuts = []
    if len(changed) > len(rows):
        cuts.append(
            f"{len(changed) - len(rows)} more changed {'query is' if len(changed) - len(rows) == 1 else 'queries are'} not in the table"
        )
    if len(blocks) < len(rows):
        cuts.append(f"the details of {len(rows) - len(blocks)} are left out")
    if len(warnings) < all_warnings:
        cuts.append(f"{all_warnings - len(warnings)} of {all_warnings} warnings")
    if len(charts) < all_charts:
        cuts.append(f"{all_charts - len(charts)} of {all_charts} charts")
    note = (
        f"_Cut to fit: {'; '.join(cuts)} (the JSON report has everything: the results file, or `--format json`)._\n\n"
        if cuts
        else ""
    )
    table = [TABLE_HEAD, *rows, "\n"] if rows else []
    return "".join([head, *warnings, "\n" if warnings else "", *table, note, *unchanged_line, *charts, *blocks])
