"""What the reviewer reads beside the verdicts is true (issue 44, bullets 3, 4 and 6).

Each test builds the case that printed something false, and checks the words every format now prints instead:
impossible intervals, attribution that moved unchanged parts, and the small ones.
"""

from __future__ import annotations

import cmarkgfm
from cmarkgfm.cmark import Options

from agentci_action.compare.diff import token_changes
from agentci_action.compare.diff_schema import AnswerDiff, Delta, StatusDiff, TurnDiff
from agentci_action.compare.history import HistoryEntry, HistoryFigures, Trend, TrendLine
from agentci_action.compare.history import trend as history_trend
from agentci_action.compare.suite_change import interval_words, pass_rate_change, shown_interval
from agentci_action.engine.results import Status
from agentci_action.engine.token_attribution import query_tokens
from agentci_action.report import diff_format, token_phrases, trend_report
from agentci_action.report.diff_markdown import chart
from agentci_action.trace.canonical import Trace


def _html(markdown: str) -> str:
    """The markdown as GitHub renders a comment (cmark-gfm)."""
    return cmarkgfm.github_flavored_markdown_to_html(markdown, options=Options.CMARK_OPT_UNSAFE)


# Bullet 3: only possible intervals


def test_two_queries_print_no_interval_where_t_spans_hundreds_of_points():
    change = pass_rate_change([(1.0, 0.0), (0.0, 0.6)], 0.95)
    assert change is not None and change.low is not None and change.low < -1  # the statistic itself is unchanged
    assert shown_interval(change) is None
    assert interval_words(change) == "2 queries: too few for an interval"  # was "95% interval −294.1 to +214.1 …"


def test_an_interval_is_cut_to_the_changes_that_can_happen():
    pairs = [(1.0, 0.0), (1.0, 0.0), (1.0, 0.0), (0.0, 1.0), (1.0, 0.0)]
    change = pass_rate_change(pairs, 0.95)
    assert change is not None and change.low is not None and change.low < -1
    low, high = shown_interval(change) or (None, None)
    assert low == -1.0 and high is not None and high <= 1.0
    assert interval_words(change).startswith("95% interval −100 to ")


def test_the_pass_rate_band_stays_within_zero_and_one():
    def entry(rate: float) -> HistoryEntry:
        return HistoryEntry(
            commit="0" * 40, date="2026-11-01T00:00:00Z", agent="a", spec="s.yaml", status=Status.PASS,
            failed_gate=False, total=10, passed=round(rate * 10), pass_rate=rate, composite_score=rate, cost_usd=0.1,
            total_tokens=100,
        )  # fmt: skip

    lines = history_trend([entry(rate) for rate in (1.0, 1.0, 0.5, 1.0)]).lines
    line = next(line for line in lines if line.figure == "pass_rate")
    assert line.high == 1.0 and line.low is not None and line.low >= 0.0
    assert trend_report.band_text(line) == "0.44 – 1.00"  # was "0.44 – 1.31"


# Bullet 4: attribution that does not invent movement


def _trace(result_tokens: int, reported: int, framing: int | None = 9) -> Trace:
    """One call: a tool schema of 415 tokens, a system prompt of 40, a tool result of `result_tokens`."""
    breakdown = {
        "tokenizer": "o200k_base",
        "exact": True,
        "parts": [
            {"component": "tool_schemas", "name": "search_flights", "tokens": 415, "parameters": 3},
            {"component": "system_prompt", "tokens": 40},
            {"component": "tool_results", "name": "search_flights", "tokens": result_tokens},
        ],
        **({"framing": framing} if framing is not None else {}),
    }
    call = {"model": "gpt-4o", "input_tokens": reported, "output_tokens": 10, "input_breakdown": breakdown}
    return Trace.model_validate({"query": "q", "final_answer": "a", "llm_calls": [call]})


def test_a_grown_tool_result_moves_only_the_tool_results():
    before = query_tokens([_trace(100, 415 + 40 + 100 + 9)])
    after = query_tokens([_trace(1300, 415 + 40 + 1300 + 9)])
    assert before is not None and after is not None and before.exact and after.exact
    assert before.components["tool_schemas"] == after.components["tool_schemas"] == 415
    assert before.components["framing"] == 9
    moved = token_changes(before, after)
    assert moved is not None and [c.component for c in moved.components] == ["tool_results"]  # was schemas −14 too
    assert token_phrases.moved_lines(moved)[0].startswith("tool results +1,200 tokens")


def test_a_count_that_misses_the_reported_input_is_an_estimate_with_its_gap():
    found = query_tokens([_trace(100, 415 + 40 + 100 + 9 + 7)])  # a gateway counts 7 more
    assert found is not None and not found.exact and found.gap == 7
    assert found.components["tool_schemas"] == 415  # not scaled up by the gateway's count
    assert token_phrases.counted_by(found) == "o200k_base, estimate: 7 tokens reported beyond count and framing"


def test_ratios_no_rule_reads_leave_the_summary_line_with_a_definition_each():
    found = query_tokens([_trace(100, 415 + 40 + 100 + 9)])
    assert found is not None
    line = token_phrases.summary_line(found)
    assert "skill efficiency" not in line and "token efficiency ratio" not in line
    assert line.endswith("(o200k_base, exact)")
    figures = token_phrases.figures(found)
    assert any(f.startswith("skill efficiency 0.09: system prompt tokens / ") for f in figures)
    assert any(f.startswith("token efficiency ratio 10: tool schema tokens / system prompt tokens") for f in figures)


# Bullet 6: the small ones


def test_one_token_is_singular():
    before = query_tokens([_trace(100, 564)])
    after = query_tokens([_trace(101, 565)])
    moved = token_changes(before, after)
    assert moved is not None
    assert token_phrases.moved_lines(moved)[0].startswith("tool results +1 token:")  # was "+1 tokens"
    assert token_phrases.moved(moved.components[0]).split(":")[0] == "tool results +1 token"


def test_history_shares_keep_the_decimal_they_need():
    figures = HistoryFigures(
        runs=8,
        change_fail_percentage=0.125,
        revert_rate=0.25,
        reverted=[],
        pass_rate=None,
        cost_usd=None,
        composite_score=None,
    )
    assert trend_report.stability(figures) == "change fail percentage 12.5% · revert rate 25%"  # was 12%
    line = TrendLine("pass_rate", "pass rate", [1.0, 1.0, 1.0], None, 1.0, 1.0, True)
    assert "12.5%" in trend_report.markdown(Trend(["a", "b", "c"], [line], figures))


def test_a_turn_the_baseline_did_not_have_reads_new():
    from agentci_action.compare.diff import QueryDiff
    from agentci_action.report import diff_console, diff_markdown

    turn = TurnDiff(
        turn=1,
        user="hello",
        status=StatusDiff(before=None, after=Status.PASS),
        answer=AnswerDiff(before=None, after="hi"),
        route_after=["greet"],
    )
    assert diff_format.one_sided_turn(turn) == "Turn 1: new (the baseline has no turn 1)"
    query = QueryDiff.model_construct(first_diverged_turn=turn, file="spec.yaml")
    console = "\n".join(diff_console._turn_lines(query))
    assert "Turn 1: new" in console and "not reached" not in console and "Turn 1 before" not in console
    rendered = _html(diff_markdown.turn_block(query))
    assert "Turn 1: new (the baseline has no turn 1)" in rendered and "not reached" not in rendered
    assert "tools before" not in rendered and "+ hi" in rendered


def test_a_cost_chart_of_sub_cent_figures_is_folded():
    from agentci_action.compare.diff import CostDiff, QueryDiff, RunDiff

    def query(name: str, before: float, after: float) -> QueryDiff:
        cost = Delta.of(before, after)
        return QueryDiff.model_construct(id=name, cost=CostDiff.model_construct(cost_usd=cost))

    diff = RunDiff.model_construct(before="v1", after="v2")
    drawn = chart(
        diff, [query("a", 0.00002, 0.00003), query("b", 0.00001, 0.00002)], "cost_usd", "Cost per query", "USD"
    )
    rendered = _html(drawn)
    assert rendered.startswith("<details><summary>Cost per query (USD, each under a cent)")
    dear = chart(diff, [query("a", 0.2, 0.3), query("b", 0.1, 0.2)], "cost_usd", "Cost per query", "USD")
    assert dear.startswith("```mermaid")


def test_a_baseline_from_another_spec_says_what_changed_not_its_hashes():
    from types import SimpleNamespace

    from agentci_action.compare.baselines import Baseline, BaselineMetadata, spec_changes

    spec = SimpleNamespace(queries=[SimpleNamespace(key="a"), SimpleNamespace(key="c")])

    def saved(*keys: str) -> Baseline:
        return Baseline.model_construct(queries={key: [] for key in keys}, metadata=BaselineMetadata())

    assert spec_changes(spec, saved("a", "b")) == "queries added since: c; queries gone since: b"
    same = spec_changes(spec, saved("a", "c"))
    assert same == "the same queries, so another key changed (the baseline keeps only the spec's hash)"
