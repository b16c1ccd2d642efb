"""A replay miss is not evaluated in every view, never a regression (issue 44, bullet 1).

The openai-agent example (a real `openai` SDK agent, its model calls replayed) with its baseline saved, then a sentence
added to its system prompt: the json, markdown, console and html reports each say the query could not be evaluated and
quote where the request changed.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from helpers import ROOT, run_cli
from integration.test_reviewer_truth_diff import _html


def _changed_prompt_agent(tmp_path: Path) -> Path:
    """The openai-agent example with its baseline saved, then a sentence added to its system prompt."""
    project = tmp_path / "openai-agent"
    shutil.copytree(ROOT / "examples" / "openai-agent", project, ignore=shutil.ignore_patterns("__pycache__"))
    saved = run_cli("save", "--spec", "agentci_spec.yaml", "--version", "v1", cwd=project)
    assert saved.returncode == 0, saved.stderr
    agent = project / "agent.py"
    agent.write_text(agent.read_text().replace('only about orders."', 'only about orders. Be kind."'))
    return project


def test_a_replay_miss_is_not_evaluated_in_every_view_never_a_regression(tmp_path):
    project = _changed_prompt_agent(tmp_path)

    def report(form: str) -> str:
        done = run_cli("test", "--spec", "agentci_spec.yaml", "--baseline", "v1", "--format", form, cwd=project)
        assert done.returncode == 2, done.stderr  # could not be evaluated: not a failing agent
        return done.stdout

    changed = "changed at character 73: recorded '…ols; answer only about orders.', now '…ols; answer only about orders. Be kind.'"
    data = json.loads(report("json"))
    assert {q["status"] for q in data["results"]} == {"error"}
    for query in data["diff"]["queries"]:
        # was: kinds [] with the verdict "regression", tools_removed [get_order_status, …] and a route of `? calls`
        assert query["kinds"] == ["not_run"] and query["not_run"] == "replay_miss"
        assert query["pass_rate"] is None and changed in query["why"][0]
        assert query["path"]["tools_removed"] == [] and query["path"]["sequence_similarity"] is None
    assert data["diff"]["total"]["counts"]["regression"] == 0

    markdown = report("markdown")
    html = _html(markdown)
    assert "4 of 4 queries could not be evaluated" in html
    assert "no regressions · 4 queries not run or evaluated" in html  # was "🔴 4 regressions · Tools removed …"
    for wrong in ("regression</", "Tools removed", "? calls"):
        assert wrong not in html
    assert "✅ pass → 💥 not evaluated (replay miss)" in html
    assert "Not evaluated: a model call's request is not in the recording (runner.replay)" in html
    assert "| — | — |" in markdown  # the table's route and figures: nothing ran to compare (was "? calls | ?")
    assert "now '…ols; answer only about orders. Be kind.'" in html

    console = report("console")
    assert "! NOT EVALUATED  order-status" in console and "PASS → NOT EVALUATED (replay miss)" in console
    assert "REGRESSION" not in console and "Tools removed" not in console

    page = report("html")
    assert "Against v1: not evaluated" in page and "now &#x27;…ols; answer only about orders. Be kind.&#x27;" in page
    assert "Tools removed" not in page and "regression" not in page.split("Against the baseline")[-1].lower()
