"""The base branch as the baseline.

`--baseline-ref REF` and the action's `baseline: base` read the traces and the saved versions as they are at the base
commit, through git in a real repository (two commits built here), else through the GitHub contents API with the real
PyGithub against the local fake GitHub (a shallow clone), and evaluate them with the current spec exactly as a saved
version is.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
from pathlib import Path

import pytest
from fakes.github_server import FakeGitHub
from helpers import hermetic_environment, run_cli

from agentci_action.github.action import main as action_main

SPEC = """\
agent: shop
queries:
  - id: price
    query: How much is the kettle?
    correctness: {not_in_answer: ["USD"]}
  - id: stock
    query: Is it in stock?
    correctness: {expected_in_answer: ["stock"]}
"""
GIT = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
    "HOME": "/nonexistent",
}
TOKEN = "ghs_base_ref_token_never_print"


def rows(price_answer: str, cost: float = 0.01, pad: int = 0) -> str:
    found = [
        {
            "id": "price",
            "final_answer": price_answer + " " * pad,
            "total_cost_usd": cost,
            "tool_calls": [{"name": "catalog"}],
        },
        {"id": "stock", "final_answer": "In stock.", "total_cost_usd": cost},
    ]
    return "".join(json.dumps(r) + "\n" for r in found)


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, env={**os.environ, **GIT}, check=True
    )
    return done.stdout.strip()


@pytest.fixture
def repo(tmp_path) -> dict:
    """Commit 1 (the base): the spec and traces answering in EUR; commit 2 (the PR): the price answer in USD."""
    root = tmp_path / "repo"
    (root / "traces").mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    (root / "agentci_spec.yaml").write_text(SPEC)
    (root / "traces" / "t.jsonl").write_text(rows("30 EUR."))
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    base = git(root, "rev-parse", "HEAD")
    files_at_base = {p: (root / p).read_bytes() for p in ("agentci_spec.yaml", "traces/t.jsonl")}
    (root / "traces" / "t.jsonl").write_text(rows("32 USD.", cost=0.02))
    git(root, "commit", "-q", "-am", "pr")
    return {"root": root, "base": base, "files": files_at_base}


def test_json(root: Path, *extra: str, env: dict | None = None) -> tuple[int, dict, str]:
    done = run_cli(
        "test", "--spec", "agentci_spec.yaml", "--traces", "traces/", "--format", "json", *extra, cwd=root, env=env
    )
    return done.returncode, json.loads(done.stdout) if done.stdout.strip() else {}, done.stderr


test_json.__test__ = False  # a helper, not a test


def test_git_reads_the_traces_at_the_base_commit_and_diffs_the_pr_against_them(repo):
    root, base = repo["root"], repo["base"]
    for ref in (base, "HEAD~1", "main~1"):
        code, document, stderr = test_json(root, "--baseline-ref", ref)
        assert code == 1, stderr
        diff = document["diff"]
        assert diff["before"] == f"base {base[:7]}" and diff["baseline_commit"] == base
        price = next(q for q in diff["queries"] if q["id"] == "price")
        assert price["kinds"][0] == "regression" and price["answer"] == {
            "before": "30 EUR.",
            "after": "32 USD.",
            "split_before": None,
            "split_after": None,
        }
        assert diff["total"]["cost_usd"]["before"] == pytest.approx(0.02)
    console = run_cli("test", "--spec", "agentci_spec.yaml", "--traces", "traces/", "--baseline-ref", base, cwd=root)
    assert f"AgentCI diff · shop · base {base[:7]} → current" in console.stdout
    markdown = run_cli(
        "test",
        "--spec",
        "agentci_spec.yaml",
        "--traces",
        "traces/",
        "--baseline-ref",
        base,
        "--format",
        "markdown",
        cwd=root,
    )
    assert f"### AgentCI diff: base {base[:7]} → current" in markdown.stdout


def test_the_base_commit_evaluated_as_a_saved_version_of_the_same_traces_would_be(repo, tmp_path):
    """The base's traces saved as a version and compared with `--baseline`: the same diff, figure for figure."""
    root, base = repo["root"], repo["base"]
    (tmp_path / "base.jsonl").write_bytes(repo["files"]["traces/t.jsonl"])
    saved = run_cli(
        "save", "--spec", "agentci_spec.yaml", "--traces", tmp_path / "base.jsonl", "--version", "b", cwd=root
    )
    assert saved.returncode == 0, saved.stderr
    _, by_ref, _ = test_json(root, "--baseline-ref", base)
    _, by_version, _ = test_json(root, "--baseline", "b")
    for diff in (by_ref["diff"], by_version["diff"]):
        diff.pop("before"), diff.pop("baseline_commit"), diff.pop("warnings")
    assert by_ref["diff"] == by_version["diff"]
    assert by_ref["results"] == by_version["results"]


def test_a_version_saved_at_the_base_commit_is_read_there(repo, tmp_path):
    """`--baseline v1 --baseline-ref REF`: v1 as saved at REF, though the PR deleted it; `diff` reads it too."""
    root = repo["root"]
    (tmp_path / "old.jsonl").write_text(rows("29 EUR."))
    saved = run_cli(
        "save", "--spec", "agentci_spec.yaml", "--traces", tmp_path / "old.jsonl", "--version", "v1", cwd=root
    )
    assert saved.returncode == 0
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "save v1")
    with_v1 = git(root, "rev-parse", "HEAD")
    git(root, "rm", "-q", "-r", "baselines")
    git(root, "commit", "-q", "-m", "drop v1")
    code, document, stderr = test_json(root, "--baseline", "v1", "--baseline-ref", with_v1)
    assert code == 1, stderr
    assert document["diff"]["before"] == f"v1 @ base {with_v1[:7]}"
    price = next(q for q in document["diff"]["queries"] if q["id"] == "price")
    assert price["answer"]["before"] == "29 EUR."
    v2 = run_cli(
        "save", "--spec", "agentci_spec.yaml", "--traces", "traces/", "--version", "v2", "--force-save", cwd=root
    )
    assert v2.returncode == 0
    diff = run_cli(
        "diff",
        "--spec",
        "agentci_spec.yaml",
        "--baseline",
        "v1",
        "--baseline-ref",
        with_v1,
        "--compare",
        "v2",
        "--format",
        "json",
        cwd=root,
    )
    assert diff.returncode == code == 1, diff.stderr  # v2 fails as `test` on its traces did, and says so alike
    assert json.loads(diff.stdout)["baseline_commit"] == with_v1


def test_a_shallow_clone_reads_the_base_commit_through_the_github_api(repo, tmp_path):
    root, base = repo["root"], repo["base"]
    shallow = tmp_path / "shallow"
    subprocess.run(
        ["git", "clone", "-q", "--depth", "1", f"file://{root}", str(shallow)], check=True, env={**os.environ, **GIT}
    )
    assert subprocess.run(["git", "-C", str(shallow), "cat-file", "-e", base], capture_output=True).returncode != 0

    without = run_cli("test", "--spec", "agentci_spec.yaml", "--traces", "traces/", "--baseline-ref", base, cwd=shallow)
    assert without.returncode == 2 and "not a commit of this checkout" in without.stderr

    big = rows("30 EUR.", pad=1_100_000).encode()  # over the contents API's 1 MB: read as a git blob
    with FakeGitHub() as github:
        github.add_commit("octo/shop", base, {**repo["files"], "traces/t.jsonl": big, "traces/../../evil.jsonl": b"x"})
        env = hermetic_environment(GITHUB_TOKEN=TOKEN, GITHUB_REPOSITORY="octo/shop", GITHUB_API_URL=github.url)
        code, document, stderr = test_json(shallow, "--baseline-ref", base, env=env)
        assert github.state.violations == []
        paths = [path for _, path in github.state.requests]
    assert code == 1, stderr
    assert document["diff"]["baseline_commit"] == base
    price = next(q for q in document["diff"]["queries"] if q["id"] == "price")
    assert price["kinds"][0] == "regression" and price["answer"]["before"] == "30 EUR."
    assert any("/git/blobs/" in p for p in paths) and any("/contents/traces" in p for p in paths)
    assert not (tmp_path / "evil.jsonl").exists() and TOKEN not in stderr + json.dumps(document)


def test_refs_that_are_options_or_paths_out_of_the_repository_are_refused(repo, tmp_path):
    root = repo["root"]
    for ref in ("--output=/tmp/x", "-p", "a..b", "x;rm -rf"):
        done = run_cli("test", "--spec", "agentci_spec.yaml", "--traces", "traces/", f"--baseline-ref={ref}", cwd=root)
        assert done.returncode == 2 and "is not a commit or ref name" in done.stderr, (ref, done.stderr)


def run_action(workspace: Path, api_url: str, event_name: str, payload: dict, **inputs: str) -> tuple[int, str]:
    (workspace.parent / "event.json").write_text(json.dumps(payload))
    env = {
        "GITHUB_EVENT_NAME": event_name,
        "GITHUB_EVENT_PATH": str(workspace.parent / "event.json"),
        "GITHUB_REPOSITORY": "octo/shop",
        "GITHUB_SHA": "m" * 40,
        "GITHUB_WORKSPACE": str(workspace),
        "GITHUB_STEP_SUMMARY": str(workspace.parent / "summary.md"),
        "GITHUB_OUTPUT": str(workspace.parent / "output.txt"),
        "INPUT_TRACES": "traces/",
        "INPUT_BASELINE": "base",
        "INPUT_GITHUB-TOKEN": TOKEN,
        "INPUT_GITHUB-API-URL": api_url,
        "INPUT_RESULTS-PATH": str(workspace.parent / "results.json"),
        **inputs,
    }
    out, cwd = io.StringIO(), os.getcwd()
    os.chdir(workspace)
    try:
        return action_main(env, out), out.getvalue()
    finally:
        os.chdir(cwd)


def pull_request(base: str) -> dict:
    return {
        "pull_request": {
            "number": 9,
            "head": {"sha": "h" * 40, "repo": {"full_name": "octo/shop"}},
            "base": {"sha": base, "repo": {"full_name": "octo/shop"}},
        }
    }


@pytest.mark.parametrize("shallow", [False, True])
def test_the_action_compares_a_pull_request_with_its_base_commit(repo, tmp_path, shallow):
    root, base = repo["root"], repo["base"]
    workspace = root
    if shallow:
        workspace = tmp_path / "checkout"
        subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{root}", str(workspace)], check=True)
    with FakeGitHub() as github:
        github.add_commit("octo/shop", base, repo["files"])
        code, log = run_action(workspace, github.url, "pull_request", pull_request(base))
        [comment] = github.comments("octo/shop", 9)
        history = "/contents/agentci.jsonl"  # the trend's read of the history branch (guides/history.md), not the base
        contents_read = any("/contents/" in path and not path.endswith(history) for _, path in github.state.requests)
        assert github.state.violations == []
    assert code == 1
    assert contents_read is shallow  # git when the checkout has the commit, the API when it does not
    results = json.loads((workspace.parent / "results.json").read_text())
    assert results["diff"]["baseline_commit"] == base
    for body in ((workspace.parent / "summary.md").read_text(), comment["body"]):
        assert f"AgentCI diff: base {base[:7]} → current" in body
    assert log.count(TOKEN) == 1 and f"::add-mask::{TOKEN}" in log  # masked, never printed


def test_merge_group_uses_its_base_sha_and_other_events_fall_back_with_a_notice(repo):
    root, base = repo["root"], repo["base"]
    with FakeGitHub() as github:
        code, _ = run_action(root, github.url, "merge_group", {"merge_group": {"head_sha": "h" * 40, "base_sha": base}})
        assert code == 1
        assert json.loads((root.parent / "results.json").read_text())["diff"]["baseline_commit"] == base
        code, _ = run_action(root, github.url, "push", {"before": "0" * 40, "after": "a" * 40})
    assert code == 1  # the USD answer fails correctness; no baseline to diff with
    results = json.loads((root.parent / "results.json").read_text())
    assert "diff" not in results
    assert any("baseline: base needs a pull_request or merge_group event" in w for w in results["warnings"])
    assert "baseline: base needs a pull\\_request or merge\\_group event" in (root.parent / "summary.md").read_text()


def test_github_failing_to_answer_is_an_infrastructure_error_naming_the_commit(repo, tmp_path):
    root, base = repo["root"], repo["base"]
    shallow = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{root}", str(shallow)], check=True)
    with FakeGitHub() as github:
        github.add_commit("octo/shop", base, repo["files"])
        github.state.fail_status = 403
        env = hermetic_environment(GITHUB_TOKEN=TOKEN, GITHUB_REPOSITORY="octo/shop", GITHUB_API_URL=github.url)
        done = run_cli(
            "test", "--spec", "agentci_spec.yaml", "--traces", "traces/", "--baseline-ref", base, cwd=shallow, env=env
        )
    assert done.returncode == 2
    assert (
        f"GitHub answered 403 reading 'traces' at the base commit {base[:12]} (the token needs contents: read)"
        in done.stderr
    )
    assert "Traceback" not in done.stderr and TOKEN not in done.stderr


def test_a_directory_longer_than_the_contents_api_lists_is_an_error_not_a_silent_cut(repo, tmp_path):
    root, base = repo["root"], repo["base"]
    shallow = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{root}", str(shallow)], check=True)
    many = {f"traces/extra-{i:04d}.jsonl": b"" for i in range(1000)}
    with FakeGitHub() as github:
        github.add_commit("octo/shop", base, {**repo["files"], **many})
        env = hermetic_environment(GITHUB_TOKEN=TOKEN, GITHUB_REPOSITORY="octo/shop", GITHUB_API_URL=github.url)
        done = run_cli(
            "test", "--spec", "agentci_spec.yaml", "--traces", "traces/", "--baseline-ref", base, cwd=shallow, env=env
        )
    assert done.returncode == 2
    assert "more than GitHub's contents API lists: fetch the base commit" in done.stderr
