"""Publish-only mode (input `results`) for fork pull requests.

A `workflow_run` workflow publishes the results file that the pull request's own, read-only workflow uploaded. The real
PyGithub against the local GitHub API; the pull request comes from the event (listed, or looked up by the fork's head
branch and commit), never from the file, and the file's text is as inert as an agent's.
"""

from __future__ import annotations

import json

import pytest
from fakes.github_server import FakeGitHub
from helpers import github_outputs

from integration.test_action import HOSTILE, environment, run_action, traces
from integration.test_action import workspace as action_workspace

workspace = action_workspace  # the same fixture, by its name

HEAD = "h" * 40


@pytest.fixture
def github():
    with FakeGitHub() as fake:
        yield fake
        assert fake.state.violations == []


def evaluated(workspace, github, answer: str = "No refunds.") -> str:
    """The results file the pull request's workflow uploads (it could not comment: its token is read-only)."""
    traces(workspace, answer)
    code, _ = run_action(environment(workspace, github.url, fork=True, comment_mode="off"))
    assert code in (0, 1)
    return "out/agentci-results.json"


def publish_env(workspace, api_url: str, results: str, *, fork: bool = True, listed: bool = False, **inputs) -> dict:
    env = environment(workspace, api_url, event="workflow_run", results=results, traces="", **inputs)
    event = {
        "workflow_run": {
            "id": 41,
            "event": "pull_request",
            "head_sha": HEAD,
            "head_branch": "feature",
            "head_repository": {"full_name": "mallory/agent" if fork else "octo/agent"},
            "pull_requests": [{"number": 7, "head": {"sha": HEAD}}] if listed else [],
        }
    }
    (workspace / "event.json").write_text(json.dumps(event))
    return {**env, "GITHUB_SHA": "d" * 40}  # a workflow_run job runs on the default branch's head


def test_a_fork_pull_request_gets_its_comment_and_check_run_from_the_trusted_workflow(workspace, github):
    github.add_pull("octo/agent", 7, "mallory/agent", "feature", HEAD)
    github.add_pull("octo/agent", 8, "mallory/agent", "other", HEAD)  # same commit, another branch: not ours
    results = evaluated(workspace, github)
    (workspace / "summary.md").unlink()
    code, log = run_action(publish_env(workspace, github.url, results, check_run="true"))
    assert code == 0  # the evaluating workflow already failed the pull request
    [comment] = github.comments("octo/agent", 7)
    assert "1 of 2 queries failed" in comment["body"] and github.comments("octo/agent", 8) == []
    [check] = github.state.check_runs
    assert check["head_sha"] == HEAD and check["conclusion"] == "failure"
    assert next((a["annotation_level"], a["start_line"]) for a in check["annotations"]) == ("failure", 4)
    assert (workspace / "summary.md").read_text().startswith("## ❌ AgentCI: 1 of 2 queries failed")
    outputs = github_outputs((workspace / "output.txt").read_text())
    assert outputs["status"] == "fail" and outputs["comment-url"] == comment["html_url"]
    assert "::error file=" not in log  # the annotations went to the check run


def test_a_listed_pull_request_needs_no_lookup(workspace, github):
    results = evaluated(workspace, github, "Refunds within 30 days.")
    code, _ = run_action(publish_env(workspace, github.url, results, fork=False, listed=True))
    assert code == 0 and len(github.comments("octo/agent", 7)) == 1
    assert not any("/pulls" in path for _, path in github.state.requests)


def test_a_pull_request_whose_head_moved_on_gets_nothing_and_a_warning(workspace, github):
    github.add_pull("octo/agent", 7, "mallory/agent", "feature", "n" * 40)  # pushed again since
    results = evaluated(workspace, github)
    code, log = run_action(publish_env(workspace, github.url, results))
    assert code == 0 and github.comments("octo/agent", 7) == []
    assert "No open pull request has head mallory:feature at hhhhhhh" in log


def test_a_forged_results_file_stays_inert(workspace, github):
    github.add_pull("octo/agent", 7, "mallory/agent", "feature", HEAD)
    results = workspace / evaluated(workspace, github)
    document = json.loads(results.read_text())
    document["agent"] = HOSTILE
    document["results"][0]["id"] = HOSTILE
    document["results"][0]["correctness"]["messages"] = [HOSTILE]
    results.write_text(json.dumps(document))
    code, log = run_action(publish_env(workspace, github.url, str(results)))
    [comment] = github.comments("octo/agent", 7)
    assert code == 0 and "@octocat" not in comment["body"] and "<details> |" not in comment["body"]
    assert "<!-- agentci-comment" not in comment["body"].split("\n", 2)[2]  # no second marker to hijack
    assert not [line for line in log.splitlines() if line.startswith("::error file=x.py")]


# The audit's forged artifact: fields that reached the comment, the check run and the summary raw. Each is closed now:
# the file is refused (exit 2) and nothing is posted. (tests/integration/test_hostile_results.py forges every other field.)
FORGED = "@org/team [log in](https://evil.example) <details><summary>x</summary> <!-- agentci-comment: agentci -->"


@pytest.mark.parametrize(
    ("field", "where", "says"),
    [
        ("fail_on", lambda d: d["summary"].__setitem__("fail_on", [FORGED]), "summary.fail_on.0: Input should be"),
        ("grade", lambda d: d["summary"].__setitem__("grade", FORGED), "summary.grade: Input should be"),
        (
            "reference",
            lambda d: d["results"][0]["path"]["details"].__setitem__("reference", FORGED),
            "results.0.path.details.reference: String should match pattern",
        ),
        (
            "a figure",
            lambda d: d["results"][0]["path"]["details"].__setitem__("tool_calls", FORGED),
            "results.0.path.details.tool_calls: Input should be a valid number",
        ),
        ("version", lambda d: d.__setitem__("agentci_version", FORGED), "agentci_version: String should match pattern"),
    ],
)
def test_a_forged_closed_field_is_refused_and_nothing_is_posted(workspace, github, field, where, says):
    github.add_pull("octo/agent", 7, "mallory/agent", "feature", HEAD)
    results = workspace / evaluated(workspace, github, "Refunds within 30 days.")
    document = json.loads(results.read_text())
    document["summary"]["runs"] = 2 * document["summary"]["total"]  # repeated runs: the grade is shown
    where(document)
    results.write_text(json.dumps(document))
    code, log = run_action(publish_env(workspace, github.url, str(results), check_run="true"))
    assert code == 2 and f"not an agentci results file: {says}" in log, log
    assert github.comments("octo/agent", 7) == [] and github.state.check_runs == []
    assert "evil.example" not in (workspace / "summary.md").read_text()


def test_a_spec_path_that_leaves_the_repository_is_never_a_link(workspace, github):
    github.add_pull("octo/agent", 7, "mallory/agent", "feature", HEAD)
    results = workspace / evaluated(workspace, github)
    document = json.loads(results.read_text())
    for result in document["results"]:
        result["file"] = "../../../../../attacker/repo/blob/main/agentci.yaml"
    document["results"][1]["file"] = "/etc/agentci.yaml"
    results.write_text(json.dumps(document))
    code, _ = run_action(publish_env(workspace, github.url, str(results)))
    [comment] = github.comments("octo/agent", 7)
    assert code == 0 and "attacker/repo/blob/main/agentci.yaml:" in comment["body"].replace("\\", "")  # as text
    assert "](https://github.com/octo/agent/blob/" not in comment["body"]  # never a link


@pytest.mark.parametrize(
    ("file", "path"),
    [
        ("agentci.yaml", "agentci.yaml"),
        ("./specs/a.yaml", "specs/a.yaml"),
        ("specs/../b.yaml", "b.yaml"),
        ("../x.yaml", None),
        ("specs/../../x.yaml", None),
        ("/etc/agentci.yaml", None),
        ("..", None),
        ("..\\..\\x.yaml", None),
        ("", None),
    ],
)
def test_only_a_path_inside_the_repository_is_linked(file, path):
    from agentci_action.report.markdown import in_repository

    assert in_repository(file) == path


def test_a_results_file_over_the_bound_is_refused_unread(workspace, github, monkeypatch):
    from agentci_action.pipeline import results_files

    results = workspace / evaluated(workspace, github)
    monkeypatch.setattr(results_files, "MAX_RESULTS_BYTES", results.stat().st_size - 1)
    code, log = run_action(publish_env(workspace, github.url, str(results)))
    assert code == 2 and "the results file is larger than 0 MiB, more than AgentCI reads" in log
    huge = workspace / "huge.json"
    with huge.open("wb") as file:  # 4 GiB that are never read: a sparse file
        file.truncate(4 << 30)
    monkeypatch.setattr(results_files, "MAX_RESULTS_BYTES", 1 << 20)
    code, log = run_action(publish_env(workspace, github.url, str(huge)))
    assert code == 2 and "larger than 1 MiB" in log


@pytest.mark.parametrize("depth", [300, 200_000])
def test_a_results_file_nested_too_deep_is_an_input_error_not_an_internal_error(workspace, github, depth):
    results = workspace / evaluated(workspace, github)
    document = json.loads(results.read_text())
    document["results"][0]["correctness"]["details"]["deep"] = "@"  # placeholder, nested below
    text = json.dumps(document).replace('"@"', "[" * depth + "]" * depth)
    results.write_text(text)
    code, log = run_action(publish_env(workspace, github.url, str(results)))
    assert code == 2 and "not an agentci results file: nested deeper than 200 lists and objects" in log
    assert "internal error" not in log and "Traceback" not in log


@pytest.mark.parametrize(
    ("content", "says"),
    [
        ("{not json", "not an agentci results file"),
        ('{"summary": {}}', "not an agentci results file"),
        (None, "cannot read the results file"),
    ],
)
def test_a_file_that_is_not_results_is_an_input_error(workspace, github, content, says):
    if content is not None:
        (workspace / "bad.json").write_text(content)
    code, log = run_action(publish_env(workspace, github.url, "bad.json"))
    assert code == 2 and f"::error title=AgentCI::bad.json: {says}" in log


def test_a_shard_results_file_is_refused(workspace, github):
    results = workspace / evaluated(workspace, github)
    document = json.loads(results.read_text())
    document["shard"] = {"index": 1, "count": 2}
    results.write_text(json.dumps(document))
    code, log = run_action(publish_env(workspace, github.url, str(results)))
    assert code == 2 and "a shard results file" in log


def test_results_excludes_evaluating(workspace, github):
    env = publish_env(workspace, github.url, "x.json")
    code, log = run_action({**env, "INPUT_TRACES": "traces/"})
    assert code == 2 and "input 'results' publishes an earlier run" in log


@pytest.mark.parametrize(
    ("run", "number", "label"),
    [
        ({"event": "pull_request", "pull_requests": [{"number": 7, "head": {"sha": HEAD}}]}, 7, "octo:feature"),
        ({"event": "pull_request", "pull_requests": [{"number": 7, "head": {"sha": "x" * 40}}]}, None, "octo:feature"),
        ({"event": "push", "pull_requests": []}, None, None),
    ],
)
def test_the_pull_request_comes_from_the_triggering_run(run, number, label):
    from agentci_action.github.context import resolve

    event = {
        "workflow_run": {
            "head_sha": HEAD,
            "head_branch": "feature",
            "head_repository": {"full_name": "octo/agent"},
            **run,
        }
    }
    context = resolve(
        {"GITHUB_EVENT_NAME": "workflow_run", "GITHUB_REPOSITORY": "octo/agent", "GITHUB_SHA": "d" * 40}, event
    )
    assert (context.head_sha, context.pr_number, context.head_label, context.is_fork) == (HEAD, number, label, False)


def test_the_recipe_workflows_are_valid_and_use_declared_inputs(tmp_path):
    import re
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    import yaml
    from helpers import ROOT

    declared = set(yaml.safe_load((ROOT / "action.yml").read_text())["inputs"])
    blocks = re.findall(r"```yaml\n(.*?)```", (ROOT / "docs" / "guides" / "action-forks.md").read_text(), re.S)
    assert len(blocks) == 2
    tool = shutil.which("check-jsonschema", path=str(Path(sys.executable).parent)) or "check-jsonschema"
    for k, block in enumerate(blocks):
        (tmp_path / f"w{k}.yml").write_text(block)
        done = subprocess.run(
            [tool, "--builtin-schema", "vendor.github-workflows", tmp_path / f"w{k}.yml"],
            capture_output=True,
            text=True,
        )
        assert done.returncode == 0, done.stdout
        steps = [
            s
            for job in yaml.safe_load(block)["jobs"].values()
            for s in job["steps"]
            if s.get("uses", "").startswith("agentci/action@")
        ]
        assert steps and all(set(s.get("with", {})) <= declared for s in steps)
    assert "results" in yaml.safe_load(blocks[1])["jobs"]["publish"]["steps"][1]["with"]
