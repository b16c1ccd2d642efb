"""The examples' agents: `agentci run` on each example reproduces its recorded traces, and the RAG story
(test the broken agent, save it, fix it, test, save, diff) runs with the agent instead of recorded files."""

from __future__ import annotations

import shutil

import pytest
from conftest import ROOT, hermetic_environment, run_cli

from agentci_action.trace.load import load_traces

EXAMPLES = ROOT / "examples"


def facts(patterns: list[str]) -> dict[str, dict]:
    """Each trace as evaluation sees it, by query id; the runner also stamps the query text and run index, which
    a recorded trace matched by its id need not carry."""
    return {t.id: t.model_dump(exclude={"run", "query"}) for t in load_traces(patterns)}


@pytest.mark.parametrize(
    "name, version, recorded",
    [
        ("rag", "current", "traces/current.jsonl"),
        ("rag", "v1-broken", "runs/v1-broken.jsonl"),
        ("rag", "v2-fixed", "runs/v2-fixed.jsonl"),
        ("support-router", "current", "traces/current.jsonl"),
        ("support-router", "v1", "runs/v1.jsonl"),
        ("dev-agent", "current", "traces/current.jsonl"),
    ],
)
def test_agentci_run_reproduces_the_recorded_traces(tmp_path, name, version, recorded):
    out = tmp_path / "out"
    spec = EXAMPLES / name / "agentci_spec.yaml"
    result = run_cli("run", "--spec", spec, "--output", out, env=hermetic_environment(AGENT_VERSION=version))
    assert result.returncode == 0, result.stderr
    produced, expected = facts([str(out)]), facts([str(EXAMPLES / name / recorded)])
    assert produced == expected


def test_the_rag_story_runs_with_the_agent(tmp_path):
    project = tmp_path / "rag"
    shutil.copytree(EXAMPLES / "rag", project)
    shutil.copy(EXAMPLES / "scripted_agent.py", tmp_path)
    spec = project / "agentci_spec.yaml"

    def agentci(version: str, *args: str):
        return run_cli(*args, "--spec", spec, env=hermetic_environment(AGENT_VERSION=version))

    assert run_cli("validate", spec).returncode == 0
    broken = agentci("v1-broken", "test", "--baseline", "none")
    assert broken.returncode == 1 and "✗ FAIL  weather-tokyo" in broken.stdout
    assert agentci("v1-broken", "save", "--version", "v1-broken", "--force-save", "--overwrite").returncode == 0
    fixed = agentci("v2-fixed", "test", "--baseline", "v1-broken")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert agentci("v2-fixed", "save", "--version", "v2-fixed", "--overwrite").returncode == 0
    diff = run_cli("diff", "--spec", spec, "--baseline", "v1-broken", "--compare", "v2-fixed")
    assert diff.returncode == 0 and "1 fixed" in diff.stdout
