"""How the agent trends on the default branch, beside this run.

A sparkline table for markdown (Unicode block characters, which GitHub shows without any script or image), an inline SVG
for the HTML report, lines for the console; each with an alert when this run leaves a figure's historical band on the
worse side (compare/history.py).
"""

from __future__ import annotations

import html
import math

from agentci_action._util.text import percent, usd
from agentci_action.compare.history import HistoryFigures, Trend, TrendLine

BARS = "▁▂▃▄▅▆▇█"


def value_text(line: TrendLine, value: float | None) -> str:
    if value is None:
        return "—"
    if line.figure == "cost_usd":
        return usd(value)
    if line.figure == "total_tokens":
        return f"{value:,.0f}"
    return f"{value:.2f}"


def sparkline(values: list[float], current: float | None = None) -> str:
    """One block character per value (lowest ▁, highest █, over the values and `current` together)."""
    every = [*values, *([current] if current is not None else [])]
    if not every:
        return ""
    low, high = min(every), max(every)
    span = high - low
    return "".join(BARS[round((v - low) / span * (len(BARS) - 1)) if span else len(BARS) // 2] for v in values)


def band_text(line: TrendLine) -> str:
    if line.low is None or line.high is None:
        return "—"
    return f"{value_text(line, line.low)} – {value_text(line, line.high)}"


def _mark(line: TrendLine) -> str:
    return {"worse": " ⚠️ outside the band", "better": " ✅ better than the band"}.get(line.outside, "")


def stability(figures: HistoryFigures) -> str:
    """'change fail percentage 10% · revert rate 5% · pass-rate variance 0.0012 · cost variance …'."""
    parts = []
    if figures.change_fail_percentage is not None:
        parts.append(f"change fail percentage {percent(figures.change_fail_percentage)}")
    if figures.revert_rate is not None:
        parts.append(f"revert rate {percent(figures.revert_rate)}")
    if figures.pass_rate is not None:
        parts.append(f"pass-rate variance {figures.pass_rate.variance:.4g}")
    if figures.cost_usd is not None:
        parts.append(f"cost variance {figures.cost_usd.variance:.3g}")
    return " · ".join(parts)


def alert_lines(trend: Trend, subject: str = "This run") -> list[str]:
    return [
        f"{subject} moves {line.label} outside its band on the default branch: {value_text(line, line.current)} "
        f"(last {len(line.values)} runs: {band_text(line)})"
        for line in trend.alerts
    ]


def markdown(trend: Trend, subject: str = "This PR") -> str:
    """The trend table (last runs on the default branch, their band, this run's figure) and its alerts."""
    if not trend.commits:
        return ""
    rows = "".join(
        f"| {line.label} | `{sparkline(line.values, line.current)}` {value_text(line, line.values[-1])} | "
        f"{band_text(line)} | {value_text(line, line.current)}{_mark(line)} |\n"
        for line in trend.lines
        if line.values
    )
    alerts = "".join(f"> [!WARNING]\n> {text}\n\n" for text in alert_lines(trend, subject))
    return (
        f"\n### Trend on the default branch (last {plural_runs(len(trend.commits))})\n\n"
        + alerts
        + f"| Figure | Runs, oldest → newest | Band | {subject} |\n|---|---|---|---|\n"
        + rows
        + (f"\n_{stability(trend.figures)}_\n" if stability(trend.figures) else "")
    )


def plural_runs(count: int) -> str:
    return f"{count} run" if count == 1 else f"{count} runs"


def console_lines(trend: Trend) -> list[str]:
    if not trend.commits:
        return []
    lines = [f"trend on the default branch (last {plural_runs(len(trend.commits))}): {stability(trend.figures)}"]
    for line in trend.lines:
        if line.values:
            lines.append(
                f"  {line.label:<10} {sparkline(line.values, line.current)} {value_text(line, line.values[-1])} · "
                f"band {band_text(line)} · now {value_text(line, line.current)}{_mark(line)}"
            )
    return lines + [f"alert: {text}" for text in alert_lines(trend)]


def _svg(line: TrendLine, width: int = 360, height: int = 60) -> str:
    """The figure's runs as a polyline, its band as a shaded strip, this run as a dot (red outside on the worse side)."""
    every = [*line.values, *([line.current] if line.current is not None else [])]
    every += [v for v in (line.low, line.high) if v is not None]
    low, high = min(every), max(every)
    span = (high - low) or 1.0
    count = len(line.values) + (1 if line.current is not None else 0)
    step = (width - 20) / max(count - 1, 1)

    def y(value: float) -> float:
        return round(height - 8 - (value - low) / span * (height - 16), 1)

    points = " ".join(f"{round(10 + i * step, 1)},{y(v)}" for i, v in enumerate(line.values))
    band = ""
    if line.low is not None and line.high is not None:
        top, bottom = y(line.high), y(line.low)
        band = f'<rect x="0" y="{top}" width="{width}" height="{max(bottom - top, 1)}" fill="#ddf4ff"/>'
    dot = ""
    if line.current is not None and math.isfinite(line.current):
        colour = {"worse": "#cf222e", "better": "#1a7f37"}.get(line.outside, "#0969da")
        dot = f'<circle cx="{round(10 + (count - 1) * step, 1)}" cy="{y(line.current)}" r="4" fill="{colour}"/>'
    return (
        f'<svg width="{width}" height="{height}" role="img" aria-label="{html.escape(line.label)}">{band}'
        f'<polyline points="{points}" fill="none" stroke="#57606a" stroke-width="1.5"/>{dot}</svg>'
    )


def html_section(trend: Trend) -> str:
    """The trend for the HTML report: a row per figure with its SVG; the alerts and stability figures above."""
    if not trend.commits:
        return ""
    rows = "".join(
        f"<tr><td>{html.escape(line.label)}</td><td>{_svg(line)}</td><td>{html.escape(band_text(line))}</td>"
        f'<td class="{"fail" if line.outside == "worse" else "pass" if line.outside == "better" else ""}">'
        f"{html.escape(value_text(line, line.current) + _mark(line))}</td></tr>"
        for line in trend.lines
        if line.values
    )
    return (
        f"<h2>Trend on the default branch (last {plural_runs(len(trend.commits))})</h2>"
        + "".join(f'<p class="note">{html.escape(text)}</p>' for text in alert_lines(trend))
        + f"<p>{html.escape(stability(trend.figures))}</p>"
        + f'<table class="trend"><tr><th>Figure</th><th>Runs, oldest → newest</th><th>Band</th><th>This run</th></tr>{rows}</table>'
    )
