"""How the agent trends.

A history built on a real git repository (runs appended to a branch of their own, a change later reverted with `git
revert`), its figures (change fail percentage, revert rate, variance, slope), the bands and alerts, its exports, and the
action keeping it on the history branch through the GitHub API (a local server that checks every request against
GitHub's OpenAPI description).
"""

from __future__ import annotations

import csv
import io
import json
import re
import subprocess
from pathlib import Path

import pytest
from fakes.github_server import FakeGitHub
from helpers import ROOT, run_cli

from agentci_action.compare.history import HistoryEntry, history_figures, read_entries, reverted, spread, trend
from agentci_action.engine.results import Status
from integration.test_action import environment, run_action, traces
from integration.test_action import workspace as action_workspace

workspace = action_workspace  # test_action's fixture (its spec, a baseline, a traces folder), by its name
RAG = ROOT / "examples" / "rag"


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=Dev", "-c", "user.email=dev@example.com", *args],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository holding the rag example, one commit on main."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    for name in ("agentci_spec.yaml", "reference_verdicts.yaml"):
        (root / name).write_text((RAG / name).read_text(encoding="utf-8"), encoding="utf-8")
    for folder in ("traces", "runs", "baselines", ".agentci"):
        for file in (RAG / folder).rglob("*"):
            if file.is_file():
                target = root / file.relative_to(RAG)
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(file.read_bytes())
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "the rag agent")
    return root


def results(repo: Path, traces_path: str, name: str) -> Path:
    out = repo.parent / name
    done = run_cli("test", "agentci_spec.yaml", "--traces", traces_path, "--format", "json", "--output", out, cwd=repo)
    assert done.returncode in (0, 1), done.stderr
    return out


def test_a_history_on_a_real_repository_with_a_revert(repo):
    good = results(repo, "traces/", "good.json")
    broken = results(repo, "runs/v1-broken.jsonl", "broken.json")
    assert json.loads(broken.read_text())["summary"]["failed"] > 0

    pushes: list[str] = []  # the command each append printed to share the history

    def append(result: Path) -> str:
        done = run_cli("history", "--append", result, cwd=repo)
        assert done.returncode == 0, done.stderr
        assert "added the run at" in done.stdout
        pushes.extend(re.findall(r"share it with `(git push origin [^`]+)`", done.stdout))
        return git(repo, "rev-parse", "HEAD").strip()

    first = append(good)
    (repo / "agent_prompt.txt").write_text("a prompt that breaks the weather answer\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "a new prompt")
    second = append(broken)
    git(repo, "revert", "--no-edit", "HEAD")
    third = append(good)

    assert git(repo, "rev-parse", "--abbrev-ref", "HEAD").strip() == "main"  # the work tree was never touched
    assert git(repo, "status", "--porcelain") == ""
    assert git(repo, "ls-tree", "--name-only", "agentci-history").split() == ["agentci.jsonl"]
    assert git(repo, "rev-list", "--count", "agentci-history").strip() == "3"  # one commit per append
    assert pushes == ["git push origin agentci-history"] * 3
    remote = repo.parent / "origin.git"  # the command runs as printed where the repository has an origin
    git(repo.parent, "init", "-q", "--bare", str(remote))
    git(repo, "remote", "add", "origin", str(remote))
    subprocess.run(["bash", "-c", pushes[-1]], cwd=repo, check=True, capture_output=True)  # as a shell runs it
    assert git(remote, "rev-parse", "agentci-history") == git(repo, "rev-parse", "agentci-history")
    entries = read_entries(git(repo, "show", "agentci-history:agentci.jsonl"), "branch", pytest.fail)
    assert [e.commit for e in entries] == [first, second, third]
    assert entries[2].reverts == [second] and entries[1].failed_gate and not entries[0].failed_gate
    assert entries[1].queries["weather-tokyo"] in (Status.FAIL, Status.WARN)

    shown = run_cli("history", "--format", "json", cwd=repo)
    report = json.loads(shown.stdout)
    figures = report["figures"]
    assert figures["runs"] == 3 and figures["reverted"] == [second]
    assert figures["revert_rate"] == pytest.approx(1 / 3) and figures["change_fail_percentage"] == pytest.approx(1 / 3)
    rates = [e["pass_rate"] for e in report["entries"]]
    assert figures["pass_rate"]["variance"] == pytest.approx(sum((r - sum(rates) / 3) ** 2 for r in rates) / 3)

    rows = list(csv.DictReader(io.StringIO(run_cli("history", "--format", "csv", cwd=repo).stdout)))
    assert [row["reverted"] for row in rows] == ["False", "True", "False"]
    console = run_cli("history", cwd=repo).stdout
    assert "3 runs in agentci-history:agentci.jsonl" in console and "revert rate 33.3%" in console
    assert "(failed the gate) reverted" in console

    # the reverted run read from the repository's messages alone, without the entries' own record
    messages = git(repo, "log", "--format=%B%x00").split("\x00")
    alone = history_figures([e.model_copy(update={"reverts": []}) for e in entries], messages)
    assert alone.reverted == [second]

    # the trend beside a new run, from the branch (an alert: the broken run leaves the pass-rate band of 3 good runs)
    git(repo, "update-ref", "refs/heads/agentci-history", git(repo, "rev-parse", "agentci-history~2").strip())
    run_cli("history", "--append", good, cwd=repo)
    run_cli("history", "--append", good, cwd=repo)
    beside = run_cli(
        "test", "agentci_spec.yaml", "--traces", "runs/v1-broken.jsonl", "--history", "agentci-history", cwd=repo
    )
    assert "trend on the default branch (last 3 runs)" in beside.stdout
    assert "alert: This run moves pass rate outside its band on the default branch" in beside.stdout

    # a branch name a shell would split at its `;` and `'`: quoted in the command printed to share it
    odd = run_cli("history", "--append", good, "--history", "ci;it's", cwd=repo)
    (push,) = re.findall(r"share it with `(git push origin [^`]+)`", odd.stdout)
    subprocess.run(["bash", "-c", push], cwd=repo, check=True, capture_output=True)
    assert git(remote, "rev-parse", "ci;it's") == git(repo, "rev-parse", "ci;it's")


def test_a_history_file_works_as_the_branch_does(repo):
    good = results(repo, "traces/", "good.json")
    file = repo.parent / "history.jsonl"
    for _ in range(2):
        assert run_cli("history", "--append", good, "--history", file, "--commit", "c" * 40, cwd=repo).returncode == 0
    assert [e.commit for e in read_entries(file.read_text(), "f", pytest.fail)] == ["c" * 40] * 2
    assert "| pass rate |" in run_cli("history", "--history", file, "--format", "markdown", cwd=repo).stdout
    file.write_text(file.read_text() + "{not json\n")
    broken = run_cli("history", "--history", file, cwd=repo)  # a line that is not an entry is skipped, and said
    assert broken.returncode == 0 and "2 runs in" in broken.stdout
    assert f"warning: {file}: skipped 1 line that are not history entries: line 3 (not JSON" in broken.stderr


def entry(pass_rate: float, cost: float, commit: str = "0" * 40, failed: bool = False) -> HistoryEntry:
    return HistoryEntry(
        commit=commit, date="2026-11-01T00:00:00Z", agent="a", spec="s.yaml", status=Status.PASS, failed_gate=failed,
        total=10, passed=round(pass_rate * 10), pass_rate=pass_rate, composite_score=pass_rate, cost_usd=cost,
        total_tokens=int(cost * 1e6),
    )  # fmt: skip


def test_bands_alert_on_the_worse_side_only():
    history = [entry(1.0, 0.10), entry(1.0, 0.11), entry(1.0, 0.09), entry(0.9, 0.10)]
    lines = {line.figure: line for line in trend(history).lines}
    rates = [1.0, 1.0, 1.0, 0.9]
    mean = sum(rates) / 4
    sigma = (sum((r - mean) ** 2 for r in rates) / 4) ** 0.5
    assert lines["pass_rate"].low == pytest.approx(mean - 2 * sigma) and lines["pass_rate"].high == 1.0  # a rate's top
    assert lines["cost_usd"].low == pytest.approx(0.1 - 0.025)  # the 25 % floor beats 2σ of 0.0071
    low = {line.figure: line for line in trend(history[:2]).lines}
    assert low["pass_rate"].low is None  # two runs: no band yet

    from dataclasses import replace

    worse = replace(lines["pass_rate"], current=0.5)
    better = replace(lines["cost_usd"], current=0.01)
    dearer = replace(lines["cost_usd"], current=0.2)
    assert (worse.outside, better.outside, dearer.outside) == ("worse", "better", "worse")
    assert replace(lines["pass_rate"], current=0.95).outside == ""


def test_the_reference_variance_and_the_reverts_a_message_names():
    assert spread([0.70, 0.80, 0.85, 0.90]).variance == pytest.approx(0.00546875)  # scylla_metrics.md, example 3
    assert spread([1.0, 2.0, 3.0]).slope == pytest.approx(1.0) and spread([]) is None
    message = 'Revert "a new prompt"\n\nThis reverts commit 0123456789abcdef0123456789abcdef01234567.'
    assert reverted([message, "This reverts commit ABCDEF1, reversing\nchanges made to 123."]) == {
        "0123456789abcdef0123456789abcdef01234567",
        "abcdef1",
    }
    figures = history_figures([entry(1, 0.1, "abcdef1" + "0" * 33, failed=True), entry(1, 0.1)], [])
    assert figures.change_fail_percentage == 0.5 and figures.revert_rate == 0.0
    abbreviated = "Revert it\n\nThis reverts commit abcdef1."
    assert history_figures([entry(1, 0.1, "abcdef1" + "0" * 33), entry(1, 0.1)], [abbreviated]).revert_rate == 0.5


def push_environment(folder: Path, api_url: str, sha: str, message: str) -> dict[str, str]:
    """A push of one commit to the default branch."""
    env = environment(folder, api_url, event="push")
    payload = {
        "ref": "refs/heads/main",
        "before": "b" * 40,
        "after": sha,
        "repository": {"default_branch": "main", "full_name": "octo/agent"},
        "commits": [{"id": sha, "message": message}],
    }
    (folder / "event.json").write_text(json.dumps(payload))
    return env


def test_the_action_appends_on_pushes_and_shows_the_trend_on_pull_requests(workspace):
    with FakeGitHub() as github:
        traces(workspace, "Refunds are accepted within 30 days.")
        for n in range(3):
            code, log = run_action(push_environment(workspace, github.url, f"{n + 5}" * 40, f"change {n}"))
            assert code == 0 and "History: this run was added to agentci-history" in log, log
        revert = f'Revert "change 2"\n\nThis reverts commit {"7" * 40}.'
        assert run_action(push_environment(workspace, github.url, "a" * 40, revert))[0] == 0
        files = github.branch_files("octo/agent", "agentci-history")
        entries = read_entries(files["agentci.jsonl"].decode(), "branch", pytest.fail)
        assert [e.commit for e in entries] == ["5" * 40, "6" * 40, "7" * 40, "a" * 40]
        assert entries[-1].reverts == ["7" * 40] and set(files) == {"agentci.jsonl"}

        traces(workspace, "No refunds.")  # the pull request fails the refund query: the pass rate leaves its band
        code, log = run_action(environment(workspace, github.url))
        assert code == 1
        (comment,) = github.comments("octo/agent", 7)
        body = comment["body"]
        assert "### Trend on the default branch (last 4 runs)" in body
        assert "> [!WARNING]\n> This PR moves pass rate outside its band on the default branch: 0.50" in body
        assert "revert rate 25%" in body
        assert "Trend on the default branch" in (workspace / "summary.md").read_text()
        assert "Trend on the default branch" in (workspace / "out" / "agentci-results.html").read_text()
        assert github.state.violations == []


def test_a_token_that_cannot_write_the_history_is_a_warning(workspace):
    with FakeGitHub() as github:
        github.state.read_only.add("ghs_secretvalue123")
        traces(workspace, "Refunds are accepted within 30 days.")
        code, log = run_action(push_environment(workspace, github.url, "5" * 40, "change"))
        assert code == 0
        assert "Could not add this run to agentci-history: GitHub answered 403" in log
        assert "contents: write" in log and json.loads((workspace / "out" / "agentci-results.json").read_text())
        assert github.branch_files("octo/agent", "agentci-history") is None


@pytest.mark.parametrize(
    ("event_name", "event", "appended"),
    [
        ("push", {"ref": "refs/heads/main", "repository": {"default_branch": "main"}}, True),
        ("push", {"ref": "refs/heads/feature", "repository": {"default_branch": "main"}}, False),
        ("push", {"ref": "refs/tags/main", "repository": {"default_branch": "main"}}, False),
        ("push", {"ref": "refs/heads/main", "deleted": True, "repository": {"default_branch": "main"}}, False),
        ("pull_request", {"ref": "refs/heads/main", "repository": {"default_branch": "main"}}, False),
        ("push", {"ref": "refs/heads/main", "repository": {}}, False),
    ],
)
def test_only_a_push_to_the_default_branch_is_appended(event_name, event, appended):
    from agentci_action.github.history_store import pushed_to_default_branch

    assert pushed_to_default_branch(event_name, event) is appended
