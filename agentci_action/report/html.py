"""One self-contained HTML page (`agentci test --format html`, the action's `html-report`).

The summary, the diff against the baseline, every query with its answer beside the baseline's, its tool route, and the
cost and latency charts, for a reviewer to open from the workflow run's artifacts.

Self-contained: inline CSS and SVG, no script, font, image or link to anything outside the page, and a
Content-Security-Policy that forbids every fetch and script even so. Untrusted text (answers, queries, ids, check
messages, tool and model names, the agent's name, spec paths, warnings) goes through `esc` (html.escape, quotes
included) into element text only: never into an attribute, a URL, a style or a script. The figures are the console's
own lines (report/console.py) and the diff's (report/diff_format.py), so the page says what they say.
"""

from __future__ import annotations

import html
from itertools import groupby

from agentci_action._util.text import plural, unverified_note
from agentci_action.compare.diff_schema import ChangeKind, QueryDiff, RunDiff
from agentci_action.engine.conversation import failing_first, whole_layer
from agentci_action.engine.results import LAYERS, SEVERITY, LayerResult, QueryResult, RunResult, Status
from agentci_action.report import (
    baseline_phrases,
    console,
    diff_format,
    golden_phrases,
    recording_phrases,
    suite_phrases,
    token_phrases,
    trend_report,
)
from agentci_action.report.change_lists import ChangeList
from agentci_action.report.diff_markdown import charted
from agentci_action.report.markdown import Beside

ANSWER_LIMIT = 20_000  # characters of an answer shown; the results JSON has it in full
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src 'none'; base-uri 'none'; form-action 'none'"
STYLE = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0 auto;max-width:1200px;padding:16px 24px;
color:#1f2328;background:#fff}
h1{font-size:22px;margin:8px 0}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #d0d7de}
h3{font-size:15px;margin:0 0 6px}
table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #d0d7de;padding:3px 8px;text-align:left;
vertical-align:top}th{background:#f6f8fa}
.pass{color:#1a7f37}.warn{color:#9a6700}.fail,.error{color:#cf222e}.skip{color:#656d76}
.badge{font-weight:600;text-transform:uppercase}
.note{background:#fff8c5;border:1px solid #d4a72c;padding:6px 10px;margin:6px 0;border-radius:6px}
.query{border:1px solid #d0d7de;border-radius:6px;padding:10px 14px;margin:12px 0}
.query.fail,.query.error{border-left:5px solid #cf222e}.query.warn{border-left:5px solid #d4a72c}
.query.pass,.query.skip{border-left:5px solid #1a7f37}.query{color:inherit}
.where,.figures{color:#656d76;font-size:13px}
.answers{display:flex;gap:12px;flex-wrap:wrap}.answers>div{flex:1 1 400px;min-width:0}
pre{white-space:pre-wrap;word-break:break-word;background:#f6f8fa;border:1px solid #d0d7de;border-radius:6px;
padding:8px;margin:4px 0;font:12px/1.4 ui-monospace,SFMono-Regular,Menlo,monospace;max-height:480px;overflow:auto}
del{background:#ffebe9;color:#82071e}ins{background:#dafbe1;color:#116329;text-decoration:none}
.route code{background:#eaeef2;border-radius:4px;padding:0 4px;margin:0 2px}
svg text{font:11px system-ui,sans-serif;fill:#1f2328}
"""


def esc(text: object) -> str:
    """Untrusted text as HTML element text: &, <, >, " and ' as entities (lone surrogates become U+FFFD on writing)."""
    return html.escape(str(text), quote=True)


def _changes(section: ChangeList) -> str:
    """A list of what the PR changed, every entry (nothing when it changed none)."""
    if not section.entries:
        return ""
    items = "".join(f"<li>{esc(entry)}</li>" for entry in section.entries)
    return f"<h2>{esc(section.title)}</h2><p>{esc(section.counts())}</p><ul>{items}</ul>"


def _link(query_id: str, anchors: dict[str, str]) -> str:
    """The query's id linking to its section; the fragment is its position (digits), never text from a trace."""
    anchor = anchors.get(query_id)
    return f'<a href="#{anchor}">{esc(query_id)}</a>' if anchor else esc(query_id)


def _status(status: Status | None) -> str:
    """A status badge; the class is the enum's own value, never text from a trace."""
    if status is None:
        return '<span class="badge skip">—</span>'
    return f'<span class="badge {status.value}">{status.value}</span>'


def _summary(run: RunResult) -> str:
    s = run.summary
    lines = [console.render_total(run)]
    if run.results:
        lines.append(console.render_aggregates(run))
    judge = console.render_judge(run)
    if judge:
        lines.append(judge)
    if s.tokens is not None:
        lines.append(token_phrases.summary_line(s.tokens))
        lines += token_phrases.figures(s.tokens)
    if suite_phrases.adaptive(s):
        lines.append(suite_phrases.adaptive(s))
    notes = [
        *run.warnings,
        unverified_note(run.unverified()),
        baseline_phrases.no_baseline_note(run),
    ]
    return (
        f"<h1>AgentCI · {esc(run.agent)} {_status(s.status)}</h1>"
        f'<p class="where">{esc(run.spec)} · {plural(s.total, "query", "queries")} · fail-on: '
        f"{esc(', '.join(s.fail_on) or 'none')} · AgentCI {esc(run.agentci_version)}</p>"
        + "".join(f"<p>{esc(line)}</p>" for line in lines)
        + "".join(f'<p class="note">{esc(note)}</p>' for note in notes if note)
    )


def _delta_rows(
    source: object, metrics: tuple[diff_format.Metric, ...], query: QueryDiff | None = None, changed_only: bool = False
) -> str:
    rows = []
    for metric, delta in diff_format.rows(source, metrics, changed_only):
        change = diff_format.change_with_interval(delta, metric.unit)
        verdict = diff_format.verdict(delta, metric.unit, metric.higher_is_better)
        css = {"better": "pass", "worse": "warn"}.get(verdict, "")
        rows.append(
            f"<tr><td>{esc(metric.label)}</td><td>{esc(diff_format.figure(delta, metric.unit, query))}</td>"
            f'<td class="{css}">{esc(change or "—")}</td></tr>'
        )
    return "".join(rows)


def _tiers(change: QueryDiff, moved: bool) -> str:
    """A changed query's three tiers: Correctness (status before → after and what changed it), Path, Cost.

    Each tier that did not change says so in one line.
    """
    status = diff_format.status_change(change)
    reason = diff_format.correctness_reason(change)
    held = change.status.before == change.status.after
    parts = [
        f"<p>Correctness: {esc('unchanged (' + status + ')' if held else status)}{esc(': ' + reason) if reason else ''}</p>"
    ]
    if change.has(ChangeKind.NOT_RUN):
        return "".join(parts) + "<p>Path, Cost: nothing to compare, no run gave a trace</p>"
    for tier, source, metrics in (
        ("Path", change.path, diff_format.PATH_METRICS),
        ("Cost", change.cost, diff_format.COST_METRICS),
    ):
        rows = _delta_rows(source, metrics, change, moved)
        routing = tier == "Path" and change.has(ChangeKind.ROUTING_CHANGED)
        if routing:
            parts.append(f"<p>Path: {esc(diff_format.routing_text(change))}</p>")
        if rows:
            parts.append(f"<table><tr><th>{tier}</th><th>Before → after</th><th>Change</th></tr>{rows}</table>")
        elif not (tier == "Path" and diff_format.path_changed(change)):
            parts.append(f"<p>{tier}: unchanged</p>")
    return "".join(parts)


def _reason(query: QueryDiff, diff: RunDiff) -> str:
    """A changed query's one line: its verdict with repeated runs, else the first reason it fails (or failed)."""
    if diff_format.tested(query):
        return diff_format.verdict_text(query, diff)
    return query.why[0] if query.why else ""


def _diff(diff: RunDiff, anchors: dict[str, str]) -> str:
    t = diff.total
    kinds = [diff_format.kind_count(k, t.counts[k.value]) for k in ChangeKind if t.counts.get(k.value)]
    figures = [
        f"passed {diff_format.before_after(t.passed, diff_format.Unit.COUNT)} of {diff_format.before_after(t.queries, diff_format.Unit.COUNT)}"
    ]
    if diff_format.suite_change_text(diff):
        figures.append(f"pass rate change {diff_format.suite_change_text(diff)}")
    if diff_format.scores_text(diff):
        figures.append(diff_format.scores_text(diff))
    models = diff_format.models_text(t.models_before, t.models_after)
    if models:
        figures.append(f"models {models}")
    notes = [*diff.warnings, *diff_format.unverified_notes(diff)]
    unchanged = [q.id for q in diff.queries if not q.changed]
    changed = [q for q in diff.queries if q.changed]
    table = "".join(
        f"<tr><td>{_status(q.status.after if q.status.after is not None else q.status.before)}</td>"
        f"<td>{_link(q.id, anchors)}</td><td>{esc(diff_format.kinds_text(q))}</td>"
        f"<td>{esc(_reason(q, diff))}</td></tr>"
        for q in changed
    )
    per_run = " (figures are means per run, summed over the queries)" if diff_format.per_run(diff) else ""
    return (
        f"<h2>Against the baseline: {esc(diff.before)} → {esc(diff.after)}</h2>"
        f"<p>{esc(' · '.join([diff_format.queries_text(diff), *kinds, str(t.counts.get('unchanged', 0)) + ' unchanged']))}</p>"
        f"<p>{esc(' · '.join(figures) + per_run)}</p>"
        + "".join(f'<p class="note">{esc(note)}</p>' for note in notes)
        + "<table><tr><th>Total</th><th>Before → after</th><th>Change</th></tr>"
        + _delta_rows(t, diff_format.PATH_METRICS + diff_format.COST_METRICS)
        + _delta_rows(t.suite, diff_format.SUITE_METRICS)
        + "</table>"
        + (
            "<table><tr><th>Status</th><th>Changed query</th><th>Changes</th><th>Why</th></tr>" + table + "</table>"
            if changed
            else "<p>No query changed.</p>"
        )
        + (f"<p>Unchanged ({len(unchanged)}): {esc(', '.join(unchanged))}</p>" if unchanged else "")
        + _charts(diff)
    )


def _chart(diff: RunDiff, queries: list[QueryDiff], field: str, title: str, unit: diff_format.Unit) -> str:
    """Inline SVG: per query a bar for the baseline (grey) and one for the current run (blue), with their values."""
    picked = [(q, getattr(q.cost, field)) for q in queries if getattr(q.cost, field).change is not None]
    if not any(delta.change for _, delta in picked):
        return ""
    top = max(max(d.before or 0, d.after or 0) for _, d in picked) or 1
    row, label, width = 34, 180, 460
    bars = []
    for i, (query, delta) in enumerate(picked):
        y = 24 + i * row
        bars.append(f'<text x="0" y="{y + 14}">{esc(query.id[:28])}</text>')
        for j, (amount, colour) in enumerate(((delta.before, "#8c959f"), (delta.after, "#0969da"))):
            length = 0 if amount is None else max(1, round(width * amount / top))
            bars.append(
                f'<rect x="{label}" y="{y + j * 13}" width="{length}" height="11" fill="{colour}"/>'
                f'<text x="{label + length + 4}" y="{y + j * 13 + 10}">{esc(diff_format.value(amount, unit))}</text>'
            )
    height = 24 + len(picked) * row
    return (
        f'<figure><svg role="img" width="{label + width + 110}" height="{height}" '
        f'viewBox="0 0 {label + width + 110} {height}"><title>{esc(title)}</title>'
        f'<text x="0" y="12">{esc(title)}: {esc(diff.before)} (grey) vs {esc(diff.after)} (blue)</text>'
        + "".join(bars)
        + "</svg></figure>"
    )


def _charts(diff: RunDiff) -> str:
    queries = charted(diff)
    return "".join(
        _chart(diff, queries, field, title, unit)
        for field, title, unit in (
            ("cost_usd", "Cost per query", diff_format.Unit.USD),
            ("latency_ms", "Latency per query", diff_format.Unit.MS),
        )
    )


def _answer(title: str, text: str | None) -> str:
    if text is None:
        return ""
    return f"<div><h4>{esc(title)}</h4><pre>{esc(diff_format.trimmed(text, ANSWER_LIMIT))}</pre></div>"


def _word_diff(before: str, after: str) -> str:
    chunks = diff_format.word_chunks(before[:ANSWER_LIMIT], after[:ANSWER_LIMIT])
    if not chunks:
        return ""
    body = diff_format.marked(
        chunks, esc, lambda text: f"<del>{esc(text)}</del>", lambda text: f"<ins>{esc(text)}</ins>"
    )
    return f"<div><h4>Word diff (<del>removed</del> <ins>added</ins>)</h4><pre>{body}</pre></div>"


def _route(title: str, tools: list[str]) -> str:
    """The tools in order, a run of one tool called again and again as one step with its count (×11)."""
    steps = [(tool, len(list(repeats))) for tool, repeats in groupby(tools)]
    shown = (
        " → ".join(f"<code>{esc(tool)}</code>" + (f" ×{count}" if count > 1 else "") for tool, count in steps)
        or "no tool called"
    )
    return f'<p class="route">{esc(title)}: {shown}</p>'


def _layer_table(layers: list[tuple[str, LayerResult]]) -> str:
    """Each layer's status and findings, a finding of another status than its layer's marked with its own."""
    rows = "".join(
        f"<tr><td>{name}</td><td>{_status(layer.status)}</td><td>"
        + "<br>".join(
            f"{_status(f.status)} {esc(f.message)}" if f.status is not layer.status else esc(f.message)
            for f in layer.findings()
        )
        + "</td></tr>"
        for name, layer in layers
    )
    return f"<table><tr><th>Layer</th><th>Status</th><th>Messages</th></tr>{rows}</table>"


def _turns(result: QueryResult, change: QueryDiff | None) -> str:
    """A conversation's turns, the failing first.

    Each its status, line, message, answer and tools, its layers when it did not pass; then the first turn that differs
    from the baseline, its answers before and after.
    """
    parts = ['<div class="turns"><h4>Turns, failing first</h4>']
    for turn in failing_first(result.turns):
        parts.append(
            f"<h4>{_status(turn.status)} turn {turn.turn} · {esc(result.file)}:{turn.line}</h4>"
            f"<p>{esc(turn.user)}</p>" + _answer(f"Answer to turn {turn.turn}", turn.answer)
        )
        parts.append(_route(f"Tools in turn {turn.turn}", turn.tools))
        if turn.status in (Status.FAIL, Status.WARN, Status.ERROR):
            parts.append(_layer_table([(name, turn.layer(name)) for name in LAYERS]))
    diverged = change.first_diverged_turn if change is not None else None
    if diverged is not None:
        parts.append(
            f"<h4>First diverged at turn {diverged.turn} · {esc(result.file)}:{diverged.line}</h4>"
            f"<p>{esc(diverged.user)}</p>"
            + (f"<p>{esc(diff_format.one_sided_turn(diverged))}</p>" if diff_format.one_sided_turn(diverged) else "")
            + _answer(f"Turn {diverged.turn} before", diverged.answer.before)
            + _answer(f"Turn {diverged.turn} after", diverged.answer.after)
        )
    return "".join(parts) + "</div>"


def _query(result: QueryResult, change: QueryDiff | None, diff: RunDiff | None, anchor: str) -> str:
    own = whole_layer if result.turns else (lambda layer: layer)  # a conversation's turns are shown on their own
    layers = _layer_table([(name, own(result.layer(name))) for name in LAYERS])
    parts = [
        f'<section class="query {result.status.value}" id="{anchor}">',
        f"<h3>{_status(result.status)} {esc(result.id)}</h3>",
        f'<p class="where">{esc(result.file)}:{result.line}'
        + (f" · tags: {esc(', '.join(result.tags))}" if result.tags else "")
        + "</p>",
        f"<p>{esc(result.query)}</p>",
        layers,
        f'<p class="figures">{esc(console.figures_line(result))}</p>',
    ]
    if result.turns:
        parts.append(_turns(result, change))
    if result.runs > 1:
        parts.append(f'<p class="figures">{esc(console.reliability_line(result))}</p>')
    if result.tokens is not None:
        per_run = " per run" if result.runs > 1 else ""
        parts.append(f'<p class="figures">{esc(token_phrases.summary_line(result.tokens, per_run))}</p>')
    if change is not None and diff is not None:
        parts.append(f"<p>Against {esc(diff.before)}: {esc(diff_format.kinds_text(change))}</p>")
        verdict = diff_format.verdict_text(change, diff) if diff_format.tested(change) else ""
        if verdict:
            parts.append(f"<p>Pass rate: {esc(verdict)}</p>")
        if change.why:
            parts.append(
                f"<p>{diff_format.why_heading(change)}:</p><ul>"
                + "".join(f"<li>{esc(m)}</li>" for m in change.why)
                + "</ul>"
            )
        models = diff_format.models_text(change.models_before, change.models_after)
        if models:
            parts.append(f"<p>Models: {esc(models)}</p>")
        moved = not (change.has(ChangeKind.NEW_QUERY) or change.has(ChangeKind.REMOVED_QUERY))  # else its figures
        if change.changed:
            parts.append(_tiers(change, moved))
        split = diff_format.split_answers(change)
        if split:
            parts.append(
                "<p>The runs' answers (the most frequent that passed and that failed):</p><ul>"
                + "".join(f"<li>{esc(label)} ({esc(runs)}): {esc(text)}</li>" for label, runs, text in split)
                + "</ul>"
            )
        shifts = token_phrases.moved_lines(change.tokens)
        if shifts:
            parts.append(
                "<p>Where the input tokens moved:</p><ul>" + "".join(f"<li>{esc(m)}</li>" for m in shifts) + "</ul>"
            )
    before = change.answer.before if change is not None else None
    now = "now" if diff is None or diff.after == "current" else f"in {diff.after}"
    if change is not None and change.answer.before is not None:
        parts.append(_route(f"Tools in {diff.before if diff else 'the baseline'}", change.path.route_before))
    parts.append(_route(f"Tools {now}", result.tools))
    if change is not None and change.path.argument_changes:
        parts.append(
            "<p>Arguments changed:</p><ul>"
            + "".join(f"<li>{esc(line)}</li>" for line in diff_format.argument_lines(change))
            + "</ul>"
        )
    parts.append(
        '<div class="answers">'
        + _answer(f"Answer in {diff.before if diff else 'the baseline'}", before)
        + _answer(f"Answer {now}", result.answer)
        + (_word_diff(before, result.answer) if before is not None and before != result.answer else "")
        + "</div></section>"
    )
    return "".join(parts)


def render_html(run: RunResult, diff: RunDiff | None = None, beside: Beside | None = None) -> str:
    """The page: summary, what the PR changed, the diff, the trend on the default branch, then every query, worst first.

    What the PR changed (the golden queries, the recordings) when it changed any, every entry listed; the diff when
    there is a baseline, the trend when there is a history.
    """
    beside = beside or Beside()
    changes = {q.id: q for q in diff.queries} if diff else {}
    anchors = {r.id: f"q{i}" for i, r in enumerate(run.results)}
    ordered = sorted(run.results, key=lambda r: -SEVERITY[r.status])
    index = "".join(f"<li>{_status(r.status)} {_link(r.id, anchors)}</li>" for r in ordered)
    queries = "".join(_query(r, changes.get(r.id), diff, anchors[r.id]) for r in ordered)
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>AgentCI · {esc(run.agent)}</title><style>{STYLE}</style></head><body>"
        + _summary(run)
        + _changes(golden_phrases.section(beside.goldens))
        + _changes(recording_phrases.section(beside.recordings))
        + (_diff(diff, anchors) if diff else "")
        + (trend_report.html_section(beside.trend) if beside.trend is not None else "")
        + f"<h2>Queries ({len(run.results)})</h2><ul>{index}</ul>"
        + queries
        + "</body></html>\n"
    )
