"""The HTML report (`--format html`, the action's html-report) in a real headless browser.

Playwright driving Debian's Chromium (Playwright's own browser download is not used). The page renders with no console
error and no request beyond itself, the answers sit side by side, and hostile agent text and spec strings are text:
nothing in them runs, loads or links.

Needs the `playwright` package (test extras) and a Chromium (`apt-get install chromium`; .ci/run installs both).
Skipped when either is missing, except under CI=true or AGENTCI_REQUIRE_E2E=1, where that is a failure.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from helpers import ROOT, run_cli

from agentci_action.report.html import esc

SCRIPT = "<script>window.__pwned = 'script'</script>"
IMAGE = "<img src=x onerror=\"window.__pwned='img'\">"
LINK = "<a href=\"javascript:window.__pwned='link'\">click me</a>"
CLOSING = "</pre></div></section><h1>forged heading</h1><pre>"
STYLE = "<style>body{display:none}</style>"
HOSTILE = [SCRIPT, IMAGE, LINK, CLOSING, STYLE, "javascript:alert(1)", "' onmouseover='x' \"", "&lt;already&gt;"]


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="module")
def browser():
    """A headless Chromium (Debian's) under Playwright."""
    reason = None
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        reason = "the playwright package is not installed (pip install -e '.[test]')"
    if reason is None and chromium() is None:
        reason = "no chromium on PATH (apt-get install chromium)"
    if reason:
        if os.environ.get("CI") == "true" or os.environ.get("AGENTCI_REQUIRE_E2E") == "1":
            pytest.fail(f"the browser test cannot run: {reason}")
        pytest.skip(reason)
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=chromium(), args=["--no-sandbox"])
        yield launched
        launched.close()


def open_page(browser, path: Path):
    """The page at `path`, with every console message, page error, request, failed request and dialog recorded."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    seen: dict[str, list[str]] = {"console": [], "errors": [], "requests": [], "failed": [], "dialogs": []}
    page.on("console", lambda m: seen["console"].append(f"{m.type}: {m.text}"))
    page.on("pageerror", lambda e: seen["errors"].append(str(e)))
    page.on("request", lambda r: seen["requests"].append(r.url))
    page.on("requestfailed", lambda r: seen["failed"].append(r.url))
    page.on("dialog", lambda d: (seen["dialogs"].append(d.message), d.dismiss()))
    page.goto(path.as_uri())
    page.wait_for_load_state("load")
    return page, seen


def assert_clean(page, seen, path: Path) -> None:
    """Rendered, and nothing else happened: no console message, error, dialog, or request but the page's own."""
    assert seen["console"] == [] and seen["errors"] == [] and seen["dialogs"] == [], seen
    assert seen["requests"] == [path.as_uri()] and seen["failed"] == [], seen
    assert page.locator("script, img, iframe, object, embed, link, form, input").count() == 0
    hrefs = page.eval_on_selector_all("a", "links => links.map(a => a.getAttribute('href'))")
    assert hrefs and all(href.startswith("#q") and href[2:].isdigit() for href in hrefs), hrefs
    assert page.evaluate("window.__pwned") is None


def test_the_rag_example_renders_with_answers_side_by_side(browser, tmp_path):
    example = ROOT / "examples" / "rag"
    out = tmp_path / "report.html"
    done = run_cli(
        "test", example / "agentci_spec.yaml", "--traces", example / "traces", "--format", "html", "--output", out
    )
    assert done.returncode == 0, done.stderr
    page, seen = open_page(browser, out)
    assert_clean(page, seen, out)
    assert page.title() == "AgentCI · rag-agent"
    text = page.inner_text("body")
    assert "WARN: 4 queries · 4 passed (1 with a warning)" in text  # the console's own total
    assert "Against the baseline: v2-fixed → current" in text and "Unchanged (3):" in text
    weather = page.locator("section.query", has_text="weather-tokyo")
    answers = weather.locator(".answers > div")
    assert answers.count() == 3  # the baseline's, the current one, and the word diff
    before, after = (answers.nth(i).bounding_box() for i in range(2))
    assert before["y"] == after["y"] and before["x"] < after["x"]  # side by side, baseline first
    assert "can't help with the weather." in answers.nth(0).inner_text()
    assert "can't help with that." in answers.nth(1).inner_text()
    assert weather.locator("pre del").inner_text().strip() == "the weather." and weather.locator("pre ins").count() == 1
    assert "Tools now: retriever_tool ×11" in weather.inner_text()
    assert "Tools in v2-fixed: no tool called" in weather.inner_text()


def hostile_project(tmp_path: Path) -> list[str]:
    """A spec and traces with hostile text; returns `agentci test` arguments writing the HTML report.

    The spec's agent name, query and expected term are hostile, and the traces' (current and baseline) answers, tool
    names and models are.
    """
    spec = tmp_path / "agentci_spec.yaml"
    spec.write_text(
        f"agent: {json.dumps(SCRIPT)}\n"
        "queries:\n"
        f"  - id: hostile\n    query: {json.dumps(IMAGE + CLOSING)}\n"
        f"    correctness: {{expected_in_answer: [{json.dumps(LINK + ' is not there')}]}}\n"
        "    path: {expected_tools: [search]}\n"
        "  - id: calm\n    query: calm\n",
        encoding="utf-8",
    )

    def trace(answer: str, tools: list[str], model: str) -> dict:
        return {
            "id": "hostile",
            "final_answer": answer,
            "tool_calls": [{"name": t, "result": SCRIPT} for t in tools],
            "llm_calls": [{"model": model, "input_tokens": 10, "output_tokens": 5}],
        }

    calm = {"id": "calm", "final_answer": "ok"}
    now = trace(" ".join(HOSTILE) + " now", [SCRIPT, "search", IMAGE], LINK)
    before = trace(" ".join(HOSTILE) + " before", ["search", CLOSING], STYLE)
    (tmp_path / "now.jsonl").write_text(json.dumps(now) + "\n" + json.dumps(calm) + "\n", encoding="utf-8")
    (tmp_path / "before.jsonl").write_text(json.dumps(before) + "\n" + json.dumps(calm) + "\n", encoding="utf-8")
    return [
        "test",
        str(spec),
        "--traces",
        str(tmp_path / "now.jsonl"),
        "--baseline-traces",
        str(tmp_path / "before.jsonl"),
        "--format",
        "html",
        "--output",
        str(tmp_path / "report.html"),
    ]


def test_hostile_text_is_shown_as_text_and_runs_nothing(browser, tmp_path):
    done = run_cli(*hostile_project(tmp_path))
    assert done.returncode == 1, done.stderr  # the expected (hostile) term is missing: a correctness failure
    out = tmp_path / "report.html"
    source = out.read_text(encoding="utf-8")
    for text in HOSTILE:
        assert text not in source or text in ("javascript:alert(1)",), text  # only ever escaped
    page, seen = open_page(browser, out)
    assert_clean(page, seen, out)
    assert page.title() == f"AgentCI · {SCRIPT}"
    body = page.inner_text("body")
    for text in (SCRIPT, IMAGE, LINK, CLOSING, STYLE, "javascript:alert(1)", "&lt;already&gt;"):
        assert text in body, text  # shown as the agent wrote it
    assert page.locator("h1").count() == 1  # the forged heading stayed text
    hostile = page.locator("section.query", has_text="hostile").first
    answers = hostile.locator(".answers pre")
    assert " ".join(HOSTILE) + " before" in answers.nth(0).inner_text()
    assert " ".join(HOSTILE) + " now" in answers.nth(1).inner_text()
    assert f"Tools now: {SCRIPT} → search → {IMAGE}" in hostile.inner_text()
    assert "click me</a> is not there" in hostile.locator("table").first.inner_text()  # the check's message, as text
    assert page.locator("body").is_visible()  # the hostile <style> hid nothing


def test_every_untrusted_character_is_escaped():
    assert esc("<a href='x' title=\"y\">&</a>") == "&lt;a href=&#x27;x&#x27; title=&quot;y&quot;&gt;&amp;&lt;/a&gt;"


def test_a_suite_that_changes_in_every_way_charts_cost_and_latency_and_lists_every_change(browser, tmp_path):
    out = tmp_path / "report.html"
    everyway = ROOT / "tests" / "fixtures" / "everyway"
    done = run_cli(
        "test", "agentci_spec.yaml", "--traces", "current.jsonl", "--baseline", "v1", "--format", "html",
        "--output", out, cwd=everyway,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    page, seen = open_page(browser, out)
    assert_clean(page, seen, out)
    charts = page.locator("figure svg")
    assert charts.count() == 2
    assert [charts.nth(i).locator("title").text_content() for i in range(2)] == ["Cost per query", "Latency per query"]
    assert charts.nth(0).locator("rect").count() == 6  # three queries moved most: a bar per side each
    changed = page.locator("table", has_text="Changed query").locator("tr")
    assert changed.count() == 10  # a header and the nine changed queries
    assert page.locator("table", has_text="Changed query").locator("a").count() == 8  # the removed one has no section
    assert page.locator("section.query").count() == 9


def test_diff_of_two_versions_as_a_page(browser, tmp_path):
    out = tmp_path / "diff.html"
    spec = ROOT / "examples" / "rag" / "agentci_spec.yaml"
    done = run_cli(
        "diff", spec, "--baseline", "v1-broken", "--compare", "v2-fixed", "--format", "html", "--output", out
    )
    assert done.returncode == 0, done.stderr
    page, seen = open_page(browser, out)
    assert_clean(page, seen, out)
    assert "Against the baseline: v1-broken → v2-fixed" in page.inner_text("body")
    weather = page.locator("section.query", has_text="weather-tokyo")
    titles = weather.locator(".answers h4")
    assert [titles.nth(i).inner_text() for i in range(2)] == ["Answer in v1-broken", "Answer in v2-fixed"]
    assert "Tools in v1-broken: retriever_tool ×11" in weather.inner_text()


def test_the_trend_on_the_default_branch_renders_as_inline_svg_with_its_alert(browser, tmp_path):
    """Three good runs on the default branch, then a run of the broken version.

    Each figure's runs are a drawn line, its band a strip, this run a dot (red where it leaves the band on the worse
    side), and the alert is said.
    """
    example = ROOT / "examples" / "rag"
    good, history = tmp_path / "good.json", tmp_path / "history.jsonl"
    done = run_cli(
        "test", "agentci_spec.yaml", "--traces", "traces/", "--format", "json", "--output", good, cwd=example
    )
    assert done.returncode == 0, done.stderr
    for n in range(3):
        appended = run_cli("history", "--append", good, "--history", history, "--commit", f"{n}" * 40, cwd=example)
        assert appended.returncode == 0, appended.stderr
    out = tmp_path / "report.html"
    done = run_cli(
        "test", "agentci_spec.yaml", "--traces", "runs/v1-broken.jsonl", "--history", history, "--format", "html",
        "--output", out, cwd=example,
    )  # fmt: skip
    page, seen = open_page(browser, out)
    assert_clean(page, seen, out)
    section = page.locator("table.trend")
    assert "Trend on the default branch (last 3 runs)" in page.inner_text("body")
    assert section.locator("svg").count() == 4  # pass rate, composite, cost, tokens
    for i in range(4):
        line = section.locator("svg").nth(i).locator("polyline")
        box = line.bounding_box()
        assert box is not None and box["width"] > 100  # drawn across the chart, three runs wide
    pass_rate = section.locator("tr", has_text="pass rate")
    assert pass_rate.locator("circle").get_attribute("fill") == "#cf222e"  # this run, below the band
    assert pass_rate.locator("rect").bounding_box()["height"] >= 1  # the band (a line: three equal runs)
    assert "outside the band" in pass_rate.inner_text()
    assert page.locator("p.note", has_text="This run moves pass rate outside its band").is_visible()
