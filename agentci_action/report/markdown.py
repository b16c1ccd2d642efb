"""The job summary and the PR comment.

One pure renderer, three tiers (headline, table, details), within a budget; the diff against the baseline
(report/diff_markdown.py) sits between the table and the details.

Untrusted text (query ids and text, check messages) goes through `inline()`: one line, HTML special characters as
entities, markdown punctuation backslash-escaped, `@` and `#` broken with a zero-width space so nothing becomes a
mention, a link, a table break, a tag or a copy of the hidden marker.
Budgets are UTF-8 bytes (never fewer than characters): 1 MiB for a step summary, ~60,000 for a comment.
"""

from __future__ import annotations

import hashlib
import posixpath
import re
from collections.abc import Sequence
from dataclasses import dataclass

from agentci_action._util.text import (
    fit,
    inline,
    plural,
    unverified_note,
    usd,
    utf8_size,
)
from agentci_action.compare.diff_schema import RunDiff
from agentci_action.compare.golden_changes import GoldenChange
from agentci_action.compare.history import Trend
from agentci_action.compare.recording_changes import RecordingChange
from agentci_action.engine.conversation import failing_first
from agentci_action.engine.results import LAYERS, SEVERITY, LayerResult, QueryResult, RunResult, Status
from agentci_action.report import (
    baseline_phrases,
    finding_phrases,
    gate_phrases,
    golden_phrases,
    recording_phrases,
    replay_phrases,
    suite_phrases,
    token_phrases,
    trend_report,
    user_phrases,
)
from agentci_action.report.diff_markdown import LEFT_OUT, render_markdown
from agentci_action.report.icons import ICONS

SUMMARY_BUDGET = 1_000_000  # GitHub's limit is 1 MiB per step
COMMENT_BUDGET = 60_000  # GitHub's limit is 65,536 characters
COMMENT_ROWS = 50  # queries in the comment's folded table of every query (the job summary lists all)
DIFF_ROWS = 30  # changed queries in the diff of the summary and the comment (the JSON has all)

_NOTE_RESERVE = 400  # room kept for the "what was cut" note


def marker(header: str) -> str:
    """The hidden line that identifies our sticky comment for one comment-header."""
    return f"<!-- agentci-comment: {header_slug(header)} -->"


def header_slug(header: str) -> str:
    """comment-header reduced to [a-z0-9._] words joined by single hyphens, so it can never close the HTML comment.

    When that is not the header itself, '-' + the first 8 hex digits of the header's SHA-256 follow, so headers that
    reduce alike ('RAG' and 'rag', 'a b' and 'a-b', any two all-non-ASCII ones) keep separate comments; a header with no
    such word at all reads 'default-<hash>'.
    """
    slug = re.sub(r"[^a-z0-9._]+", "-", header.lower()).strip("-")
    if slug and slug == header:
        return slug
    return f"{slug or 'default'}-{hashlib.sha256(header.encode()).hexdigest()[:8]}"


DEFAULT_HEADER = "agentci"


def title_for(header: str) -> str:
    """'AgentCI', or 'AgentCI · <header>' when a matrix gives each evaluation its own comment-header."""
    return "AgentCI" if header in ("", DEFAULT_HEADER) else f"AgentCI · {header}"


@dataclass(frozen=True)
class Links:
    """Where links point: the spec at the evaluated commit and the workflow run (both optional)."""

    blob_url: str | None = None
    run_url: str | None = None
    sha: str | None = None
    report_url: str | None = None  # the workflow run's artifacts, where the HTML report is uploaded


def _money(value: float | None) -> str:
    return "?" if value is None else usd(value)


def headline(run: RunResult, title: str = "AgentCI") -> str:
    s = run.summary
    if s.status is Status.ERROR:
        verdict = f"{s.errors} of {s.total} {_plural(s.total, 'query', 'queries')} could not be evaluated"
    elif s.status is Status.FAIL and not s.failed:  # every query passed; a suite gate did not
        verdict = inline(gate_phrases.verdict(run.gates), 600)
    elif s.status is Status.FAIL:
        verdict = f"{s.failed} of {s.total} {_plural(s.total, 'query', 'queries')} failed"
        if not any(r.blocking for r in run.results):  # the job passes: say so where the reader looks first
            verdict += f" (not blocking: fail-on {inline(', '.join(s.fail_on) or 'none')})"
        if gate_phrases.failed(run.gates):
            verdict += f"; {inline(gate_phrases.verdict(run.gates), 600)}"
    elif s.status is Status.WARN:
        verdict = f"all {s.total} passed, {s.warnings} with {_plural(s.warnings, 'a warning', 'warnings')}"
    else:
        verdict = f"all {s.total} {_plural(s.total, 'query', 'queries')} passed"
    counts = (
        f"{s.total} {_plural(s.total, 'query', 'queries')} · {s.passed} passed · {s.failed} failed · "
        f"{s.warnings} {_plural(s.warnings, 'warning', 'warnings')} · {s.errors} errors · cost {_money(s.cost_usd)}"
        f"{f' ({s.cost_unknown} unknown)' if s.cost_unknown else ''} · fail-on: {inline(', '.join(s.fail_on) or 'none')}"
    )
    if s.runs > s.total:  # repeated runs
        counts += (
            f"\n\n{s.runs} runs · pass rate {s.pass_rate:.0%} of runs · {s.flaky} flaky · "
            f"composite {s.composite_score:.2f} (grade {inline(s.grade)})"
        )
    if suite_phrases.adaptive(s):
        counts += f"\n\n{suite_phrases.adaptive(s)[:1].upper()}{suite_phrases.adaptive(s)[1:]}"
    if s.model_calls is not None:
        calls = replay_phrases.model_calls(s.model_calls)
        counts += f"\n\nModel calls (replay): {calls} _({replay_phrases.COST_NOTE})_"
    figures = suite_phrases.phrases(s.aggregates)
    suite = f"\nSuite: {' · '.join(figures)}\n" if figures else ""
    unverified = run.unverified()
    skipped_count = sum(unverified.values())
    if skipped_count and s.status in (Status.PASS, Status.WARN):
        verdict += f", {skipped_count} {_plural(skipped_count, 'check', 'checks')} not verified"
    skipped = f"\n{ICONS[Status.SKIP]} {inline(unverified_note(unverified), 1500)}\n" if unverified else ""
    no_baseline = baseline_phrases.no_baseline_note(run)
    if no_baseline:
        skipped += f"\n{ICONS[Status.SKIP]} {_with_commands(no_baseline[:1].upper() + no_baseline[1:])}\n"
    gate_line = gate_phrases.markdown_line(run.gates)
    return (
        f"## {ICONS[s.status]} {inline(title, 100)}: {verdict}\n\nAgent **{inline(run.agent, 100)}** · {counts}\n"
        f"{skipped}{suite}{f'{chr(10)}{gate_line}' if gate_line else ''}"
    )


def _with_commands(note: str) -> str:
    """A note of ours whose `backticked` parts are commands.

    Those as code spans (the split leaves no backtick in them), the rest escaped as inline text.
    """
    return "".join(f"`{part}`" if i % 2 else inline(part, 1500) for i, part in enumerate(note.split("`")))


def _plural(n: float, one: str, many: str) -> str:
    return one if n == 1 else many


def _count(value: float) -> str:
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.1f}"


def path_figures(query: QueryResult) -> str:
    """'5 calls · sim 0.80 vs baseline · 1 loop': the query's figures, means per run for repeated runs (so marked)."""
    calls, similarity = query.figure("tool_calls") or 0, query.figure("sequence_similarity")
    recall, loops = query.figure("tool_recall"), query.figure("loops_detected")
    parts = [f"{_count(calls)} {_plural(calls, 'call', 'calls')}"]
    if similarity is not None:
        parts.append(f"sim {similarity:.2f} vs {inline(query.path.details.get('reference', 'reference'), 80)}")
    if recall is not None:
        parts.append(f"recall {recall:.2f}")
    if loops:
        parts.append(f"{_count(loops)} {_plural(loops, 'loop', 'loops')}")
    return ("mean " if query.runs > 1 else "") + " · ".join(parts)


def cost_figures(query: QueryResult) -> str:
    """'$0.0040 · ×1.20 vs baseline · 1,234 tok'.

    The query's figures, means per run for repeated runs (so marked); under replay, then how its model calls were
    answered over all its runs ('model calls 2 replayed · 0 live · …').
    """
    cost, multiplier, tokens = (query.figure(name) for name in ("cost_usd", "cost_multiplier", "total_tokens"))
    parts = [_money(cost)]
    if multiplier is not None:
        parts.append(f"×{multiplier:.2f} vs baseline")
    if tokens is not None:
        parts.append(f"{tokens:,.0f} tok")
    figures = ("mean " if query.runs > 1 else "") + " · ".join(parts)
    if query.model_calls is not None:
        figures += f" · model calls {replay_phrases.model_calls(query.model_calls)}"
    return figures


def _cell(layer: LayerResult, figures: str = "") -> str:
    return f"{ICONS[layer.status]} {layer.status.value}" + (f" · {figures}" if figures else "")


def _where(query: QueryResult, links: Links, line: int | None = None) -> str:
    """The spec's file and line (the query's, or `line`), linked to that line at the evaluated commit.

    Linked when the path stays in the repository.
    """
    line = line or query.line
    place = inline(f"{query.file}:{line}", 200)
    path = in_repository(query.file)
    if links.blob_url and path is not None:
        return f"[{place}]({links.blob_url}/{_url_path(path)}#L{line})"
    return place


def in_repository(file: str) -> str | None:
    """`file` as a path inside the repository ('./a/../b.yaml' → 'b.yaml').

    None when it is absolute or climbs out of it, or holds a backslash: a results file may be forged, and a link must
    never open another repository.
    """
    if not file or file.startswith("/") or "\\" in file:
        return None
    path = posixpath.normpath(file)
    return None if path in (".", "..") or path.startswith("../") else path


def _url_path(path: str) -> str:
    return re.sub(r"[^A-Za-z0-9._~/-]", lambda m: "".join(f"%{b:02X}" for b in m.group().encode()), path)


def run_figures(query: QueryResult) -> str:
    """'3/5 runs · flaky' for a query run several times ('3/5 of up to 20 runs' with adaptive runs); '' for one run."""
    rel = query.reliability
    if rel.runs < 2:
        return ""
    runs = f"{rel.passed}/{rel.runs}" + (f" of up to {rel.max_runs}" if rel.max_runs else "")
    return f"{runs} runs" + (" · flaky" if rel.flaky else "")


def table_row(query: QueryResult, links: Links) -> str:
    return (
        f"| {ICONS[query.status]} | {inline(query.id, 120)} | {_where(query, links)} | {_cell(query.correctness, run_figures(query))} | "
        f"{_cell(query.path, path_figures(query))} | {_cell(query.cost, cost_figures(query))} |\n"
    )


TABLE_HEAD = "| | Query | Spec | Correctness | Path | Cost |\n|---|---|---|---|---|---|\n"


FINDINGS_SHOWN = 6  # findings of one query in the table; the results file has every one


_REPORTED = (Status.FAIL, Status.WARN, Status.ERROR)


def finding_lines(query: QueryResult) -> str:
    """Every finding of the query's layers that did not pass, then the model calls that went live.

    The most severe first, each with its own status and layer, `<br>`-joined: a warning beside a failure reads as a
    warning.
    """
    found = sorted(
        (
            (finding, name)
            for name in LAYERS
            if query.layer(name).status in _REPORTED
            for finding in finding_phrases.said(query.layer(name))
            if finding.status is not Status.PASS
        ),
        key=lambda item: -SEVERITY[item[0].status],
    )
    shown = [f"{ICONS[finding.status]} **{name}**: {inline(finding.message, 1000)}" for finding, name in found]
    shown += [
        f"**replay**: went live: {inline(note, 1000)}"
        for note in (query.model_calls.went_live if query.model_calls else [])
    ]
    more = len(shown) - FINDINGS_SHOWN
    return "<br>".join(shown[:FINDINGS_SHOWN]) + (f"<br>… {more} more (the results file has them)" if more > 0 else "")


def finding_row(query: QueryResult, links: Links) -> str:
    """A failing or warning query: its id and text, its line in the spec, and why.

    A conversation whose turn did not pass is shown at its worst turn (the first of them): that turn's number, message
    and line.
    """
    worst = failing_first(query.turns)[0] if query.turns else None
    said, line = inline(query.query, 160), query.line
    if worst is not None and worst.status in _REPORTED:
        said, line = f"turn {worst.turn} of {len(query.turns)}: {inline(worst.user, 160)}", worst.line
    return (
        f"| {ICONS[query.status]} | {inline(query.id, 120)}<br><sub>{said}</sub> | "
        f"{_where(query, links, line)} | {finding_lines(query)} |\n"
    )


FINDINGS_HEAD = "| | Query | Spec | Why |\n|---|---|---|---|\n"


def _severity(query: QueryResult) -> int:
    return -SEVERITY[query.status]


def content_digest(run: RunResult, diff: RunDiff | None = None, beside: Beside | None = None) -> str:
    """A short hash of what the comment says about the results (not when or where it ran), for comment-mode 'changes'."""
    return hashlib.sha256(
        render_body(run, "", Links(), _Room(COMMENT_BUDGET, COMMENT_ROWS), diff, beside).encode(
            "utf-8", "surrogatepass"
        )
    ).hexdigest()[:16]


@dataclass(frozen=True)
class _Room:
    """How much of the report body fits: `budget` bytes, and at most `rows` rows of the folded table (None: all)."""

    budget: int
    rows: int | None = None


@dataclass(frozen=True)
class Beside:
    """What the body keeps with its headline: the trend on the default branch, and what the PR changed.

    What the PR changed: the golden queries of the spec and the runner's recordings, against its base commit.
    """

    trend: Trend | None = None
    recordings: Sequence[RecordingChange] = ()
    goldens: Sequence[GoldenChange] = ()


def render_body(
    run: RunResult, title: str, links: Links, room: _Room, diff: RunDiff | None = None, beside: Beside | None = None
) -> str:
    """The markdown report's body, its parts in order of priority, cut to `room.budget` bytes in that order.

    Headline; the failing and warning queries, worst first, each with every reason once; the diff against the baseline
    (routes, answers and figures; not the reasons again); the trend on the default branch, the golden queries and the
    recordings the PR changed (`beside`: a few lines each, kept with the headline); then every query's layers and
    figures, folded (at most `room.rows` rows).
    """
    budget, rows_shown = room.budget, room.rows
    head = headline(run, title or "AgentCI") + "\n"
    beside = beside or Beside()
    trend_text = (
        (trend_report.markdown(beside.trend) if beside.trend is not None else "")
        + golden_phrases.markdown_section(beside.goldens)
        + recording_phrases.markdown_section(beside.recordings)
    )
    if run.summary.tokens is not None:
        head += f"_{inline(token_phrases.summary_line(run.summary.tokens).capitalize(), 1000)}_\n\n"
        head += (
            "<details><summary>Token figures</summary>\n\n"
            + "".join(f"- {inline(line, 300)}\n" for line in token_phrases.figures(run.summary.tokens))
            + "\n</details>\n\n"
        )
    ordered = sorted(run.results, key=_severity)
    findings = [finding_row(q, links) for q in ordered if q.status is not Status.PASS]
    rows = [table_row(q, links) for q in ordered[:rows_shown]]
    notes = "".join(f"> {inline(w, 500)}\n>\n" for w in run.warnings[:20])
    fold_head, fold_tail = (
        f"<details><summary>{_all_queries(len(run.results))}</summary>\n\n{TABLE_HEAD}",
        "\n</details>\n",
    )
    used = (
        utf8_size(head)
        + utf8_size(trend_text)
        + utf8_size(notes)
        + _NOTE_RESERVE
        + (utf8_size(FINDINGS_HEAD) + 1 if findings else 0)
    )
    floor = utf8_size(LEFT_OUT) + 1 if diff is not None else 0  # the diff gets at least room to say it did not fit
    kept_findings, used = fit(findings, used + floor, budget)
    changes = ""
    if diff is not None:  # within what is left: cut by render_markdown, and never beyond it
        changes = "\n" + render_markdown(diff, budget=budget - (used - floor) - 1, why=False, queries_shown=DIFF_ROWS)
        used += utf8_size(changes) - floor
    unlisted = len(ordered) - len(rows)  # beyond rows_shown: said inside the fold
    more = (
        f"\n_{plural(unlisted, 'more query', 'more queries')}: the job summary and the results file list every one._\n"
    )
    kept_rows, used = fit(rows, used + utf8_size(fold_head + fold_tail + more) + 1, budget)
    body = head + (notes + "\n" if notes else "")
    if kept_findings:
        body += FINDINGS_HEAD + "".join(kept_findings)
    body += changes + trend_text
    if kept_rows:
        body += ("" if body.endswith("\n\n") else "\n") + fold_head + "".join(kept_rows) + (more if unlisted else "")
        body += fold_tail
    cut_findings, cut_rows = len(findings) - len(kept_findings), len(rows) - len(kept_rows)
    if cut_findings or cut_rows:
        body += (
            f"\n_Cut to fit GitHub's size limit: {cut_findings} failing or warning "
            f"{_plural(cut_findings, 'query', 'queries')} and {cut_rows} table {_plural(cut_rows, 'row', 'rows')} "
            "left out (the least severe). The results file has everything._\n"
        )
    return body


def _all_queries(count: int) -> str:
    """'All 4 queries, layer by layer' (the fold's summary line)."""
    return f"{'All ' if count > 1 else ''}{plural(count, 'query', 'queries')}, layer by layer"


def _footer(run: RunResult, links: Links) -> str:
    """The release that judged the run, the commit and the workflow run."""
    bits = [f"AgentCI {inline(run.agentci_version, 40)}"]  # a results file from a fork PR is untrusted
    if links.sha:
        bits.append(f"commit {links.sha[:7]}")
    if links.run_url:
        bits.append(f"[workflow run]({links.run_url})")
    if links.report_url:
        bits.append(f"[HTML report in the artifacts]({links.report_url})")
    return f"\n<sub>{' · '.join(bits)}</sub>\n"


def judge_spend(run: RunResult) -> str:
    """The LLM judge's own spend, apart from the agent's cost ('' when no verdict was asked for or cached).

    Only in the job summary: in the comment, a cached rerun (0 requests) would count as a change.
    """
    j = run.summary.judge
    if not (j.requests or j.cache_hits):
        return ""
    unknown = f" (+{j.cost_unknown} of unknown price)" if j.cost_unknown else ""
    return (
        f"\n_LLM judge, not in the agent's cost: {j.requests} {_plural(j.requests, 'request', 'requests')} · "
        f"{j.cache_hits} cached {_plural(j.cache_hits, 'verdict', 'verdicts')} · "
        f"{j.input_tokens + j.output_tokens:,} tokens · {_money(j.cost_usd)}{unknown}_\n"
    )


def users_spend(run: RunResult) -> str:
    """The simulated users' own model calls ('' without one).

    In the summary and the comment, outside the comment's content digest (a replayed rerun spends nothing and is no
    change).
    """
    said = user_phrases.spend(run)
    return f"\n_{inline(said, 400)}_\n" if said else ""


def render_summary(
    run: RunResult,
    title: str = "AgentCI",
    links: Links = Links(),
    budget: int = SUMMARY_BUDGET,
    diff: RunDiff | None = None,
    beside: Beside | None = None,
) -> str:
    """The job summary.

    The report body (with the diff against the baseline, when there is one, and the trend), the judge's spend and a
    footer, at most `budget` bytes.
    """
    footer = judge_spend(run) + users_spend(run) + _footer(run, links)
    return render_body(run, title, links, _Room(budget - utf8_size(footer)), diff, beside) + footer


def render_comment(
    run: RunResult,
    header: str,
    links: Links = Links(),
    budget: int = COMMENT_BUDGET,
    diff: RunDiff | None = None,
    beside: Beside | None = None,
) -> str:
    """The sticky PR comment: hidden marker (with the content digest) first, then the summary's content.

    Titled for its comment-header (title_for).
    """
    first = f"{marker(header)}\n<!-- agentci-digest: {content_digest(run, diff, beside)} -->\n"
    footer = users_spend(run) + _footer(run, links)
    room = _Room(budget - utf8_size(first) - utf8_size(footer), COMMENT_ROWS)
    body = render_body(run, title_for(header), links, room, diff, beside)
    return first + body + footer


def digest_of(comment_body: str) -> str | None:
    """The content digest recorded in one of our comments, if any."""
    match = re.search(r"<!-- agentci-digest: ([0-9a-f]+) -->", comment_body or "")
    return match.group(1) if match else None
