"""zizmor over the workflows AgentCI hands its users.

What `agentci init` writes (and again with its optional jobs uncommented, as its comment says to use them) and every
workflow snippet of README.md and docs/**/*.md (a snippet of jobs or steps is completed into a workflow of its own: a name,
a trigger, no default permissions). Run by .ci/run; tests/e2e/test_release.py runs it too.

    python scripts/audit_workflows.py   # exit 1 and zizmor's findings when there is any at medium or above

Every action is pinned by commit except AgentCI's own (`agentci/action@v2`, `agentci/action/run@v2`): its moving
major tag is how a security fix reaches users on their next run (SECURITY.md), so the policy below lets it stay a
tag; a team that reviews every change pins it by commit too.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TEMPLATE = ROOT / "agentci_action" / "templates" / "agentci.yml"
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
POLICY = """\
rules:
  unpinned-uses:
    config:
      policies:
        "agentci/action": ref-pin
        "agentci/action/*": ref-pin
        "*": hash-pin
"""
_BLOCK = re.compile(r"^```yaml\n(.*?)^```", re.M | re.S)
_TOP_LEVEL = re.compile(r"^(name|on|permissions|jobs):", re.M)


def uncommented(template: str) -> str:
    """The template with its optional jobs in use: the first `#` of each `#  ` line deleted."""
    return "".join(line[1:] if line.startswith("#  ") else line for line in template.splitlines(keepends=True))


def as_workflow(snippet: str) -> str | None:
    """A documentation snippet as a whole workflow.

    A workflow as it is (with what it leaves out added: a name, a trigger, `permissions: {}`), jobs or steps put into
    one; None for YAML that uses no action (a spec, say).
    """
    if "uses:" not in snippet:
        return None
    body = textwrap.dedent(snippet)
    if not _TOP_LEVEL.search(body):  # a list of steps
        body = "jobs:\n  snippet:\n    runs-on: ubuntu-latest\n    steps:\n" + textwrap.indent(body, " " * 6)
    present = set(_TOP_LEVEL.findall(body))
    missing = {"name": "name: snippet\n", "on": "on: pull_request\n", "permissions": "permissions: {}\n"}
    return "".join(line for key, line in missing.items() if key not in present) + body


def workflows() -> dict[str, str]:
    """File name → workflow text: init's output (twice) and each documentation snippet that uses an action."""
    template = TEMPLATE.read_text(encoding="utf-8")
    found = {"init-agentci.yml": template, "init-agentci-optional-jobs.yml": uncommented(template)}
    for document in DOCUMENTS:
        for number, match in enumerate(_BLOCK.finditer(document.read_text(encoding="utf-8")), 1):
            workflow = as_workflow(match.group(1))
            if workflow is not None:
                found[f"{document.stem}-{number}.yml"] = workflow
    return found


def audit(found: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """zizmor (offline, medium and above) over the workflows, in a scratch repository of their own."""
    zizmor = shutil.which("zizmor", path=str(Path(sys.executable).parent)) or shutil.which("zizmor") or "zizmor"
    with tempfile.TemporaryDirectory(prefix="agentci-zizmor-") as scratch:
        folder = Path(scratch) / ".github" / "workflows"
        folder.mkdir(parents=True)
        for name, text in found.items():
            (folder / name).write_text(text, encoding="utf-8")
        (Path(scratch) / "zizmor.yml").write_text(POLICY, encoding="utf-8")
        command = [zizmor, "--offline", "--color", "never", "--min-severity", "medium", "--format", "plain", "--config"]
        return subprocess.run(
            [*command, str(Path(scratch) / "zizmor.yml"), str(folder)], capture_output=True, text=True
        )


def main() -> int:
    found = workflows()
    done = audit(found)
    print(f"zizmor over {len(found)} workflows (agentci init's and the documentation's): ", end="")
    print("no findings" if done.returncode == 0 else "findings:\n" + done.stdout + done.stderr)
    return 0 if done.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
