"""Everything the action publishes, each part on its own so that one failure never blocks the rest.

The log and its annotations, the job summary, the outputs (`Publisher`), the HTML report, the sticky PR comment and the
check run.

A GitHub API failure is a warning, printed with the annotations so GitHub's per-step cap counts it; the summary
and the results file still carry every result.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TextIO

from agentci_action._util.errors import Problem
from agentci_action._util.extras import require
from agentci_action._util.github_client import client
from agentci_action._util.output import LinkedPath, OutputError, encodable, write_file, write_stream
from agentci_action._util.redaction import redact, secret_parts
from agentci_action.compare.diff_schema import RunDiff
from agentci_action.compare.golden_changes import GoldenChange
from agentci_action.compare.history import Trend, read_entries, series_entries, trend
from agentci_action.compare.recording_changes import RecordingChange
from agentci_action.engine.results import RunResult, Status
from agentci_action.github.check_runs import CheckRun, post_check_run
from agentci_action.github.comment import CommentPolicy, upsert_comment
from agentci_action.github.context import RunContext, find_pull_request
from agentci_action.github.history_store import append_history, push_entry, pushed_to_default_branch, read_history
from agentci_action.github.inputs import SECRET_INPUTS, SECRET_VARIABLES, ActionInputs
from agentci_action.report import file_annotations, markdown
from agentci_action.report.html import render_html


class Publisher:
    """Writes to the runner's files and log; every method is independent so one failure never blocks the rest.

    The action's own warnings and errors are held back and printed by `annotate()` together with the results'
    annotations, ahead of them, so GitHub's per-step cap counts them and never drops them.

    Everything it writes (log, summary, outputs) and every text it hands to GitHub passes `outgoing`: no line of a
    secret input or key variable, and no URL's credentials, whatever exception or answer quoted them.
    """

    def __init__(self, env: Mapping[str, str], out: TextIO):
        self.env, self.out = env, out
        self.own: list[file_annotations.Annotation] = []
        self.inputs = [env.get(f"INPUT_{name.upper()}", "") for name in SECRET_INPUTS]
        self.secrets = self.inputs + [env.get(name, "") for name in SECRET_VARIABLES]

    def mask_secrets(self) -> None:
        """Ask the runner to mask every line of every secret input (its `::add-mask::` is one line)."""
        for part in secret_parts(self.inputs):
            write_stream(f"::add-mask::{file_annotations.escape_data(part)}\n", self.out, what="the log")

    def outgoing(self, text: str) -> str:
        """`text` as it may leave the action: secrets redacted, lone surrogates replaced (output.encodable)."""
        return encodable(redact(text, self.secrets))

    def line(self, text: str) -> None:
        write_stream(self.outgoing(text) + "\n", self.out, what="the log")

    def warning(self, message: str) -> None:
        self.own.append(file_annotations.Annotation("warning", "", 0, "AgentCI", message))

    def error(self, problem: Problem) -> None:
        file = file_annotations.repo_path(problem.file, self.env.get("GITHUB_WORKSPACE")) if problem.line else ""
        self.own.append(file_annotations.Annotation("error", file, problem.line, "AgentCI", str(problem)))

    def annotate(self, found: list[file_annotations.Annotation]) -> None:
        """Print the held-back annotations first, then `found`, within GitHub's per-step cap."""
        for command in file_annotations.workflow_commands(found, own=self.own):
            self.line(command)
        self.own = []

    def untrusted(self, lines: list[str]) -> None:
        """Agent text in the log, between stop-commands markers so none of it runs as a workflow command."""
        for text in file_annotations.stop_commands(lines):
            self.line(text)

    def summary(self, markdown_text: str) -> None:
        """Append to the job summary; a warning when it cannot be written."""
        self._append("GITHUB_STEP_SUMMARY", markdown_text, "the job summary")

    def outputs(self, values: dict[str, str]) -> None:
        """name<<DELIM blocks in GITHUB_OUTPUT, with a delimiter no value contains.

        A warning when it cannot be written (the results file and the summary still carry everything).
        """
        blocks = "".join(
            f"{name}<<{delimiter}\n{value}\n{delimiter}\n"
            for name, value in values.items()
            for delimiter in [f"ghadelimiter_{uuid.uuid4()}"]
        )
        self._append("GITHUB_OUTPUT", blocks, "the step outputs")

    def _append(self, variable: str, text: str, what: str) -> None:
        """Append `text` to the runner's file named by `variable` (if set); a warning when that fails."""
        path = self.env.get(variable)
        try:
            if path:
                write_file(path, self.outgoing(text), append=True, what=what)
        except OutputError as exc:
            self.warning(f"C{str(exc)[1:]}.")


def outputs_for(run: RunResult | None, results_path: str, comment_url: str, html_path: str = "") -> dict[str, str]:
    if run is None:
        return {
            "status": Status.ERROR.value,
            "total": "0",
            "passed": "0",
            "failed": "0",
            "warnings": "0",
            "cost-usd": "0",
            "results-path": "",
            "html-report-path": "",
            "comment-url": comment_url,
        }
    s = run.summary
    return {
        "status": s.status.value,
        "total": str(s.total),
        "passed": str(s.passed),
        "failed": str(s.failed),
        "warnings": str(s.warnings),
        "cost-usd": f"{s.cost_usd:.6f}",
        "results-path": results_path,
        "html-report-path": html_path,
        "comment-url": comment_url,
    }


def refusal_hint(
    status: int,
    context: RunContext,
    action: str = "write to this pull request",
    permission: str = "pull-requests: write",
) -> str:
    """Why GitHub refused a write, for the warning: a fork's read-only token, or the missing `permission`."""
    if status != 403:
        return ""
    if context.is_fork and context.event_name == "pull_request":
        return (
            " This pull request comes from a fork, so its token is read-only; the job summary and the results "
            "file carry every result."
        )
    return (
        f" The token may not {action}: give the job `permissions: {permission}`. "
        "The job summary and the results file carry every result."
    )


def locate_pull_request(inputs: ActionInputs, context: RunContext, publisher: Publisher) -> RunContext:
    """Publish-only mode on `workflow_run`.

    A fork's pull request, which the event does not list, found by its head branch and commit (github/context.py); a
    warning when it cannot be looked up.
    """
    if context.pr_number is not None or not context.head_label or not inputs.github_token:
        return context

    try:
        found = find_pull_request(client(inputs.github_token, inputs.github_api_url), context)
    except Exception as exc:  # GitHub failing must not lose the summary, outputs and check run
        publisher.warning(f"Could not look up the pull request of {context.head_label} ({type(exc).__name__}).")
        return context
    if found.pr_number is None:
        publisher.warning(f"No open pull request has head {context.head_label} at {context.head_sha[:7]}: no comment.")
    return found


@dataclass(frozen=True)
class PublishedRun:
    """The run as the comment and the check run show it.

    Its results, the diff against the baseline, the trend, links, and the golden queries and recordings the PR changed.
    """

    run: RunResult
    diff: RunDiff | None
    history: Trend | None
    links: markdown.Links
    recordings: Sequence[RecordingChange] = ()
    goldens: Sequence[GoldenChange] = ()


def publish_comment(inputs: ActionInputs, context: RunContext, shown: PublishedRun, publisher: Publisher) -> str:
    """The sticky comment on the PR (when there is one), with what it changed; its URL, or '' after a warning."""
    if context.pr_number is None or inputs.comment_mode == "off":
        return ""
    if not inputs.github_token:
        publisher.warning("No github-token: the PR comment was not posted.")
        return ""

    GithubException = require("github", "The PR comment").GithubException

    body = publisher.outgoing(
        markdown.render_comment(
            shown.run,
            inputs.comment_header,
            shown.links,
            diff=shown.diff,
            beside=markdown.Beside(shown.history, shown.recordings, shown.goldens),
        )
    )
    policy = CommentPolicy(mode=inputs.comment_mode, has_problems=shown.run.summary.status is not Status.PASS)
    try:
        outcome = upsert_comment(
            client(inputs.github_token, inputs.github_api_url),
            context.repository,
            context.pr_number,
            body,
            markdown.marker(inputs.comment_header),
            policy,
        )
    except GithubException as exc:
        publisher.warning(
            f"Could not post the PR comment: GitHub answered {exc.status}.{refusal_hint(exc.status, context)}"
        )
        return ""
    except Exception as exc:  # a network failure must not lose the results already published
        publisher.warning(f"Could not post the PR comment: {type(exc).__name__}: {exc}")
        return ""
    publisher.line(
        f"PR comment {outcome.action}{f': {outcome.url}' if outcome.url else ''}"
        f"{f' ({outcome.reason})' if outcome.reason else ''}"
    )
    return outcome.url or ""


def check_conclusion(exit_status: int, run: RunResult) -> str:
    """The check run's conclusion from the job's own exit decision.

    Failure when the job fails (exit ≠ 0); neutral when something failed or warned without blocking (fail-on); success
    otherwise.
    """
    if exit_status:
        return "failure"
    return "neutral" if run.summary.status in (Status.FAIL, Status.WARN) else "success"


def publish_check_run(
    inputs: ActionInputs,
    context: RunContext,
    shown: PublishedRun,
    found: list[file_annotations.Annotation],
    conclusion: str,
    publisher: Publisher,
) -> bool:
    """Every annotation (uncapped) on a check run for the head commit; False after a warning when that failed.

    Its summary is the run's without the diff and the trend, with what the PR changed (recordings, golden queries), as
    the comment and the job summary list it.
    """
    GithubException = require("github", "The check run").GithubException

    run = shown.run
    check = CheckRun(
        head_sha=context.head_sha,
        name=f"AgentCI ({markdown.header_slug(inputs.comment_header)})",
        conclusion=conclusion,
        title=f"{run.summary.status.value}: {run.summary.failed} failed, {run.summary.warnings} warnings",
        summary=publisher.outgoing(
            markdown.render_summary(
                run,
                markdown.title_for(inputs.comment_header),
                shown.links,
                budget=markdown.COMMENT_BUDGET,
                beside=markdown.Beside(recordings=shown.recordings, goldens=shown.goldens),
            )
        ),
        annotations=[
            {key: publisher.outgoing(value) if isinstance(value, str) else value for key, value in item.items()}
            for item in map(file_annotations.check_run_annotation, found)
        ],
    )
    try:
        url = post_check_run(client(inputs.github_token, inputs.github_api_url), context.repository, check)
    except GithubException as exc:  # GitHub's refusal must not lose the annotations: they go to the log instead
        hint = refusal_hint(exc.status, context, "create check runs", "checks: write")
        publisher.warning(
            f"Could not create the check run: GitHub answered {exc.status}.{hint} The annotations follow in the log."
        )
        return False
    except Exception as exc:  # nor may a network failure
        publisher.warning(f"Could not create the check run ({type(exc).__name__}); the annotations follow in the log.")
        return False
    publisher.line(f"Check run: {url}")
    return True


def write_html_report(
    inputs: ActionInputs, run: RunResult, diff: RunDiff | None, publisher: Publisher, beside: markdown.Beside
) -> str:
    """The HTML report beside the results file (not for a shard: the merge job writes it).

    Its path, '' when none was written. A failed write is a warning: the summary and the results file carry everything
    it shows; but a symbolic link on its way is LinkedPath (exit 2): one was planted there.
    """
    if not inputs.html_report or inputs.shard is not None:
        return ""
    try:
        write_file(inputs.html_path, render_html(run, diff, beside), what="the HTML report")
    except LinkedPath:
        raise
    except OutputError as exc:
        publisher.warning(str(exc))
        return ""
    return inputs.html_path


def read_trend(inputs: ActionInputs, context: RunContext, run: RunResult, publisher: Publisher) -> Trend | None:
    """On a pull request, the trend of the spec's runs on the default branch (the history branch, through the API).

    None without a pull request, a history branch or a token, and after a warning when it could not be read.
    """
    if context.pr_number is None or not inputs.history_branch or not inputs.github_token or inputs.shard is not None:
        return None
    try:
        text = read_history(
            client(inputs.github_token, inputs.github_api_url),
            context.repository,
            inputs.history_branch,
            inputs.comment_header,
        )
        where = f"{inputs.history_branch}:{inputs.comment_header}"
        entries = series_entries(read_entries(text, where, publisher.warning), run.spec)
    except Exception as exc:  # the trend is an addition: the results stand without it
        publisher.warning(f"Could not read the history on {inputs.history_branch}: {type(exc).__name__}: {exc}")
        return None
    return trend(entries, run) if entries else None


def append_run(
    inputs: ActionInputs,
    context: RunContext,
    event: Mapping[str, Any],
    run: RunResult,
    failed: bool,
    publisher: Publisher,
) -> None:
    """On a push to the default branch, the run appended to the history branch; a warning when GitHub refused."""
    if not (inputs.history_branch and inputs.github_token and inputs.shard is None and not inputs.results):
        return
    if not pushed_to_default_branch(context.event_name, event):
        return
    GithubException = require("github", "The history").GithubException
    try:
        append_history(
            client(inputs.github_token, inputs.github_api_url),
            context.repository,
            inputs.history_branch,
            inputs.comment_header,
            push_entry(run, failed, context.head_sha, event),
        )
    except GithubException as exc:
        hint = refusal_hint(exc.status, context, "write the history branch", "contents: write")
        publisher.warning(f"Could not add this run to {inputs.history_branch}: GitHub answered {exc.status}.{hint}")
        return
    except Exception as exc:  # a network failure must not fail a run whose results are published
        publisher.warning(f"Could not add this run to {inputs.history_branch}: {type(exc).__name__}: {exc}")
        return
    publisher.line(f"History: this run was added to {inputs.history_branch}")
