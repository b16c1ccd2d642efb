"""The golden queries a PR added, changed or removed against its base commit, said alike by `agentci test` and the action.

`agentci test --baseline-ref` in a git repository whose base commit holds the spec; the action on a pull request whose
base commit the checkout lacks, read through the (fake) contents API. The head adds a promoted query (with its
provenance), changes one and removes one.
"""

from __future__ import annotations

import io
import json
import re
import subprocess
from pathlib import Path

import cmarkgfm
import pytest
from cmarkgfm.cmark import Options
from fakes.github_server import FakeGitHub
from helpers import outside_stop_commands, run_cli

from agentci_action.github.action import main

BASE_SPEC = """\
version: 1
agent: support
queries:
  - id: order-status
    query: "Where is my order?"
    correctness:
      expected_in_answer: ["shipped"]
  - id: old-case
    query: "An old case"
"""
HEAD_SPEC = """\
version: 1
agent: support
queries:
  - id: order-status
    query: "Where is my order?"
    correctness:
      expected_in_answer: ["shipped", "refund"]
  - id: refund-window
    query: "Can I get a refund after 40 days?"
    provenance:
      source: {source}
      trace_id: run-7f3a
      framework: langgraph
      promoted_commit: 1a2b3c4d5e6f7
      incident: true
"""
PROMOTED = (
    "traces/prod-1.json (trace run-7f3a, langgraph, commit 1a2b3c4); incident: fails on its source trace by design"
)
HOSTILE = "'<img src=x onerror=alert(1)> @org/team ::error file=x.py::pwned'"
TRACES = [
    {"id": "order-status", "final_answer": "It shipped; a refund is possible."},
    {"id": "refund-window", "final_answer": "Refunds close after 30 days."},
]


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def commit(root: Path, message: str) -> None:
    git(root, "add", ".")
    git(root, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-qm", message)


def head(root: Path, source: str = "traces/prod-1.json") -> None:
    (root / "agentci_spec.yaml").write_text(HEAD_SPEC.format(source=source))
    (root / "traces").mkdir(exist_ok=True)
    (root / "traces" / "t.jsonl").write_text("".join(json.dumps(t) + "\n" for t in TRACES))


@pytest.fixture
def repository(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "agentci_spec.yaml").write_text(BASE_SPEC)
    git(tmp_path, "init", "-q")
    commit(tmp_path, "base")
    monkeypatch.chdir(tmp_path)
    head(tmp_path)
    return tmp_path


COMMON = ("test", "--spec", "agentci_spec.yaml", "--traces", "traces/", "--baseline-ref", "HEAD")


def test_agentci_test_lists_them_on_the_console_in_markdown_and_in_json(repository: Path):
    console = run_cli(*COMMON, cwd=repository)
    assert console.returncode == 0, console.stdout + console.stderr
    assert (
        "Golden queries changed in this PR: 1 added · 1 changed · 1 removed\n"
        f"  refund-window added at agentci_spec.yaml:8, promoted from {PROMOTED}\n"
        "  order-status changed at agentci_spec.yaml:4: correctness.expected_in_answer: +'refund'\n"
        "  old-case removed from agentci_spec.yaml:8\n"
    ) in console.stdout
    shown = run_cli(*COMMON, "--format", "markdown", cwd=repository).stdout
    assert "### Golden queries changed in this PR\n\n1 added · 1 changed · 1 removed\n" in shown
    html = cmarkgfm.github_flavored_markdown_to_html(shown)
    assert "<li>old-case removed from agentci_spec.yaml:8</li>" in html
    assert "order-status changed at agentci_spec.yaml:4: correctness.expected_in_answer: +'refund'" in html
    results = json.loads(run_cli(*COMMON, "--format", "json", cwd=repository).stdout)
    assert [(g["query"], g["change"], g["line"]) for g in results["goldens_changed"]] == [
        ("refund-window", "added", "agentci_spec.yaml:8"),
        ("order-status", "changed", "agentci_spec.yaml:4"),
        ("old-case", "removed", "agentci_spec.yaml:8"),
    ]
    assert results["goldens_changed"][0]["provenance"]["incident"] is True


def test_an_unchanged_spec_adds_no_section_nor_key(repository: Path):
    (repository / "agentci_spec.yaml").write_text(BASE_SPEC.replace('  - id: old-case\n    query: "An old case"\n', ""))
    commit(repository, "same")
    (repository / "traces" / "t.jsonl").write_text(json.dumps(TRACES[0]) + "\n")
    console = run_cli(*COMMON, cwd=repository)
    assert console.returncode == 0 and "Golden queries" not in console.stdout
    assert "goldens_changed" not in json.loads(run_cli(*COMMON, "--format", "json", cwd=repository).stdout)


def test_a_base_spec_that_does_not_load_is_one_warning_and_the_run_stands(repository: Path):
    (repository / "agentci_spec.yaml").write_text("version: 1\nagent: [\n")
    commit(repository, "broken")
    head(repository)
    console = run_cli(*COMMON, cwd=repository)
    assert console.returncode == 0, console.stdout + console.stderr
    [warning] = [line for line in console.stdout.splitlines() if "golden queries changed in this PR" in line]
    assert "cannot be listed" in warning and "does not load" in warning
    assert "Golden queries changed in this PR:" not in console.stdout


def action_environment(workspace: Path, api_url: str) -> dict[str, str]:
    payload = {
        "pull_request": {
            "number": 7,
            "head": {"sha": "h" * 40, "repo": {"full_name": "octo/agent"}},
            "base": {"sha": "b" * 40, "repo": {"full_name": "octo/agent"}},
        }
    }
    (workspace / "event.json").write_text(json.dumps(payload))
    return {
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_EVENT_PATH": str(workspace / "event.json"),
        "GITHUB_REPOSITORY": "octo/agent",
        "GITHUB_SHA": "m" * 40,
        "GITHUB_WORKSPACE": str(workspace),
        "GITHUB_RUN_ID": "5",
        "GITHUB_STEP_SUMMARY": str(workspace / "summary.md"),
        "GITHUB_OUTPUT": str(workspace / "output.txt"),
        "INPUT_SPEC": "agentci_spec.yaml",
        "INPUT_TRACES": "traces/",
        "INPUT_GITHUB-TOKEN": "ghs_secretvalue123",
        "INPUT_GITHUB-API-URL": api_url,
        "INPUT_COMMENT-MODE": "always",
        "INPUT_COMMENT-HEADER": "agentci",
        "INPUT_RESULTS-PATH": "out/agentci-results.json",
        "INPUT_CHECK-RUN": "true",
    }


def test_the_action_s_comment_lists_them_read_at_the_base_through_the_api(tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # not a git repository: the base commit is read through the contents API
    head(tmp_path, source=HOSTILE)
    with FakeGitHub() as github:
        github.add_pull("octo/agent", 7, "octo/agent", "feature", "h" * 40)
        github.add_commit("octo/agent", "b" * 40, {"agentci_spec.yaml": BASE_SPEC.encode()})
        out = io.StringIO()
        code = main(action_environment(tmp_path, github.url), out)
        [comment] = github.comments("octo/agent", 7)
        [check] = github.state.check_runs
        assert github.state.violations == []
    log = out.getvalue()
    assert code == 0, log
    body = comment["body"]
    assert "### Golden queries changed in this PR\n\n1 added · 1 changed · 1 removed\n" in body
    assert "order-status changed at agentci\\_spec.yaml:4: correctness.expected\\_in\\_answer: +'refund'" in body
    assert "old-case removed from agentci\\_spec.yaml:8" in body
    summary = (tmp_path / "summary.md").read_text()
    assert "### Golden queries changed in this PR\n\n1 added · 1 changed · 1 removed\n" in summary
    [page] = (tmp_path / "out").glob("*.html")  # the HTML report the comment links to lists every one, inert
    report = page.read_text()
    assert "<h2>Golden queries changed in this PR</h2><p>1 added · 1 changed · 1 removed</p>" in report
    assert "&lt;img src=x onerror=alert(1)&gt;" in report and "<img" not in report
    assert "### Golden queries changed in this PR\n\n1 added · 1 changed · 1 removed\n" in check["output"]["summary"]
    html = cmarkgfm.github_flavored_markdown_to_html(body, options=Options.CMARK_OPT_UNSAFE)
    assert "<img" not in html and "@\u200borg/team" in html
    assert not re.search(r"@[A-Za-z0-9]", re.sub(r"<[^>]+>", "", html)), "a mention"
    assert "Golden queries changed in this PR: 1 added · 1 changed · 1 removed" in log
    assert not [line for line in outside_stop_commands(log) if "pwned" in line], "a workflow command from the spec"
    results = json.loads((tmp_path / "out" / "agentci-results.json").read_text())
    assert [g["change"] for g in results["goldens_changed"]] == ["added", "changed", "removed"]


LISTED = "Golden queries changed in this PR: 1 added · 1 changed · 1 removed"


def test_the_merge_of_shards_lists_them_as_the_unsharded_run_does(repository: Path):
    """Each shard lists the whole spec's changes; `agentci merge` (the sharded workflow's merge job) carries them."""
    for index in (1, 2):
        shard = run_cli(
            *COMMON, "--shard", f"{index}/2", "--format", "json", "--output", f"s{index}.json", cwd=repository
        )
        assert shard.returncode == 0, shard.stdout + shard.stderr
    merged = run_cli("merge", "--spec", "agentci_spec.yaml", "s1.json", "s2.json", cwd=repository)
    assert merged.returncode == 0, merged.stdout + merged.stderr
    whole = run_cli(*COMMON, cwd=repository).stdout
    section = whole[whole.index(LISTED) :].split("\n\n")[0]
    assert section.count("\n") == 4 and section in merged.stdout


def test_the_publish_only_job_shows_the_list_the_evaluating_job_wrote(repository: Path, monkeypatch):
    """A fork's PR: the evaluating workflow writes the results file, the trusted one comments from it."""
    evaluated = run_cli(*COMMON, "--format", "json", "--output", "results.json", cwd=repository)
    assert evaluated.returncode == 0, evaluated.stdout + evaluated.stderr
    with FakeGitHub() as github:
        github.add_pull("octo/agent", 7, "mallory/agent", "feature", "h" * 40)
        env = action_environment(repository, github.url)
        event = {"workflow_run": {"id": 41, "event": "pull_request", "head_sha": "h" * 40, "head_branch": "feature"}}
        (repository / "event.json").write_text(
            json.dumps(
                {"workflow_run": {**event["workflow_run"], "pull_requests": [{"number": 7, "head": {"sha": "h" * 40}}]}}
            )
        )
        env.update({"GITHUB_EVENT_NAME": "workflow_run", "INPUT_RESULTS": "results.json", "INPUT_TRACES": ""})
        out = io.StringIO()
        code = main(env, out)
        [comment] = github.comments("octo/agent", 7)
    assert code == 0, out.getvalue()
    assert "### Golden queries changed in this PR\n\n1 added · 1 changed · 1 removed\n" in comment["body"]
    assert "old-case removed from agentci\\_spec.yaml:8" in comment["body"]


def test_a_forged_change_list_is_refused_naming_the_file(repository: Path):
    evaluated = run_cli(*COMMON, "--format", "json", "--output", "results.json", cwd=repository)
    document = json.loads(evaluated.stdout or (repository / "results.json").read_text())
    document["goldens_changed"][0]["change"] = "vanished"
    (repository / "results.json").write_text(json.dumps(document))
    shard = {**document, "shard": {"index": 1, "count": 1}}
    (repository / "s1.json").write_text(json.dumps(shard))
    refused = run_cli("merge", "--spec", "agentci_spec.yaml", "s1.json", cwd=repository)
    assert refused.returncode == 2
    assert "s1.json" in refused.stderr and "goldens_changed" in refused.stderr
