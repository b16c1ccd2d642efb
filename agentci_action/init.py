"""`agentci init`: a commented starter spec, an example trace and a GitHub workflow, never overwriting."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from .errors import InputError, Problem

# template in agentci_action/templates → where it goes, relative to the target directory
FILES = {
    "agentci_spec.yaml": "agentci_spec.yaml",
    "example_trace.jsonl": "traces/example.jsonl",
    "agentci.yml": ".github/workflows/agentci.yml",
}


def init_project(directory: Path) -> list[Path]:
    """Write the starter files into `directory`; refuse (writing nothing) if any of them exists."""
    targets = {template: directory / relative for template, relative in FILES.items()}
    existing = [path for path in targets.values() if path.exists()]
    if existing:
        raise InputError([Problem(str(path), 0, "already exists; agentci init never overwrites (move it away first)") for path in existing])
    templates = resources.files("agentci_action") / "templates"
    for template, path in targets.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text((templates / template).read_text(encoding="utf-8"), encoding="utf-8")
    return list(targets.values())
