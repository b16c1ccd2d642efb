"""The runner contract in-process.

INPUT_* and GITHUB_* in, results file, summary, outputs, annotations, comment and exit code out; PyGithub talks to the
local GitHub API server.
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
import yaml
from fakes.github_server import BOT_LOGIN, FakeGitHub
from helpers import ROOT, github_outputs

from agentci_action._util.errors import InputError
from agentci_action.github.action import main
from agentci_action.github.inputs import ActionInputs, read_inputs
from agentci_action.github.publisher import outputs_for

E2E = ROOT / "tests" / "fixtures" / "action"
HOSTILE = "::error file=x.py::pwned %0A @octocat <details> | `x`"
TOKEN = "ghs_secretvalue123"


@pytest.fixture
def github():
    with FakeGitHub() as fake:
        yield fake
        assert fake.state.violations == []


@pytest.fixture
def workspace(tmp_path, monkeypatch):
    (tmp_path / "agentci.yaml").write_text((E2E / "agentci.yaml").read_text())
    (tmp_path / "baseline").mkdir()
    (tmp_path / "baseline" / "b.jsonl").write_text((E2E / "baseline" / "baseline.jsonl").read_text())
    (tmp_path / "traces").mkdir()
    monkeypatch.chdir(tmp_path)
    return tmp_path


def traces(workspace: Path, refund_answer: str) -> None:
    rows = [
        {
            "id": "refund-policy",
            "final_answer": refund_answer,
            "tool_calls": [{"name": "search_docs"}],
            "llm_calls": [{"model": "m", "input_tokens": 10, "output_tokens": 5, "cost_usd": 0.002}],
        },
        {
            "id": "order-status",
            "final_answer": "It has shipped.",
            "tool_calls": [{"name": "lookup_order"}, {"name": "lookup_order"}, {"name": "web_search"}],
            "llm_calls": [{"model": "m", "input_tokens": 10, "output_tokens": 5, "cost_usd": 0.006}],
        },
    ]
    (workspace / "traces" / "t.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


def environment(
    workspace: Path, api_url: str, event: str = "pull_request", fork: bool = False, **inputs: str
) -> dict[str, str]:
    head_repo = "mallory/agent" if fork else "octo/agent"
    payload = (
        {
            "pull_request": {
                "number": 7,
                "head": {"sha": "h" * 40, "repo": {"full_name": head_repo}},
                "base": {"sha": "b" * 40, "repo": {"full_name": "octo/agent"}},
            }
        }
        if event.startswith("pull")
        else {"before": "b" * 40, "after": "a" * 40}
    )
    (workspace / "event.json").write_text(json.dumps(payload))
    env = {
        "GITHUB_EVENT_NAME": event,
        "GITHUB_EVENT_PATH": str(workspace / "event.json"),
        "GITHUB_REPOSITORY": "octo/agent",
        "GITHUB_SHA": "m" * 40,
        "GITHUB_WORKSPACE": str(workspace),
        "GITHUB_RUN_ID": "5",
        "GITHUB_STEP_SUMMARY": str(workspace / "summary.md"),
        "GITHUB_OUTPUT": str(workspace / "output.txt"),
        "INPUT_SPEC": "agentci.yaml",
        "INPUT_TRACES": "traces/",
        "INPUT_BASELINE-TRACES": "baseline/",
        "INPUT_GITHUB-TOKEN": TOKEN,
        "INPUT_GITHUB-API-URL": api_url,
        "INPUT_ANNOTATIONS": "true",
        "INPUT_CHECK-RUN": "false",
        "INPUT_COMMENT-MODE": "always",
        "INPUT_COMMENT-HEADER": "agentci",
        "INPUT_FAIL-ON": "correctness",
        "INPUT_RESULTS-PATH": "out/agentci-results.json",
        "INPUT_TAGS": "",
    }
    env.update({f"INPUT_{k.replace('_', '-').upper()}": v for k, v in inputs.items()})
    return env


def run_action(env: dict[str, str]) -> tuple[int, str]:
    out = io.StringIO()
    code = main(env, out)
    return code, out.getvalue()


def test_failing_pr_publishes_everything_then_exits_1(workspace, github):
    traces(workspace, f"No refunds. {HOSTILE}")
    code, log = run_action(environment(workspace, github.url))
    assert code == 1
    outputs = github_outputs((workspace / "output.txt").read_text())
    assert outputs["status"] == "fail" and outputs["failed"] == "1" and outputs["total"] == "2"
    assert outputs["results-path"] == "out/agentci-results.json"
    results = json.loads((workspace / "out" / "agentci-results.json").read_text())
    assert results["summary"]["failed"] == 1
    summary = (workspace / "summary.md").read_text()
    assert summary.startswith("## ❌ AgentCI: 1 of 2 queries failed") and "@octocat" not in summary
    [comment] = github.comments("octo/agent", 7)
    assert outputs["comment-url"] == comment["html_url"] and comment["user"]["login"] == BOT_LOGIN
    assert "::error file=agentci.yaml,line=4,title=AgentCI correctness%3A refund-policy::" in log
    assert "::warning file=agentci.yaml,line=13,title=AgentCI path%3A order-status::" in log


def test_untrusted_text_only_between_stop_commands_and_the_token_only_masked(workspace, github):
    spec = workspace / "agentci.yaml"
    spec.write_text(spec.read_text().replace('"What is the refund policy?"', json.dumps(f"Refunds? {HOSTILE}")))
    traces(workspace, f"No refunds. {HOSTILE}")
    _, log = run_action(environment(workspace, github.url))
    lines = log.splitlines()
    assert lines[0] == f"::add-mask::{TOKEN}" and log.count(TOKEN) == 1
    start = next(i for i, line in enumerate(lines) if line.startswith("::stop-commands::"))
    token = lines[start].removeprefix("::stop-commands::")
    end = lines.index(f"::{token}::")
    for i, line in enumerate(lines):
        if "pwned" in line and not (start < i < end):
            assert line.startswith("::error file=agentci.yaml,line=4,")  # escaped inside our own annotation's data
    assert any("pwned" in line for line in lines[start + 1 : end])


def test_second_run_edits_the_same_comment(workspace, github):
    traces(workspace, "No refunds.")
    run_action(environment(workspace, github.url))
    traces(workspace, "Refunds within 30 days.")
    code, _ = run_action(environment(workspace, github.url))
    [comment] = github.comments("octo/agent", 7)
    assert code == 0 and "all 2 passed, 1 with a warning" in comment["body"]


def test_fork_pr_403_is_a_warning_and_loses_nothing(workspace, github):
    github.state.read_only.add(TOKEN)
    traces(workspace, "No refunds.")
    code, log = run_action(environment(workspace, github.url, fork=True))
    assert code == 1  # still the evaluation's verdict
    assert (
        "::warning title=AgentCI::Could not post the PR comment: GitHub answered 403. This pull request comes from "
        "a fork, so its token is read-only; the job summary and the results file carry every result."
    ) in log
    outputs = github_outputs((workspace / "output.txt").read_text())
    assert outputs["status"] == "fail" and outputs["comment-url"] == ""
    assert (workspace / "summary.md").read_text().startswith("## ❌")
    assert (workspace / "out" / "agentci-results.json").exists()
    assert github.comments("octo/agent", 7) == []


def test_a_403_on_a_pr_from_the_same_repository_names_the_missing_permission(workspace, github):
    github.state.read_only.add(TOKEN)
    traces(workspace, "No refunds.")
    _, log = run_action(environment(workspace, github.url))
    assert "GitHub answered 403. The token may not write to this pull request: give the job `permissions: " in log
    assert "fork" not in log


def test_the_comment_warning_counts_in_the_annotation_cap(workspace, github):
    """12 path warnings and a fork's read-only token: the 403 warning is one of the 10 shown, the notice counts 3."""
    queries = "".join(
        f"  - id: q{i}\n    query: q{i}\n    path:\n      expected_tools: [a]\n      min_tool_recall: 1.0\n"
        for i in range(12)
    )
    (workspace / "agentci.yaml").write_text(f"version: 1\nagent: a\nqueries:\n{queries}")
    (workspace / "traces" / "t.jsonl").write_text(
        "".join(
            json.dumps({"id": f"q{i}", "final_answer": "ok", "tool_calls": [{"name": "b"}]}) + "\n" for i in range(12)
        )
    )
    github.state.read_only.add(TOKEN)
    code, log = run_action(environment(workspace, github.url, fork=True, baseline_traces=""))
    commands = [line for line in log.splitlines() if line.startswith(("::warning", "::error", "::notice"))]
    warnings = [line for line in commands if line.startswith("::warning")]
    assert code == 0 and len(warnings) == 10
    assert warnings[0].startswith(
        "::warning title=AgentCI::Could not post the PR comment: GitHub answered 403. This "
        "pull request comes from a fork"
    )
    assert commands[-1].startswith("::notice title=AgentCI::3 more warnings not shown")


def test_a_matrix_entry_keeps_its_own_comment_and_title(workspace, github):
    traces(workspace, "Refunds within 30 days.")
    run_action(environment(workspace, github.url))
    run_action(environment(workspace, github.url, comment_header="rag-agent"))
    run_action(environment(workspace, github.url, comment_header="rag-agent"))
    first, second = github.comments("octo/agent", 7)
    assert first["body"].startswith("<!-- agentci-comment: agentci -->") and "## ⚠️ AgentCI: all" in first["body"]
    assert second["body"].startswith("<!-- agentci-comment: rag-agent -->")
    assert "## ⚠️ AgentCI · rag-agent: all" in second["body"]
    assert "## ⚠️ AgentCI · rag-agent: all" in (workspace / "summary.md").read_text()


@pytest.mark.parametrize("failure", ["outage", "unreachable"])
def test_github_failures_are_warnings(workspace, github, failure):
    traces(workspace, "Refunds within 30 days.")
    github.state.fail_status = 502
    url = github.url if failure == "outage" else "http://127.0.0.1:9"
    code, log = run_action(environment(workspace, url))
    assert code == 0 and "::warning title=AgentCI::Could not post the PR comment" in log
    assert github_outputs((workspace / "output.txt").read_text())["status"] == "warn"


def test_push_has_no_pr_so_no_comment_and_no_github_calls(workspace, github):
    traces(workspace, "Refunds within 30 days.")
    code, _log = run_action(environment(workspace, github.url, event="push"))
    assert code == 0 and github.state.requests == []
    assert github_outputs((workspace / "output.txt").read_text())["comment-url"] == ""
    assert "blob/" + "a" * 40 + "/agentci.yaml#L4" in (workspace / "summary.md").read_text()


def test_check_run_takes_the_annotations_instead_of_the_log(workspace, github):
    traces(workspace, "No refunds.")
    code, log = run_action(environment(workspace, github.url, check_run="true", comment_mode="off"))
    assert code == 1 and "::error file=" not in log and "::warning file=" not in log
    [run] = github.state.check_runs
    assert run["head_sha"] == "h" * 40 and run["conclusion"] == "failure"
    assert [(a["annotation_level"], a["start_line"]) for a in run["annotations"]] == [
        ("failure", 4),
        ("warning", 13),
        ("warning", 13),
    ]
    assert github.comments("octo/agent", 7) == []


@pytest.mark.parametrize(
    ("answer", "fail_on", "exit_status", "conclusion"),
    [
        ("No refunds.", "correctness", 1, "failure"),
        ("No refunds.", "none", 0, "neutral"),  # the job passes: the check run must not say failure
        ("Refunds within 30 days.", "correctness", 0, "neutral"),  # a path warning does not block
        ("Refunds within 30 days.", "path", 1, "failure"),  # ... unless fail-on says it does
    ],
)
def test_check_run_conclusion_follows_the_jobs_exit_decision(
    workspace, github, answer, fail_on, exit_status, conclusion
):
    traces(workspace, answer)
    code, _ = run_action(environment(workspace, github.url, check_run="true", comment_mode="off", fail_on=fail_on))
    [run] = github.state.check_runs
    assert (code, run["conclusion"]) == (exit_status, conclusion)


def test_a_failure_that_does_not_block_says_so_in_the_headline(workspace, github):
    traces(workspace, "No refunds.")
    code, _ = run_action(environment(workspace, github.url, comment_mode="off", fail_on="none"))
    assert code == 0 and "failed (not blocking: fail-on none)" in (workspace / "summary.md").read_text()
    (workspace / "summary.md").unlink()  # the step summary is appended to
    code, _ = run_action(environment(workspace, github.url, comment_mode="off"))
    assert code == 1 and "failed (not blocking" not in (workspace / "summary.md").read_text()


def test_a_passing_run_has_a_successful_check_run(workspace, github):
    traces(workspace, "Refunds within 30 days.")
    (workspace / "agentci.yaml").write_text(
        (workspace / "agentci.yaml").read_text().replace("min_sequence_similarity: 0.9", "min_sequence_similarity: 0.1")
    )
    code, _ = run_action(environment(workspace, github.url, check_run="true", comment_mode="off", baseline_traces=""))
    [run] = github.state.check_runs
    assert (code, run["conclusion"]) == (0, "success")


@pytest.mark.parametrize("fork", [False, True])
def test_check_run_refused_falls_back_to_log_annotations_and_says_why(workspace, github, fork):
    github.state.read_only.add(TOKEN)
    traces(workspace, "No refunds.")
    code, log = run_action(environment(workspace, github.url, fork=fork, check_run="true", comment_mode="off"))
    assert code == 1 and "::warning title=AgentCI::Could not create the check run: GitHub answered 403. " in log
    why = (
        "comes from a fork, so its token is read-only"
        if fork
        else "may not create check runs: give the job `permissions: checks: write`"
    )
    assert why in log and "The annotations follow in the log." in log
    assert "::error file=agentci.yaml,line=4," in log


def test_annotations_off(workspace, github):
    traces(workspace, "No refunds.")
    _, log = run_action(environment(workspace, github.url, annotations="false", comment_mode="off"))
    assert "::error file=" not in log and "::warning file=" not in log


def test_spec_error_exits_2_with_an_annotation_on_the_line(workspace, github):
    (workspace / "agentci.yaml").write_text("version: 1\nagent: a\nqueries:\n  - query: q\n    bogus: 1\n")
    traces(workspace, "x")
    code, log = run_action(environment(workspace, github.url))
    assert code == 2
    assert re.search(r"^::error file=agentci.yaml,line=5,title=AgentCI::agentci.yaml:5: .*bogus", log, re.M), log
    assert github_outputs((workspace / "output.txt").read_text())["status"] == "error"
    assert "could not evaluate" in (workspace / "summary.md").read_text()
    assert github.state.requests == []


def test_bad_inputs_name_the_input(workspace, github):
    traces(workspace, "x")
    code, log = run_action(environment(workspace, github.url, annotations="yes", fail_on="speed"))
    assert code == 2 and "input 'annotations'" in log
    with pytest.raises(InputError, match="input 'comment-mode'"):
        read_inputs({"INPUT_TRACES": "t", "INPUT_COMMENT-MODE": "sometimes"})
    code, log = run_action(environment(workspace, github.url, fail_on="speed"))
    assert code == 2 and "input 'fail-on'" in log


def test_inputs_keep_hyphens_and_split_lists():
    inputs = read_inputs(
        {
            "INPUT_TRACES": "a.jsonl, b/\nc/*.json",
            "INPUT_FAIL-ON": "correctness,cost",
            "INPUT_CHECK-RUN": "True",
            "INPUT_TAGS": "",
            "INPUT_COMMENT-HEADER": "matrix-a",
        }
    )
    assert inputs.traces == ["a.jsonl", "b/", "c/*.json"] and inputs.check_run is True
    assert inputs.tags == [] and inputs.comment_header == "matrix-a" and inputs.fail_on == "correctness,cost"


def test_action_yml_matches_the_code():
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    fields = {field.alias or name for name, field in ActionInputs.model_fields.items()}
    assert set(action["inputs"]) == fields
    assert set(action["outputs"]) == set(outputs_for(None, "", ""))
    assert action["runs"] == {"using": "docker", "image": "Dockerfile"}
    defaults = ActionInputs.model_validate({"traces": "t"})
    for name, spec in action["inputs"].items():
        if "${{" not in spec.get("default", "") and spec.get("default", "") != "":
            value = getattr(defaults, name.replace("-", "_"))
            assert str(value).lower() == spec["default"].lower(), name


def test_the_action_docs_document_every_input_and_output():
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    docs = (ROOT / "docs" / "guides" / "action.md").read_text()
    for name in [*action["inputs"], *action["outputs"]]:
        assert f"| `{name}` |" in docs, name


def test_an_internal_error_exits_2_not_1(workspace, github, monkeypatch, capsys):
    import agentci_action.pipeline.evaluation as pipeline

    def broken(*args, **kwargs):
        raise RuntimeError("bug")

    monkeypatch.setattr(pipeline, "evaluate_spec", broken)
    traces(workspace, "x")
    code, log = run_action(environment(workspace, github.url))
    assert code == 2 and "::error title=AgentCI::internal error (RuntimeError)" in log
    lines = log.splitlines()
    start = next(
        i for i, line in enumerate(lines) if line.startswith("::stop-commands::") and "Traceback" in lines[i + 1]
    )
    end = lines.index(f"::{lines[start].removeprefix('::stop-commands::')}::")
    assert "RuntimeError: bug" in lines[end - 1]  # the traceback, between stop-commands markers
    assert capsys.readouterr().err == ""


def test_the_init_template_uses_only_real_inputs():
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    template = yaml.safe_load((ROOT / "agentci_action" / "templates" / "agentci.yml").read_text())
    steps = [s for job in template["jobs"].values() for s in job["steps"] if s.get("uses", "").startswith("agentci/")]
    assert steps and all(set(s["with"]) <= set(action["inputs"]) for s in steps)


def save_version(workspace: Path, version: str, refund_answer: str, force: bool = False) -> None:
    """A baseline version under the spec's baseline_dir, saved by the real CLI code path."""
    from agentci_action.compare.baselines import SaveOptions, save_baseline
    from agentci_action.spec.loader import load_spec
    from agentci_action.trace.load import load_traces

    traces(workspace, refund_answer)
    save_baseline(
        load_spec(workspace / "agentci.yaml"),
        load_traces([str(workspace / "traces")]),
        version,
        SaveOptions(force=force),
    )


def test_default_baseline_is_the_newest_passing_version_and_its_diff_is_published(workspace, github):
    save_version(workspace, "v1", "Refunds within 30 days.")
    save_version(workspace, "v2-broken", "No refunds.", force=True)  # precheck failed: never the default
    traces(workspace, "No refunds.")
    code, log = run_action(environment(workspace, github.url, baseline_traces=""))
    assert code == 1
    summary = (workspace / "summary.md").read_text()
    assert "### AgentCI diff: v1 → current" in summary
    reasons, diff = summary.split("### AgentCI diff", 1)
    assert "| ❌ | refund-policy" in reasons  # why it fails, said once, above the diff
    assert "| 🔴 | refund-policy | regression, output changed |" in diff  # a correctness flip, listed first
    assert "layer by layer</summary>" in diff  # every query's layers come after the diff
    [comment] = github.comments("octo/agent", 7)
    assert "### AgentCI diff: v1 → current" in comment["body"]
    assert "AgentCI diff · support-bot · v1 → current" in log  # the console diff, in the log


def test_baseline_input_picks_a_version_or_none(workspace, github):
    save_version(workspace, "v1", "Refunds within 30 days.")
    save_version(workspace, "v2-broken", "No refunds.", force=True)
    traces(workspace, "No refunds.")
    run_action(environment(workspace, github.url, baseline_traces="", baseline="v2-broken"))
    assert "### AgentCI diff: v2-broken → current" in (workspace / "summary.md").read_text()
    (workspace / "summary.md").unlink()
    run_action(environment(workspace, github.url, baseline_traces="", baseline="none"))
    assert "AgentCI diff" not in (workspace / "summary.md").read_text()


def test_baseline_input_errors_exit_2_and_name_the_problem(workspace, github):
    save_version(workspace, "v1", "Refunds within 30 days.")
    traces(workspace, "No refunds.")
    code, log = run_action(environment(workspace, github.url, baseline_traces="", baseline="v9"))
    assert code == 2 and "no baseline version 'v9'; available: v1" in log
    assert "could not evaluate" in (workspace / "summary.md").read_text()
    code, log = run_action(environment(workspace, github.url, baseline="v1"))  # baseline-traces is set too
    assert code == 2 and "a baseline version and baseline traces exclude each other" in log


def test_shard_and_merge_inputs():
    inputs = read_inputs({"INPUT_TRACES": "t/", "INPUT_SHARD": "2/4", "INPUT_MERGE": ""})
    assert (inputs.shard.index, inputs.shard.count, inputs.merge) == (2, 4, [])
    merging = read_inputs({"INPUT_MERGE": "results/a-*.json, results/b-*.json"})
    assert merging.merge == ["results/a-*.json", "results/b-*.json"] and merging.traces == []
    for env, message in (
        ({"INPUT_TRACES": "t/", "INPUT_SHARD": "5/4"}, "input 'shard': Value error, shard '5/4'"),
        ({"INPUT_SHARD": "1/2", "INPUT_MERGE": "r/*.json"}, "set one of them"),
        ({"INPUT_TRACES": "t/", "INPUT_MERGE": "r/*.json"}, "leave input 'traces' empty in the merge job"),
        ({}, "input 'traces' is required (unless input 'merge' is set)"),
    ):
        with pytest.raises(InputError) as caught:
            read_inputs(env)
        assert message in str(caught.value), str(caught.value)


def test_the_embedding_cache_input_reaches_the_evaluation(workspace, github):
    """A damaged cache file given as `embedding-cache` is read, and named with exit 2."""
    spec = yaml.safe_load((workspace / "agentci.yaml").read_text())
    spec["queries"][0]["reference_answer"] = "Refunds within 30 days."
    spec["queries"][0]["checks"] = {"answer": {"min_semantic_similarity": 0.5}}
    (workspace / "agentci.yaml").write_text(yaml.safe_dump(spec))
    (workspace / "embeddings.json").write_text("[]")
    traces(workspace, "Refunds within 30 days.")
    code, log = run_action(environment(workspace, github.url, embedding_cache="embeddings.json"))
    assert code == 2 and "embeddings.json:1: not an AgentCI embedding cache" in log
    assert read_inputs({"INPUT_TRACES": "t", "INPUT_EMBEDDING-CACHE": ""}).embedding_cache is None


def test_the_html_report_is_written_beside_the_results_and_the_comment_links_the_artifacts(workspace, github):
    traces(workspace, f"No refunds. {HOSTILE}")
    code, _ = run_action(environment(workspace, github.url))
    assert code == 1
    outputs = github_outputs((workspace / "output.txt").read_text())
    assert outputs["html-report-path"] == "out/agentci-results.html"
    page = (workspace / "out" / "agentci-results.html").read_text(encoding="utf-8")
    assert (
        page.startswith("<!DOCTYPE html>")
        and "No refunds. ::error file=x.py::pwned %0A @octocat &lt;details&gt;" in page
    )
    artifacts = "https://github.com/octo/agent/actions/runs/5#artifacts"
    [comment] = github.comments("octo/agent", 7)
    assert f"[HTML report in the artifacts]({artifacts})" in comment["body"]
    assert f"[HTML report in the artifacts]({artifacts})" in (workspace / "summary.md").read_text()


def test_html_report_false_writes_none_and_links_nothing(workspace, github):
    traces(workspace, "Refunds within 30 days.")
    run_action(environment(workspace, github.url, html_report="false"))
    assert github_outputs((workspace / "output.txt").read_text())["html-report-path"] == ""
    assert not (workspace / "out" / "agentci-results.html").exists()
    [comment] = github.comments("octo/agent", 7)
    assert "#artifacts" not in comment["body"]


@pytest.mark.parametrize("argument", ["--version", "--help"])
def test_the_entrypoint_answers_version_and_help_and_exits_0_without_running_the_action(argument, tmp_path):
    """`docker run IMAGE --version` runs entrypoint.py with that argument: the release, exit 0, no input read."""
    import subprocess
    import sys

    from agentci_action import __version__

    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)}  # no INPUT_*: running the action would exit 2
    done = subprocess.run(
        [sys.executable, str(ROOT / "entrypoint.py"), argument], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert (done.returncode, done.stderr) == (0, ""), done.stdout
    assert done.stdout.splitlines()[0] == f"AgentCI {__version__}"
    assert "required" not in done.stdout and not list(tmp_path.iterdir())
    other = subprocess.run(
        [sys.executable, str(ROOT / "entrypoint.py"), "test"], env=env, capture_output=True, text=True
    )
    assert other.returncode == 2 and "takes no arguments but --version and --help, not 'test'" in other.stderr
