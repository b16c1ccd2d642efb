"""What the reviewer reads in the diff is true (issue 44, bullets 1, 2 and 5).

Each test builds the case that printed something false or hid a difference, and checks the words every format now
prints instead: a replay miss shows where the request changed (a real agent's miss in every format:
tests/e2e/test_replay_miss_report.py), flaky runs show their failing answer, and each changed query reads in the three
named tiers.
"""

from __future__ import annotations

import json
import re

import cmarkgfm
from cmarkgfm.cmark import Options
from helpers import ROOT, run_cli

from agentci_action.run.replay import misses


def _html(markdown: str) -> str:
    """The markdown as GitHub renders a comment (cmark-gfm)."""
    return cmarkgfm.github_flavored_markdown_to_html(markdown, options=Options.CMARK_OPT_UNSAFE)


# Bullet 1: a miss shows the difference, and is an error in every view

SHOPCO = "You are the support agent of ShopCo. Help customers with their orders and refunds, politely and briefly."


def test_a_sentence_added_to_a_long_prompt_is_quoted_not_a_prefix_both_share():
    text = misses.text_change(SHOPCO, SHOPCO + " Never promise a refund before lookup_order.")
    # was: "changed: recorded 'You are the support agent of ShopCo. Help customers with their orders and refun…', now
    # 'You are the support agent of ShopCo. Help customers with their orders and refun…'"
    assert text == (
        " at character 105: recorded '…refunds, politely and briefly.', "
        "now '…refunds, politely and briefly. Never promise a refund before lookup_order.'"
    )


def test_a_long_change_names_its_first_line_and_counts_the_lines():
    recorded = "Be an agent.\nUse tools.\nBe brief."
    now = "Be an agent.\nUse the tools you are given.\nCheck the order first.\nThen refund.\nBe brief."
    assert misses.text_change(recorded, now) == (
        " at line 2: recorded 'Use tools.', now 'Use the tools you are given.' (3 lines added, 1 removed)"
    )


def test_a_changed_tool_schema_and_parameter_are_spelled_out():
    tool = {"name": "refund", "description": "Refund an order." + " It must be looked up first." * 3}
    changed = {**tool, "description": tool["description"] + " Ask for the reason."}
    [difference] = misses.differences({"body": {"tools": [tool]}}, {"body": {"tools": [changed]}})
    text = misses.describe(difference, {"body": {"tools": [changed]}})
    assert text.startswith("tools[0].description (the tools) changed at character 101: recorded '…")
    assert text.endswith(
        "recorded '…t. It must be looked up first.', now '…t. It must be looked up first. Ask for the reason.'"
    )
    [temperature] = misses.differences({"body": {"temperature": 0}}, {"body": {"temperature": 0.7}})
    assert misses.describe(temperature, {}) == "temperature (the temperature) changed: recorded '0', now '0.7'"


# Bullet 2: flaky runs, told straight (the repeated-runs example's reports, which test_golden_reports checks are the
# real output)

GOLDEN = ROOT / "tests" / "golden"


def test_a_passing_flaky_query_is_not_under_a_failing_heading():
    html = _html((GOLDEN / "examples" / "repeated-runs.md").read_text())
    lagos = html[html.index("population-lagos — inconclusive") :].split("</details>")[0]
    assert "✅ pass → ⚠️ warn" in lagos and "Why it fails now" not in lagos  # was "Why it fails now" at 15 of 20 ≥ 70%
    assert "<strong>What failed in its runs:</strong>" in lagos
    console = (GOLDEN / "examples" / "repeated-runs.txt").read_text()
    assert "Failing runs     15 of 20 runs passed (75%), at least min_pass_rate 70%" in console  # was "Failing now"


def test_at_the_maximum_the_report_names_runs_max_and_the_number():
    html = _html((GOLDEN / "examples" / "repeated-runs.md").read_text())
    # was "…; about 14 more runs would decide", with no word of the setting
    assert "about 14 more runs would decide: runs.max 34 (the query's runs, 20 now)" in html.replace("&#x27;", "'")


def test_every_pass_rate_names_its_unit():
    markdown = _html((GOLDEN / "everyway.md").read_text())
    assert "11 runs · pass rate 73% of runs · 1 flaky" in markdown  # was "11 runs · pass rate 73%"
    assert "Suite: pass rate 78% of queries" in markdown  # was "Suite: pass rate 78%"
    assert "pass rate 90% → 73% of runs (−19.2%)" in markdown  # the diff's, of runs too
    console = (GOLDEN / "everyway.txt").read_text()
    assert "pass rate 73% of runs" in console and "suite: pass rate 78% of queries" in console


def test_counts_print_as_counts():
    from agentci_action.compare.diff_schema import Delta
    from agentci_action.report.diff_format import Unit, before_after

    assert before_after(Delta.of(556, 555.2), Unit.COUNT) == "556 → 555"  # was "556 → 555.20"
    assert before_after(Delta.of(7, 6.2), Unit.COUNT) == "7 → 6.2"  # was "7 → 6.20"
    assert before_after(Delta.of(1, 1.25), Unit.COUNT) == "1 → 1.25"


# Bullet 5: three named tiers, and the routing change as docs/examples.md says it


def _support_router(form: str) -> str:
    example = ROOT / "examples" / "support-router"
    done = run_cli("test", "--spec", example / "agentci_spec.yaml", "--traces", example / "traces", "--format", form)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _promised_routing() -> str:
    """The words docs/examples.md says the support-router diff names its routing change with."""
    text = (ROOT / "docs" / "examples.md").read_text()
    return re.search(r"the diff against baseline `v1` names it: `([^`]+)`", text.replace("\n", " "))[1]


def test_each_changed_query_reads_in_the_three_named_tiers():
    promised = _promised_routing()
    assert promised == "routing changed: TechnicalAgent ⇒ AccountAgent"  # was "routing changed … TechnicalAgent ⇒ …"

    console = _support_router("console")
    block = console.split("CHANGED  login-crash", 1)[1].split("╠", 1)[0]
    # was "Status  PASS → WARN", then "Handoffs before  TechnicalAgent" / "Handoffs after   AccountAgent"
    assert "Correctness      PASS → WARN" in block and "Status " not in block
    assert f"Handoffs         {promised}" in block and "Handoffs before" not in block
    lines = [line.removeprefix("║ ").rstrip(" ║") for line in block.splitlines()]
    assert "  Path" in lines and "  Cost" in lines

    html = _html(_support_router("markdown"))
    fold = html[html.index("login-crash — tools changed") :].split("</details>")[0]
    assert "<td>Correctness</td>\n<td>status</td>\n<td>✅ pass → ⚠️ warn</td>" in fold  # was "Status | query"
    assert f"<strong>Handoffs:</strong> {promised}" in fold
    assert "<td>Path</td>" in fold and "<td>Cost</td>" in fold

    page = _support_router("html")
    section = page[page.index("Against v1: tools changed, routing changed") :].split("</section>")[0]
    assert "<p>Correctness: pass → warn</p>" in section and f"<p>Path: {promised}</p>" in section
    assert "<th>Cost</th>" in section


def test_a_tier_that_did_not_change_says_so_in_one_line():
    html = _html((GOLDEN / "comment_mixed.md").read_text())
    fold = html[html.index("prompt-injection — regression") :].split("</details>")[0]
    # the comment's table above gives the reason: the tier names the verdict, the reason is not said twice
    assert "<td>Correctness</td>\n<td>status</td>\n<td>✅ pass → ❌ fail</td>\n<td>regression</td>" in fold
    assert "<td>Path, Cost</td>\n<td>—</td>\n<td>unchanged</td>" in fold  # was no Path or Cost line at all
    damaged = html[html.index("refund-damaged — regression") :].split("</details>")[0]
    assert "<td>Cost</td>\n<td>—</td>\n<td>unchanged</td>" in damaged and "<td>Path</td>" in damaged


def _repeated_runs(form: str) -> str:
    example = ROOT / "examples" / "repeated-runs"
    done = run_cli("test", "--spec", example / "agentci_spec.yaml", "--traces", example / "traces", "--format", form)
    return done.stdout


def test_the_failing_answer_of_flaky_runs_is_shown_beside_the_passing_one():
    wrong = "Lagos has about 15 thousand inhabitants."
    # was: only "Answer (the most frequent on both sides; other runs' answers changed)", the right one
    data = json.loads(_repeated_runs("json"))
    [lagos] = [q for q in data["diff"]["queries"] if q["id"] == "population-lagos"]
    assert lagos["answer"]["split_after"] == {
        "passing": "Lagos has about 15 million inhabitants.",
        "passing_runs": 15,
        "failing": wrong,
        "failing_runs": 5,
    }
    html = _html(_repeated_runs("markdown"))
    assert f"<li>Failed now (5 of 20 runs): {wrong}</li>" in html
    assert "<li>Passed now (15 of 20 runs): Lagos has about 15 million inhabitants.</li>" in html
    assert f"Failed now       (5 of 20 runs) {wrong}" in _repeated_runs("console")
    assert f"<li>Failed now (5 of 20 runs): {wrong}</li>" in _repeated_runs("html")
