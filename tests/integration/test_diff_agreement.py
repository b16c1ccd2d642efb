"""`agentci diff` judges both versions exactly as `agentci test --baseline` does.

It says what went unverified, and its totals agree with the regressions it lists and with `test`'s own figures (issue
20's defects 1, 2 and 4).
"""

from __future__ import annotations

import json

import pytest
from helpers import hermetic_environment, run_cli

KEY = "sk-ant-test-never-print-me-20"

SPEC = """\
agent: shop
judge_config:
  model: claude-haiku-4-5
  base_url: {url}
  max_attempts: 1
queries:
  - id: price
    query: How much is the blue kettle?
    correctness:
      llm_judge:
        - rule: "answers in euros"
    path: {{forbidden_tools: [drop_table]}}
  - id: stock
    query: Is the kettle in stock?
    correctness: {{expected_in_answer: ["stock"]}}
    path: {{forbidden_tools: [drop_table]}}
"""


def euro_judge(model: str, system: str, user: str) -> dict:
    """Fails any answer quoting USD, passes the rest."""
    if "USD" in user:
        return {"score": 2, "label": "fail", "rationale": "quotes the price in USD, not euros"}
    return {"score": 5, "label": "pass", "rationale": "answers in euros"}


def trace(qid: str, answer: str, tools=(), run: int | None = None) -> dict:
    found = {
        "id": qid,
        "final_answer": answer,
        "tool_calls": [{"name": n} for n in tools],
        "total_cost_usd": 0.01,
        "total_tokens": 100,
        "total_llm_calls": 1,
        "total_duration_ms": 500,
    }
    return found if run is None else {**found, "run": run}


V1 = [trace("price", "It costs 30 EUR."), trace("stock", "In stock.", ["inventory"])]
V2 = [trace("price", "It costs 32 USD."), trace("stock", "In stock.", ["inventory", "drop_table"])]


@pytest.fixture
def project(tmp_path, llm, write, write_traces):
    llm.policy = euro_judge
    write("agentci_spec.yaml", SPEC.format(url=llm.anthropic_url))
    write_traces("v1.jsonl", V1)
    write_traces("v2.jsonl", V2)
    spec = tmp_path / "agentci_spec.yaml"
    keyed = hermetic_environment(ANTHROPIC_API_KEY=KEY)
    for version, forced in (("v1", ()), ("v2", ("--force-save",))):
        done = run_cli(
            "save", "--spec", spec, "--traces", tmp_path / f"{version}.jsonl", "--version", version, *forced, env=keyed
        )
        assert done.returncode == 0, done.stderr
    return tmp_path


def diff_v1_v2(project, *extra: str, env=None):
    """`agentci diff --baseline v1 --compare v2` of the project, with `extra` options."""
    return run_cli(
        "diff",
        "--spec",
        project / "agentci_spec.yaml",
        "--baseline",
        "v1",
        "--compare",
        "v2",
        *extra,
        env=env,
    )


def diff_json(project, *extra: str, env=None) -> tuple[dict, str]:
    done = diff_v1_v2(project, "--format", "json", *extra, env=env)
    assert done.returncode == 1, done.stderr  # v2 fails (a forbidden tool), and the diff exits as `test` on it does
    assert KEY not in done.stdout + done.stderr
    return json.loads(done.stdout), done.stderr


def test_the_diff_judges_from_cached_verdicts_without_a_key(project, llm):
    asked = llm.count
    data, _ = diff_json(project)  # no key: the verdicts cached when the versions were saved
    assert llm.count == asked
    price = next(q for q in data["queries"] if q["id"] == "price")
    assert price["kinds"][0] == "regression" and price["correctness"] == {"before": "pass", "after": "fail"}
    assert data["unverified"] == {}


def test_the_diff_says_what_went_unverified(project, llm):
    data, _stderr = diff_json(project, "--judge-cache", project / "empty-cache.json")
    assert data["unverified"]["before"] and data["unverified"]["after"]
    reason = next(iter(data["unverified"]["before"]))
    assert "ANTHROPIC_API_KEY" in reason
    console = diff_v1_v2(project, "--judge-cache", project / "empty-cache.json")
    assert "not verified: v1: 1 correctness check skipped, not passed" in console.stdout


def test_judge_mode_off_and_required_apply_to_the_diff(project, llm):
    data, _ = diff_json(project, "--judge-mode", "off")
    assert next(q for q in data["queries"] if q["id"] == "price")["correctness"] == {"before": "skip", "after": "skip"}
    required = diff_v1_v2(project, "--judge-mode", "required", "--judge-cache", project / "empty-cache.json")
    assert required.returncode == 2 and "error" in required.stdout.lower()  # as `test --judge-mode required` exits


def test_diff_totals_count_forbidden_tool_failures(project):
    data, _ = diff_json(project)
    stock = next(q for q in data["queries"] if q["id"] == "stock")
    assert stock["kinds"][0] == "regression" and stock["correctness"]["after"] == "pass"
    total = data["total"]
    assert total["counts"]["regression"] == 2
    assert (total["passed"]["before"], total["passed"]["after"]) == (2, 0)


def test_a_version_diffed_against_itself_and_test_baseline_on_the_same_traces_agree_on_every_figure(project):
    """`agentci diff --baseline v1 --compare v2` and `agentci test --traces <v2's traces> --baseline v1`.

    The same diff, judge verdicts included, apart from the compared side's label, and the same exit code.
    """
    diff, _ = diff_json(project)
    done = run_cli(
        "test",
        "--spec",
        project / "agentci_spec.yaml",
        "--traces",
        project / "v2.jsonl",
        "--baseline",
        "v1",
        "--format",
        "json",
    )
    assert done.returncode == 1, done.stderr
    tested = json.loads(done.stdout)
    assert tested["diff"]["after"] == "current" and diff["after"] == "v2"
    assert {**tested["diff"], "after": "v2"} == diff
    assert tested["summary"]["passed"] == diff["total"]["passed"]["after"]
    itself = run_cli(
        "diff", "--spec", project / "agentci_spec.yaml", "--baseline", "v1", "--compare", "v1", "--format", "json"
    )
    assert itself.returncode == 0, itself.stderr  # v1 passes, as `test` on it does
    same = json.loads(itself.stdout)
    assert same["total"]["counts"]["changed"] == 0 and all(q["kinds"] == [] for q in same["queries"])
    assert {name: change["uplift"] for name, change in same["uplift"].items()} == {
        "composite_score": 0.0,
        "pass_rate": 0.0,
        "cost_usd": 0.0,
    }


REPEATED = """\
agent: shop
queries:
  - id: route
    query: Where is my parcel?
    runs: 3
    path: {expected_tools: [track]}
"""


def test_repeated_runs_are_classified_on_every_run_and_totals_are_the_same_kind(write, write_traces, tmp_path):
    spec = write("agentci_spec.yaml", REPEATED)
    first = [trace("route", "On its way.", ["track"], run=i) for i in range(3)]
    # the first run is unchanged; the third now calls a second tool
    second = [*first[:2], trace("route", "On its way.", ["track", "track"], run=2)]
    for version, runs in (("v1", first), ("v2", second)):
        path = write_traces(f"{version}.jsonl", runs)
        assert run_cli("save", "--spec", spec, "--traces", path, "--version", version).returncode == 0
    done = run_cli("diff", "--spec", spec, "--baseline", "v1", "--compare", "v2", "--format", "json")
    data = json.loads(done.stdout)
    (query,) = data["queries"]
    assert "tools_changed" in query["kinds"]
    assert query["path"]["tool_calls"]["after"] == pytest.approx(4 / 3)
    assert data["total"]["tool_calls"]["after"] == pytest.approx(query["path"]["tool_calls"]["after"])
    assert data["total"]["cost_usd"]["after"] == pytest.approx(query["cost"]["cost_usd"]["after"])
