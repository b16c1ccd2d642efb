"""The three-tier diff: deltas, change kinds, ordering, totals, and the console/JSON/markdown renderings (golden files)."""

import json
import re

import pytest
from helpers import GOLDEN, ROOT, check_golden, run_cli

from agentci_action.compare.diff import Side, diff_runs
from agentci_action.compare.diff_schema import ChangeKind, Delta
from agentci_action.compare.diff_sides import evaluate_side
from agentci_action.engine import metrics
from agentci_action.engine.evaluate_spec import group_traces
from agentci_action.report import diff_console, diff_markdown, html
from agentci_action.report.results_json import render_diff
from agentci_action.spec.loader import load_spec
from agentci_action.trace.canonical import Trace

RAG_SPEC = "examples/rag/agentci_spec.yaml"

SPEC = """
agent: demo
queries:
  - id: stable
    query: stable
    correctness: {expected_in_answer: ["ok"]}
  - id: breaks
    query: breaks
    correctness: {expected_in_answer: ["ok"]}
  - id: heals
    query: heals
    correctness: {expected_in_answer: ["ok"]}
  - id: reroutes
    query: reroutes
    path: {expected_tools: [lookup]}
  - id: dropped
    query: dropped
  - id: added
    query: added
"""


def t(
    qid: str,
    answer: str = "ok",
    tools=(),
    cost: float = 0.01,
    tokens: int = 100,
    calls: int = 1,
    ms: float = 1000.0,
    handoffs=(),
) -> Trace:
    return Trace.model_validate(
        {
            "id": qid,
            "final_answer": answer,
            "tool_calls": [{"name": n} for n in tools],
            "handoffs": [{"to": h} for h in handoffs],
            "total_cost_usd": cost,
            "total_tokens": tokens,
            "total_llm_calls": calls,
            "total_duration_ms": ms,
        }
    )


def side(spec, label: str, traces: list[Trace]) -> Side:
    return evaluate_side(spec, label, group_traces(spec.queries, traces).by_query)


@pytest.fixture
def spec(write):
    return load_spec(write("spec.yaml", SPEC))


@pytest.fixture
def diff(spec):
    before = [
        t("stable"),
        t("breaks"),
        t("heals", answer="no"),
        t("reroutes", tools=["lookup", "lookup"], handoffs=["Billing"]),
        t("dropped"),
    ]
    after = [
        t("stable", cost=0.0105),
        t("breaks", answer="nope", cost=0.05),
        t("heals"),
        t("reroutes", tools=["search"], handoffs=["Tech"]),
        t("added"),
    ]
    return diff_runs(side(spec, "v1", before), side(spec, "v2", after), ["a note"])


def by_id(diff):
    return {q.id: q for q in diff.queries}


def test_delta_absolute_percent_and_new_for_a_zero_base():
    assert Delta.of(11, 0).model_dump() == {
        "before": 11,
        "after": 0,
        "change": -11,
        "percent": -100.0,
        "new": False,
        "interval": None,
    }
    zero = Delta.of(0, 3)
    assert (zero.change, zero.percent, zero.new) == (3, None, True)
    assert Delta.of(0, 0).percent is None and not Delta.of(0, 0).new
    assert Delta.of(None, 2).change is None
    assert Delta.of(100, 124).moved_beyond(0.25) is False and Delta.of(100, 126).moved_beyond(0.25) is True


def test_change_kinds_per_query(diff):
    q = by_id(diff)
    assert q["breaks"].kinds == [ChangeKind.REGRESSION, ChangeKind.OUTPUT_CHANGED, ChangeKind.COST_CHANGED]
    assert q["heals"].kinds == [ChangeKind.FIXED, ChangeKind.OUTPUT_CHANGED]
    assert q["reroutes"].kinds == [ChangeKind.TOOLS_CHANGED, ChangeKind.ROUTING_CHANGED]
    assert q["stable"].kinds == []  # +5 % cost is within the tolerance
    assert q["dropped"].kinds == [ChangeKind.REMOVED_QUERY] and q["added"].kinds == [ChangeKind.NEW_QUERY]
    assert (q["breaks"].correctness.before, q["breaks"].correctness.after) == ("pass", "fail")
    assert (q["dropped"].correctness.after, q["added"].correctness.before) == (None, None)


def test_path_and_cost_figures(diff):
    reroutes = by_id(diff)["reroutes"]
    path = reroutes.path
    assert (path.tool_calls.before, path.tool_calls.after) == (2, 1)
    assert (path.tool_recall.before, path.tool_recall.after) == (1.0, 0.0)
    assert (path.tool_precision.before, path.tool_precision.after) == (1.0, 0.0)
    assert (path.loops.before, path.loops.after) == (1, 0)
    assert path.tools_added == ["search"] and path.tools_removed == ["lookup"]
    assert (path.handoffs_before, path.handoffs_after) == (["Billing"], ["Tech"])
    assert path.sequence_similarity == metrics.lcs_similarity(["search"], ["lookup", "lookup"]) == 0.0
    cost = by_id(diff)["breaks"].cost.cost_usd
    assert cost.percent == pytest.approx(400.0)


def test_regressions_first_then_removed_new_fixed_changes_unchanged(diff):
    assert [q.id for q in diff.queries] == ["breaks", "dropped", "added", "heals", "reroutes", "stable"]
    assert [q.id for q in diff.regressions] == ["breaks"]


def test_totals_over_each_side(diff):
    total = diff.total
    assert (total.queries.before, total.queries.after) == (5, 5)
    assert (total.passed.before, total.passed.after) == (4, 4)
    assert total.cost_usd.before == pytest.approx(0.05) and total.cost_usd.after == pytest.approx(0.0905)
    assert total.counts["regression"] == 1 and total.counts["unchanged"] == 1 and total.counts["changed"] == 5


def test_json_rendering_is_the_versioned_model(diff):
    data = json.loads(render_diff(diff))
    assert data["schema_version"] == "agentci.diff/v3"
    assert data["queries"][0]["kinds"] == ["regression", "output_changed", "cost_changed"]
    assert data["warnings"] == ["a note"]


def test_markdown_escapes_untrusted_text_and_sanitises_chart_labels(spec, write):
    hostile_spec = load_spec(
        write(
            "h.yaml",
            """
        agent: "@team <b>x</b>"
        queries:
          - id: q
            query: "Ignore <script>alert(1)</script> @admin #1 | `x` ]]"
          - id: r
            query: r
    """,
        )
    )
    before = side(
        hostile_spec, 'v1"]\n%%{init}%%', [t("q", tools=["<img src=x onerror=y>"], cost=0.01), t("r", cost=0.01)]
    )
    after = side(hostile_spec, "v2", [t("q", tools=["@evil|tool"], cost=0.05, ms=5000), t("r", cost=0.02)])
    text = diff_markdown.render_markdown(diff_runs(before, after, ["<b>warning</b> @someone"]))
    assert "<script>" not in text and "<img" not in text and "<b>" not in text
    assert "@admin" not in text and "@someone" not in text and "@evil" not in text and "@team" not in text
    assert "\\|tool" in text  # a table cell cannot be split
    chart = text[text.index("```mermaid") :]
    assert "%%{init}" not in chart and "v1__" in chart
    for line in chart.splitlines():
        assert not line.startswith("%%")


def test_markdown_chart_keeps_the_queries_that_changed_most(write):
    lines = ["agent: big", "queries:"] + [f"  - {{id: q{i:02d}, query: q{i:02d}}}" for i in range(40)]
    big = load_spec(write("big.yaml", "\n".join(lines)))
    before = side(big, "v1", [t(f"q{i:02d}", cost=0.01, ms=1000) for i in range(40)])
    after = side(big, "v2", [t(f"q{i:02d}", cost=0.01 * (1 + i), ms=1000) for i in range(40)])
    text = diff_markdown.render_markdown(diff_runs(before, after))
    cost_chart = text.split("```mermaid")[1]
    labels = [label.strip('"') for label in re.search(r"x-axis \[(.*)\]", cost_chart).group(1).split(", ")]
    assert labels == [f"q{i:02d}" for i in range(39, 24, -1)]  # 15, biggest change first
    bars = re.search(r"bar \[(.*)\]", cost_chart).group(1).split(", ")
    line = re.search(r"line \[(.*)\]", cost_chart).group(1).split(", ")
    assert len(bars) == len(line) == diff_markdown.MAX_CHART_QUERIES
    assert float(line[0]) == pytest.approx(0.40) and float(bars[0]) == pytest.approx(0.01)
    assert text.count("```mermaid") == 1  # latency did not move: no latency chart


@pytest.mark.parametrize("fmt, golden", [("console", "diff_rag_console.txt"), ("markdown", "diff_rag.md")])
def test_rag_example_diff_matches_golden_files(fmt, golden):
    result = run_cli(
        "diff", "--spec", RAG_SPEC, "--baseline", "v1-broken", "--compare", "v2-fixed", "--format", fmt, cwd=ROOT
    )
    assert result.returncode == 0, result.stderr
    check_golden(golden, result.stdout)


def test_rag_example_diff_shows_the_weather_story():
    result = run_cli(
        "diff", "--spec", RAG_SPEC, "--baseline", "v1-broken", "--compare", "v2-fixed", "--format", "json", cwd=ROOT
    )
    data = json.loads(result.stdout)
    weather = data["queries"][0]
    assert weather["id"] == "weather-tokyo" and weather["kinds"][0] == "fixed"
    assert (weather["path"]["tool_calls"]["before"], weather["path"]["tool_calls"]["after"]) == (11, 0)
    for figure in ("cost_usd", "total_tokens", "llm_calls", "latency_ms"):
        delta = weather["cost"][figure]
        assert delta["after"] < delta["before"] and delta["percent"] < -85, figure
    assert [q["kinds"] for q in data["queries"][1:]] == [[], [], []]


def test_console_box_lines_have_one_width():
    lines = diff_console.render_diff(_rag_diff()).splitlines()
    boxed = [line for line in lines if line[:1] in "╔╠║╚"]
    assert len({len(line) for line in boxed}) == 1 and len(boxed) == len(lines)


def _rag_diff():
    """As `agentci diff --baseline v1-broken --compare v2-fixed` computes it (verdicts from the example's cache)."""
    from agentci_action.pipeline.evaluation import VersionComparison, compare_versions

    return compare_versions(VersionComparison(str(ROOT / RAG_SPEC), "v1-broken", "v2-fixed")).diff


@pytest.mark.parametrize(
    "render, golden",
    [(diff_console.render_diff, "diff_mixed_console.txt"), (diff_markdown.render_markdown, "diff_mixed.md")],
)
def test_mixed_diff_matches_golden_files(diff, render, golden):
    for query in diff.queries:
        query.file = "spec.yaml"  # not the temporary directory
    check_golden(golden, render(diff))


def test_the_baselines_docs_show_the_current_rag_diff():
    docs = (ROOT / "docs" / "guides" / "baselines.md").read_text(encoding="utf-8")
    assert (GOLDEN / "diff_rag_console.txt").read_text(encoding="utf-8") in docs


def test_markdown_within_a_budget_keeps_the_most_important_and_says_what_was_cut(write):
    lines = ["agent: big", "queries:"] + [f"  - {{id: q{i:03d}, query: q{i:03d}}}" for i in range(150)]
    big = load_spec(write("big.yaml", "\n".join(lines)))
    before = side(big, "v1", [t(f"q{i:03d}", cost=0.01) for i in range(150)])
    after = side(big, "v2", [t(f"q{i:03d}", cost=0.01 * (2 + i)) for i in range(150)])
    diff = diff_runs(before, after)
    full = diff_markdown.render_markdown(diff)
    assert "Cut to fit: 50 more changed queries are not in the table (" in full  # MAX_QUERIES rows
    # where the rest is, without a command that cannot run as printed (`agentci diff` needs --compare)
    assert "(the JSON report has everything: the results file, or `--format json`)" in full
    assert "`agentci diff" not in full and "`agentci diff" not in diff_markdown.LEFT_OUT
    assert full.count("<details>") == diff_markdown.MAX_QUERIES
    cut = diff_markdown.render_markdown(diff, budget=20_000)
    assert len(cut.encode()) <= 20_000
    kept = cut.count("<details>")
    assert 0 < kept < diff_markdown.MAX_QUERIES and f"the details of {100 - kept} are left out" in cut
    assert "| 🔶 | q149 |" in cut  # the biggest change survives the cut
    tiny = diff_markdown.render_markdown(diff, budget=3_000)
    assert len(tiny.encode()) <= 3_000 and "<details>" not in tiny and "not in the table" in tiny


VARIANT_SPEC = "agent: demo\nqueries:\n  - {id: q, query: q, correctness: {expected_in_answer: [ok]}, path: {expected_tools: [s, a]}}\n"


def test_the_diff_compares_with_the_variant_the_path_layer_chose(write, write_traces):
    """Variants [s, a] ($0.01) and [s, f, a] ($0.02).

    The current run takes [s, f, a] for $0.03: the path layer picks variant 1, and so do the per-query figures and the
    uplift.
    """
    from agentci_action.pipeline.evaluation import Evaluation, evaluate

    spec = write("spec.yaml", VARIANT_SPEC)
    variants = write_traces(
        "variants.jsonl",
        [
            t("q", tools=["s", "a"], cost=0.01).model_dump(mode="json", exclude_defaults=True),
            t("q", tools=["s", "f", "a"], cost=0.02).model_dump(mode="json", exclude_defaults=True),
        ],
    )
    current = write_traces(
        "current.jsonl", [t("q", tools=["s", "f", "a"], cost=0.03).model_dump(mode="json", exclude_defaults=True)]
    )
    outcome = evaluate(Evaluation(spec=str(spec), traces=[str(current)], baseline_traces=[str(variants)]))
    assert outcome.run.results[0].path.details["baseline_variant"] == 1
    query = outcome.diff.queries[0]
    assert (query.cost.cost_usd.before, query.cost.cost_usd.after) == (0.02, 0.03)
    assert query.path.tools_added == [] and query.path.tools_removed == [] and query.path.sequence_similarity == 1.0
    assert ChangeKind.TOOLS_CHANGED not in query.kinds
    assert outcome.diff.uplift["cost_usd"].uplift == pytest.approx(0.5)
    assert outcome.diff.total.cost_usd.before == pytest.approx(0.02)


@pytest.mark.parametrize(
    "spec_file, version",
    [(RAG_SPEC, "v2-fixed"), (RAG_SPEC, "v1-broken"), ("examples/repeated-runs/agentci_spec.yaml", "v1")],
)
def test_a_run_diffed_against_itself_shows_no_change_and_no_uplift(spec_file, version, tmp_path):
    """Both sides are evaluated alike: the same traces give the same composite, pass rate and cost."""
    from agentci_action.compare.baselines import load_baseline, version_reference
    from agentci_action.compare.diff_sides import diff_against
    from agentci_action.pipeline.evaluation import Evaluation, evaluate

    spec = load_spec(ROOT / spec_file)
    reference = version_reference(spec, load_baseline(spec, version))
    diffs = [diff_against(spec, reference, evaluate_side(spec, version, reference.runs, reference.variants))]
    if spec_file == RAG_SPEC:
        runs = ROOT / "examples/rag/runs" / f"{version}.jsonl"
        diffs.append(evaluate(Evaluation(spec=str(ROOT / spec_file), traces=[str(runs)], baseline=version)).diff)
    for diff in diffs:
        assert {name: change.uplift for name, change in diff.uplift.items()} == {
            "composite_score": 0.0,
            "pass_rate": 0.0,
            "cost_usd": 0.0,
        }
        assert [q.kinds for q in diff.queries] == [[] for _ in diff.queries] and diff.total.counts["changed"] == 0
        assert {q.pass_rate.verdict.value for q in diff.queries} == {"unchanged"}  # repeated runs: ruled out drops


FORBIDDEN_SPEC = """
agent: demo
baseline_dir: ./golden
queries:
  - id: mail
    query: Summarise my inbox
    runs: 3
    correctness: {expected_in_answer: ["inbox"]}
    path: {forbidden_tools: [send_email]}
"""


def runs_of(qid: str, tools_per_run, costs) -> list[dict]:
    return [
        {**t(qid, answer="inbox: 3", tools=tools, cost=cost).model_dump(mode="json", exclude_defaults=True), "run": i}
        for i, (tools, cost) in enumerate(zip(tools_per_run, costs))
    ]


def test_a_newly_used_forbidden_tool_is_a_regression_and_the_json_results_carry_the_diff(write, write_traces):
    spec = write("spec.yaml", FORBIDDEN_SPEC)
    saved = run_cli(
        "save",
        "--spec",
        spec,
        "--version",
        "v1",
        "--traces",
        write_traces("v1.jsonl", runs_of("mail", [["read"]] * 3, [0.01, 0.02, 0.03])),
    )
    assert saved.returncode == 0, saved.stderr
    current = write_traces("now.jsonl", runs_of("mail", [["read", "send_email"]] * 3, [0.02, 0.04, 0.06]))
    result = run_cli("test", "--spec", spec, "--traces", current, "--format", "json")
    assert result.returncode == 1, result.stderr
    data = json.loads(result.stdout)
    diff = data["diff"]
    assert diff["schema_version"] == "agentci.diff/v3" and diff["before"] == "v1" and diff["after"] == "current"
    (query,) = diff["queries"]
    assert query["kinds"][0] == "regression" and "tools_changed" in query["kinds"]
    assert query["status"] == {"before": "pass", "after": "fail"}
    assert diff["total"]["counts"]["regression"] == 1
    # figures are means over the three runs, and so are the totals (Σ of the queries' means): the same kind
    assert (query["cost"]["cost_usd"]["before"], query["cost"]["cost_usd"]["after"]) == pytest.approx((0.02, 0.04))
    assert diff["total"]["cost_usd"]["after"] == pytest.approx(data["summary"]["cost_usd"] / 3) == pytest.approx(0.04)
    assert diff["total"]["cost_usd"]["before"] == pytest.approx(0.02) and (
        query["runs"]["before"],
        query["runs"]["after"],
    ) == (3, 3)
    markdown = diff_markdown.render_markdown(diff_from_json(diff))
    assert "🔴 **1 regression**" in markdown
    plain = run_cli("test", "--spec", spec, "--traces", current, "--format", "json", "--baseline", "none")
    assert "diff" not in json.loads(plain.stdout)


def diff_from_json(data: dict):
    from agentci_action.compare.diff_schema import RunDiff

    return RunDiff.model_validate(data)


def test_a_forbidden_tool_in_a_single_run_regresses_the_query_though_correctness_passes(write):
    spec = load_spec(write("spec.yaml", FORBIDDEN_SPEC.replace("    runs: 3\n", "")))
    before = side(spec, "v1", [t("mail", answer="inbox: 3", tools=["read"])])
    after = side(spec, "v2", [t("mail", answer="inbox: 3", tools=["read", "send_email"])])
    (query,) = diff_runs(before, after).queries
    assert query.kinds == [ChangeKind.REGRESSION, ChangeKind.TOOLS_CHANGED]
    assert (query.correctness.before, query.correctness.after) == ("pass", "pass")
    console = diff_console.render_diff(diff_runs(before, after))
    assert "Correctness      PASS → FAIL" in console and console.count("Correctness") == 1  # the query's, said once
    assert "| ✅ pass → ❌ fail: forbidden tools used: send\\_email at step 1 |" in diff_markdown.render_markdown(
        diff_runs(before, after)
    )
    (fixed,) = diff_runs(after, before).queries
    assert fixed.kinds[0] is ChangeKind.FIXED


MERMAID_NUMBER = r"-?\d+(?:\.\d+)?"  # mermaid xychart's number token: no exponent
MERMAID_STRING = r'"[^"\n]*"'


def test_mermaid_chart_prints_plain_decimals_and_quoted_labels(write):
    spec = load_spec(write("s.yaml", "agent: a\nqueries:\n  - {id: line-items, query: x}\n  - {id: bar, query: y}\n"))
    before = side(spec, 'v1 "rc"', [t("line-items", cost=0.00002, ms=1.5), t("bar", cost=0.00001, ms=2)])
    after = side(spec, "v2", [t("line-items", cost=0.00004, ms=3), t("bar", cost=1e-7, ms=4e6)])
    text = diff_markdown.render_markdown(diff_runs(before, after))
    charts = re.findall(r"```mermaid\n(.*?)```", text, re.S)
    assert len(charts) == 2
    for chart in charts:
        for line in chart.strip().splitlines()[1:]:
            keyword, _, rest = line.strip().partition(" ")
            if keyword in ("bar", "line"):
                assert re.fullmatch(rf"\[{MERMAID_NUMBER}(?:, {MERMAID_NUMBER})*\]", rest), line
            elif keyword == "x-axis":
                assert re.fullmatch(rf"\[{MERMAID_STRING}(?:, {MERMAID_STRING})*\]", rest), line
            else:
                assert keyword in ("title", "y-axis") and re.fullmatch(MERMAID_STRING, rest), line
    assert '"line-items"' in charts[0] and "0.00002" in charts[0] and "0.0000001" in charts[0]


def test_the_rag_example_comment_shows_the_weather_answer_before_and_after_and_why():
    """`agentci test` on v2-fixed's runs against v1-broken: the markdown (summary and comment) carries both answers."""
    result = run_cli(
        "test",
        "--spec",
        RAG_SPEC,
        "--traces",
        "examples/rag/runs/v2-fixed.jsonl",
        "--baseline",
        "v1-broken",
        "--format",
        "markdown",
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr
    weather = result.stdout[result.stdout.index("weather-tokyo — fixed") :]
    assert "- Tokyo should be mild today: around 18 degrees" in weather
    assert "+ I'm sorry, I can only answer questions about the AgentCI documentation" in weather
    assert "**Why it failed before:**" in weather and "forbidden in answer but found: 'degrees', 'rain'" in weather
    data = json.loads(
        run_cli(
            "diff", "--spec", RAG_SPEC, "--baseline", "v1-broken", "--compare", "v2-fixed", "--format", "json"
        ).stdout
    )
    (query,) = [q for q in data["queries"] if q["id"] == "weather-tokyo"]
    assert query["answer"]["before"].startswith("Tokyo should be mild today") and query["answer"]["after"].endswith(
        "help with the weather."
    )
    assert query["why"][0] == "forbidden in answer but found: 'degrees', 'rain'"


def test_answers_are_inert_trimmed_and_word_diffed(spec):
    fence = "```"
    hostile = f"{fence}\n<img src=x onerror=alert(1)> @admin\n" + "word " * 400
    before = side(spec, "v1", [t("breaks", answer="The kettle costs 30 EUR today.")])
    after = side(spec, "v2", [t("breaks", answer="The kettle costs 32 USD today.")])
    text = diff_markdown.render_markdown(diff_runs(before, after))
    assert "The kettle costs [-30 EUR-]{+32 USD+} today." in text
    long_after = side(spec, "v2", [t("breaks", answer=hostile)])
    diff = diff_runs(before, long_after)
    text = diff_markdown.render_markdown(diff)
    block = text[text.index("**Answer**") :]
    assert "````diff\n" in block  # a fence longer than the answer's own backticks: it cannot close the block
    assert "(+" in block and "characters)" in block and len(block) < 3000
    assert diff.queries[0].answer.after == hostile.strip()  # the JSON keeps it whole
    console = diff_console.render_diff(diff)
    assert "\x1b" not in console and "Answer after" in console


def test_a_model_change_is_its_own_kind_and_said_in_the_headline(spec):
    def called(model: str) -> Trace:
        found = t("stable").model_dump(mode="json", exclude_defaults=True)
        return Trace.model_validate({**found, "llm_calls": [{"model": model, "input_tokens": 10, "output_tokens": 5}]})

    before = side(spec, "v1", [called("gpt-4o-mini")])
    after = side(spec, "v2", [called("gpt-4.1")])
    diff = diff_runs(before, after)
    (query,) = diff.queries
    assert ChangeKind.MODEL_CHANGED in query.kinds and (query.models_before, query.models_after) == (
        ["gpt-4o-mini"],
        ["gpt-4.1"],
    )
    assert "models gpt-4o-mini → gpt-4.1" in diff_markdown.headline(diff)
    assert "Model            gpt-4o-mini → gpt-4.1" in diff_console.render_diff(diff)


def test_no_noise_float_equal_figures_plurals_single_chart_full_unchanged_list(spec, write):
    before = side(spec, "v1", [t("stable", cost=0.01), t("breaks")])
    after = side(spec, "v2", [t("stable", cost=0.0100000001), t("breaks", answer="nope", cost=0.05)])
    diff = diff_runs(before, after)
    text = diff_markdown.render_markdown(diff)
    assert "$0.0100 → $0.0100" not in text and "▲ 0%" not in text
    assert "1 regression" in text and "2 queries" in text and "mermaid" not in text  # one query moved: no chart
    assert "latency ?" not in text
    many = ["agent: a", "queries:"] + [f"  - {{id: query-number-{i:03d}, query: q{i}}}" for i in range(200)]
    big = load_spec(write("many.yaml", "\n".join(many)))
    traces = [t(f"query-number-{i:03d}") for i in range(200)]
    console = diff_console.render_diff(diff_runs(side(big, "v1", traces), side(big, "v2", traces)))
    assert "Unchanged (200): query-number-000," in console and "more (the JSON lists every query)" in console
    assert "…" not in console.replace("  … and", "")


REFUND = "agent: refund-agent\nqueries:\n  - {id: refund, query: 'Order 1042 arrived broken, refund it'}\n"


def calls_trace(qid: str, calls: list[tuple[str, dict]], answer: str = "Refunded.", **fields) -> Trace:
    return Trace.model_validate(
        {"id": qid, "final_answer": answer, "tool_calls": [{"name": n, "arguments": a} for n, a in calls], **fields}
    )


def test_the_route_change_is_in_front_of_the_reviewer_with_the_first_difference_and_changed_arguments(write):
    spec = load_spec(write("spec.yaml", REFUND))
    before = [
        calls_trace("refund", [("lookup_order", {"order_id": "1042"}), ("refund", {"order_id": "1042", "amount": 35})])
    ]
    after = [
        calls_trace("refund", [("refund", {"order_id": "1042", "amount": 350}), ("lookup_order", {"order_id": "1042"})])
    ]
    now = side(spec, "v2", after)
    diff = diff_runs(side(spec, "v1", before), now)
    [query] = diff.queries
    assert (query.path.route_before, query.path.route_after) == (["lookup_order", "refund"], ["refund", "lookup_order"])
    page = html.render_html(now.run, diff)
    assert "<li>refund (step 1 → 0): amount 35 → 350</li>" in page
    assert [c.model_dump() for c in query.path.argument_changes] == [
        {"tool": "refund", "step_before": 1, "step_after": 0, "key": "amount", "before": "35", "after": "350"}
    ]
    markdown = diff_markdown.render_markdown(diff)
    assert "| lookup\\_order → refund ⇒ refund → lookup\\_order |" in markdown  # in the table row itself
    assert "before  lookup_order → refund\nafter   refund → lookup_order\n        ^\n" in markdown
    assert "- refund \\(step 1 → 0\\): amount 35 → 350" in markdown
    console = diff_console.render_diff(diff)
    assert "║     Route before     lookup_order → refund" in console
    assert "║     Route after      refund → lookup_order" in console
    assert "║                      ^ step 0" in console
    assert "║     Arguments        refund (step 1 → 0): amount 35 → 350" in console
    assert json.loads(render_diff(diff))["queries"][0]["path"]["argument_changes"][0]["key"] == "amount"


def test_long_routes_are_cut_alike_around_their_first_difference_and_stay_inert(write):
    spec = load_spec(write("spec.yaml", REFUND))
    tools = [f"step{i}" for i in range(30)]
    hostile = "evil\n::error file=x::pwned <b>@octocat</b>"
    before = [calls_trace("refund", [(n, {}) for n in tools])]
    after = [calls_trace("refund", [(n, {}) for n in [*tools[:20], hostile, *tools[21:]]])]
    diff = diff_runs(side(spec, "v1", before), side(spec, "v2", after))
    markdown = diff_markdown.render_markdown(diff)
    block = markdown[markdown.index("**Tool calls** in order, first difference at step 20:") :]
    before_line, after_line, caret = block.split("```text\n", 1)[1].split("\n")[:3]
    assert before_line.startswith("before  … 18 calls → step18 → step19 → step20 →")
    assert after_line.startswith("after   … 18 calls → step18 → step19 → evil⏎::error")
    assert before_line.endswith("→ … 2 more") and after_line.endswith("→ … 2 more")
    assert caret.index("^") == after_line.index("evil")  # under the first difference
    assert "@octocat" not in markdown and "<b>" not in markdown.replace("<​b>", "")


def test_handoff_routes_show_before_and_after(write):
    spec = load_spec(write("spec.yaml", REFUND))
    before = [t("refund", handoffs=["triage", "billing"])]
    after = [t("refund", handoffs=["triage", "refunds"])]
    diff = diff_runs(side(spec, "v1", before), side(spec, "v2", after))
    markdown = diff_markdown.render_markdown(diff)
    assert "**Handoffs:** routing changed: triage → billing ⇒ triage → refunds\n" in markdown
    console = diff_console.render_diff(diff)
    assert "Handoffs         routing changed: triage → billing ⇒ triage → refunds" in console


def test_a_rise_from_zero_says_from_0_not_new_and_figures_carry_no_float_noise(write):
    spec = load_spec(write("spec.yaml", REFUND))
    before = [t("refund", tools=["a"], cost=0.5)]
    after = [t("refund", tools=["a", "a", "a"], cost=0.78)]
    diff = diff_runs(side(spec, "v1", before), side(spec, "v2", after))
    console = diff_console.render_diff(diff)
    assert "Loops            0 → 2  (▲ from 0)" in console and "(new)" not in console
    data = json.loads(render_diff(diff))["queries"][0]
    assert data["cost"]["cost_usd"]["change"] == 0.28  # not 0.28000000000000003
    assert data["path"]["loops"] == {
        "before": 0,
        "after": 2,
        "change": 2,
        "percent": None,
        "new": True,
        "interval": None,  # one run per side: no bootstrap interval
    }
    assert Delta.of(3.0, 4).model_dump()["before"] == 3  # a mean that is a whole number reads as one


def test_the_most_frequent_answer_note_only_with_repeated_runs_whose_answers_changed(write):
    spec = load_spec(write("spec.yaml", REFUND.replace("refund it'}", "refund it', path: {forbidden_tools: [drop]}}")))
    one = diff_runs(side(spec, "v1", [t("refund")]), side(spec, "v2", [t("refund", tools=["drop"])]))
    text = diff_markdown.render_markdown(one) + diff_console.render_diff(one)
    assert "the most frequent" not in text
    assert "**Answer** (unchanged):" in text and "Answer (unchanged)" in text
    runs = [Trace.model_validate({**t("refund").model_dump(), "run": n}) for n in range(3)]
    changed = [
        Trace.model_validate({**t("refund", answer=a).model_dump(), "run": n}) for n, a in enumerate(["ok", "ok", "no"])
    ]
    many = diff_runs(side(spec, "v1", runs), side(spec, "v2", changed))
    assert "the most frequent on both sides; other runs' answers changed" in diff_markdown.render_markdown(many)


def test_console_why_lines_wrap_inside_the_box_and_lose_nothing(write):
    spec = load_spec(
        write(
            "spec.yaml",
            "agent: a\nqueries:\n  - {id: q, query: q, path: {expected_tool_calls: [{name: lookup_order}, {name: refund}], match_mode: strict, severity: {expected_tool_calls: fail}}}\n",
        )
    )
    good = [calls_trace("q", [("lookup_order", {}), ("refund", {})])]
    bad = [calls_trace("q", [("refund", {}), ("lookup_order", {})])]
    text = diff_console.render_diff(diff_runs(side(spec, "v1", good), side(spec, "v2", bad)))
    boxed = [line for line in text.splitlines() if line.startswith("║")]
    assert all(len(line) == len(boxed[0]) for line in boxed)
    assert not [
        line for line in boxed if line.rstrip(" ║").endswith("…") and "/tmp" not in line and "spec.yaml" not in line
    ]
    why = " ".join(
        line.strip("║ ").removeprefix("Why").strip()
        for line in boxed
        if "Why" in line or line.startswith("║                      ")
    )
    assert "got refund; out of order: lookup_order (expected_tool_calls[0]) called at step 1" in re.sub(
        r"\s+", " ", why
    )


def test_sums_ratios_and_percentiles_carry_no_float_noise_into_the_json():
    everyway = ROOT / "tests" / "fixtures" / "everyway"
    done = run_cli(
        "test", "agentci_spec.yaml", "--traces", "current.jsonl", "--baseline", "v1", "--format", "json", cwd=everyway
    )
    data = json.loads(done.stdout)
    assert data["summary"]["cost_usd"] == 0.0306  # not 0.030600000000000002
    assert data["summary"]["aggregates"]["p95_latency_ms"] == 2920  # not 2919.999999999999
    assert data["diff"]["uplift"]["cost_usd"]["uplift"] == 0.53  # not 0.5299999999999999
    totals = data["diff"]["total"]["cost_usd"]
    assert (totals["before"], totals["after"]) == (0.018, 0.0266)


def test_an_unchanged_route_is_counted_in_the_table_with_its_noun(write):
    spec = load_spec(write("spec.yaml", REFUND))
    one = diff_runs(
        side(spec, "v1", [t("refund", tools=["a"])]), side(spec, "v2", [t("refund", answer="new", tools=["a"])])
    )
    assert "| ✅ pass | 1 call |" in diff_markdown.render_markdown(one)
    none = diff_runs(side(spec, "v1", [t("refund")]), side(spec, "v2", [t("refund", answer="new")]))
    assert "| ✅ pass | 0 calls |" in diff_markdown.render_markdown(none)
