"""History content never crashes a run: whoever can push to the history branch can write any line into it.

Non-finite or out-of-range figures, wrong types, deep nesting, huge lines and unknown schema versions are skipped with
one warning naming the lines; a fuzz test feeds the reader and the trend renderers hostile lines, and the action still
posts its comment on the pull request.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from fakes.github_server import FakeGitHub

from agentci_action._util.limits import MAX_HISTORY_LINE
from agentci_action.compare.history import HistoryEntry, history_figures, read_entries, trend
from agentci_action.engine.results import Status
from agentci_action.report import history_export
from agentci_action.report.trend_report import console_lines, html_section, markdown
from integration.test_action import environment, run_action, traces
from integration.test_history import push_environment
from integration.test_history import workspace as action_workspace

workspace = action_workspace  # test_action's fixture (its spec, a baseline, a traces folder), by its name
GOOD = HistoryEntry(
    commit="c" * 40,
    date="2026-11-01T00:00:00Z",
    agent="a",
    spec="s.yaml",
    status=Status.PASS,
    failed_gate=False,
    total=4,
    passed=3,
    pass_rate=0.75,
    composite_score=0.8,
    cost_usd=0.01,
    total_tokens=1200,
    input_tokens={"query": 100.0},
).model_dump(mode="json")
FIGURES = ("total", "passed", "pass_rate", "composite_score", "cost_usd", "cost_unknown", "total_tokens")
HOSTILE_VALUES: list[Any] = [
    float("nan"),
    float("inf"),
    float("-inf"),
    1e308,
    -1e308,
    10**400,
    -1,
    2,
    "NaN",
    "0.5",
    None,
    True,
    [],
    {},
    [[[[]]]],
    "x" * 10_000,
]


def hostile_line(rng: random.Random) -> str:
    """A line a hostile or broken history could hold."""
    kind = rng.randrange(6)
    entry = dict(GOOD)
    if kind == 0:  # a figure replaced
        entry[rng.choice(FIGURES)] = rng.choice(HOSTILE_VALUES)
    elif kind == 1:  # a component's tokens, a query's status, a text field
        field, value = rng.choice([("input_tokens", {"q": rng.choice(HOSTILE_VALUES)}), ("queries", {"q": "maybe"})])
        entry[field] = value
    elif kind == 2:
        entry["schema_version"] = rng.choice(["agentci.history/v2", "", 7, None, "agentci.history/v1\n"])
    elif kind == 3:
        return rng.choice(["{", "[]", "null", "42", '"text"', "{}", "[" * 100_000 + "]" * 100_000, "\x00\ufffd"])
    elif kind == 4:
        del entry[rng.choice(["commit", "date", "total", "pass_rate", "status"])]
    else:
        entry["commit"] = rng.choice(["\n| injected |", "x" * 5000, "`"])
        entry["date"] = rng.choice(["\r\n", "2026", "ż" * 100])
        return json.dumps(entry)  # odd text is an entry: the renderers make it inert
    return json.dumps(entry)


def test_hostile_lines_are_skipped_with_one_warning_and_the_trend_renders(tmp_path):
    rng = random.Random(45)
    lines = [json.dumps(GOOD)] * 3 + [hostile_line(rng) for _ in range(300)] + ["x" * (MAX_HISTORY_LINE + 1)]
    rng.shuffle(lines)
    warnings: list[str] = []
    entries = read_entries("\n".join(lines), "agentci-history:agentci.jsonl", warnings.append)
    assert len(warnings) == 1 and warnings[0].startswith("agentci-history:agentci.jsonl: skipped ")
    assert "line " in warnings[0] and "more" in warnings[0]
    assert len(entries) >= 3
    for window in (1, 3, 20, 400):
        shown = trend(entries, window=window)
        assert "Trend on the default branch" in markdown(shown)
        assert console_lines(shown) and "<svg" in html_section(shown)
    figures = history_figures(entries)
    for fmt in ("console", "json", "csv"):
        assert history_export.render(fmt, entries, figures, "agentci-history")


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        (float("nan"), "pass_rate"),
        (float("inf"), "pass_rate"),
        (1.5, "pass_rate"),
        ("high", "pass_rate"),
    ],
)
def test_each_skipped_line_is_named_with_why(value, reason):
    warnings: list[str] = []
    bad = json.dumps({**GOOD, "pass_rate": value})
    entries = read_entries("\n".join([json.dumps(GOOD), bad, json.dumps(GOOD)]), "h", warnings.append)
    assert len(entries) == 2
    assert warnings == [warnings[0]] and warnings[0].startswith(
        f"h: skipped 1 line that are not history entries: line 2 ({reason}"
    )


def test_an_unknown_schema_version_and_a_huge_line_are_skipped_unread():
    warnings: list[str] = []
    text = "\n".join([json.dumps({**GOOD, "schema_version": "agentci.history/v9"}), "{" * (MAX_HISTORY_LINE + 1)])
    assert read_entries(text, "h", warnings.append) == []
    assert "line 1 (schema_version 'agentci.history/v9' is not agentci.history/v1)" in warnings[0]
    assert f"line 2 (longer than {MAX_HISTORY_LINE:,} characters)" in warnings[0]


@pytest.mark.parametrize("fuzzed", [False, True], ids=["one-NaN", "fuzzed"])
def test_a_hostile_history_branch_still_gets_the_pull_request_its_comment(workspace, fuzzed):
    with FakeGitHub() as github:
        traces(workspace, "Refunds are accepted within 30 days.")
        for n in range(3):
            assert run_action(push_environment(workspace, github.url, f"{n + 5}" * 40, f"change {n}"))[0] == 0
        head = github.state.branches[("octo", "agent", "agentci-history")]
        files = github.state.files[("octo", "agent", head)]
        good = files["agentci.jsonl"].decode().splitlines()
        rng = random.Random(7)
        hostile = [json.dumps({**json.loads(good[0]), "cost_usd": float("nan")})]
        hostile += [hostile_line(rng) for _ in range(40)] if fuzzed else []
        files["agentci.jsonl"] = ("\n".join([*good, *hostile]) + "\n").encode()

        code, log = run_action(environment(workspace, github.url))
        assert code == 0, log
        (comment,) = github.comments("octo/agent", 7)
        assert "### Trend on the default branch (last 3 runs)" in comment["body"]
        assert "skipped" in log and "that are not history entries: line 4" in log
        assert "internal error" not in log.lower()
