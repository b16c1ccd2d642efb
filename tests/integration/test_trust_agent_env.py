"""The agent, the pull request's code, does not inherit the runner's tokens.

By default `agentci run` withholds GITHUB_TOKEN (and GH_TOKEN), the runner's runtime and OIDC token-request tokens and
URLs and the cache and results services' variables; `runner.inherit_env` naming one exactly, or `runner.env` setting it,
passes it on; the run's summary says which were withheld.
"""

from __future__ import annotations

import json
import sys

import pytest
import yaml
from helpers import hermetic_environment, run_cli

from agentci_action.run.execute import inherited
from agentci_action.spec.runner_config import RunnerSpec

RUNNER = {
    "GITHUB_TOKEN": "ghs_jobtoken0123456789",
    "GH_TOKEN": "ghs_jobtoken0123456789",
    "ACTIONS_RUNTIME_TOKEN": "runtime-token-0123456789",
    "ACTIONS_RUNTIME_URL": "https://pipelines.example/abc/",
    "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "oidc-request-token-0123456789",
    "ACTIONS_ID_TOKEN_REQUEST_URL": "https://oidc.example/request",
    "ACTIONS_CACHE_URL": "https://artifactcache.example/abc/",
    "ACTIONS_CACHE_SERVICE_V2": "True",
    "ACTIONS_RESULTS_URL": "https://results.example/",
}
KEPT = {"PATH": "/usr/bin:/bin", "ACTIONS_STEP_DEBUG": "true", "GITHUB_REPOSITORY": "octo/agent", "OPENAI_API_KEY": "k"}
AGENT = "import json, os, sys; json.load(sys.stdin); print(json.dumps({'final_answer': ' '.join(sorted(os.environ))}))"


def test_the_runner_tokens_are_withheld_by_default():
    kept, withheld = inherited(RunnerSpec(command="agent"), {**RUNNER, **KEPT})
    assert kept == KEPT and withheld == sorted(RUNNER)


def test_inherit_env_passes_one_on_by_name_and_a_pattern_does_not():
    spec = RunnerSpec(command="agent", inherit_env=["PATH", "GITHUB_TOKEN", "ACTIONS_*", "*"])
    kept, withheld = inherited(spec, {**RUNNER, **KEPT})
    assert kept == {**KEPT, "GITHUB_TOKEN": RUNNER["GITHUB_TOKEN"]}
    assert withheld == sorted(set(RUNNER) - {"GITHUB_TOKEN"})


def test_runner_env_sets_one_explicitly():
    _, withheld = inherited(RunnerSpec(command="agent", env={"ACTIONS_RUNTIME_TOKEN": "mine"}), RUNNER)
    assert "ACTIONS_RUNTIME_TOKEN" not in withheld  # env: sets its own value over it


@pytest.mark.parametrize("runner", [{}, {"env": {"GH_TOKEN": "given-on-purpose"}}])
def test_agentci_run_gives_the_agent_none_of_them_and_says_so(tmp_path, runner):
    spec = tmp_path / "agentci_spec.yaml"
    document = {
        "version": 1,
        "agent": "env",
        "runner": {"command": [sys.executable, "-c", AGENT], "retries": 0, **runner},
        "queries": [{"id": "env", "query": "what do you see?"}],
    }
    spec.write_text(yaml.safe_dump(document))
    done = run_cli("run", "--spec", spec, "--output", tmp_path / "out", env=hermetic_environment(**RUNNER))
    assert done.returncode == 0, done.stderr
    seen = set(json.loads((tmp_path / "out" / "env.jsonl").read_text())["final_answer"].split())
    given = set(runner.get("env", {}))
    assert seen & set(RUNNER) == given
    withheld = ", ".join(sorted(set(RUNNER) - given))
    assert f"agentci run: withheld from the agent: {withheld} (the runner's tokens;" in done.stderr
