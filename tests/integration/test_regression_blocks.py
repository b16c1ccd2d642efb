"""A real regression blocks: docs/explanation/severity-and-gates.md's table "verdict × setting → query status → exit code", cell by cell.

Each cell runs the pipeline as `agentci test` does (spec, trace files, baseline traces), then reads the query's status,
the exit code and every report (console, markdown summary, JSON): they must agree.
"""

from __future__ import annotations

import json

import pytest

from agentci_action.compare.baselines import SaveOptions, save_baseline
from agentci_action.engine.evaluate_spec import Settings
from agentci_action.engine.results import Status
from agentci_action.pipeline.blocking import exit_code, parse_fail_on
from agentci_action.pipeline.evaluation import Evaluation, evaluate
from agentci_action.report import console, markdown, results_json
from agentci_action.spec.loader import load_spec
from agentci_action.trace.load import load_traces

# verdict → (baseline passes of runs, current passes of runs)
VERDICTS = {
    "regressed": ((20, 20), (6, 10)),  # p = 0.0097
    "inconclusive": ((10, 10), (8, 10)),
    "unchanged": ((20, 20), (10, 10)),
    "improved": ((0, 10), (10, 10)),
}

# (verdict, setting) → (query status, exit code)
TABLE = {
    ("regressed", "default"): (Status.FAIL, 1),
    ("regressed", "min_pass_rate: 0.5"): (Status.FAIL, 1),
    ("regressed", "fail-on path"): (Status.FAIL, 0),
    ("regressed", "max_inconclusive: 0"): (Status.FAIL, 1),
    ("inconclusive", "default"): (Status.WARN, 0),
    ("inconclusive", "min_pass_rate: 0.5"): (Status.WARN, 0),
    ("inconclusive", "min_pass_rate: 0.9"): (Status.FAIL, 1),  # the floor the spec sets stays absolute
    ("inconclusive", "fail-on path"): (Status.WARN, 0),
    ("inconclusive", "max_inconclusive: 0"): (Status.WARN, 1),  # the suite gate blocks
    ("unchanged", "default"): (Status.PASS, 0),
    ("unchanged", "min_pass_rate: 0.5"): (Status.PASS, 0),
    ("unchanged", "max_inconclusive: 0"): (Status.PASS, 0),
    ("improved", "default"): (Status.PASS, 0),
    ("improved", "min_pass_rate: 0.5"): (Status.PASS, 0),
}


def _traces(path, passed: int, runs: int) -> str:
    lines = [
        json.dumps({"id": "q", "run": i, "final_answer": "Paris" if i < passed else "Lyon", "tool_calls": []})
        for i in range(runs)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


def _spec(write, runs: int, setting: str) -> str:
    floor = f"  {setting}\n" if setting.startswith("min_pass_rate") else ""
    suite = f"suite:\n  {setting}\n" if setting.startswith("max_inconclusive") else ""
    return str(
        write(
            "agentci.yml",
            f"agent: demo\ndefaults:\n  runs: {runs}\n{floor}queries:\n"
            '  - id: q\n    query: "Capital of France?"\n    correctness: {expected_in_answer: ["Paris"]}\n' + suite,
        )
    )


@pytest.mark.parametrize(("verdict", "setting"), list(TABLE), ids=[f"{v}-{s}" for v, s in TABLE])
def test_verdict_and_setting_give_the_tables_status_and_exit_code(write, tmp_path, verdict, setting):
    (base_passed, base_runs), (passed, runs) = VERDICTS[verdict]
    fail_on = parse_fail_on("path" if setting == "fail-on path" else None)
    saved = load_spec(_spec(write, base_runs, setting))
    save_baseline(
        saved, load_traces([_traces(tmp_path / "base.jsonl", base_passed, base_runs)]), "v1", SaveOptions(force=True)
    )
    outcome = evaluate(
        Evaluation(
            spec=_spec(write, runs, setting),
            traces=[_traces(tmp_path / "now.jsonl", passed, runs)],
            baseline="v1",
            settings=Settings(fail_on=fail_on),
        )
    )
    run, diff = outcome.run, outcome.diff
    assert diff is not None
    status, code = TABLE[verdict, setting]
    (query,) = run.results
    (change,) = diff.queries
    assert change.pass_rate is not None and change.pass_rate.verdict.value == verdict
    assert (query.status, exit_code(run)) == (status, code)
    # the diff's row, the summary's counts and every report say the same
    assert change.status.after is status
    assert (run.summary.failed, run.summary.warnings) == (status is Status.FAIL, status is Status.WARN)
    assert diff.total.passed.after == (status is not Status.FAIL)
    found = json.loads(results_json.render(run, diff))
    assert found["results"][0]["status"] == status.value
    assert found["summary"]["failed"] == run.summary.failed
    head = markdown.headline(run)
    if code:
        assert "🔴" in head or "❌" in head or "fail" in head
        assert "not blocking" not in head
    if status is Status.FAIL and not code:
        assert "not blocking" in head
    shown = console.render_with_diff(run, diff)
    if status is not Status.PASS:  # the query's row says why, in the verdict's words
        assert f"against {diff.before}: {verdict}: " in shown


def test_no_run_passing_fails_without_a_floor(write, tmp_path):
    outcome = evaluate(
        Evaluation(spec=_spec(write, 4, "default"), traces=[_traces(tmp_path / "now.jsonl", 0, 4)], baseline="none")
    )
    assert outcome.run.results[0].status is Status.FAIL and exit_code(outcome.run) == 1


def test_some_runs_failing_only_warn_without_a_floor_or_baseline(write, tmp_path):
    outcome = evaluate(
        Evaluation(spec=_spec(write, 4, "default"), traces=[_traces(tmp_path / "now.jsonl", 3, 4)], baseline="none")
    )
    (query,) = outcome.run.results
    assert query.status is Status.WARN and exit_code(outcome.run) == 0
    assert "3 of 4 runs passed (75%), no min_pass_rate set" in query.correctness.messages[0]
