"""Adaptive runs (`runs: {min, max, batch}`).

`agentci test` without --traces runs the minimum, then only the queries whose verdict against the baseline is still
open, a batch at a time, within the agent's spend cap; `save` records the maximum. The agent is a real `python:` runner
whose runs pass or fail by a fixed pattern per query.
"""

from __future__ import annotations

import json
import re

import pytest
from helpers import JUDGE_VARIABLES, RUNNER_VARIABLES, hermetic_environment, run_cli

AGENT = """
import os

# each query's runs in order, P passing and F failing: the baseline passes (almost) always; now `steady` still
# does, `broken` never does, and `wobbly` passes seven runs in ten
PATTERNS = {
    "baseline": {"steady": "P", "broken": "P", "wobbly": "PPPPPPPPPPPPPPPPPPPF"},
    "current": {"steady": "P", "broken": "F", "wobbly": "PPFPPFPFPP"},
}


def answer(query, id, run):
    pattern = PATTERNS[os.environ["AGENT_MODE"]][id]
    passed = pattern[run % len(pattern)] == "P"
    return {"final_answer": "yes" if passed else "no", "llm_calls": [{"model": "m", "cost_usd": 0.01}]}
"""

SPEC = """
agent: wobbly-agent
runner:
  python: agent:answer
  workers: 4
  {cap}
defaults:
  runs: {{min: 5, max: 20, batch: 5}}
  min_pass_rate: 0.5
  correctness: {{expected_in_answer: ["yes"]}}
suite:
  max_regressions: 0
  max_inconclusive: 5
queries:
  - {{id: steady, query: "Is the sky blue?"}}
  - {{id: broken, query: "Is water wet?"}}
  - {{id: wobbly, query: "Is it Tuesday?"}}
"""


def project(tmp_path, cap: str = ""):
    (tmp_path / "agent.py").write_text(AGENT)
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC.format(cap=cap))
    return spec


def agentci(mode: str, *arguments):
    """The agentci command, its agent in `mode` (baseline or current)."""
    return run_cli(*arguments, env=hermetic_environment(AGENT_MODE=mode))


def save_baseline(spec, tmp_path):
    saved = agentci("baseline", "save", "--spec", spec, "--version", "v1", "--record", tmp_path / "base")
    assert saved.returncode == 0, saved.stderr
    return saved


def test_save_records_each_querys_maximum(tmp_path):
    spec = project(tmp_path)
    save_baseline(spec, tmp_path)
    stored = json.loads((tmp_path / "baselines" / "v1.json").read_text())
    assert {key: len(runs) for key, runs in stored["queries"].items()} == {"broken": 20, "steady": 20, "wobbly": 20}


def test_adaptive_runs_give_more_runs_only_to_undecided_queries(tmp_path):
    spec = project(tmp_path)
    save_baseline(spec, tmp_path)
    tested = agentci("current", "test", "--spec", spec, "--format", "json", "--record", tmp_path / "now")
    assert tested.returncode == 1, tested.stderr  # broken fails its own min_pass_rate; the regression blocks too
    data = json.loads(tested.stdout)
    runs = {r["id"]: r["reliability"]["runs"] for r in data["results"]}
    verdicts = {q["id"]: q["pass_rate"]["verdict"] for q in data["diff"]["queries"]}
    # broken is a regression after its first 5 runs; steady is unchanged once 10 passes rule out a 30-point drop;
    # wobbly's 7 in 10 against 19 in 20 stays open to the maximum
    assert verdicts == {"broken": "regressed", "steady": "unchanged", "wobbly": "inconclusive"}
    assert runs == {"broken": 5, "steady": 10, "wobbly": 20}
    assert {key: len((tmp_path / "now" / f"{key}.jsonl").read_text().splitlines()) for key in runs} == runs
    assert (data["summary"]["runs"], data["summary"]["max_runs"]) == (35, 60)
    assert data["summary"]["cost_at_max_runs_usd"] == pytest.approx(0.60)  # $0.01 a run, 20 runs each
    assert all(r["reliability"]["max_runs"] == 20 for r in data["results"])
    # the minimum of all three, then a batch for steady and wobbly, then wobbly alone twice
    assert re.findall(r"agentci run: (\d+) runs in", tested.stderr) == ["15", "10", "5", "5"]


def test_the_spec_is_loaded_once_for_the_agents_runs_every_batch_and_the_evaluation(tmp_path, monkeypatch, capsys):
    """`agentci test` without --traces, in process: the command loads the spec once and passes it down."""
    from agentci_action.cli.main import main
    from agentci_action.spec import loader

    spec = project(tmp_path)
    save_baseline(spec, tmp_path)
    for name in JUDGE_VARIABLES + RUNNER_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AGENT_MODE", "current")
    loaded, load = [], loader._load_spec
    monkeypatch.setattr(loader, "_load_spec", lambda *args: loaded.append(args) or load(*args))
    assert main(["test", "--spec", str(spec), "--format", "json"]) == 1
    assert re.findall(r"agentci run: (\d+) runs in", capsys.readouterr().err) == ["15", "10", "5", "5"]
    assert len(loaded) == 1


def test_the_agents_spend_cap_stops_adaptive_runs(tmp_path):
    spec = project(tmp_path, cap="max_cost_usd: 0.20")
    save_baseline(spec, tmp_path)
    tested = agentci("current", "test", "--spec", spec, "--format", "json")
    data = json.loads(tested.stdout)
    runs = {r["id"]: r["reliability"]["runs"] for r in data["results"]}
    assert runs == {"broken": 5, "steady": 10, "wobbly": 10}  # $0.15 after the minimum, $0.25 after one batch
    assert any(
        "adaptive runs stopped: the agent's runs cost $0.2500, at runner.max_cost_usd $0.2000" in w
        for w in data["warnings"]
    )


def test_given_traces_are_not_extended(tmp_path):
    """With --traces nothing runs: the verdicts read the runs given, looks counted from the spec's plan."""
    spec = project(tmp_path)
    save_baseline(spec, tmp_path)
    recorded = agentci("current", "run", "--spec", spec, "--output", tmp_path / "min", "--baseline", "none")
    assert recorded.returncode == 0, recorded.stderr
    tested = run_cli("test", "--spec", spec, "--traces", tmp_path / "min", "--format", "json")
    data = json.loads(tested.stdout)
    assert {r["id"]: r["reliability"]["runs"] for r in data["results"]} == {"steady": 5, "broken": 5, "wobbly": 5}
    assert "agentci run:" not in tested.stderr
