"""The sharding workflow of docs/guides/action.md (matrix + merge), run job by job through the action's entry point.

The shard jobs' results files, downloaded together, merge into the same report and exit code as one unsharded run.
"""

import io
import json
import re
import shutil

import yaml
from helpers import ROOT, run_cli

from agentci_action.github.action import main


def workflow() -> dict:
    docs = (ROOT / "docs" / "guides" / "action.md").read_text(encoding="utf-8")
    section = docs.split("## Sharding a large suite across a matrix", 1)[1]
    return yaml.safe_load(re.search(r"```yaml\n(.*?)```", section, re.S).group(1))


def step(job: dict, uses: str) -> dict:
    return next(s for s in job["steps"] if s.get("uses", "").startswith(uses))


def run_action(workspace, with_: dict, **matrix) -> tuple[int, str]:
    """The action as the runner starts it for a push (no PR): INPUT_* from the step's `with:`, matrix filled in."""
    (workspace / "event.json").write_text(json.dumps({"before": "b" * 40, "after": "a" * 40}))
    env = {
        "GITHUB_EVENT_NAME": "push",
        "GITHUB_EVENT_PATH": str(workspace / "event.json"),
        "GITHUB_REPOSITORY": "octo/agent",
        "GITHUB_SHA": "a" * 40,
        "GITHUB_WORKSPACE": str(workspace),
        "GITHUB_STEP_SUMMARY": str(workspace / "summary.md"),
        "GITHUB_OUTPUT": str(workspace / "output.txt"),
    }
    for name, value in with_.items():
        for key, filled in matrix.items():
            value = value.replace(f"${{{{ matrix.{key} }}}}", filled)
        env[f"INPUT_{name.upper()}"] = value
    out = io.StringIO()
    return main(env, out), out.getvalue()


def test_the_documented_workflow_shards_and_merges_the_example(tmp_path, monkeypatch):
    jobs = workflow()["jobs"]
    example = ROOT / "examples" / "repeated-runs"
    shutil.copy(example / "agentci_spec.yaml", tmp_path / "agentci_spec.yaml")
    shutil.copytree(example / "traces", tmp_path / "traces")
    monkeypatch.chdir(tmp_path)
    assert jobs["merge"]["needs"] == "shard" and "!cancelled()" in jobs["merge"]["if"]
    upload, download = step(jobs["shard"], "actions/upload-artifact"), step(jobs["merge"], "actions/download-artifact")
    assert "!cancelled()" in upload["if"] and download["with"]["merge-multiple"] is True
    assert upload["with"]["path"] == download["with"]["path"] == "results/"

    shards = jobs["shard"]["strategy"]["matrix"]["shard"]
    for shard in shards:
        code, log = run_action(tmp_path, step(jobs["shard"], "agentci/action")["with"], shard=str(shard))
        assert code in (0, 1), log
        assert "::error" not in log and "::warning" not in log  # the merge job annotates, once
    assert sorted(p.name for p in (tmp_path / "results").iterdir()) == [f"shard-{i}.json" for i in shards]
    assert "AgentCI · shard 4/4" in (tmp_path / "summary.md").read_text()

    (tmp_path / "summary.md").unlink()
    merge = step(jobs["merge"], "agentci/action")["with"]
    assert "traces" not in merge
    code, log = run_action(tmp_path, merge)
    whole = run_cli(
        "test",
        "--spec",
        "agentci_spec.yaml",
        "--traces",
        "traces/",
        "--format",
        "json",
        "--output",
        "whole.json",
        cwd=tmp_path,
    )
    assert code == whole.returncode == 1, log  # convert-currency fails its min_pass_rate
    assert (tmp_path / "agentci-results.json").read_text() == (tmp_path / "whole.json").read_text()
    assert "::warning file=agentci_spec.yaml,line=49,title=AgentCI path%3A summarise-paper::" in log
    assert (tmp_path / "summary.md").read_text().startswith("## ❌ AgentCI: 1 of 4 queries failed")


def test_merge_job_refuses_a_missing_shard_with_exit_2(tmp_path, monkeypatch):
    example = ROOT / "examples" / "repeated-runs"
    shutil.copy(example / "agentci_spec.yaml", tmp_path / "agentci_spec.yaml")
    shutil.copytree(example / "traces", tmp_path / "traces")
    monkeypatch.chdir(tmp_path)
    for shard in (1, 3):
        run_action(
            tmp_path,
            {
                "traces": "traces/",
                "spec": "agentci_spec.yaml",
                "shard": f"{shard}/3",
                "results-path": f"results/s{shard}.json",
            },
        )
    code, log = run_action(tmp_path, {"spec": "agentci_spec.yaml", "merge": "results/*.json"})
    assert code == 2 and "missing shard 2/3" in log
    assert "could not evaluate" in (tmp_path / "summary.md").read_text()
