"""`agentci init`: a commented starter spec and a GitHub workflow, never overwriting.

Two layouts. Given the command that runs the agent (`--command`) or its function (`--python module:function`), the
spec has a `runner:` and the workflow runs the agent (agentci/action/run) before evaluating its traces; without either,
an example trace is written and the workflow evaluates traces committed in traces/. Each file shows the other layout commented out where it would go: a template
line tagged `#[runner]` or `#[traces]` is written as it is in its own layout and commented out in the other.

All or nothing: every target is checked first (it must not exist, and no part of its directory may be a
file), then each is written whole, never over an existing file and through no symbolic link (output.publish;
a link on the way is an error naming it); on any failure the files already written and the directories made are
removed.
"""

from __future__ import annotations

import argparse
import contextlib
import re
import shlex
from importlib import resources
from pathlib import Path

from pydantic import ValidationError

from agentci_action._util.errors import EXIT_PASS, InputError, Problem
from agentci_action._util.output import LinkedPath, SymbolicLink, publish, utf8
from agentci_action.cli._reporting import say
from agentci_action.spec.runner_config import PYTHON_TARGET, RunnerSpec

# template in agentci_action/templates → where it goes, relative to the target directory
FILES = {
    "agentci_spec.yaml": "agentci_spec.yaml",
    "example_trace.jsonl": "traces/example.jsonl",
    "agentci.yml": ".github/workflows/agentci.yml",
}
EXAMPLE_TRACE = "example_trace.jsonl"  # the layout with committed traces only
EXAMPLE_COMMAND = "python agent.py"  # the runner's command, commented out, when none was given
TAGGED = re.compile(r"^(?P<lead>[# ]*?)#\[(?P<layout>runner|traces)\] ?(?P<line>.*)$", re.M)


# the agent's dependency file → the workflow's step that installs them (the first found, in this order)
INSTALLS = {
    "requirements.txt": "pip install -r requirements.txt",
    "pyproject.toml": "pip install .",
    "package.json": "npm ci",
}
UNKNOWN_INSTALL = "pip install -r requirements.txt  # EDIT: install what your agent imports"


def install_step(directory: Path) -> tuple[str, str]:
    """The command that installs the agent's dependencies in the workflow, and where it came from (a comment)."""
    for manifest, command in INSTALLS.items():
        if (directory / manifest).is_file():
            return command, f"agentci init found {manifest}"
    return UNKNOWN_INSTALL, "agentci init found no requirements.txt, pyproject.toml or package.json: edit the line"


def render(
    template: str, command: str | None, install: tuple[str, str] = (UNKNOWN_INSTALL, ""), python: str | None = None
) -> str:
    """The template for the layout `command` or `python` asks for (a runner when either is given).

    Its tagged lines as they are, the other layout's commented out; `{runner}` is the runner's `command:` or `python:`
    line (its value a YAML string), `{install}` and `{install_note}` the step that installs the agent's dependencies
    and where it came from.
    """
    import json  # here: every command's parser is built at start-up, and `agentci validate` imports no json

    layout = "runner" if command or python else "traces"
    text = TAGGED.sub(lambda m: m["lead"] + ("" if m["layout"] == layout else "# ") + m["line"], template)
    text = text.replace("{install}", install[0]).replace("{install_note}", install[1])
    if python:
        return text.replace("{runner}", f"python: {json.dumps(python, ensure_ascii=False)}")
    return text.replace(
        "{runner}", f"command: {json.dumps(command, ensure_ascii=False) if command else EXAMPLE_COMMAND}"
    )


def blocking(path: Path) -> Problem | None:
    """Why `path` cannot be created: it exists, or one of its directories is a file; None when it can."""
    if path.exists() or path.is_symlink():
        return Problem(str(path), 0, "already exists; agentci init never overwrites (move it away first)")
    for parent in reversed(path.parents):
        if parent.exists() and not parent.is_dir():
            return Problem(str(parent), 0, "is a file where agentci init needs a directory (move it away first)")
    return None


def init_project(directory: Path, command: str | None = None, python: str | None = None) -> list[Path]:
    """Write the starter files into `directory` for the layout `command` or `python` asks for.

    Or raise InputError naming every file in the way (writing nothing).
    """
    if command is not None:
        try:
            RunnerSpec.model_validate({"command": command})
        except ValidationError as exc:
            raise InputError.at("--command", 0, exc.errors()[0]["msg"].removeprefix("Value error, ")) from None
    if python is not None and not re.match(PYTHON_TARGET, python):
        raise InputError.at("--python", 0, f"{python!r} is not module:function (e.g. agent:answer)")
    runs_agent = command is not None or python is not None
    chosen = {t: relative for t, relative in FILES.items() if not (runs_agent and t == EXAMPLE_TRACE)}
    targets = {template: directory / relative for template, relative in chosen.items()}
    problems = list(dict.fromkeys(p for p in map(blocking, targets.values()) if p))
    if problems:
        raise InputError(problems)
    templates = resources.files("agentci_action") / "templates"
    install = install_step(directory)
    # directories this call creates, each before those inside it
    made = list(dict.fromkeys(d for path in targets.values() for d in reversed(path.parents) if not d.exists()))
    placed: list[Path] = []  # targets already written
    for template, path in targets.items():
        text = render((templates / template).read_text(encoding="utf-8"), command, install, python)
        try:
            publish(path, utf8(text), mode=0o644, overwrite=False)
        except (SymbolicLink, OSError) as exc:
            for leftover in [*placed, *reversed(made)]:
                with contextlib.suppress(OSError):
                    leftover.rmdir() if leftover in made else leftover.unlink()
            if isinstance(exc, SymbolicLink):
                raise LinkedPath("the starter files", path, exc) from None
            raise InputError.at(str(path), 0, f"cannot write the starter files: {exc.strerror or exc}") from None
        placed.append(path)
    return list(targets.values())


def add_arguments(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("init", help="write a starter spec and a GitHub workflow (and an example trace)")
    parser.add_argument("directory", nargs="?", default=".", help="where to write them (default: here)")
    runner = parser.add_mutually_exclusive_group()
    runner.add_argument(
        "--command",
        metavar="CMD",
        help="the command that runs your agent on one query, e.g. 'python agent.py' (the query as JSON on stdin, "
        "its trace printed): the spec gets a runner and the workflow runs the agent. Without it or --python: an "
        "example trace, and a workflow that evaluates traces committed in traces/",
    )
    runner.add_argument(
        "--python",
        metavar="MODULE:FUNCTION",
        help="instead of --command, your agent's function, e.g. 'agent:answer' (called with the query, returning its "
        "trace; imported from the spec's directory): the spec gets a `python:` runner and the workflow runs it",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    directory = Path(args.directory)
    for path in init_project(directory, args.command, args.python):
        say(f"wrote {path}")
    # the spec as the user reaches it from here, wherever the files went
    spec = shlex.quote(str(directory / "agentci_spec.yaml"))
    if args.command or args.python:
        from agentci_action.run.replay.recordings import record_command

        say("next: replace the example query with your agent's golden queries, then")
        say(
            f"  {record_command(directory / 'agentci_spec.yaml')}   # once, with the model's key: its calls → recordings/"
        )
        say(f"  agentci test --spec {spec}   # replays them: no key, no spend")
        say("  and commit the spec, recordings/ and the workflow; once it has run on a pull request, require its")
        say("  `agentci` check on the default branch (Settings → Rules → Rulesets) so a failure blocks the merge")
    else:
        say(f"next: agentci test --spec {spec} --traces {shlex.quote(str(directory / 'traces'))}/")
    return EXIT_PASS
