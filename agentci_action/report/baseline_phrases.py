"""What a run with no baseline trace for some queries left unchecked, and how to give them one.

On a first run (no query had a baseline) the note ends with the command that saves one, run as printed by the tests:
`agentci save` on the run's spec, with `--traces` naming where this run's traces were read from (their one file, the
folder holding them all, or each one's folder when they came from several), unless a runner wrote them (a folder named agentci-traces…, which `agentci run`,
`agentci test` and the run action write to): then `agentci save` runs the spec's runner itself; and with `--tags`
when the run's queries were selected by tags (RunResult.selected_tags), as save then keeps those. Queries new since a
baseline get no command: saving a version replaces what every query is compared with, which is the reviewer's call.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Sequence
from pathlib import PurePath

from agentci_action._util.text import plural
from agentci_action.engine.results import RunResult

RUNNER_OUTPUT = "agentci-traces"  # the start of the name of every folder a runner's traces are written to
FIRST_VERSION = "v1"


def no_baseline_note(run: RunResult) -> str:
    """How many queries had no baseline trace, the checks that left unchecked, and what to do; '' when none.

    Once per run, from RunResult.without_baseline().
    """
    skipped = run.without_baseline()
    if not skipped:
        return ""
    names = list(dict.fromkeys(name for checks in skipped.values() for name in checks))
    said = (
        f"{plural(len(skipped), 'query', 'queries')} had no baseline trace to compare with, so {', '.join(names)} "
        f"{'was' if len(names) == 1 else 'were'} not checked"
    )
    if any("baseline_variants" in result.path.details for result in run.results):  # a baseline was compared with
        return f"{said} (not in the baseline: a version saved later holds {'it' if len(skipped) == 1 else 'them'})"
    if not run.spec:  # a spec made in code (the Python API): no file for `agentci save` to read
        return f"{said}: `agentci save` keeps a baseline of a spec file's runs, and later runs compare with it"
    return f"{said}: `{save_command(run)}` saves these runs as the baseline (once they pass), and later runs compare with it"


def save_command(run: RunResult) -> str:
    """`agentci save` of this run's spec and traces as the first baseline version (see the module docstring)."""
    traces = _read_from({result.trace_source.rpartition(":")[0] for result in run.results})
    return first_save_command(run.spec, traces, run.selected_tags)  # tags: the others may have no trace there


def first_save_command(spec: str, traces: Sequence[str] = (), tags: tuple[str, ...] = ()) -> str:
    """`agentci save` of `spec`'s queries (those with one of `tags`) as its first version.

    From `traces` (each a --traces), else from a run of the spec's runner.
    """
    options = "".join(f" --traces {shlex.quote(path)}" for path in traces)
    if tags:
        options += f" --tags {shlex.quote(','.join(tags))}"
    return f"agentci save --spec {shlex.quote(spec)}{options} --version {FIRST_VERSION}"


def _read_from(files: set[str]) -> list[str]:
    """Where the traces came from: the one file, or the folder holding them all; none for a runner's output.

    When no folder but the working directory or the root holds them all (traces given from several folders, or with
    absolute and relative paths mixed), each file's folder, or the file itself where it lies in the working directory:
    not every file there is a trace.
    """
    files.discard("")
    if not files or any(part.startswith(RUNNER_OUTPUT) for file in files for part in PurePath(file).parts):
        return []
    if len(files) == 1:
        return [files.pop()]
    try:
        common = os.path.commonpath(files)
    except ValueError:  # absolute and relative paths mixed: no folder holds them all
        common = ""
    if common and PurePath(common).parent != PurePath(common):  # a folder, not the root of the file system
        return [common]
    return sorted({file if str(PurePath(file).parent) == "." else str(PurePath(file).parent) for file in files})
