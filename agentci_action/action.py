"""The GitHub runner contract: INPUT_* and GITHUB_* → settings → evaluate → publish → exit code.

Publishing never loses results: the results file is written first, then the summary, the comment, the check run,
the annotations and the outputs, each on its own; a GitHub API failure is a warning, printed with the annotations so
GitHub's per-step cap counts it. The exit code (0 pass · 1 a blocking layer failed · 2 input or infrastructure error)
is decided from the results and the results file's write (the check run's conclusion agrees with it) and returned
after everything is published.
"""

from __future__ import annotations

import os
import sys
import traceback
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Literal, TextIO

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from .diff import RunDiff
from .engine.results import RunResult, ShardInfo, Status
from .errors import EXIT_ERROR, EXIT_FAIL, EXIT_PASS, AgentCIError, InputError, Problem
from .evaluate import Outcome
from .extras import require
from .github.comment import COMMENT_MODES
from .github.context import RunContext, load_event, resolve
from .output import OutputError, encodable, write_file, write_stream
from .redaction import redact, secret_parts
from .report import annotations as report_annotations
from .report import markdown
from .report.text import inline
from .spec.names import SPEC_FILE, default_spec

TRUE, FALSE = ("true", "True", "TRUE"), ("false", "False", "FALSE")
SECRET_INPUTS = ("github-token", "anthropic-api-key", "openai-api-key")
SECRET_VARIABLES = ("GITHUB_TOKEN", "ANTHROPIC_API_KEY", "OPENAI_API_KEY")  # the judge reads its keys there too


def _split(value: str) -> list[str]:
    """Comma- or newline-separated input → items."""
    return [item.strip() for line in value.splitlines() for item in line.split(",") if item.strip()]


class ActionInputs(BaseModel):
    """The action's inputs (action.yml), as the runner passes them: INPUT_<NAME> with hyphens kept."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    spec: str = SPEC_FILE
    traces: list[str] = Field(default_factory=list)
    baseline: str = Field(
        "",
        description="A saved baseline version; '' = the newest whose precheck passed; 'none' = no baseline; "
        "'base' = as it is at the pull request's (or merge group's) base commit.",
    )
    baseline_traces: list[str] = Field(default_factory=list, alias="baseline-traces")
    trace_format: str | None = Field(None, alias="trace-format")
    tags: list[str] = Field(default_factory=list)
    fail_on: str = Field("correctness,suite", alias="fail-on")
    comment_mode: str = Field("always", alias="comment-mode")
    comment_header: str = Field(markdown.DEFAULT_HEADER, alias="comment-header")
    annotations: bool = True
    check_run: bool = Field(False, alias="check-run")
    github_token: str = Field("", alias="github-token")
    github_api_url: str = Field("https://api.github.com", alias="github-api-url")
    results_path: str = Field("agentci-results.json", alias="results-path")
    html_report: bool = Field(True, alias="html-report")
    workers: int = Field(4, ge=1)
    judge_mode: Literal["auto", "required", "off"] = Field("auto", alias="judge-mode")
    judge_cache: str | None = Field(None, alias="judge-cache")
    sample_ensemble: float | None = Field(None, ge=0.0, le=1.0, alias="sample-ensemble")
    judge_max_cost_usd: float | None = Field(None, ge=0.0, allow_inf_nan=False, alias="judge-max-cost-usd")
    anthropic_api_key: str = Field("", alias="anthropic-api-key", repr=False)
    openai_api_key: str = Field("", alias="openai-api-key", repr=False)
    shard: ShardInfo | None = None
    merge: list[str] = Field(default_factory=list)
    results: str | None = Field(None, description="Publish-only mode: an earlier run's results file.")
    embedding_cache: str | None = Field(None, alias="embedding-cache")

    @field_validator("traces", "baseline_traces", "tags", "merge", mode="before")
    @classmethod
    def _list(cls, value: object) -> object:
        return _split(value) if isinstance(value, str) else value

    @field_validator("annotations", "check_run", "html_report", mode="before")
    @classmethod
    def _boolean(cls, value: object) -> object:
        """YAML 1.2 core booleans, as the Actions toolkit's getBooleanInput accepts."""
        if isinstance(value, str):
            if value.strip() in TRUE:
                return True
            if value.strip() in FALSE:
                return False
            raise ValueError(f"expected true or false, got {value!r}")
        return value

    @property
    def html_path(self) -> str:
        """The HTML report beside the results file: its path with .html for .json (agentci-results.html)."""
        path = Path(self.results_path)
        return str(path.with_suffix(".html") if path.suffix == ".json" else path.with_name(path.name + ".html"))

    @field_validator("comment_mode")
    @classmethod
    def _mode(cls, value: str) -> str:
        if value not in COMMENT_MODES:
            raise ValueError(f"expected one of {', '.join(COMMENT_MODES)}, got {value!r}")
        return value

    @field_validator("trace_format", "judge_cache", "embedding_cache", "results", mode="before")
    @classmethod
    def _optional(cls, value: object) -> object:
        return value or None

    @field_validator("shard", mode="before")
    @classmethod
    def _shard(cls, value: object) -> object:
        from .engine.shard import parse_shard

        return parse_shard(value) if isinstance(value, str) else value

    @model_validator(mode="after")
    def _traces_or_merge(self) -> ActionInputs:
        """Evaluate traces (all queries or one shard), merge shard results, or publish results: exactly one."""
        if self.results and (self.traces or self.merge or self.shard):
            raise ValueError(
                "input 'results' publishes an earlier run: leave inputs 'traces', 'merge' and 'shard' empty"
            )
        if self.results:
            return self
        if self.merge and self.shard:
            raise ValueError("input 'shard' evaluates one shard and input 'merge' combines shards: set one of them")
        if self.merge and self.traces:
            raise ValueError("input 'merge' combines shard results files: leave input 'traces' empty in the merge job")
        if not self.merge and not self.traces:
            raise ValueError("input 'traces' is required (unless input 'merge' is set)")
        return self


def read_inputs(env: Mapping[str, str]) -> ActionInputs:
    """INPUT_* variables → ActionInputs; an empty input means its default; bad values raise InputError naming the input."""
    raw = {
        name[len("INPUT_") :].lower(): value for name, value in env.items() if name.startswith("INPUT_") and value != ""
    }
    try:
        return ActionInputs.model_validate(raw)
    except ValidationError as exc:
        problems = [
            Problem(
                "action inputs",
                0,
                f"input '{err['loc'][0]}': {err['msg']}" if err["loc"] else err["msg"].removeprefix("Value error, "),
            )
            for err in exc.errors()
        ]
        raise InputError(problems) from None


class Publisher:
    """Writes to the runner's files and log; every method is independent so one failure never blocks the rest.

    The action's own warnings and errors are held back and printed by `annotate()` together with the results'
    annotations, ahead of them, so GitHub's per-step cap counts them and never drops them.

    Everything it writes (log, summary, outputs) and every text it hands to GitHub passes `outgoing`: no line of a
    secret input or key variable, and no URL's credentials, whatever exception or answer quoted them.
    """

    def __init__(self, env: Mapping[str, str], out: TextIO):
        self.env, self.out = env, out
        self.own: list[report_annotations.Annotation] = []
        self.inputs = [env.get(f"INPUT_{name.upper()}", "") for name in SECRET_INPUTS]
        self.secrets = self.inputs + [env.get(name, "") for name in SECRET_VARIABLES]

    def mask_secrets(self) -> None:
        """Ask the runner to mask every line of every secret input (its `::add-mask::` is one line)."""
        for part in secret_parts(self.inputs):
            write_stream(f"::add-mask::{report_annotations.escape_data(part)}\n", self.out, what="the log")

    def outgoing(self, text: str) -> str:
        """`text` as it may leave the action: secrets redacted, lone surrogates replaced (output.encodable)."""
        return encodable(redact(text, self.secrets))

    def line(self, text: str) -> None:
        write_stream(self.outgoing(text) + "\n", self.out, what="the log")

    def warning(self, message: str) -> None:
        self.own.append(report_annotations.Annotation("warning", "", 0, "AgentCI", message))

    def error(self, problem: Problem) -> None:
        file = report_annotations.repo_path(problem.file, self.env.get("GITHUB_WORKSPACE")) if problem.line else ""
        self.own.append(report_annotations.Annotation("error", file, problem.line, "AgentCI", str(problem)))

    def annotate(self, found: list[report_annotations.Annotation]) -> None:
        """Print the held-back annotations first, then `found`, within GitHub's per-step cap."""
        for command in report_annotations.workflow_commands(found, own=self.own):
            self.line(command)
        self.own = []

    def untrusted(self, lines: list[str]) -> None:
        """Agent text in the log, between stop-commands markers so none of it runs as a workflow command."""
        for text in report_annotations.stop_commands(lines):
            self.line(text)

    def summary(self, markdown_text: str) -> None:
        """Append to the job summary; a warning when it cannot be written."""
        self._append("GITHUB_STEP_SUMMARY", markdown_text, "the job summary")

    def outputs(self, values: dict[str, str]) -> None:
        """name<<DELIM blocks in GITHUB_OUTPUT, with a delimiter no value contains; a warning when it cannot be
        written (the results file and the summary still carry everything)."""
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


def judge_environment(inputs: ActionInputs, env: Mapping[str, str]) -> dict[str, str]:
    """Where the judge reads its keys: the environment, with the key inputs (when given) taking precedence."""
    keys = {"ANTHROPIC_API_KEY": inputs.anthropic_api_key, "OPENAI_API_KEY": inputs.openai_api_key}
    return {**env, **{name: key for name, key in keys.items() if key}}


BASE = "base"


def evaluate(inputs: ActionInputs, env: Mapping[str, str], context: RunContext | None = None) -> Outcome:
    """The inputs as an Evaluation, run; or the shards' results merged. `baseline: base` reads the baseline at the
    event's base commit (git, else the contents API with github-token); an event without one falls back, with a
    notice, to the newest saved version that passed."""
    from .base_ref import BaseRef, GitHubAccess
    from .engine.runner import Settings, parse_fail_on
    from .errors import SpecError
    from .evaluate import Evaluation, JudgeOptions, merge, read_results
    from .evaluate import evaluate as run_evaluation

    if inputs.results:
        return read_results(inputs.results)
    if inputs.merge:
        return merge(inputs.spec, inputs.merge, inputs.tags)

    try:
        fail_on = parse_fail_on(inputs.fail_on)
    except ValueError as exc:
        raise SpecError.at("action inputs", 0, f"input 'fail-on': {exc}") from None
    base_ref, notes = None, []
    if inputs.baseline == BASE:
        if context is not None and context.base_sha:
            access = GitHubAccess(context.repository, inputs.github_token, inputs.github_api_url)
            base_ref = BaseRef(context.base_sha, access if context.repository else None)
        else:
            event = context.event_name if context else "this"
            notes.append(
                f"baseline: base needs a pull_request or merge_group event; the {event or 'local'} event has no base "
                "commit, so the newest saved version whose precheck passed is the baseline"
            )
    outcome = run_evaluation(
        Evaluation(
            spec=inputs.spec,
            traces=inputs.traces,
            baseline=None if inputs.baseline == BASE else inputs.baseline or None,
            baseline_ref=base_ref,
            baseline_traces=inputs.baseline_traces,
            trace_format=inputs.trace_format,
            tags=inputs.tags,
            settings=Settings(fail_on=fail_on, workers=inputs.workers),
            judge=JudgeOptions(
                mode=inputs.judge_mode,
                cache=inputs.judge_cache,
                sample_ensemble=inputs.sample_ensemble,
                max_cost_usd=inputs.judge_max_cost_usd,
                environ=judge_environment(inputs, env),
            ),
            shard=inputs.shard,
            embedding_cache=inputs.embedding_cache,
            progress="agentci",
        )
    )
    outcome.run.warnings[:0] = notes
    return outcome


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
    """Publish-only mode on `workflow_run`: a fork's pull request, which the event does not list, found by its
    head branch and commit (github/context.py); a warning when it cannot be looked up."""
    if context.pr_number is not None or not context.head_label or not inputs.github_token:
        return context
    from .github.comment import client
    from .github.context import find_pull_request

    try:
        found = find_pull_request(client(inputs.github_token, inputs.github_api_url), context)
    except Exception as exc:  # GitHub failing must not lose the summary, outputs and check run
        publisher.warning(f"Could not look up the pull request of {context.head_label} ({type(exc).__name__}).")
        return context
    if found.pr_number is None:
        publisher.warning(f"No open pull request has head {context.head_label} at {context.head_sha[:7]}: no comment.")
    return found


def publish_comment(
    inputs: ActionInputs,
    context: RunContext,
    run: RunResult,
    diff: RunDiff | None,
    links: markdown.Links,
    publisher: Publisher,
) -> str:
    """The sticky comment on the PR (when there is one); its URL, or '' after a warning."""
    if context.pr_number is None or inputs.comment_mode == "off":
        return ""
    if not inputs.github_token:
        publisher.warning("No github-token: the PR comment was not posted.")
        return ""
    from .github.comment import client, upsert_comment

    GithubException = require("github", "The PR comment").GithubException

    body = publisher.outgoing(
        markdown.render_comment(run, inputs.comment_header, markdown.title_for(inputs.comment_header), links, diff=diff)
    )
    has_problems = run.summary.status is not Status.PASS
    try:
        outcome = upsert_comment(
            client(inputs.github_token, inputs.github_api_url),
            context.repository,
            context.pr_number,
            body,
            markdown.marker(inputs.comment_header),
            mode=inputs.comment_mode,
            has_problems=has_problems,
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
    """The check run's conclusion from the job's own exit decision: failure when the job fails (exit ≠ 0);
    neutral when something failed or warned without blocking (fail-on); success otherwise."""
    if exit_status:
        return "failure"
    return "neutral" if run.summary.status in (Status.FAIL, Status.WARN) else "success"


def publish_check_run(
    inputs: ActionInputs,
    context: RunContext,
    run: RunResult,
    links: markdown.Links,
    found: list[report_annotations.Annotation],
    conclusion: str,
    publisher: Publisher,
) -> bool:
    """Every annotation (uncapped) on a check run for the head commit; False after a warning when that failed."""
    from .github.checks import publish_check_run as publish

    GithubException = require("github", "The check run").GithubException
    from .github.comment import client

    try:
        url = publish(
            client(inputs.github_token, inputs.github_api_url),
            context.repository,
            context.head_sha,
            name=f"AgentCI ({markdown.header_slug(inputs.comment_header)})",
            conclusion=conclusion,
            title=f"{run.summary.status.value}: {run.summary.failed} failed, {run.summary.warnings} warnings",
            summary=publisher.outgoing(
                markdown.render_summary(
                    run, markdown.title_for(inputs.comment_header), links, budget=markdown.COMMENT_BUDGET
                )
            ),
            annotations=[
                {key: publisher.outgoing(value) if isinstance(value, str) else value for key, value in item.items()}
                for item in map(report_annotations.check_run_annotation, found)
            ],
        )
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


def main(env: Mapping[str, str] | None = None, out: TextIO | None = None) -> int:
    """Run the action; returns the process exit code (2, not Python's 1, when AgentCI itself breaks).

    The traceback of an internal error goes to the log between stop-commands markers: the values it quotes may be
    agent text, and none of it may run as a workflow command.
    """
    env = os.environ if env is None else env
    publisher = Publisher(env, out or sys.stdout)
    try:
        return run_action(env, publisher)
    except Exception as exc:
        publisher.untrusted(traceback.format_exc().splitlines())
        publisher.own.append(
            report_annotations.Annotation(
                "error", "", 0, "AgentCI", f"internal error ({type(exc).__name__}); please report it with the log above"
            )
        )
        publisher.annotate([])
        return EXIT_ERROR


def write_html_report(inputs: ActionInputs, run: RunResult, diff: RunDiff | None, publisher: Publisher) -> str:
    """The HTML report beside the results file (not for a shard: the merge job writes it); its path, '' when none
    was written. A failed write is a warning: the summary and the results file carry everything it shows."""
    from .report.html import render_html

    if not inputs.html_report or inputs.shard is not None:
        return ""
    try:
        write_file(inputs.html_path, render_html(run, diff), what="the HTML report")
    except OutputError as exc:
        publisher.warning(str(exc))
        return ""
    return inputs.html_path


def run_action(env: Mapping[str, str], publisher: Publisher) -> int:
    """Read, evaluate, publish, then decide the exit code."""
    from .cli import exit_code
    from .report import console
    from .report import json as json_report

    publisher.mask_secrets()
    try:
        inputs = read_inputs(env)
        if inputs.spec == SPEC_FILE and not Path(SPEC_FILE).exists():  # the default name, and no such file
            found, notice = default_spec(Path())
            if notice:
                publisher.warning(notice)
                inputs = inputs.model_copy(update={"spec": str(found)})
        context = resolve(env, load_event(env.get("GITHUB_EVENT_PATH")))
        outcome = evaluate(inputs, env, context)
        run, diff = outcome.run, outcome.diff
    except AgentCIError as exc:
        problems = exc.problems if isinstance(exc, InputError) else [Problem("agentci", 0, str(exc))]
        for problem in problems:
            publisher.error(problem)
        publisher.summary(
            "## 💥 AgentCI could not evaluate\n\n" + "".join(f"- {inline(str(p), 1000)}\n" for p in problems)
        )
        publisher.outputs(outputs_for(None, "", ""))
        publisher.annotate([])
        return exc.exit_code

    status = exit_code(run)
    if inputs.results:
        context = locate_pull_request(inputs, context, publisher)
    workspace = env.get("GITHUB_WORKSPACE") or os.getcwd()
    try:
        write_file(inputs.results_path, json_report.chunks(run, diff), what="the results file")
    except OutputError as exc:
        publisher.error(Problem("agentci", 0, str(exc)))
        status = max(status, EXIT_ERROR)
    html_path = write_html_report(inputs, run, diff, publisher)
    links = markdown.Links(
        blob_url=context.blob_url,
        run_url=context.run_url,
        sha=context.head_sha,
        report_url=f"{context.run_url}#artifacts" if html_path and context.run_url else None,
    )
    publisher.untrusted(console.render_with_diff(run, diff).splitlines())
    title = markdown.title_for(inputs.comment_header) + (
        f" · shard {inputs.shard.index}/{inputs.shard.count}" if inputs.shard else ""
    )
    publisher.summary(markdown.render_summary(run, title, links, diff=diff))
    comment_url, found_annotations = "", []
    if inputs.shard is None:  # a shard job leaves the annotations, check run and comment to the merge job
        comment_url = publish_comment(inputs, context, run, diff, links, publisher)
        found_annotations = report_annotations.annotations_for(run, workspace)
        on_check_run = bool(
            inputs.check_run
            and context.head_sha
            and inputs.github_token
            and publish_check_run(
                inputs, context, run, links, found_annotations, check_conclusion(status, run), publisher
            )
        )
        if on_check_run or not inputs.annotations:
            found_annotations = []
    publisher.outputs(outputs_for(run, inputs.results_path, comment_url, html_path))
    publisher.annotate(found_annotations)  # last, so the action's own warnings above are counted in GitHub's cap
    # publish-only: the evaluating workflow already failed the pull request; this job fails only when it cannot work
    return EXIT_PASS if inputs.results and status == EXIT_FAIL else status
