"""The spec's `suite:` gates.

Judged on the whole suite after aggregation, blocking through fail-on's `suite` layer, with the figure and the limit in
every headline, the results JSON and an annotation on the gate's line; `test`, `diff`, `merge` (of shards, never a shard
alone), the action and the Python API judge them alike.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from fakes.github_server import FakeGitHub
from helpers import run_cli

from agentci_action._util.errors import SpecError
from agentci_action.engine.results import Status
from agentci_action.github.action import main as action_main
from agentci_action.pipeline.evaluation import Evaluation, evaluate
from agentci_action.spec.loader import load_spec

SPEC = """\
agent: shop
suite:
  min_pass_rate: {min_pass_rate}
  max_total_cost_usd: {max_total}
  max_cost_multiplier: {max_multiplier}
  max_regressions: {max_regressions}
queries:
  - id: price
    query: How much is the kettle?
    correctness: {{not_in_answer: ["USD"]}}
  - id: stock
    query: Is it in stock?
    correctness: {{expected_in_answer: ["stock"]}}
  - id: colour
    query: Which colours?
    correctness: {{expected_in_answer: ["blue"]}}
  - id: size
    query: How big is it?
    correctness: {{expected_in_answer: ["litre"]}}
"""


def trace(qid: str, answer: str, cost: float) -> dict:
    return {"id": qid, "final_answer": answer, "total_cost_usd": cost, "total_tokens": 10, "total_llm_calls": 1}


V1 = [
    trace("price", "30 EUR.", 0.01),
    trace("stock", "In stock.", 0.01),
    trace("colour", "blue and red", 0.01),
    trace("size", "1.7 litre", 0.01),
]
# price regresses (USD); cost 0.04 → 0.07
V2 = [
    trace("price", "32 USD.", 0.02),
    trace("stock", "In stock.", 0.02),
    trace("colour", "blue and red", 0.02),
    trace("size", "1.7 litre", 0.01),
]


def make_project(tmp_path: Path, **limits) -> Path:
    values = {"min_pass_rate": 0.9, "max_total": 1.0, "max_multiplier": 1.5, "max_regressions": 0, **limits}
    (tmp_path / "agentci_spec.yaml").write_text(SPEC.format(**values))
    for name, rows in (("v1", V1), ("v2", V2)):
        (tmp_path / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return tmp_path / "agentci_spec.yaml"


def save_v1(spec: Path) -> None:
    done = run_cli("save", "--spec", spec, "--traces", spec.parent / "v1.jsonl", "--version", "v1")
    assert done.returncode == 0, done.stderr


def v2_in_two_shards(spec: Path) -> list[Path]:
    """v2's traces tested against v1 in two shards (`test --shard I/2`): the shard results files."""
    shards = []
    for index in (1, 2):
        out = spec.parent / f"shard-{index}.json"
        args = ("--traces", spec.parent / "v2.jsonl", "--baseline", "v1", "--shard", f"{index}/2", "--output", out)
        done = run_cli("test", spec, *args)
        assert done.returncode in (0, 1), done.stderr
        shards.append(out)
    return shards


def gates_of(document: dict) -> dict[str, tuple]:
    return {g["name"]: (g["status"], g["actual"], g["limit"], g["blocking"], g["line"]) for g in document["gates"]}


EXPECTED = {  # figure against limit, judged on v2 against v1; lines are the keys' lines in SPEC
    "min_pass_rate": ("fail", 0.75, 0.9, True, 3),
    "max_total_cost_usd": ("pass", pytest.approx(0.07), 1.0, False, 4),
    "max_cost_multiplier": ("fail", pytest.approx(1.75), 1.5, True, 5),
    "max_regressions": ("fail", 1, 0, True, 6),
}


def test_every_mistake_in_the_suite_block_is_reported_at_its_line(tmp_path):
    spec = tmp_path / "agentci_spec.yaml"
    spec.write_text(
        "agent: a\nsuite:\n  min_pass_rate: 1.5\n  max_regressions: -1\n  max_regresions: 0\n"
        "  max_cost_multiplier: 0\nqueries:\n  - query: q\n"
    )
    with pytest.raises(SpecError) as caught:
        load_spec(spec)
    lines = {p.line: p.message for p in caught.value.problems}
    assert set(lines) == {3, 4, 5, 6}, lines
    assert "max_regressions" in lines[5]  # did you mean
    assert "1" in lines[3] and "0" in lines[4]


def test_gates_are_judged_on_the_whole_suite_and_block_by_default(tmp_path):
    spec = make_project(tmp_path)
    save_v1(spec)
    done = run_cli("test", spec, "--traces", tmp_path / "v2.jsonl", "--baseline", "v1", "--format", "json")
    assert done.returncode == 1, done.stderr
    document = json.loads(done.stdout)
    assert gates_of(document) == EXPECTED
    assert document["summary"]["fail_on"] == ["correctness", "suite"]
    console = run_cli("test", spec, "--traces", tmp_path / "v2.jsonl", "--baseline", "v1").stdout
    assert "suite gate ✗ min_pass_rate: pass rate 75% (3 of 4) < min 90%" in console
    assert "suite gate ✗ max_cost_multiplier: cost ×1.75 the baseline's ($0.0700 vs $0.0400) > max ×1.5" in console
    assert "suite gate ✓ max_total_cost_usd: total cost $0.0700 ≤ max $1" in console
    assert "3 suite gates failed: min_pass_rate, max_cost_multiplier, max_regressions" in console


def test_a_gate_alone_fails_the_run_and_fail_on_decides_whether_it_blocks(tmp_path):
    spec = make_project(tmp_path, max_total=0.05)
    good = tmp_path / "good.jsonl"
    good.write_text(
        "".join(json.dumps({**r, "final_answer": "30 EUR"} if r["id"] == "price" else r) + "\n" for r in V2)
    )
    blocked = run_cli("test", spec, "--traces", good, "--baseline", "none")
    assert blocked.returncode == 1
    assert "FAIL: 4 queries · 4 passed" in blocked.stdout
    assert "suite gate failed: max_total_cost_usd: total cost $0.0700 > max $0.05" in blocked.stdout
    assert "max_cost_multiplier: cost against the baseline skipped: no baseline to compare with" in blocked.stdout
    report = run_cli(
        "test", spec, "--traces", good, "--baseline", "none", "--fail-on", "correctness", "--format", "markdown"
    )
    assert report.returncode == 0
    headline = report.stdout.splitlines()[0]
    assert (
        headline.startswith("## ❌")
        and "suite gate failed: max\\_total\\_cost\\_usd: total cost $0.0700 &gt; max $0.05" in headline
    )
    assert "\\(not blocking: fail-on without suite\\)" in headline


def test_test_diff_merge_the_action_and_the_python_api_judge_the_gates_alike(tmp_path):
    spec = make_project(tmp_path)
    save_v1(spec)
    done = run_cli("save", "--spec", spec, "--traces", tmp_path / "v2.jsonl", "--version", "v2", "--force-save")
    assert done.returncode == 0, done.stderr

    diff = run_cli("diff", spec, "--baseline", "v1", "--compare", "v2", "--format", "json")
    assert diff.returncode == 1, diff.stderr
    assert gates_of(json.loads(diff.stdout)) == EXPECTED
    diff_console = run_cli("diff", spec, "--baseline", "v1", "--compare", "v2").stdout
    assert "suite gate ✗ max_regressions: 1 regression against v1 > max 0" in diff_console

    shards = v2_in_two_shards(spec)
    assert all(json.loads(s.read_text())["gates"] == [] for s in shards)  # a shard judges no gate of the whole
    merged = run_cli("merge", spec, *shards, "--format", "json")
    assert merged.returncode == 1, merged.stderr
    assert gates_of(json.loads(merged.stdout)) == EXPECTED

    api = evaluate(Evaluation(spec=str(spec), traces=[str(tmp_path / "v2.jsonl")], baseline="v1"))
    assert gates_of(json.loads(api.run.model_dump_json())) == EXPECTED

    with FakeGitHub() as github:
        code, log = run_action_in(tmp_path, github.url, INPUT_TRACES="v2.jsonl", INPUT_BASELINE="v1")
        assert code == 1
        results = json.loads((tmp_path / "results.json").read_text())
        assert gates_of(results) == EXPECTED
        summary = (tmp_path / "summary.md").read_text()
        [comment] = github.comments("octo/agent", 3)
        assert github.state.violations == []
    for body in (summary, comment["body"]):
        headline = body[: body.index("| |")]  # the headline, above the table
        assert "❌ max\\_regressions: 1 regression against v1 &gt; max 0" in headline
        assert "❌ min\\_pass\\_rate: pass rate 75% \\(3 of 4\\) &lt; min 90%" in headline
        assert "1 of 4 queries failed; 3 suite gates failed: min\\_pass\\_rate, max\\_cost\\_multiplier" in headline
        assert "✅ max\\_total\\_cost\\_usd: total cost $0.0700 ≤ max $1" in headline
    assert "::error file=agentci_spec.yaml,line=6,title=AgentCI suite gate%3A max_regressions::" in log


def test_shards_never_fail_a_gate_of_the_whole_the_merge_does(tmp_path):
    """Each shard's cost is within max_total_cost_usd; the suite's is not: only the merge fails."""
    spec = make_project(tmp_path, max_total=0.05, min_pass_rate=0.5, max_multiplier=9, max_regressions=9)
    good = tmp_path / "good.jsonl"
    good.write_text(
        "".join(json.dumps({**r, "final_answer": "30 EUR"} if r["id"] == "price" else r) + "\n" for r in V2)
    )
    outputs = []
    for index in (1, 2):
        out = tmp_path / f"s{index}.json"
        done = run_cli("test", spec, "--traces", good, "--shard", f"{index}/2", "--output", out)
        assert done.returncode == 0, done.stdout + done.stderr
        outputs.append(out)
    merged = run_cli("merge", spec, *outputs)
    assert merged.returncode == 1
    assert "suite gate ✗ max_total_cost_usd: total cost $0.0700 > max $0.05" in merged.stdout
    whole = run_cli("test", spec, "--traces", good)
    assert whole.returncode == 1 and "suite gate ✗ max_total_cost_usd" in whole.stdout


def test_the_python_api_judges_the_gates_that_need_no_baseline(tmp_path):
    from agentci_action import load_spec as api_load_spec
    from agentci_action import load_traces, run_spec

    spec = api_load_spec(make_project(tmp_path))
    run = run_spec(spec, load_traces([str(tmp_path / "v2.jsonl")]))
    by_name = {g.name: g for g in run.gates}
    assert by_name["min_pass_rate"].status is Status.FAIL and by_name["min_pass_rate"].actual == 0.75
    assert by_name["max_regressions"].status is Status.SKIP
    assert run.summary.status is Status.FAIL


def run_action_in(workspace: Path, api_url: str, **inputs: str) -> tuple[int, str]:
    payload = {
        "pull_request": {
            "number": 3,
            "head": {"sha": "h" * 40, "repo": {"full_name": "octo/agent"}},
            "base": {"sha": "b" * 40, "repo": {"full_name": "octo/agent"}},
        }
    }
    (workspace / "event.json").write_text(json.dumps(payload))
    env = {
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_EVENT_PATH": str(workspace / "event.json"),
        "GITHUB_REPOSITORY": "octo/agent",
        "GITHUB_SHA": "m" * 40,
        "GITHUB_WORKSPACE": str(workspace),
        "GITHUB_STEP_SUMMARY": str(workspace / "summary.md"),
        "GITHUB_OUTPUT": str(workspace / "output.txt"),
        "INPUT_SPEC": str(workspace / "agentci_spec.yaml"),
        "INPUT_GITHUB-TOKEN": "ghs_token_gates",
        "INPUT_GITHUB-API-URL": api_url,
        "INPUT_RESULTS-PATH": str(workspace / "results.json"),
        **inputs,
    }
    out = io.StringIO()
    import os

    cwd = os.getcwd()
    os.chdir(workspace)
    try:
        code = action_main(env, out)
    finally:
        os.chdir(cwd)
    return code, out.getvalue()


def test_junit_has_a_test_case_per_gate(tmp_path):
    import xml.etree.ElementTree as ET

    spec = make_project(tmp_path)
    done = run_cli("test", spec, "--traces", tmp_path / "v2.jsonl", "--baseline", "none", "--format", "junit")
    assert done.returncode == 1
    suite = ET.fromstring(done.stdout).find("testsuite")
    gates = {case.get("name"): case for case in suite.iter("testcase") if case.get("name").startswith("suite gate")}
    assert gates["suite gate min_pass_rate"].find("failure").get("message") == "pass rate 75% (3 of 4) < min 90%"
    assert gates["suite gate max_regressions"].find("skipped") is not None
    assert (
        gates["suite gate max_total_cost_usd"].find("failure") is None
        and gates["suite gate min_pass_rate"].get("line") == "3"
    )
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("8", "2", "2")


def test_prometheus_has_each_gates_verdict_figure_and_limit(tmp_path):
    from prometheus_client.parser import text_string_to_metric_families

    spec = make_project(tmp_path)
    save_v1(spec)
    done = run_cli("test", spec, "--traces", tmp_path / "v2.jsonl", "--format", "prometheus")
    assert done.returncode == 1
    families = {f.name: f for f in text_string_to_metric_families(done.stdout)}

    def by_gate(name: str) -> dict[str, float]:
        return {s.labels["gate"]: s.value for s in families[name].samples}

    assert by_gate("agentci_gate_pass") == {g: float(e[0] == "pass") for g, e in EXPECTED.items()}
    assert by_gate("agentci_gate_value") == {g: e[1] for g, e in EXPECTED.items()}
    assert by_gate("agentci_gate_limit") == {g: e[2] for g, e in EXPECTED.items()}
    without_baseline = run_cli(
        "test", spec, "--traces", tmp_path / "v2.jsonl", "--baseline", "none", "--format", "prometheus"
    )
    skipped = {f.name: f for f in text_string_to_metric_families(without_baseline.stdout)}
    assert "max_regressions" not in {s.labels["gate"] for s in skipped["agentci_gate_pass"].samples}  # unknown
    assert "max_regressions" in {s.labels["gate"] for s in skipped["agentci_gate_limit"].samples}


def test_a_spec_without_gates_has_no_gate_metrics(write, write_traces):
    spec = write("s.yaml", "agent: a\nqueries:\n  - id: q\n    query: q\n")
    traces = write_traces("t.jsonl", [{"id": "q", "final_answer": "x"}])
    done = run_cli("test", spec, "--traces", traces, "--format", "prometheus")
    assert done.returncode == 0 and "agentci_suite_pass_rate" in done.stdout and "agentci_gate" not in done.stdout


def test_merged_shards_show_the_diff_the_unsharded_run_shows(tmp_path):
    """Each shard's results file carries the diff of its queries and their baseline side.

    The merge shows them as one diff, the one `test` on the whole suite shows: queries, totals, the scores' uplift and
    the suite aggregates.
    """
    spec = make_project(tmp_path)
    save_v1(spec)
    whole = run_cli("test", spec, "--traces", tmp_path / "v2.jsonl", "--baseline", "v1", "--format", "json")
    shards = v2_in_two_shards(spec)
    merged = run_cli("merge", spec, *shards, "--format", "json")
    assert merged.returncode == whole.returncode == 1, merged.stderr

    assert json.loads(merged.stdout)["diff"] == json.loads(whole.stdout)["diff"]
    assert json.loads(merged.stdout)["diff"]["uplift"]["pass_rate"]["uplift"] == -0.25  # 4 of 4 → 3 of 4
    kinds = {q["id"]: q["kinds"] for q in json.loads(merged.stdout)["diff"]["queries"]}
    assert "regression" in kinds["price"] and kinds["size"] == []  # V2: price regresses; size is unchanged
    console = run_cli("merge", spec, *shards).stdout
    assert "AgentCI diff · shop · v1 → current" in console and "REGRESSION  price" in console
    with FakeGitHub() as github:
        code, _ = run_action_in(tmp_path, github.url, INPUT_MERGE=",".join(str(s) for s in shards))
        [comment] = github.comments("octo/agent", 3)
    assert code == 1 and "AgentCI diff" in comment["body"] and "v1 → current" in comment["body"]
    assert "price" in comment["body"][comment["body"].index("AgentCI diff") :]
