"""`agentci test` with the judge: the real CLI in a subprocess, the real SDKs, a local provider llm."""

from __future__ import annotations

import json

import pytest
from helpers import hermetic_environment, run_cli

KEY = "sk-ant-test-never-print-me-42"

SPEC = """\
agent: demo
judge_config:
  model: claude-haiku-4-5
  base_url: {url}
  max_attempts: 2
queries:
  - id: judged
    query: How do I reset my password?
    correctness:
      llm_judge:
        - template: actionable_steps
  - id: plain
    query: What is 2+2?
    correctness:
      expected_in_answer: ["4"]
"""


@pytest.fixture
def project(tmp_path, llm, write, write_traces):
    write("agentci_spec.yaml", SPEC.format(url=llm.anthropic_url))
    write_traces(
        "traces.jsonl",
        [{"id": "judged", "final_answer": "Open Settings, then Reset."}, {"id": "plain", "final_answer": "4"}],
    )
    return tmp_path


def agentci_test(project, *extra: str, env=None):
    done = run_cli(
        "test",
        "--spec",
        project / "agentci_spec.yaml",
        "--traces",
        project / "traces.jsonl",
        "--format",
        "json",
        *extra,
        env=env if env is not None else hermetic_environment(ANTHROPIC_API_KEY=KEY),
    )
    assert KEY not in done.stdout + done.stderr
    return done, json.loads(done.stdout) if done.stdout.strip() else None


def test_judge_verdicts_are_cached_and_a_rerun_makes_no_request(project, llm):
    done, report = agentci_test(project)
    assert done.returncode == 0, done.stderr
    assert llm.count == 1 and report["summary"]["judge"]["requests"] == 1 and report["summary"]["judge"]["cost_usd"] > 0
    assert (project / ".agentci" / "judge-cache.json").exists()
    done, report = agentci_test(project)
    assert done.returncode == 0 and llm.count == 1
    assert report["summary"]["judge"] == {**report["summary"]["judge"], "requests": 0, "cache_hits": 1, "cost_usd": 0.0}
    check = report["results"][0]["correctness"]["checks"][0]
    assert check["status"] == "pass" and check["data"]["verdicts"][0]["cached"] is True


def test_persistent_500_exits_2_and_reports_every_result(project, llm):
    llm.fail_next("500", times=50)
    done, report = agentci_test(project)
    assert done.returncode == 2 and llm.count == 2
    judged, plain = report["results"]
    assert judged["status"] == "error" and judged["correctness"]["messages"][0].startswith("[INFRA]")
    assert plain["status"] == "pass" and report["summary"]["errors"] == 1


def test_without_a_key_judge_checks_skip_and_required_mode_exits_2(project, llm):
    done, report = agentci_test(project, env=hermetic_environment())
    assert done.returncode == 0 and report["results"][0]["correctness"]["checks"][0]["status"] == "skip"
    done, report = agentci_test(project, "--judge-mode", "required", env=hermetic_environment())
    assert done.returncode == 2 and "ANTHROPIC_API_KEY" in report["results"][0]["correctness"]["messages"][0]
    assert llm.count == 0


def test_judge_mode_off_and_a_custom_cache_path(project, llm):
    done, report = agentci_test(project, "--judge-mode", "off")
    assert (
        done.returncode == 0 and llm.count == 0 and report["results"][0]["correctness"]["checks"][0]["status"] == "skip"
    )
    done, _ = agentci_test(project, "--judge-cache", project / "verdicts.json")
    assert done.returncode == 0 and json.loads((project / "verdicts.json").read_text())["version"] == 1


def test_console_shows_the_judge_spend_apart_from_the_agent_cost(project, llm):
    done = run_cli(
        "test",
        "--spec",
        project / "agentci_spec.yaml",
        "--traces",
        project / "traces.jsonl",
        env=hermetic_environment(ANTHROPIC_API_KEY=KEY),
    )
    assert done.returncode == 0 and "judge (not in the agent's cost): 1 request · 0 cached verdicts" in done.stdout
    assert KEY not in done.stdout + done.stderr


@pytest.mark.parametrize(
    "flag, value",
    [("--sample-ensemble", "1.5"), ("--sample-ensemble", "x"), ("--workers", "0"), ("--judge-mode", "sometimes")],
)
def test_bad_judge_flags_are_rejected_with_exit_2(project, flag, value):
    done = run_cli("test", "--spec", project / "agentci_spec.yaml", "--traces", project / "traces.jsonl", flag, value)
    assert done.returncode == 2 and flag in done.stderr


def test_save_precheck_asks_the_judge_and_refuses_a_failing_verdict(project, llm):
    from fakes.llm_server import always

    save = ("save", "--spec", project / "agentci_spec.yaml", "--traces", project / "traces.jsonl", "--version", "v1")
    llm.policy = always(score=1, label="fail", rationale="no actionable steps")
    refused = run_cli(*save, env=hermetic_environment(ANTHROPIC_API_KEY=KEY))
    assert refused.returncode == 1 and llm.count == 1
    assert "query 'judged': llm_judge failed" in refused.stderr and KEY not in refused.stderr
    assert not (project / "baselines" / "v1.json").exists()
    llm.policy = always()
    saved = run_cli(*save, "--judge-cache", project / "fresh.json", env=hermetic_environment(ANTHROPIC_API_KEY=KEY))
    assert saved.returncode == 0 and "precheck passed" in saved.stdout and llm.count == 2


def ensemble_project(project, llm, ensemble: str) -> None:
    spec = SPEC.format(url=llm.anthropic_url).replace("  max_attempts: 2\n", "  max_attempts: 2\n" + ensemble)
    (project / "agentci_spec.yaml").write_text(spec)


DISABLED_ENSEMBLE = "  ensemble:\n    enabled: false\n    models: [claude-haiku-4-5, gpt-4o-mini, gpt-4o-mini]\n"


@pytest.mark.parametrize("flag, requests", [((), 1), (("--sample-ensemble", "1"), 3), (("--sample-ensemble", "0"), 1)])
def test_sampling_runs_a_disabled_ensemble_on_the_sampled_share(project, llm, flag, requests):
    ensemble_project(project, llm, DISABLED_ENSEMBLE)
    env = hermetic_environment(ANTHROPIC_API_KEY=KEY, OPENAI_API_KEY=KEY, OPENAI_BASE_URL=llm.openai_url)
    done, report = agentci_test(project, *flag, env=env)
    assert done.returncode == 0, done.stderr
    check = report["results"][0]["correctness"]["checks"][0]
    assert (
        llm.count == requests
        and check["data"]["ensemble"] is (requests == 3)
        and len(check["data"]["verdicts"]) == requests
    )
    assert report["warnings"] == []


def test_sampling_without_ensemble_models_is_a_warning_not_silence(project, llm):
    done, report = agentci_test(project, "--sample-ensemble", "0.2")
    assert done.returncode == 0 and llm.count == 1
    assert report["warnings"] == [
        "--sample-ensemble 0.2 has no effect: judge_config.ensemble lists no models, "
        "so every judge check used claude-haiku-4-5 alone"
    ]
    console = run_cli(
        "test",
        "--spec",
        project / "agentci_spec.yaml",
        "--traces",
        project / "traces.jsonl",
        "--sample-ensemble",
        "0.2",
        env=hermetic_environment(ANTHROPIC_API_KEY=KEY),
    )
    assert "warning: --sample-ensemble 0.2 has no effect" in console.stdout


def test_a_disabled_ensembles_models_are_validated_too(project, llm):
    ensemble_project(project, llm, "  ensemble:\n    enabled: false\n    models: [claude-haiku-4-5, mistral-large]\n")
    done = run_cli("validate", project / "agentci_spec.yaml")
    assert (
        done.returncode == 1
        and "mistral-large" in done.stdout + done.stderr
        and "agentci_spec.yaml" in done.stdout + done.stderr
    )
