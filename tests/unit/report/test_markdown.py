"""The job summary and the PR comment.

Golden files (a change to the output is a visible diff), inert untrusted text, and GitHub's size limits.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from helpers import GOLDEN, check_golden
from helpers.results_builder import HOSTILE, layer, mixed_diff, mixed_run, query, run

from agentci_action.engine.results import ModelCalls
from agentci_action.report.markdown import (
    COMMENT_BUDGET,
    COMMENT_ROWS,
    SUMMARY_BUDGET,
    Links,
    content_digest,
    digest_of,
    header_slug,
    inline,
    marker,
    render_comment,
    render_summary,
)

LINKS = Links(
    blob_url="https://github.com/octo/agent/blob/" + "h" * 40,
    run_url="https://github.com/octo/agent/actions/runs/99",
    sha="h" * 40,
)


def test_summary_golden():
    check_golden("summary_mixed.md", render_summary(mixed_run(), links=LINKS))


def test_comment_golden():
    """The README's example: a support agent's pull request, against its saved baseline."""
    current = mixed_run()
    links = Links(run_url=LINKS.run_url, sha=LINKS.sha)  # no links to the spec's lines: the README stays short
    check_golden("comment_mixed.md", render_comment(current, "agentci", links=links, diff=mixed_diff(current)))


README_EXAMPLE = re.compile(
    r"(<!-- begin tests/golden/comment_mixed\.md: [^\n]* -->\n)(.*?)(\n<!-- end tests/golden/comment_mixed\.md -->)",
    re.S,
)


def test_readme_shows_the_golden_comment():
    """README's rendered example is the golden comment, blockquoted; AGENTCI_UPDATE_GOLDEN=1 rewrites it."""
    readme_path = GOLDEN.parent.parent / "README.md"
    readme = readme_path.read_text(encoding="utf-8")
    quoted = "".join(
        f"> {line}\n" if line else ">\n"
        for line in (GOLDEN / "comment_mixed.md").read_text(encoding="utf-8").splitlines()
    )
    match = README_EXAMPLE.search(readme)
    assert match, "README lost the markers around the comment example"
    if os.environ.get("AGENTCI_UPDATE_GOLDEN") == "1":
        readme_path.write_text(readme[: match.start(2)] + quoted + readme[match.end(2) :], encoding="utf-8")
        match = README_EXAMPLE.search(readme := readme_path.read_text(encoding="utf-8"))
    assert match.group(2) == quoted, "README's comment example differs from tests/golden/comment_mixed.md"


def test_footers_name_the_release_that_judged_the_run():
    """The run's own version (a results file from an older release keeps its own), inert when hostile."""
    older = mixed_run().model_copy(update={"agentci_version": "2.0.1"})
    for text in (render_summary(older, links=LINKS), render_comment(older, "agentci", links=LINKS)):
        assert text.endswith(
            "<sub>AgentCI 2.0.1 · commit hhhhhhh · [workflow run](https://github.com/octo/agent/actions/runs/99)</sub>\n"
        )
    assert render_summary(older).endswith("\n<sub>AgentCI 2.0.1</sub>\n")
    hostile = render_comment(mixed_run().model_copy(update={"agentci_version": HOSTILE}), "agentci")
    assert hostile.endswith(f"<sub>AgentCI {inline(HOSTILE, 40)}</sub>\n")


def test_all_pass_golden():
    check_golden("summary_pass.md", render_summary(run(query("refund-policy", 4, "pass")), links=Links()))


def test_inline_makes_untrusted_text_inert():
    text = inline(HOSTILE)
    assert "<" not in text and ">" not in text
    assert "@octocat" not in text and "@\u200boctocat" in text
    assert re.search(r"(?<!\\)\|", text) is None  # every pipe escaped: no table break
    assert re.search(r"(?<!\\)`", text) is None
    assert "\n" not in inline("a\nb\r\nc")


def table_rows(markdown: str) -> list[str]:
    return [line for line in markdown.splitlines() if line.startswith("| ")]


def tables(markdown: str) -> list[list[str]]:
    """Each table's lines (header, rule, rows): runs of consecutive lines starting with '|'."""
    found: list[list[str]] = []
    previous = False
    for line in markdown.splitlines():
        if line.startswith("|"):
            if not previous:
                found.append([])
            found[-1].append(line)
        previous = line.startswith("|")
    return found


def test_hostile_text_breaks_neither_the_table_nor_the_marker():
    current = mixed_run()
    comment = render_comment(current, "agentci", links=LINKS, diff=mixed_diff(current))
    assert comment.count("<!--") == 2 and comment.startswith(marker("agentci") + "\n")
    assert "<details>|" not in comment and "@octocat" not in comment
    assert len(tables(comment)) >= 4  # the reasons, the diff, a changed query's figures, every query
    for table in tables(comment):
        columns = len(re.findall(r"(?<!\\)\|", table[0]))
        for row in table:
            assert len(re.findall(r"(?<!\\)\|", row)) == columns, row
    opened, closed = comment.count("<details>"), comment.count("</details>")
    assert opened == closed == 3  # two changed queries and every query's table, folded; none injected


def test_each_reason_is_said_once_failures_first_and_each_finding_with_its_own_status():
    """The reasons are the first table (failures before warnings).

    The diff below shows routes and answers, not the reasons again; a warning beside the blocking failure reads ⚠️, not
    ❌.
    """
    current = mixed_run()
    comment = render_comment(current, "agentci", links=LINKS, diff=mixed_diff(current))
    reasons = tables(comment)[0]
    assert reasons[0] == "| | Query | Spec | Why |"
    assert [row.split(" | ")[1].split("<br>")[0] for row in reasons[2:]] == [
        "refund-damaged",
        "prompt-injection",
        "order-status",
    ]
    for reason in ("expected\\_tool\\_calls not matched", "answer does not contain 'refund'", "tool recall: 0.50"):
        assert comment.count(reason) == 1, reason
    assert "Why it fails now" not in comment and "### Details" not in comment
    blocked = reasons[2]
    assert "❌ **path**: \\[expected\\_tool\\_calls: severity fail\\]" in blocked
    assert "⚠️ **path**: match mode 'strict' against the baseline failed" in blocked
    assert (
        comment.index("| | Query | Spec | Why |") < comment.index("### AgentCI diff") < comment.index("layer by layer")
    )


def test_a_replayed_run_s_figures_are_said_in_total_and_per_query_and_calls_that_went_live_in_the_query_s_reasons():
    went_live = "call 2 (POST openai /chat/completions): the nearest differs: " + HOSTILE
    calls = ModelCalls(replayed=3, live=1, paid_usd=0.0021, went_live=[went_live])
    failing = query("refund", 12, "fail", correctness=layer("fail", "answer does not contain 'refund'"))
    current = run(failing.model_copy(update={"model_calls": calls}), query("status", 20, "pass"))
    current.summary = current.summary.model_copy(update={"model_calls": ModelCalls.total([calls])})
    for rendered in (render_comment(current, "agentci", links=LINKS), render_summary(current, links=LINKS)):
        assert "Model calls (replay): 3 replayed · 1 live · $0.0021 paid" in rendered
        [row] = [line for line in table_rows(rendered) if line.startswith("| ❌ | refund<br>")]
        assert "❌ **correctness**: answer does not contain 'refund'<br>**replay**: went live: call 2 \\(POST" in row
        assert (
            "@octocat" not in rendered and "&lt;details&gt;" in row and "<!-- agentci-comment: agentci -->" not in row
        )
        [folded] = [line for line in table_rows(rendered) if line.startswith("| ❌ | refund |")]
        assert folded.endswith(
            "| ✅ pass · $0.0021 · ×1.05 vs baseline · 812 tok · model calls 3 replayed · 1 live · $0.0021 paid |"
        )
        [passing] = [line for line in table_rows(rendered) if line.startswith("| ✅ | status |")]
        assert "model calls" not in passing  # a query not run through replay says nothing of it


def test_the_changed_query_fold_shows_the_route_before_and_after_with_its_arguments():
    current = mixed_run()
    comment = render_comment(current, "agentci", links=LINKS, diff=mixed_diff(current))
    fold = comment[comment.index("<details><summary>🔴 refund-damaged") :]
    fold = fold[: fold.index("</details>")]
    assert "**Tool calls** in order, first difference at step 0:" in fold
    assert "```text\nbefore  lookup_order → refund\nafter   refund → lookup_order\n        ^\n```" in fold
    assert "- refund \\(step 1 → 0\\): amount 35.0 → 350.0" in fold
    row = next(line for line in table_rows(comment) if line.startswith("| 🔴 | refund-damaged"))
    assert "lookup\\_order → refund ⇒ refund → lookup\\_order" in row


def test_marker_cannot_be_closed_by_the_header():
    assert re.fullmatch(r"evil-b-[0-9a-f]{8}", header_slug("Evil --> <b>"))
    assert re.fullmatch(r"matrix-gpt-4o-[0-9a-f]{8}", header_slug("matrix: gpt-4o"))
    assert re.fullmatch(r"<!-- agentci-comment: default-[0-9a-f]{8} -->", marker("检索"))
    assert marker("rag-agent") == "<!-- agentci-comment: rag-agent -->"  # a header that is its own slug stays readable


@pytest.mark.parametrize(
    "pair",
    [
        ("RAG", "rag"),
        ("a b", "a-b"),
        ("a b", "a_b"),
        ("検索", "チャット"),
        ("", "default"),
        ("Évaluation", "évaluation"),
    ],
)
def test_different_headers_never_share_a_marker(pair):
    first, second = map(header_slug, pair)
    assert first != second
    for slug in (first, second):
        assert re.fullmatch(r"[a-z0-9._]+(-[a-z0-9._]+)*", slug) and "--" not in slug


def test_digest_tracks_results_not_links():
    base = mixed_run()
    assert (
        digest_of(render_comment(base, "h", links=LINKS))
        == digest_of(render_comment(base, "h"))
        == content_digest(base)
    )
    other = run(query("refund-policy", 4, "pass"))
    assert content_digest(other) != content_digest(base)
    assert digest_of("no marker") is None


def many(n: int) -> list:
    long = "x" * 900
    return [query(f"q{i:05d}", i + 1, "fail", correctness=layer("fail", f"{long} {i}")) for i in range(n)]


@pytest.mark.parametrize(
    ("render", "limit", "rows"),
    [
        (lambda r: render_comment(r, "agentci", links=LINKS), COMMENT_BUDGET, COMMENT_ROWS),
        (lambda r: render_summary(r, links=LINKS), 1_000_000, 2000),
    ],
)
def test_huge_suites_are_cut_to_the_budget_and_say_so(render, limit, rows):
    text = render(run(*many(2000)))
    assert len(text.encode()) <= limit
    note = re.search(
        r"Cut to fit GitHub's size limit: (\d+) failing or warning quer(?:y|ies) and (\d+) table rows? left out", text
    )
    assert note, text[-500:]
    reasons, *rest = tables(text)
    assert len(reasons) - 2 + int(note.group(1)) == 2000  # minus the header and rule lines
    listed = len(rest[0]) - 2 if rest else 0
    assert listed + int(note.group(2)) == rows  # the comment lists at most COMMENT_ROWS, the summary all
    assert text.rstrip().endswith("</sub>")  # the footer survives the cut


def test_the_comment_lists_at_most_comment_rows_queries_and_says_the_summary_has_every_one():
    suite = run(*(query(f"q{i:03d}", i + 1, "pass") for i in range(200)))
    comment, summary = render_comment(suite, "agentci", links=LINKS), render_summary(suite, links=LINKS)
    assert len(table_rows(comment)) - 1 == COMMENT_ROWS and len(table_rows(summary)) - 1 == 200
    assert "150 more queries: the job summary and the results file list every one." in comment
    assert len(comment.encode()) < 20_000  # a 200-query suite that passed stays a short comment


def test_small_suites_are_not_cut():
    assert "Cut to fit" not in render_comment(mixed_run(), "agentci")


def test_run_level_warnings_are_quoted_inert():
    text = render_summary(
        run(query("q", 1, "pass"), warnings=[f"traces/x.jsonl:3: trace with id {HOSTILE!r} matches no query"])
    )
    note = next(line for line in text.splitlines() if line.startswith("> traces/x.jsonl:3"))
    assert "@\u200boctocat" in note and "<" not in note and "\\|" in note


def _judge_skipped(qid: str, line: int, status: str = "pass", correctness_status: str = "pass"):
    """A query whose llm_judge check was skipped for want of a key (beside a passing deterministic check)."""
    from agentci_action.engine.results import Check, LayerResult, Status

    checks = [
        Check(name="expected_in_answer", status=Status.PASS),
        Check(name="llm_judge", status=Status.SKIP, message=f"llm_judge skipped: no ANTHROPIC_API_KEY {HOSTILE}"),
    ]
    if correctness_status == "fail":
        checks[0] = Check(name="expected_in_answer", status=Status.FAIL, message="missing 'refund'")
    correctness = LayerResult.from_checks(checks)
    assert correctness.status is Status(correctness_status)
    return query(qid, line, status, correctness=correctness)


def test_skipped_judge_checks_are_said_not_passed_in_summary_and_comment():
    result = run(_judge_skipped("a", 4), _judge_skipped("b", 9), _judge_skipped("c", 14, "fail", "fail"))
    assert result.unverified() == {f"llm_judge skipped: no ANTHROPIC_API_KEY {HOSTILE}": 2}  # c failed: not counted
    for text in (render_summary(result), render_comment(result, "agentci")):
        head = text.split("| |")[0]
        assert "2 correctness checks skipped, not passed: llm\\_judge skipped: no ANTHROPIC\\_API\\_KEY" in head
        assert "\\(×2\\)" in head and "::error" in head and "@\u200b" in head and "<details>" not in head


def test_an_all_pass_run_with_skipped_checks_does_not_say_all_passed_alone():
    text = render_summary(run(_judge_skipped("a", 4)))
    assert text.startswith("## ✅ AgentCI: all 1 query passed, 1 check not verified\n")


def _large_suite_with_renamed_queries(tmp_path: Path):
    """300 queries with long ids; 20 renamed since the baseline (20 removed, 20 new, 20 warnings); all costs moved."""
    import json

    from agentci_action.compare.baselines import SaveOptions, save_baseline
    from agentci_action.pipeline.evaluation import Evaluation, evaluate
    from agentci_action.spec.loader import load_spec
    from agentci_action.trace.load import load_traces

    def ids(renamed: bool) -> list[str]:
        return [
            f"{'renamed-' if renamed and i < 20 else ''}query-{i:03d}-" + "long-identifier-" * 12 for i in range(300)
        ]

    def write_suite(name: str, keys: list[str], cost: float) -> tuple[Path, Path]:
        spec = tmp_path / f"{name}.yaml"
        spec.write_text(
            "agent: big\nbaseline_dir: golden\nqueries:\n"
            + "".join(
                f"  - {{id: {key}, query: 'question {key}', correctness: {{expected_in_answer: [ok]}}}}\n"
                for key in keys
            )
        )
        traces = tmp_path / f"{name}.jsonl"
        traces.write_text(
            "".join(
                json.dumps(
                    {
                        "id": key,
                        "final_answer": "ok" if i % 7 else "no",
                        "total_cost_usd": cost * (1 + i),
                        "tool_calls": [{"name": f"tool-{key[-40:]}-{n}"} for n in range(i % 5)],
                        "total_duration_ms": 1000.0 * (1 + i),
                    }
                )
                + "\n"
                for i, key in enumerate(keys)
            )
        )
        return spec, traces

    old_spec, old_traces = write_suite("old", ids(False), 0.001)
    save_baseline(load_spec(old_spec), load_traces([str(old_traces)]), "v1", SaveOptions(force=True))
    new_spec, new_traces = write_suite("new", ids(True), 0.003)
    return evaluate(Evaluation(spec=str(new_spec), traces=[str(new_traces)], baseline="v1"))


@pytest.mark.parametrize("budget", [COMMENT_BUDGET, SUMMARY_BUDGET, 20_000])
def test_the_summary_and_comment_with_a_large_diff_stay_within_their_budget(tmp_path, budget):
    outcome = _large_suite_with_renamed_queries(tmp_path)
    diff = outcome.diff
    assert (
        diff.total.counts["removed_query"] == 20 and diff.total.counts["new_query"] == 20 and len(diff.warnings) == 1
    )  # the spec hash; the removed queries are listed as removed, not warned about again
    comment = render_comment(outcome.run, "agentci", budget=budget, diff=diff)
    summary = render_summary(outcome.run, budget=budget, diff=diff)
    for body in (comment, summary):
        assert len(body.encode()) <= budget
        assert "AgentCI diff" in body or "did not fit" in body  # the diff, or a line saying it was cut
        if budget < SUMMARY_BUDGET:
            assert "Cut to fit" in body


def test_a_big_change_keeps_the_comment_s_diff_to_diff_rows_queries():
    from helpers.results_builder import Side, _trace

    from agentci_action.compare.diff import Side as DiffSide
    from agentci_action.compare.diff import diff_runs
    from agentci_action.report.markdown import DIFF_ROWS

    ids = [f"q{i:03d}" for i in range(200)]
    before = run(*(query(q, i + 1, "pass", answer="old") for i, q in enumerate(ids)))
    after = run(*(query(q, i + 1, "pass", answer="new") for i, q in enumerate(ids)))
    diff = diff_runs(
        DiffSide("v1", before, {q: [_trace(q, Side("old", []))] for q in ids}),
        DiffSide("current", after, {q: [_trace(q, Side("new", []))] for q in ids}),
    )
    comment = render_comment(after, "agentci", links=LINKS, diff=diff)
    changed_rows = [row for row in table_rows(comment) if row.startswith("| 🔶 |")]
    assert len(changed_rows) == DIFF_ROWS and comment.count("<details><summary>🔶") <= DIFF_ROWS
    assert f"{200 - DIFF_ROWS} more changed queries are not in the table" in comment
    assert len(comment.encode()) <= COMMENT_BUDGET
