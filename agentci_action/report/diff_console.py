"""The diff in a terminal: a box with the totals, then each changed query in three tiers, regressions first."""

from __future__ import annotations

import textwrap

from agentci_action._util.text import one_line
from agentci_action.compare.diff_schema import ChangeKind, CostDiff, Delta, PathDiff, QueryDiff, RunDiff, TotalDiff
from agentci_action.engine.results import Status
from agentci_action.report import diff_format, gate_phrases, token_phrases

WIDTH = 76  # characters inside the box
ROUTE_WIDTH = WIDTH - 21  # a route this short stays on one line, so a caret can point into it
ANSWER_LIMIT = 300  # characters of an answer shown (the JSON has it in full)
MAX_UNCHANGED_LINES = 6  # lines naming the unchanged queries (the JSON lists every one)
HEADS: dict[ChangeKind | None, str] = {  # None: a query without changes
    ChangeKind.REGRESSION: "✗ REGRESSION",
    ChangeKind.REMOVED_QUERY: "- REMOVED",
    ChangeKind.NEW_QUERY: "+ NEW",
    ChangeKind.FIXED: "✓ FIXED",
    ChangeKind.INCONCLUSIVE: "? INCONCLUSIVE",
}


def _boxed(text: str) -> str:
    return f"║ {one_line(text, WIDTH).ljust(WIDTH)} ║"


def _rule(left: str, right: str) -> str:
    return left + "═" * (WIDTH + 2) + right


def _status(status: Status | None) -> str:
    return "—" if status is None else status.value.upper()


def _metric_lines(
    source: PathDiff | CostDiff | TotalDiff | dict[str, Delta],
    metrics: tuple[diff_format.Metric, ...],
    query: QueryDiff | None = None,
    changed_only: bool = False,
) -> list[str]:
    lines = []
    for metric, delta in diff_format.rows(source, metrics, changed_only):
        change = diff_format.change_with_interval(delta, metric.unit)
        lines.append(
            f"    {metric.label:<16} {diff_format.figure(delta, metric.unit, query)}"
            + (f"  ({change})" if change else "")
        )
    return lines


def _status_lines(query: QueryDiff) -> list[str]:
    """The query's status before → after (or its one side), in words; nothing for a new or removed query without one."""
    before, after = query.status.before, query.status.after
    if (before is None or after is None) and (after or before) in (None, Status.SKIP):
        return []
    status, opening, note = diff_format.status_change(query).partition(" (")  # the note in brackets stays lower case
    text = status.upper() + opening + note
    unchanged = before is not None and after is not None and before == after
    return [f"  {'Correctness':<16} {'unchanged (' + text + ')' if unchanged else text}"]


def query_lines(query: QueryDiff, diff: RunDiff) -> list[str]:
    """One changed query.

    Its kinds, pass-rate verdict, status, why, answers, then the route and the path and cost figures that moved.
    """
    head = (
        "! " + diff_format.not_run_words(query).partition(" (")[0].upper()
        if query.has(ChangeKind.NOT_RUN)
        else HEADS.get(diff_format.headline_kind(query), "~ CHANGED")
    )
    verdict = diff_format.verdict_text(query, diff) if diff_format.tested(query) else ""
    lines = [
        f"{head}  {query.id}",
        f"  {diff_format.kinds_text(query)}",
        *([f"  {query.query}"] if query.query else []),
        *([f"  {query.file}:{query.line}"] if query.file else []),
        "",
        *(_wrapped("Pass rate", one_line(verdict)) if verdict else []),
        *_status_lines(query),
        *_why_lines(query),
    ]
    if query.has(ChangeKind.NOT_RUN):
        return lines
    lines += _turn_lines(query)
    lines += _answer_lines(query)
    for label, runs, text in diff_format.split_answers(query):
        lines += _wrapped(label, f"({runs}) " + one_line(diff_format.trimmed(text, ANSWER_LIMIT)), hanging=2)
    models = diff_format.models_text(query.models_before, query.models_after)
    if models:
        lines.append(f"  {'Model':<16} {models}")
    one_side = query.has(ChangeKind.NEW_QUERY) or query.has(ChangeKind.REMOVED_QUERY)  # its figures, not changes
    lines += _tier(
        "Path",
        _route_lines(query)
        + _metric_lines(query.path, diff_format.PATH_METRICS, query, not one_side)
        + _tool_lines(query),
    )
    lines += _tier("Cost", _metric_lines(query.cost, diff_format.COST_METRICS, query, not one_side))
    moved = token_phrases.moved_lines(query.tokens)
    if moved:
        lines += ["  Tokens", *(line for phrase in moved for line in _wrapped("", one_line(phrase, 400), hanging=2))]
    return lines


def _why_lines(query: QueryDiff) -> list[str]:
    """Why a query regressed, was fixed or was not run: the failing layers' messages, wrapped to the box.

    Why a regression (or an inconclusive query whose pass rate fell) fails now, or a fixed query failed before, or a
    query was not run.
    """
    if not query.why:
        return []
    passing = query.status.after not in (Status.FAIL, Status.ERROR)
    head = (
        "Was failing"
        if query.has(ChangeKind.FIXED)
        else ("Failing runs" if passing else "Failing now")
        if query.has(ChangeKind.INCONCLUSIVE)
        else "Why"
    )
    lines = []
    for k, message in enumerate(query.why[:5]):
        lines += _wrapped(head if k == 0 else "", one_line(message, 400), hanging=2)
    if len(query.why) > 5:
        lines.append(f"  {'':<16} and {len(query.why) - 5} more (the JSON has them)")
    return lines


def _turn_lines(query: QueryDiff) -> list[str]:
    """A conversation's first diverged turn.

    Its number, line and message, then its status, answer and route on each side that has it (a side without it is
    said in words).
    """
    turn = query.first_diverged_turn
    if turn is None:
        return []
    where = f" ({query.file}:{turn.line})" if query.file and turn.line else ""
    lines = _wrapped(
        "First diverged", one_line(f"turn {turn.turn}{where}: {diff_format.trimmed(turn.user, ANSWER_LIMIT)}")
    )
    if diff_format.one_sided_turn(turn):
        lines.append(f"  {diff_format.one_sided_turn(turn)}")
    for side, status, answer, route in (
        ("before", turn.status.before, turn.answer.before, turn.route_before),
        ("after", turn.status.after, turn.answer.after, turn.route_after),
    ):
        if status is None:
            continue
        said = diff_format.trimmed(answer or "", ANSWER_LIMIT)
        tools = f" · tools: {', '.join(route)}" if route else ""
        lines += _wrapped(f"  Turn {turn.turn} {side}", one_line(f"{_status(status)} · {said}{tools}"), hanging=2)
    return lines


def _route_lines(query: QueryDiff) -> list[str]:
    """The tool route before and after, with a caret under the first difference; the handoffs' change in one line.

    Then the changed arguments.
    """
    lines = []
    if diff_format.route_changed(query):
        before, after = query.path.route_before, query.path.route_after
        old, new, at = diff_format.route_texts(before, after, 6)
        lines += _wrapped("  Route before", old, hanging=2)
        lines += _wrapped("  Route after", new, hanging=2)
        if len(new) <= ROUTE_WIDTH:  # one line: the caret points at the step
            lines.append(f"    {'':<16} {' ' * at}^ step {diff_format.first_difference(before, after)}")
    if query.has(ChangeKind.ROUTING_CHANGED):
        lines += _wrapped("  Handoffs", diff_format.routing_text(query), hanging=2)
    for k, line in enumerate(diff_format.argument_lines(query)):
        lines += _wrapped("  Arguments" if k == 0 else "", line, hanging=2)
    return lines


def _answer_lines(query: QueryDiff) -> list[str]:
    """The answer before and after (trimmed; the JSON has them in full), and their word diff when they are alike."""
    if not diff_format.shows_answer(query):
        return []
    before, after = query.answer.before, query.answer.after
    if before == after and before is not None:
        return _wrapped(
            f"Answer ({diff_format.same_answer_note(query)})", one_line(diff_format.trimmed(before, ANSWER_LIMIT))
        )
    lines = []
    for label, text in (("Answer before", before), ("Answer after", after)):
        if text is not None:
            lines += _wrapped(label, one_line(diff_format.trimmed(text, ANSWER_LIMIT)))
    if after is None and query.status.after is not None:  # the query ran, but gave no trace
        lines += _wrapped("Answer after", "(none: the run gave no trace)")
    changes = (
        diff_format.word_diff(before, after) if before is not None and after is not None and before != after else None
    )
    if changes is not None:
        lines += _wrapped("Word diff", one_line(diff_format.trimmed(changes, ANSWER_LIMIT)))
    return lines


def _wrapped(label: str, text: str, hanging: int = 0) -> list[str]:
    """`label` in a 16-column gutter and `text` wrapped beside it to the box's width.

    Continuation lines are indented `hanging` more; a label longer than the gutter takes a line of its own.
    """
    gutter = 16 + len(label) - len(label.lstrip())
    lines = [f"  {label}"] if len(label) > gutter else []
    head = "" if lines else label
    width = WIDTH - 3 - gutter
    pieces = textwrap.wrap(text, width, subsequent_indent=" " * hanging, break_on_hyphens=False) or [""]
    return lines + [f"  {(head if k == 0 else ''):<{gutter}} {piece}" for k, piece in enumerate(pieces)]


def _tier(name: str, lines: list[str]) -> list[str]:
    return [f"  {name}", *lines] if lines else [f"  {name:<16} unchanged"]


def _tool_lines(query: QueryDiff) -> list[str]:
    lines = []
    if query.has(ChangeKind.TOOLS_CHANGED) and query.path.sequence_similarity is not None:
        lines.append(f"    {'Sequence sim.':<16} {query.path.sequence_similarity:.2f} (LCS, after vs before)")
    if diff_format.route_changed(query):  # the routes above show what was added and removed
        return lines
    if query.path.tools_added:
        lines += _wrapped("  Tools added", ", ".join(query.path.tools_added))
    if query.path.tools_removed:
        lines += _wrapped("  Tools removed", ", ".join(query.path.tools_removed))
    return lines


def total_lines(diff: RunDiff) -> list[str]:
    t = diff.total
    counts = [diff_format.kind_count(k, t.counts[k.value]) for k in ChangeKind if t.counts[k.value]]
    lines = [
        f"Total · {diff_format.queries_text(diff)} · {t.counts['changed']} changed · {t.counts['unchanged']} unchanged",
        *(textwrap.wrap(" · ".join(counts), WIDTH, initial_indent="  ", subsequent_indent="  ") or ["  no changes"]),
        "",
        f"  Passed           {diff_format.before_after(t.passed, diff_format.Unit.COUNT)} of {diff_format.before_after(t.queries, diff_format.Unit.COUNT)}",
    ]
    if diff_format.suite_change_text(diff):
        lines += _wrapped("Pass rate change", diff_format.suite_change_text(diff))
    if diff.uplift and diff_format.scores_text(diff):
        lines += _wrapped("Scores", diff_format.scores_text(diff))
    models = diff_format.models_text(t.models_before, t.models_after)
    if models:
        lines += _wrapped("Models", models)
    lines.append("  Path" + (" (means per run, summed over the queries)" if diff_format.per_run(diff) else ""))
    lines += _metric_lines(t, diff_format.PATH_METRICS)
    lines.append("  Cost")
    lines += _metric_lines(t, diff_format.COST_METRICS)
    suite = _metric_lines(t.suite, diff_format.SUITE_METRICS, changed_only=True)
    return lines + (["  Suite", *suite] if suite else [])


def unchanged_lines(ids: list[str]) -> list[str]:
    """'Unchanged (12): a, b, …' over at most MAX_UNCHANGED_LINES lines, never cutting a name; then how many more."""
    lines, line = [], f"Unchanged ({len(ids)}):"
    for k, name in enumerate(ids):
        piece = f" {name}" + ("," if k < len(ids) - 1 else "")
        if len(line) + len(piece) > WIDTH:
            lines.append(line)
            if len(lines) == MAX_UNCHANGED_LINES:
                return [*lines, f"  … and {len(ids) - k} more (the JSON lists every query)"]
            line = " "
        line += piece
    return [*lines, line]


def render_diff(diff: RunDiff) -> str:
    lines = [_rule("╔", "╗"), _boxed(f"AgentCI diff · {diff.agent} · {diff.before} → {diff.after}"), _rule("╠", "╣")]
    lines += [_boxed(line) for line in total_lines(diff)]
    for query in (q for q in diff.queries if q.changed):
        lines.append(_rule("╠", "╣"))
        lines += [_boxed(line) for line in query_lines(query, diff)]
    unchanged = [one_line(q.id, WIDTH - 4) for q in diff.queries if not q.changed]
    if unchanged:
        lines += [_rule("╠", "╣"), *map(_boxed, unchanged_lines(unchanged))]
    lines.append(_rule("╚", "╝"))
    lines += [f"warning: {one_line(w, 300)}" for w in diff.warnings]
    lines += [f"not verified: {one_line(note, 1500)}" for note in diff_format.unverified_notes(diff)]
    lines += [one_line(line, 400) for line in gate_phrases.console_lines(diff.gates)]
    return "\n".join(lines) + "\n"
