"""Annotations on the spec's own lines, as GitHub workflow commands or check-run annotations.

A workflow command is `::LEVEL file=F,line=N,title=T::MESSAGE`. Message data escapes `%` (first), `\\r`, `\\n`;
properties also escape `:` and `,`, so no untrusted text can end the command early or start a new one.
GitHub shows at most 10 errors and 10 warnings per step: `cap()` keeps the action's own first, then the most severe,
and a notice counts the rest.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agentci_action._util.text import one_line, unverified_note
from agentci_action.engine.conversation import whole_layer
from agentci_action.engine.results import LAYERS, LayerResult, QueryResult, RunResult, Status
from agentci_action.report import finding_phrases
from agentci_action.report.console import render_with_diff

if TYPE_CHECKING:
    from agentci_action.compare.diff_schema import RunDiff

MAX_ERRORS_PER_STEP = 10
MAX_WARNINGS_PER_STEP = 10
MAX_MESSAGE_CHARS = 4000

# Check-run annotation levels for our workflow-command levels.
CHECK_LEVELS = {"error": "failure", "warning": "warning", "notice": "notice"}


@dataclass(frozen=True)
class Annotation:
    level: str  # "error" | "warning" | "notice"
    file: str
    line: int
    title: str
    message: str


def escape_data(text: str) -> str:
    """Message data: % → %25 (first), CR → %0D, LF → %0A."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A property value: as escape_data, plus : → %3A and , → %2C."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def workflow_command(annotation: Annotation) -> str:
    """One `::level file=..,line=..,title=..::message` line."""
    props = [f"file={escape_property(annotation.file)}"] if annotation.file else []
    if annotation.line:
        props.append(f"line={annotation.line}")
    if annotation.title:
        props.append(f"title={escape_property(annotation.title)}")
    prefix = f"::{annotation.level} {','.join(props)}" if props else f"::{annotation.level}"
    return f"{prefix}::{escape_data(annotation.message)}"


def repo_path(file: str, workspace: str | None) -> str:
    """The spec file's path relative to the repository root, with forward slashes, as GitHub expects."""
    if workspace and os.path.isabs(file):
        relative = os.path.relpath(file, workspace)
        if not relative.startswith(".."):
            file = relative
    return file.replace(os.sep, "/").removeprefix("./")


def _level(status: Status, blocking: bool) -> str | None:
    if status is Status.ERROR or (status is Status.FAIL and blocking):
        return "error"
    if status in (Status.FAIL, Status.WARN):
        return "warning"
    return None


def _places(query: QueryResult) -> list[tuple[int, str, LayerResult, bool]]:
    """(line, title, layer, blocking) for each layer to annotate.

    A query's layers on its line; a conversation's own checks on its line and each turn's layers on the turn's line
    (blocking when the turn failed in a blocking conversation).
    """
    if not query.turns:
        return [(query.line, f"AgentCI {name}: {query.id}", query.layer(name), query.blocking) for name in LAYERS]
    places = [
        (query.line, f"AgentCI {name}: {query.id}", whole_layer(query.layer(name)), query.blocking) for name in LAYERS
    ]
    for turn in query.turns:
        blocking = query.blocking and turn.status is Status.FAIL
        title = f"AgentCI {{}}: {query.id} turn {turn.turn}"
        places += [(turn.line or query.line, title.format(name), turn.layer(name), blocking) for name in LAYERS]
    return places


def annotations_for(run: RunResult, workspace: str | None = None) -> list[Annotation]:
    """One annotation per query and failing/warning layer, on the query's line, most severe first.

    A conversation's turn: on the turn's line.

    error: a layer errored, or failed in a blocking query; warning: any other fail or warn. Against a baseline with
    repeated runs a regressed or inconclusive verdict is a check of the query's correctness (compare/verdict_status.py),
    so its words are in that layer's annotation. One notice on the spec counting the correctness checks skipped (not
    passed) where correctness did not fail.
    """
    found = []
    for query in run.results:
        for line, title, layer, blocking in _places(query):
            level = _level(layer.status, blocking)
            if level is None:
                continue
            messages = finding_phrases.lines(layer)
            found.append(
                Annotation(
                    level=level,
                    file=repo_path(query.file, workspace),
                    line=line,
                    title=one_line(title, 200),
                    message=one_line("; ".join(messages), MAX_MESSAGE_CHARS),
                )
            )
    for gate in run.gates:  # on the gate's own line in the spec's `suite:` block
        if gate.status is not Status.PASS:  # an undecided gate (warn) warns, as a failing one that does not block
            found.append(
                Annotation(
                    level="error" if gate.blocking else "notice" if gate.status is Status.SKIP else "warning",
                    file=repo_path(gate.file or run.spec, workspace),
                    line=gate.line or 1,
                    title=f"AgentCI suite gate: {gate.name}",
                    message=one_line(gate.message, MAX_MESSAGE_CHARS),
                )
            )
    note = unverified_note(run.unverified())
    if note:  # a skipped judge check is not a pass: say so where the reviewer looks
        found.append(
            Annotation(
                level="notice",
                file=repo_path(run.spec, workspace),
                line=1,
                title="AgentCI: not verified",
                message=one_line(note, MAX_MESSAGE_CHARS),
            )
        )
    return sorted(found, key=lambda a: ("error", "warning", "notice").index(a.level))


def cap(
    annotations: list[Annotation],
    max_errors: int = MAX_ERRORS_PER_STEP,
    max_warnings: int = MAX_WARNINGS_PER_STEP,
    own: Sequence[Annotation] = (),
) -> tuple[list[Annotation], Annotation | None]:
    """(the first `max_errors` errors and `max_warnings` warnings, a notice counting the rest or None).

    `own` (the action's own errors and warnings, such as a comment it could not post) come first within their
    level, so they are shown and counted in the cap: errors shown = min(max_errors, |own errors| + |errors|).
    """
    everything = [*own, *annotations]
    errors = [a for a in everything if a.level == "error"]
    warnings = [a for a in everything if a.level == "warning"]
    notices = [a for a in everything if a.level == "notice"]
    shown = errors[:max_errors] + warnings[:max_warnings] + notices
    hidden_errors, hidden_warnings = max(0, len(errors) - max_errors), max(0, len(warnings) - max_warnings)
    if not hidden_errors and not hidden_warnings:
        return shown, None
    parts = [
        f"{n} more {kind}{'s' * (n != 1)}" for n, kind in ((hidden_errors, "error"), (hidden_warnings, "warning")) if n
    ]
    return shown, Annotation(
        level="notice",
        file="",
        line=0,
        title="AgentCI",
        message=f"{' and '.join(parts)} not shown as annotations (GitHub shows 10 of each per step); "
        "the job summary and the results file list every one.",
    )


def workflow_commands(found: list[Annotation], own: Sequence[Annotation] = ()) -> list[str]:
    """The capped annotation lines to print for one step, the action's `own` first."""
    shown, notice = cap(found, own=own)
    return [workflow_command(a) for a in shown + ([notice] if notice else [])]


def stop_commands(lines: list[str]) -> list[str]:
    """Wrap untrusted lines so the runner treats none of them as a command: a fresh random token each time."""
    token = secrets.token_hex(16)
    return [f"::stop-commands::{token}", *lines, f"::{token}::"]


def github_log(run: RunResult, diff: RunDiff | None = None, workspace: str | None = None) -> list[str]:
    """What the action prints to the step's log.

    The console report (and diff) between stop-commands markers, then the capped annotations as workflow commands.
    """
    return stop_commands(render_with_diff(run, diff).splitlines()) + workflow_commands(annotations_for(run, workspace))


def check_run_annotation(annotation: Annotation) -> dict[str, Any]:
    """The check-runs API shape of one annotation."""
    return {
        "path": annotation.file,
        "start_line": annotation.line,
        "end_line": annotation.line,
        "annotation_level": CHECK_LEVELS[annotation.level],
        "title": annotation.title,
        "message": annotation.message,
    }
