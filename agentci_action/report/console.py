"""The terminal report: a three-layer block per query, then a one-line total."""

from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence
from typing import TYPE_CHECKING

from agentci_action._util.text import milliseconds, one_line, plural, unverified_note, usd
from agentci_action.engine.conversation import failing_first, whole_layer
from agentci_action.engine.results import LAYERS, RUN_FIGURES, Finding, LayerResult, QueryResult, RunResult, Status
from agentci_action.report import (
    baseline_phrases,
    gate_phrases,
    golden_phrases,
    recording_phrases,
    replay_phrases,
    suite_phrases,
    token_phrases,
    trend_report,
    user_phrases,
)
from agentci_action.report.diff_console import render_diff

if TYPE_CHECKING:
    from agentci_action.compare.diff_schema import RunDiff
    from agentci_action.compare.golden_changes import GoldenChange
    from agentci_action.compare.history import Trend
    from agentci_action.compare.recording_changes import RecordingChange

MESSAGE_WIDTH = 110  # characters of a message per line
MESSAGE_LIMIT = 1200  # characters of a message shown at all
MARKS = {Status.PASS: "✓", Status.WARN: "!", Status.FAIL: "✗", Status.ERROR: "✗", Status.SKIP: "-"}


def _money(value: float | None) -> str:
    return "cost unknown" if value is None else usd(value)


def figures_line(result: QueryResult) -> str:
    """The key path and cost figures of a query on one line (means, so labelled, for several runs)."""
    values = {name: result.figure(name) for name in RUN_FIGURES}
    parts = [f"tools {values.get('tool_calls') or 0:g}"]
    for key, label in (
        ("tool_recall", "recall"),
        ("tool_precision", "precision"),
        ("sequence_similarity", "similarity"),
    ):
        if values.get(key) is not None:
            parts.append(f"{label} {values[key]:.2f}")
    parts.append(f"loops {values.get('loops_detected') or 0:g}")
    reason = result.layer("cost").details.get("cost_unknown_reason")
    parts.append(
        _money(values.get("cost_usd"))
        + (f" ({one_line(reason, 120)})" if values.get("cost_usd") is None and reason else "")
    )
    if values.get("cost_multiplier") is not None:
        parts.append(f"{values['cost_multiplier']:.2f}× baseline")
    parts.append(plural(values.get("total_tokens") or 0, "token"))
    parts.append(f"{values.get('llm_calls') or 0:g} LLM {'call' if values.get('llm_calls') == 1 else 'calls'}")
    latency = values.get("latency_ms")
    if latency is not None:
        parts.append(milliseconds(latency))
    if result.score.value is not None:
        parts.append(f"score {result.score.value:.1f} ({result.score.grade})")
    return (f"mean of {result.runs} runs: " if result.runs > 1 else "") + " · ".join(parts)


def _cost_of_pass(value: float | None) -> str:
    return "cost unknown" if value is None else "∞ (no run passed)" if value == math.inf else usd(value)


def reliability_line(result: QueryResult) -> str:
    """Pass rate and its interval, pass@k, pass^k, flakiness and cost of pass, for a query run several times."""
    rel = result.reliability
    low, high = rel.pass_rate_ci95
    flaky = " · flaky" if rel.flaky else ""
    runs = f"{rel.runs} of up to {rel.max_runs} runs" if rel.max_runs else f"{rel.runs} runs"
    if rel.pass_at_k is None or rel.pass_hat_k is None:
        at_k = f"pass@{rel.k} and pass^{rel.k} unknown ({rel.runs} runs < k)"
    else:
        at_k = f"pass@{rel.k} {rel.pass_at_k:.3g} · pass^{rel.k} {rel.pass_hat_k:.3g}"
    return (
        f"{runs} · {rel.passed} passed · pass rate {rel.pass_rate:.0%} (95% CI {low:.0%}-{high:.0%}) · "
        f"{at_k}{flaky} · cost of pass {_cost_of_pass(rel.cost_of_pass_usd)}"
    )


def _layer_lines(layers: list[tuple[str, LayerResult]], indent: str = "    ") -> list[str]:
    """Each layer's status and findings, one finding a line (wrapped)."""
    lines = []
    for name, layer in layers:
        said = layer.findings() or [Finding(layer.status, "", "" if layer.status is Status.SKIP else "ok")]
        for k, finding in enumerate(said):  # a finding of another status than its layer's says its own
            shown = finding.status.value if k == 0 or finding.status is not layer.status else ""
            head = f"{indent}{name if k == 0 else '':<11} {shown:<5} "
            # wrapped rather than cut: a path explanation's last part (the argument values) matters most
            width = MESSAGE_WIDTH - len(indent) + 4
            pieces = textwrap.wrap(one_line(finding.message, MESSAGE_LIMIT), width, break_on_hyphens=False)
            lines.append((head + (pieces or [""])[0]).rstrip())
            lines.extend(" " * (len(indent) + 20) + piece for piece in pieces[1:])
    return lines


def _turn_lines(result: QueryResult) -> list[str]:
    """A conversation's turns, the failing first.

    Each its status, line and message; a turn that did not pass with its layers' findings, a passing or skipped one on
    its line alone. A simulated user's turns in order, each what the user said and the agent answered.
    """
    if user_phrases.endings(result) is not None:  # a simulated user's turns, unchecked: the conversation, in order
        return [
            f"    turn {turn.turn} ({result.file}:{turn.line})  user: {one_line(turn.user, 70)}  agent: "
            f"{one_line(turn.answer, 70)}"
            for turn in result.turns
        ]
    lines = []
    for turn in failing_first(result.turns):
        lines.append(
            f"    turn {turn.turn} {MARKS[turn.status]} {turn.status.value.upper():5} ({result.file}:{turn.line})  "
            f"{one_line(turn.user, 80)}"
        )
        if turn.status in (Status.FAIL, Status.WARN, Status.ERROR):
            lines += _layer_lines([(name, turn.layer(name)) for name in LAYERS], indent="      ")
    return lines


def render_query(result: QueryResult) -> list[str]:
    lines = [
        f"{MARKS[result.status]} {result.status.value.upper():5} {one_line(result.id)}  ({result.file}:{result.line})",
        f"    {one_line(result.query, 100)!s}",
    ]
    if result.turns:  # the whole conversation's own checks, then its turns
        lines += _layer_lines([(name, whole_layer(result.layer(name))) for name in LAYERS])
        lines += _turn_lines(result)
    else:
        lines += _layer_lines([(name, result.layer(name)) for name in LAYERS])
    lines.append(f"    {figures_line(result)}")
    ended = user_phrases.endings(result)
    if ended:
        lines.append(f"    {ended}")
    if result.model_calls is not None:
        lines.append(f"    model calls: {replay_phrases.model_calls(result.model_calls)}")
        lines.extend(f"    went live: {one_line(note, 600)}" for note in result.model_calls.went_live)
    if result.runs > 1:
        lines.append(f"    {reliability_line(result)}")
    if result.score.reason:
        lines.append(f"    {one_line(result.score.reason, 160)}")
    return lines


def render_total(run: RunResult) -> str:
    s = run.summary
    cost = usd(s.cost_usd) + (
        f" (+{plural(s.cost_unknown, 'query', 'queries')} of unknown cost)" if s.cost_unknown else ""
    )
    skipped = f" · {plural(s.skipped_checks, 'check')} skipped" if s.skipped_checks else ""
    runs = f" · {plural(s.runs, 'run')}, {s.flaky} flaky" if s.runs > s.total else ""
    score = f" · mean score {s.mean_score:.1f}" if s.mean_score is not None else ""
    return (
        f"{s.status.value.upper()}: {plural(s.total, 'query', 'queries')} · {s.passed} passed ({s.warnings} with "
        f"{'a warning' if s.warnings == 1 else 'warnings'}) · {s.failed} failed · {plural(s.errors, 'error')}{skipped} · "
        f"{cost} · {plural(s.total_tokens, 'token')}{runs} · pass rate {s.pass_rate:.0%} of runs{score} · "
        f"composite {s.composite_score:.2f} (grade {s.grade})"
    )


def render_aggregates(run: RunResult) -> str:
    """The suite's aggregates on one line, e.g. "suite: pass rate 75% · mean latency 1,200 ms · p95 latency 2,000 ms"."""
    return "suite: " + " · ".join(suite_phrases.phrases(run.summary.aggregates))


def render_judge(run: RunResult) -> str | None:
    """The judge's own spend, apart from the agent's cost; None when no judge verdict was asked for or cached."""
    j = run.summary.judge
    if not (j.requests or j.cache_hits):
        return None
    cost = f"${j.cost_usd:.4f}" + (f" (+{plural(j.cost_unknown, 'check')} of unknown price)" if j.cost_unknown else "")
    return (
        f"judge (not in the agent's cost): {plural(j.requests, 'request')} · {plural(j.cache_hits, 'cached verdict')} · "
        f"{plural(j.input_tokens + j.output_tokens, 'token')} · {cost}"
    )


def render(run: RunResult) -> str:
    lines = [
        f"agentci · {one_line(run.agent)} · {plural(run.summary.total, 'query', 'queries')} · {one_line(run.spec)}",
        "",
    ]
    for result in run.results:
        lines.extend(render_query(result))
        lines.append("")
    lines.extend(f"warning: {one_line(w, 200)}" for w in run.warnings)
    if run.results:
        lines.append(render_aggregates(run))
    if run.summary.tokens is not None:
        lines.append(token_phrases.summary_line(run.summary.tokens))
        lines += [f"  {line}" for line in token_phrases.figures(run.summary.tokens)]
    lines.append(
        render_total(run) + (f" · {gate_phrases.verdict(run.gates)}" if gate_phrases.failed(run.gates) else "")
    )
    if suite_phrases.adaptive(run.summary):
        lines.append(suite_phrases.adaptive(run.summary))
    lines.extend(gate_phrases.console_lines(run.gates))
    if run.summary.model_calls is not None:
        calls = replay_phrases.model_calls(run.summary.model_calls)
        lines.append(f"model calls (replay): {calls} ({replay_phrases.COST_NOTE})")
    for note in (unverified_note(run.unverified()), baseline_phrases.no_baseline_note(run)):
        if note:
            lines.append(one_line(note, 1500))
    judge = render_judge(run)
    if judge:
        lines.append(judge)
    users = user_phrases.spend(run)
    if users:
        lines.append(users)
    return "\n".join(lines) + "\n"


def render_with_diff(
    run: RunResult,
    diff: RunDiff | None = None,
    trend: Trend | None = None,
    recordings: Sequence[RecordingChange] = (),
    goldens: Sequence[GoldenChange] = (),
) -> str:
    """The console report, then the diff against the baseline, the trend, the golden queries and recordings changed.

    The diff when there is one, the trend on the default branch when there is a history, the golden queries and the
    recordings when the PR changed some.
    """
    lines = trend_report.console_lines(trend) if trend is not None else []
    lines += golden_phrases.console_lines(goldens)
    lines += recording_phrases.console_lines(recordings)
    return render(run) + ("\n" + render_diff(diff) if diff else "") + "".join(f"{one_line(x, 400)}\n" for x in lines)
