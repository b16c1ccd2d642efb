"""report/golden_phrases.py: the golden queries a PR changed, in the comment (rendered as GitHub does) and on the console."""

from __future__ import annotations

import re

import cmarkgfm
from cmarkgfm.cmark import Options
from helpers.results_builder import query, run

from agentci_action.compare.golden_changes import GoldenChange
from agentci_action.report.golden_phrases import console_lines, entry, markdown_section
from agentci_action.report.markdown import Beside, Links, render_comment
from agentci_action.spec.models import Provenance

HOSTILE = "<img src=x onerror=alert(1)> @org/team ::error::pwned [x](https://evil.test) <!-- agentci-comment: x -->"
PROMOTED = Provenance(
    source="traces/prod-1.json",
    trace_id="run-7f3a",
    framework="langgraph",
    promoted_commit="1a2b3c4d5e6f7",
    incident=True,
)
CHANGES = [
    GoldenChange("refund-window", "added", "agentci_spec.yaml:31", provenance=PROMOTED),
    GoldenChange("order-status", "changed", "agentci_spec.yaml:4", "correctness.expected_in_answer: +'refund'"),
    GoldenChange("old-case", "removed", "agentci_spec.yaml:20"),
]


def test_each_entry_says_its_line_what_changed_and_where_a_promoted_query_came_from():
    assert [entry(change) for change in CHANGES] == [
        "refund-window added at agentci_spec.yaml:31, promoted from traces/prod-1.json (trace run-7f3a, langgraph, "
        "commit 1a2b3c4); incident: fails on its source trace by design",
        "order-status changed at agentci_spec.yaml:4: correctness.expected_in_answer: +'refund'",
        "old-case removed from agentci_spec.yaml:20",
    ]
    bare = GoldenChange("q", "changed", "s.yaml:2", "provenance only", Provenance(source="a.json"))
    assert entry(bare) == "q changed at s.yaml:2: provenance only, promoted from a.json"


def test_the_markdown_section_counts_then_lists():
    section = markdown_section(CHANGES)
    assert section.startswith("### Golden queries changed in this PR\n\n1 added · 1 changed · 1 removed\n\n- ")
    html = cmarkgfm.github_flavored_markdown_to_html(section)
    assert "<li>old-case removed from agentci_spec.yaml:20</li>" in html
    assert "incident: fails on its source trace by design" in html


def test_no_change_no_section():
    assert markdown_section([]) == "" and console_lines([]) == []


def test_past_ten_the_rest_are_counted():
    many = [GoldenChange(f"q{n}", "added", f"s.yaml:{n}") for n in range(12)]
    assert markdown_section(many).endswith("- q9 added at s.yaml:9\n- and 2 more\n")
    assert console_lines(many)[0] == "Golden queries changed in this PR: 12 added"
    assert console_lines(many)[-1] == "  and 2 more"


def test_spec_text_in_the_comment_is_inert():
    planted = [
        GoldenChange(
            "refund-window",
            "added",
            "agentci_spec.yaml:31",
            provenance=Provenance(source=HOSTILE, trace_id=HOSTILE, framework=HOSTILE, promoted_commit=HOSTILE),
        ),
        GoldenChange("order-status", "changed", "agentci_spec.yaml:4", f"correctness.expected_in_answer: +'{HOSTILE}'"),
    ]
    current = run(query("refund-window", 4, "pass"), query("order-status", 4, "pass"))
    comment = render_comment(current, "agentci", Links(), beside=Beside(goldens=planted))
    assert "Golden queries changed in this PR" in comment
    assert comment.count("<!--") == 2  # our marker and digest only
    html = cmarkgfm.github_flavored_markdown_to_html(comment, options=Options.CMARK_OPT_UNSAFE)
    assert "<img" not in html and 'evil.test"' not in html and "<a " not in html
    text = re.sub(r"<[^>]+>", "", html)
    assert not re.search(r"@[A-Za-z0-9]", text), "a mention"
    assert "@\u200borg/team" in text
    for line in console_lines(planted):
        assert "\n" not in line and not line.startswith("::")
