"""The first hour, as the README tells it.

A fresh directory walked through "Your own repository in five steps" with a runnable agent (the README's own) ends in a
workflow that runs the agent, a clean first diff, and no error or warning a newcomer would have to look up. The steps
are read from the README, so this walks what it says.
"""

from __future__ import annotations

import re
import shlex
import subprocess

import yaml
from helpers import ROOT, hermetic_environment

from agentci_action.spec.names import SPEC_FILE
from e2e.test_docs_code import Block, blocks

README = ROOT / "README.md"
GOLDEN_QUERIES = """\
queries:
  - id: orders
    query: "Can you tell me where my order is?"
    correctness: {expected_in_answer: ["orders"], not_in_answer: ["error"]}
    path: {expected_tools: [search], max_tool_calls: 2}
  - id: refunds
    query: "Do you handle refunds?"
    correctness: {expected_in_answer: ["refunds"]}
"""


def five_steps() -> list[Block]:
    """The README's blocks of its five steps, in order."""
    text = README.read_text(encoding="utf-8")
    start = text.index("## Your own repository in five steps")
    first = text[:start].count("\n") + 1
    end = first + text[start:].index("\n## ", 1)
    return [block for block in blocks(README) if first < block.line < end]


def test_the_readme_install_is_the_package_this_is():
    (install,) = [b for b in five_steps() if b.lang == "bash" and "pip install" in b.code]
    assert install.code.strip() == "pip install agentci-action"
    assert re.search(r'^name = "agentci-action"$', (ROOT / "pyproject.toml").read_text(), re.M)


def test_the_readme_five_steps_end_in_a_workflow_that_runs_the_agent_and_a_clean_first_diff(tmp_path):
    steps = [b for b in five_steps() if not (b.note and b.note[0] == "not run")]
    said: list[str] = []  # everything the commands printed, for the newcomer's read at the end
    replaced = False
    for block in steps:
        if block.note and block.note[0] == "file":
            (tmp_path / block.note[1]).write_text(block.code)
            continue
        if block.lang != "bash":
            continue
        if not replaced and "agentci validate" not in block.code and (tmp_path / SPEC_FILE).exists():
            # step 2's "Replace the example query with your agent's golden queries", done as a user does it
            spec = tmp_path / SPEC_FILE
            spec.write_text(spec.read_text().split("\nqueries:")[0] + "\n" + GOLDEN_QUERIES)
            replaced = True
        for line in filter(None, block.code.splitlines()):
            done = subprocess.run(
                shlex.split(line), cwd=tmp_path, env=hermetic_environment(), capture_output=True, text=True
            )
            assert done.returncode == 0, f"README: `{line}` exited {done.returncode}:\n{done.stdout}{done.stderr}"
            said.append(done.stdout + done.stderr)
    assert replaced

    # a clean first diff: the last `agentci test` compares the agent's run with the baseline saved from it
    assert steps[-1].code.strip().splitlines()[-1] == "agentci test"
    last = said[-1]
    assert "AgentCI diff · my-agent · v1 → current" in last and "Total · 2 queries · 0 changed · 2 unchanged" in last
    assert "PASS: 2 queries · 2 passed" in last

    # nothing to look up: no error, no warning, no traceback, in any step
    for output in said:
        for line in output.splitlines():
            assert not re.match(r"\s*(error|warning)\b", line, re.I) and "Traceback" not in line, line

    # the workflow runs the agent: the spec's runner on every query, then the action on what it wrote
    spec = yaml.safe_load((tmp_path / SPEC_FILE).read_text())
    assert spec["runner"]["command"] == "python agent.py" and (tmp_path / "agent.py").is_file()
    workflow = yaml.safe_load((tmp_path / ".github" / "workflows" / "agentci.yml").read_text())
    steps_run = workflow["jobs"]["agentci"]["steps"]
    run = next(s for s in steps_run if s.get("uses", "").startswith("agentci/action/run@"))
    evaluate = next(s for s in steps_run if s.get("uses", "").startswith("agentci/action@"))
    assert run["with"]["spec"] == evaluate["with"]["spec"] == SPEC_FILE
    assert evaluate["with"]["traces"] == "${{ steps." + run["id"] + ".outputs.traces }}"
    assert sorted(p.name for p in (tmp_path / "baselines").iterdir()) == ["v1.json"]
    assert not (tmp_path / "traces").exists()  # no example trace to mistake for the agent's
