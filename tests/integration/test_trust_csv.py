"""`agentci history --format csv` makes every text cell that a spreadsheet would run as a formula inert.

A leading ', as OWASP recommends for CSV injection; numbers stay numbers, and the JSON and markdown outputs are
unchanged.
"""

from __future__ import annotations

import csv
import io
import json

import pytest

from agentci_action.compare.history import HistoryEntry, history_figures, trend
from agentci_action.engine.results import Status
from agentci_action.report import history_export
from agentci_action.report.trend_report import markdown

FORMULAS = ['=HYPERLINK("http://x","y")', "+1+1", "-2+3", "@SUM(A1)", "\t=1", "\r=1"]


def entry(commit: str, date: str = "2026-11-01T00:00:00Z") -> HistoryEntry:
    return HistoryEntry(
        commit=commit, date=date, agent="a", spec="s.yaml", status=Status.PASS, failed_gate=False,
        total=2, passed=1, pass_rate=0.5, composite_score=0.5, cost_usd=0.25, total_tokens=10,
    )  # fmt: skip


@pytest.mark.parametrize("formula", FORMULAS)
def test_a_text_cell_that_starts_a_formula_is_prefixed(formula):
    entries = [entry(formula, date=formula), entry("c" * 40)]
    text = history_export.render("csv", entries, history_figures(entries), "h")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert rows[0]["commit"] == rows[0]["date"] == "'" + formula
    assert rows[1]["commit"] == "c" * 40 and rows[1]["date"] == "2026-11-01T00:00:00Z"
    assert rows[0]["cost_usd"] == "0.25" and rows[0]["pass_rate"] == "0.5"  # numbers as they are


def test_numbers_stay_numbers_and_json_and_markdown_are_unchanged():
    assert history_export.inert_cell(-0.5) == -0.5 and history_export.inert_cell(-3) == -3
    assert history_export.inert_cell("plain") == "plain"
    entries = [entry("=1+1"), entry("c" * 40)]
    report = json.loads(history_export.render("json", entries, history_figures(entries), "h"))
    assert report["entries"][0]["commit"] == "=1+1"
    assert "'=1+1" not in markdown(trend(entries, window=2), "Latest")
