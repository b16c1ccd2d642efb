"""Golden files of what `agentci test` prints (console) and writes for the job summary (markdown).

For every example and for a suite that changes in every way the diff knows (tests/fixtures/everyway: regressions on an
answer and on a forbidden tool, a fix, tools, routing, model, cost and latency changed, a flaky repeated query, a new
and a removed query), first run and against its baseline. A change to any report is a visible diff in review.

Regenerate: `AGENTCI_UPDATE_GOLDEN=1 python -m pytest -n 0 tests/integration/test_golden_reports.py`, then read
`git diff tests/golden` before committing (docs/CONTRIBUTING.md).
"""

from __future__ import annotations

import re

import pytest
from helpers import ROOT, check_golden, run_cli

from agentci_action import __version__
from integration.test_examples import EXPECTED

EVERYWAY = ROOT / "tests" / "fixtures" / "everyway"


def stable(text: str) -> str:
    """The report with the release's own version replaced, so that a release does not rewrite every golden file."""
    return re.sub(rf"\bAgentCI {re.escape(__version__)}\b", "AgentCI <version>", text)


@pytest.mark.parametrize("fmt, suffix", [("console", "txt"), ("markdown", "md")])
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_example_report_matches_its_golden_file(name, fmt, suffix):
    spec = f"examples/{name}/agentci_spec.yaml"
    done = run_cli("test", spec, "--traces", f"examples/{name}/traces", "--format", fmt, cwd=ROOT)
    assert done.returncode == EXPECTED[name][0], done.stderr
    check_golden(f"examples/{name}.{suffix}", stable(done.stdout))


@pytest.mark.parametrize("fmt, suffix", [("console", "txt"), ("markdown", "md")])
@pytest.mark.parametrize("baseline, golden", [("v1", "everyway"), ("none", "everyway_first_run")])
def test_a_suite_that_changes_in_every_way_matches_its_golden_files(baseline, golden, fmt, suffix):
    done = run_cli(
        "test", "agentci_spec.yaml", "--traces", "current.jsonl", "--baseline", baseline, "--format", fmt, cwd=EVERYWAY
    )
    assert done.returncode == 1, done.stderr  # two regressions (first run: two failures)
    check_golden(f"{golden}.{suffix}", stable(done.stdout))


def test_the_every_way_suite_changes_in_every_way():
    """The fixture keeps its promise: every change kind the diff knows appears in it."""
    import json

    from agentci_action.compare.diff_schema import ChangeKind

    done = run_cli(
        "test", "agentci_spec.yaml", "--traces", "current.jsonl", "--baseline", "v1", "--format", "json", cwd=EVERYWAY
    )
    kinds = {kind for query in json.loads(done.stdout)["diff"]["queries"] for kind in query["kinds"]}
    # not_run (an agent that could not be run) would make the run exit 2: tests/e2e/test_model_outages.py shows it
    assert kinds == {kind.value for kind in ChangeKind} - {ChangeKind.NOT_RUN.value}
