"""`agentci history` as a console table, JSON or CSV: data in, text out.

JSON (`agentci.history-report/v1`) holds the figures and every entry, CSV one row per run. Agent-given text (query ids,
spec paths) is made one inert line in the console.

A CSV is opened in spreadsheets, which run a cell starting with =, +, -, @, a tab or a carriage return as a formula
(OWASP's "CSV injection"): such a text cell is written with a leading ' as OWASP recommends, and shows as the text
it was. Numbers are numbers, a negative one included, and are written as they are; the JSON keeps every value. Rows
end in CRLF, as RFC 4180 has it: the writer then quotes a cell holding a lone CR, which would otherwise start a
row of its own.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json

from agentci_action._util.text import one_line, usd
from agentci_action.compare.history import HistoryEntry, HistoryFigures
from agentci_action.report.trend_report import stability

REPORT_SCHEMA_VERSION = "agentci.history-report/v1"
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
COLUMNS = (
    "commit",
    "date",
    "status",
    "failed_gate",
    "reverted",
    "passed",
    "total",
    "pass_rate",
    "composite_score",
    "cost_usd",
    "total_tokens",
)


def _row(entry: HistoryEntry, reverted: bool) -> dict[str, object]:
    """The entry's COLUMNS, its status as text, each text that a spreadsheet would run as a formula made inert."""
    row = entry.model_dump(mode="json", include=set(COLUMNS))
    return {name: reverted if name == "reverted" else inert_cell(row[name]) for name in COLUMNS}


def inert_cell(value: object) -> object:
    """A text starting like a formula (FORMULA_STARTS) with a leading '; any other value as it is."""
    return f"'{value}" if isinstance(value, str) and value.startswith(FORMULA_STARTS) else value


def console(entries: list[HistoryEntry], figures: HistoryFigures, where: str) -> str:
    if not entries:
        return f"no runs in {one_line(where)} yet: the action adds one on each push to the default branch\n"
    lines = [f"{len(entries)} runs in {one_line(where)} · {stability(figures)}"]
    if figures.pass_rate and figures.cost_usd:
        lines.append(
            f"pass rate {figures.pass_rate.mean:.2f} on average (slope {figures.pass_rate.slope:+.3f} a run) · "
            f"cost {usd(figures.cost_usd.mean)} on average (slope {figures.cost_usd.slope:+.2g} a run)"
        )
    lines.append("")
    lines.append(f"{'DATE':<20} {'COMMIT':<8} {'STATUS':<6} {'PASSED':>9} {'COMPOSITE':>9} {'COST':>10} {'TOKENS':>10}")
    gone = set(figures.reverted)
    for e in entries:
        mark = " reverted" if e.commit in gone else ""
        gate = " (failed the gate)" if e.failed_gate else ""
        lines.append(
            f"{one_line(e.date, 20):<20} {one_line(e.commit[:7]):<8} {e.status.value:<6} {e.passed:>4}/{e.total:<4} "
            f"{e.composite_score:>9.2f} {usd(e.cost_usd):>10} {e.total_tokens:>10,}{gate}{mark}"
        )
    return "\n".join(lines) + "\n"


def render(fmt: str, entries: list[HistoryEntry], figures: HistoryFigures, where: str) -> str:
    """The history in `fmt`: console, json or csv."""
    if fmt == "json":
        report = {
            "schema_version": REPORT_SCHEMA_VERSION,
            "source": where,
            "figures": dataclasses.asdict(figures),
            "entries": [e.model_dump(mode="json") for e in entries],
        }
        return json.dumps(report, indent=2, ensure_ascii=False) + "\n"
    if fmt == "csv":
        out = io.StringIO()
        writer = csv.DictWriter(out, fieldnames=COLUMNS, lineterminator="\r\n")  # RFC 4180: a CR in a cell is quoted
        writer.writeheader()
        gone = set(figures.reverted)
        for e in entries:
            writer.writerow(_row(e, e.commit in gone))
        return out.getvalue()
    return console(entries, figures, where)
