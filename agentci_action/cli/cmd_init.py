"""`agentci init`: a commented starter spec, an example trace and a GitHub workflow, never overwriting.

All or nothing: every target is checked first (it must not exist, and no part of its directory may be a
file), then each file is written to a temporary file beside its target and renamed into place only once
all of them were written; on any failure the temporary files and the directories made are removed.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shlex
from importlib import resources
from pathlib import Path

from agentci_action._util.errors import EXIT_PASS, InputError, Problem
from agentci_action.cli._reporting import say

# template in agentci_action/templates → where it goes, relative to the target directory
FILES = {
    "agentci_spec.yaml": "agentci_spec.yaml",
    "example_trace.jsonl": "traces/example.jsonl",
    "agentci.yml": ".github/workflows/agentci.yml",
}


def blocking(path: Path) -> Problem | None:
    """Why `path` cannot be created: it exists, or one of its directories is a file; None when it can."""
    if path.exists() or path.is_symlink():
        return Problem(str(path), 0, "already exists; agentci init never overwrites (move it away first)")
    for parent in reversed(path.parents):
        if parent.exists() and not parent.is_dir():
            return Problem(str(parent), 0, "is a file where agentci init needs a directory (move it away first)")
    return None


def init_project(directory: Path) -> list[Path]:
    """Write the starter files into `directory`, or raise InputError naming every file in the way (writing nothing)."""
    targets = {template: directory / relative for template, relative in FILES.items()}
    problems = list(dict.fromkeys(p for p in map(blocking, targets.values()) if p))
    if problems:
        raise InputError(problems)
    templates = resources.files("agentci_action") / "templates"
    made: list[Path] = []  # directories this call created, outermost first
    partial: dict[Path, Path] = {}  # temporary file → target
    placed: list[Path] = []  # targets already renamed into place
    try:
        for template, path in targets.items():
            for parent in reversed(path.parents):
                if not parent.exists():
                    parent.mkdir()
                    made.append(parent)
            temporary = path.with_name(f".{path.name}.agentci-init")
            partial[temporary] = path
            temporary.write_text((templates / template).read_text(encoding="utf-8"), encoding="utf-8")
        for temporary, path in partial.items():
            os.replace(temporary, path)
            placed.append(path)
    except OSError as exc:
        for leftover in [*partial, *placed, *reversed(made)]:
            with contextlib.suppress(OSError):  # e.g. a temporary file never made because its name was refused
                leftover.rmdir() if leftover in made else leftover.unlink(missing_ok=True)
        raise InputError.at(
            str(exc.filename or directory), 0, f"cannot write the starter files: {exc.strerror or exc}"
        ) from None
    return list(targets.values())


def add_arguments(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("init", help="write a starter spec, an example trace and a GitHub workflow")
    parser.add_argument("directory", nargs="?", default=".", help="where to write them (default: here)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:

    directory = Path(args.directory)
    for path in init_project(directory):
        say(f"wrote {path}")
    # paths as the user reaches them from here, wherever the files went
    spec, traces = shlex.quote(str(directory / "agentci_spec.yaml")), shlex.quote(str(directory / "traces")) + "/"
    say(f"next: agentci test --spec {spec} --traces {traces}")
    return EXIT_PASS
