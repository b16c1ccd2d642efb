"""Figures that cannot contradict each other.

The suite composite, what `save` says it verified, where `init`'s next step runs from, and whether a warning blocks
(issue 20's defects 3, 5, 6 and 7).
"""

from __future__ import annotations

import json
import shlex

import pytest
from helpers import ROOT, hermetic_environment, run_cli

from agentci_action.engine.evaluate_spec import Settings, evaluate_spec
from agentci_action.spec.loader import load_spec
from agentci_action.trace.canonical import Trace


def test_the_suite_composite_counts_every_query_once(write):
    lines = ["agent: a", "queries:"]
    lines += [f"  - {{id: plain{i}, query: plain{i}}}" for i in range(14)]  # pass, nothing to score
    lines += [f"  - {{id: offroute{i}, query: offroute{i}, path: {{expected_tools: [lookup]}}}}" for i in range(2)]
    lines += [f"  - {{id: wrong{i}, query: wrong{i}, correctness: {{expected_in_answer: [ok]}}}}" for i in range(2)]
    spec = load_spec(write("s.yaml", "\n".join(lines)))
    traces = [
        Trace.model_validate({"id": q.key, "final_answer": "nope", "tool_calls": [{"name": "search"}]})
        for q in spec.queries
    ]
    summary = evaluate_spec(spec, traces).summary
    assert (summary.passed, summary.total) == (16, 18)
    # 14 unscored passes count 1, two passes scored 0 count (1 + 0) / 2, two failures scored 0 count 0
    assert summary.composite_score == pytest.approx((14 + 1) / 18)
    assert summary.grade == "C"  # the mixed-denominator formula gave (16/18 + 0) / 2 = 0.44, an F


JUDGED = """\
agent: a
judge_config: {model: claude-haiku-4-5, base_url: "http://127.0.0.1:9"}
queries:
  - id: q
    query: q
    correctness: {expected_in_answer: [ok], llm_judge: [{rule: "helpful"}]}
"""


def test_save_says_and_records_the_judge_checks_it_could_not_verify(write, write_traces, tmp_path):
    spec = write("agentci_spec.yaml", JUDGED)
    traces = write_traces("t.jsonl", [{"id": "q", "final_answer": "ok"}])
    done = run_cli("save", "--spec", spec, "--traces", traces, "--version", "v1", env=hermetic_environment())
    assert done.returncode == 0, done.stderr
    assert "precheck passed, 1 correctness check not verified" in done.stdout
    assert "ANTHROPIC_API_KEY" in done.stderr
    metadata = json.loads((tmp_path / "baselines" / "v1.json").read_text())["metadata"]
    (reason,) = metadata["unverified_checks"]
    assert "ANTHROPIC_API_KEY" in reason and metadata["unverified_checks"][reason] == 1
    listed = run_cli("baselines", "--spec", spec)
    assert "passed, 1 unverified" in listed.stdout


def test_save_without_judge_checks_records_nothing_unverified(write, write_traces, tmp_path):
    spec = write("agentci_spec.yaml", JUDGED.replace(', llm_judge: [{rule: "helpful"}]', ""))
    traces = write_traces("t.jsonl", [{"id": "q", "final_answer": "ok"}])
    done = run_cli("save", "--spec", spec, "--traces", traces, "--version", "v1")
    assert done.returncode == 0 and "not verified" not in done.stdout + done.stderr
    assert json.loads((tmp_path / "baselines" / "v1.json").read_text())["metadata"]["unverified_checks"] == {}


@pytest.mark.parametrize("target", ["sub/dir", "."])
def test_init_prints_a_next_step_that_runs_from_where_the_user_stands(tmp_path, target):
    done = run_cli("init", target, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    step = next(line for line in done.stdout.splitlines() if line.startswith("next: "))
    command = step.removeprefix("next: agentci ").split()
    ran = run_cli(*command, cwd=tmp_path)
    assert ran.returncode == 0, (step, ran.stdout, ran.stderr)


WARNS = """\
agent: a
queries:
  - id: q
    query: q
    checks:
      safety: {no_pii_leakage: true}
    path: {expected_tools: [lookup]}
"""


@pytest.mark.parametrize(
    "fail_on, blocks",
    [("correctness", False), ("correctness,path", True), ("path", True), ("cost", False), ("none", False)],
)
def test_a_correctness_warning_never_blocks_a_path_or_cost_warning_blocks_when_its_layer_is_in_fail_on(
    write, write_traces, fail_on, blocks
):
    spec = write("agentci_spec.yaml", WARNS)
    traces = write_traces(
        "t.jsonl", [{"id": "q", "final_answer": "mail me at a@example.com", "tool_calls": [{"name": "search"}]}]
    )
    run = evaluate_spec(load_spec(spec), [Trace.model_validate(json.loads(traces.read_text()))])
    (result,) = run.results
    assert (result.correctness.status, result.path.status) == ("warn", "warn")
    done = run_cli("test", "--spec", spec, "--traces", traces, "--fail-on", fail_on)
    assert done.returncode == (1 if blocks else 0), done.stdout
    layers = frozenset(fail_on.split(",")) - {"none"}
    evaluated = evaluate_spec(
        load_spec(spec), [Trace.model_validate(json.loads(traces.read_text()))], settings=Settings(layers)
    )
    assert evaluated.results[0].blocking is blocks


BLOCKING_RULE = "a correctness warning never blocks"


def test_every_passage_on_blocking_warnings_says_the_same():
    """The docs and action.yml state one rule.

    A fail blocks when its layer is in fail-on (forbidden tools are correctness); a warning blocks only in path or cost,
    when that layer is in fail-on; a correctness warning (a check of severity warn) never blocks.
    """
    readme = " ".join(
        " ".join((ROOT / page).read_text(encoding="utf-8").split())
        for page in ("docs/guides/action.md", "docs/reference/checks.md")
    )
    action = " ".join((ROOT / "action.yml").read_text(encoding="utf-8").split())
    assert "a `warn` blocks only when its layer is listed in `fail-on`" not in readme
    assert "warnings never fail it unless `fail-on` names their layer" not in readme
    assert readme.count(BLOCKING_RULE) >= 3 and BLOCKING_RULE in action


FIRST_RUN = """\
agent: a
queries:
{queries}
"""


def test_a_first_run_says_once_that_it_had_no_baseline_and_keeps_every_answer_in_full(write, write_traces, tmp_path):
    queries = "".join(
        f"  - {{id: q{i}, query: q{i}, path: {{min_sequence_similarity: 0.5}}, cost: {{max_cost_multiplier: 2}}}}\n"
        for i in range(3)
    )
    spec = write("agentci_spec.yaml", FIRST_RUN.format(queries=queries))
    long_answer = "word " * 2000 + "the end"  # far beyond any report's trimming
    write_traces(
        "t.jsonl",
        [
            {"id": f"q{i}", "final_answer": f"  {long_answer} {i}\n", "tool_calls": [{"name": "search"}]}
            for i in range(3)
        ],
    )
    console = run_cli("test", spec, "--traces", tmp_path / "t.jsonl")
    assert console.returncode == 0, console.stderr
    notes = [line for line in console.stdout.splitlines() if "no baseline" in line]
    save = f"agentci save --spec {spec} --traces {tmp_path / 't.jsonl'} --version v1"  # the one file they came from
    assert notes == [
        "3 queries had no baseline trace to compare with, so min_sequence_similarity, max_cost_multiplier were "
        f"not checked: `{save}` saves these runs as the baseline (once they pass), and later runs compare with it"
    ]
    assert "skipped: no baseline trace" not in console.stdout  # not on every query
    assert "3 queries · 3 passed (0 with warnings) · 0 failed · 0 errors · 6 checks skipped" in console.stdout
    report = json.loads(run_cli("test", spec, "--traces", tmp_path / "t.jsonl", "--format", "json").stdout)
    assert [r["answer"] for r in report["results"]] == [f"{long_answer} {i}" for i in range(3)]
    assert [r["tools"] for r in report["results"]] == [["search"]] * 3
    assert "diff" not in report  # no baseline, and still the full answers
    assert run_cli(*shlex.split(save)[1:]).returncode == 0  # as printed
    again = run_cli("test", spec, "--traces", tmp_path / "t.jsonl")
    assert "no baseline trace" not in again.stdout and again.returncode == 0


def test_the_console_agrees_in_number_with_its_counts(write, write_traces, tmp_path):
    spec = write(
        "agentci_spec.yaml",
        "agent: a\nqueries:\n  - {id: q, query: q, correctness: {expected_in_answer: [fine]}, cost: {max_llm_calls: 0}}\n",
    )
    write_traces("t.jsonl", [{"id": "q", "final_answer": "fine", "llm_calls": [{"model": "m", "input_tokens": 1}]}])
    console = run_cli("test", spec, "--traces", tmp_path / "t.jsonl", "--baseline", "none").stdout
    assert "agentci · a · 1 query · " in console
    assert "1 LLM call ·" in console and "1 token ·" in console
    assert "WARN: 1 query · 1 passed (1 with a warning) · 0 failed · 0 errors · $" in console
    for noise in ("1 queries", "1 LLM calls", "1 tokens", "1 checks", "1 errors", "1 requests", "1 with warnings"):
        assert noise not in console, noise
