"""The examples' agents (scripted policies in examples/*/agent.py).

`agentci run` on each example reproduces its recorded traces fact for fact, and the RAG story (test the broken agent,
save it, fix it, test, save, diff) runs with the agent instead of recorded files.

Timings are compared too: the scripted agents model their latencies (and tokens) from the text instead of
measuring a model that does not run (examples/scripted_model.py), so a run is deterministic to the millisecond.
A real agent's timings are not, and a test of one would leave them out.
"""

from __future__ import annotations

import json
import shutil

import pytest
from helpers import ROOT, hermetic_environment, run_cli

from agentci_action.trace.load import load_traces

EXAMPLES = ROOT / "examples"


def facts(patterns: list[str]) -> dict[str, dict]:
    """Each trace as evaluation sees it, by query id."""
    return {t.id: t.model_dump() for t in load_traces(patterns)}


@pytest.mark.parametrize(
    "name, version, recorded",
    [
        ("rag", "current", "traces/current.jsonl"),
        ("rag", "v1-broken", "runs/v1-broken.jsonl"),
        ("rag", "v2-fixed", "runs/v2-fixed.jsonl"),
        ("support-router", "current", "traces/current.jsonl"),
        ("support-router", "v1", "runs/v1.jsonl"),
        ("support-chat", "current", "traces/current.jsonl"),
        ("support-chat", "v1", "runs/v1.jsonl"),
        ("support-chat", "v2-broken", "runs/v2-broken.jsonl"),
        ("simulated-customer", "current", "traces/current.jsonl"),  # the customer replayed from its recordings
        ("dev-agent", "current", "traces/current.jsonl"),
        ("dev-agent", "v1", "runs/v1.jsonl"),
    ],
)
def test_agentci_run_reproduces_the_recorded_traces(tmp_path, name, version, recorded):
    out = tmp_path / "out"
    spec = EXAMPLES / name / "agentci_spec.yaml"
    result = run_cli("run", "--spec", spec, "--output", out, env=hermetic_environment(AGENT_VERSION=version))
    assert result.returncode == 0, result.stderr
    produced, expected = facts([str(out)]), facts([str(EXAMPLES / name / recorded)])
    assert produced == expected
    for trace in expected.values():  # the policy's own facts, not defaults: answer, model, tokens, timings
        assert trace["final_answer"] and trace["total_tokens"] and trace["total_duration_ms"]
        assert all(call["model"] and call["input_tokens"] and call["duration_ms"] for call in trace["llm_calls"])


@pytest.mark.parametrize("name", ["rag", "support-router", "support-chat", "dev-agent"])
def test_the_baselines_are_the_recorded_runs(name):
    """Each saved version holds exactly the traces of its recorded run (runs/<version>.jsonl)."""
    for baseline in (EXAMPLES / name / "baselines").glob("*.json"):
        saved = json.loads(baseline.read_text())
        recorded = facts([str(EXAMPLES / name / "runs" / f"{saved['version']}.jsonl")])
        assert {qid: runs[0]["final_answer"] for qid, runs in saved["queries"].items()} == {
            qid: t["final_answer"] for qid, t in recorded.items()
        }
        assert {qid: [c["name"] for c in runs[0].get("tool_calls", [])] for qid, runs in saved["queries"].items()} == {
            qid: [c["name"] for c in t["tool_calls"]] for qid, t in recorded.items()
        }


def test_the_broken_and_fixed_agents_differ_only_where_the_story_says():
    """Each example's versions differ only where meant.

    rag: only weather-tokyo changes between versions; support-router: only the two misrouted queries; dev-agent: only
    the re-read file.
    """
    changed = {}
    for name, before, after in [
        ("rag", "runs/v1-broken.jsonl", "runs/v2-fixed.jsonl"),
        ("rag", "runs/v2-fixed.jsonl", "traces/current.jsonl"),
        ("support-router", "runs/v1.jsonl", "traces/current.jsonl"),
        ("dev-agent", "runs/v1.jsonl", "traces/current.jsonl"),
    ]:
        old, new = facts([str(EXAMPLES / name / before)]), facts([str(EXAMPLES / name / after)])
        changed[(name, after)] = sorted(qid for qid in old if old[qid] != new[qid])
    assert changed == {
        ("rag", "runs/v2-fixed.jsonl"): ["weather-tokyo"],
        ("rag", "traces/current.jsonl"): ["weather-tokyo"],
        ("support-router", "traces/current.jsonl"): ["login-crash", "mobile-sync"],
        ("dev-agent", "traces/current.jsonl"): ["unused-imports"],
    }


def test_the_rag_story_runs_with_the_agent(tmp_path):
    shutil.copytree(EXAMPLES, tmp_path / "examples", ignore=shutil.ignore_patterns("__pycache__"))
    spec = tmp_path / "examples" / "rag" / "agentci_spec.yaml"
    for baseline in spec.parent.joinpath("baselines").glob("*.json"):
        baseline.unlink()  # the story saves its own versions

    def agentci(version: str, *args: str):
        return run_cli(*args, "--spec", spec, env=hermetic_environment(AGENT_VERSION=version))

    assert run_cli("validate", spec).returncode == 0
    broken = agentci("v1-broken", "test")
    assert broken.returncode == 1 and "✗ FAIL  weather-tokyo" in broken.stdout, broken.stdout + broken.stderr
    saved = agentci("v1-broken", "save", "--version", "v1-broken", "--force-save")
    assert saved.returncode == 0, saved.stderr
    fixed = agentci("v2-fixed", "test", "--baseline", "v1-broken")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert agentci("v2-fixed", "save", "--version", "v2-fixed").returncode == 0
    diff = run_cli("diff", "--spec", spec, "--baseline", "v1-broken", "--compare", "v2-fixed")
    assert diff.returncode == 0 and "1 fixed" in diff.stdout
    # Backwards, the diff says the weather question regressed and exits as `test` on that version did, unless
    # --fail-on says nothing blocks.
    back = run_cli("diff", "--spec", spec, "--baseline", "v2-fixed", "--compare", "v1-broken")
    assert back.returncode == broken.returncode == 1 and "1 regression" in back.stdout, back.stdout + back.stderr
    allowed = run_cli("diff", "--spec", spec, "--baseline", "v2-fixed", "--compare", "v1-broken", "--fail-on", "none")
    assert allowed.returncode == 0, allowed.stderr
    for version in ("v1-broken", "v2-fixed"):  # the story saved what the shipped baselines hold
        story, shipped = (
            json.loads((d / "baselines" / f"{version}.json").read_text()) for d in (spec.parent, EXAMPLES / "rag")
        )
        assert story["queries"] == shipped["queries"] and story["metadata"]["models"] == shipped["metadata"]["models"]
