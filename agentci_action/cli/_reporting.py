"""What the commands write: a report in the --format asked for, to --output or standard output, and their own lines."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

from agentci_action._util.output import write_file, write_stream

if TYPE_CHECKING:  # annotations only: each command imports the stages it needs when it runs
    from agentci_action.compare.diff_schema import RunDiff
    from agentci_action.compare.history import Trend
    from agentci_action.engine.results import RunResult
    from agentci_action.pipeline.results_files import Outcome
    from agentci_action.report.markdown import Beside


def render(
    fmt: str,
    run: RunResult,
    env: Mapping[str, str],
    diff: RunDiff | None = None,
    beside: Beside | None = None,
) -> str | Iterator[str]:
    """The report in `fmt`.

    Console, markdown (the job summary) and html (one self-contained page) include the diff against the baseline and the
    trend on the default branch (`--history`, in `beside`), junit the diff's verdicts; github is the step log the
    action prints: the console report inside stop-commands, then the annotations (paths relative to `env`'s
    GITHUB_WORKSPACE, else the working directory). Console, markdown and json list the golden queries and recordings
    changed against the PR's base commit (`beside`).
    """
    from agentci_action.report import console, file_annotations, html, junit, markdown, prometheus, results_json

    beside = beside or markdown.Beside()
    if fmt == "github":
        return "\n".join(file_annotations.github_log(run, diff, env.get("GITHUB_WORKSPACE") or os.getcwd())) + "\n"
    if fmt == "markdown":
        return markdown.render_summary(run, diff=diff, beside=beside)
    if fmt == "html":
        return html.render_html(run, diff, beside)
    if fmt == "console":
        return console.render_with_diff(run, diff, beside.trend, beside.recordings, beside.goldens)
    if fmt == "json":
        return results_json.chunks(
            run, diff, beside.recordings, beside.goldens
        )  # written a query at a time: a results file is never held whole
    if fmt == "junit":
        return junit.render(run, diff)
    return prometheus.render(run)


def write_report(report: str | Iterator[str], fmt: str, output: str | None, env: Mapping[str, str]) -> None:
    """write_output, with a console report under GitHub Actions (GITHUB_ACTIONS in `env`) between stop-commands markers.

    Only a console report for standard output: the runner reads `::command` lines from the log even after leading
    spaces, and the report holds untrusted text (queries, answers, tool names).
    """
    if isinstance(report, str) and fmt == "console" and not output and env.get("GITHUB_ACTIONS") == "true":
        from agentci_action.report.file_annotations import stop_commands

        report = "\n".join(stop_commands(report.splitlines())) + "\n"
    write_output(report, output)


def report_outcome(outcome: Outcome, args: argparse.Namespace, trend: Trend | None = None) -> int:
    """The run and its diff against the baseline as --format asks, to --output; the run's exit code.

    A format that does not show the diff's warnings (json, junit, prometheus) has them said on standard error.
    """
    from agentci_action.pipeline.blocking import exit_code
    from agentci_action.report.markdown import Beside

    if outcome.diff and args.format not in ("console", "github", "markdown", "html"):
        warn(outcome.diff.warnings)
    beside = Beside(trend, outcome.recordings, outcome.goldens)
    report = render(args.format, outcome.run, args.env, outcome.diff, beside)
    write_report(report, args.format, args.output, args.env)
    return exit_code(outcome.run)


def warn(notes: list[str]) -> None:
    for note in notes:
        print(f"warning: {note}", file=sys.stderr)


def write_output(text: str | Iterator[str], output: str | None) -> None:
    """`text` to the file `output`, else to standard output; a failed write is an OutputError (exit 2)."""
    if output:
        write_file(output, text)
    else:
        write_stream(text)


def say(text: str) -> None:
    """One line of the command's own output on standard output."""
    write_stream(text + "\n", what="the output")
