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
from collections.abc import Mapping
from pathlib import Path
from typing import TextIO

from agentci_action._util.errors import EXIT_ERROR, EXIT_FAIL, EXIT_PASS, AgentCIError, InputError, Problem, SpecError
from agentci_action._util.output import LinkedPath, OutputError, write_file
from agentci_action._util.text import inline
from agentci_action.compare.base_ref import BaseRef, GitHubAccess
from agentci_action.engine.evaluate_spec import Settings
from agentci_action.github.context import RunContext, load_event, resolve
from agentci_action.github.inputs import ActionInputs, judge_environment, read_inputs
from agentci_action.github.publisher import (
    PublishedRun,
    Publisher,
    append_run,
    check_conclusion,
    locate_pull_request,
    outputs_for,
    publish_check_run,
    publish_comment,
    read_trend,
    write_html_report,
)
from agentci_action.pipeline.blocking import exit_code, parse_fail_on
from agentci_action.pipeline.evaluation import Evaluation, evaluate, merge
from agentci_action.pipeline.judge_wiring import JudgeOptions
from agentci_action.pipeline.results_files import Outcome, read_results
from agentci_action.report import console, file_annotations, markdown, results_json
from agentci_action.spec.names import SPEC_FILE, default_spec

BASE = "base"


def outcome_of(inputs: ActionInputs, env: Mapping[str, str], context: RunContext | None = None) -> Outcome:
    """The inputs as an Evaluation, run; or the shards' results merged.

    `baseline: base` reads the baseline at the event's base commit (git, else the contents API with github-token); an
    event without one falls back, with a notice, to the newest saved version that passed. On an event with a base commit
    (a pull request, a merge group) the verdict and embedding caches are trusted only as they are there: the change may
    have written them.
    """
    if inputs.results:
        return read_results(inputs.results)
    if inputs.merge:
        return merge(inputs.spec, inputs.merge, inputs.tags)

    try:
        fail_on = parse_fail_on(inputs.fail_on)
    except ValueError as exc:
        raise SpecError.at("action inputs", 0, f"input 'fail-on': {exc}") from None
    base_ref, notes = None, []
    at_base = None
    if context is not None and context.base_sha:
        access = GitHubAccess(context.repository, inputs.github_token, inputs.github_api_url)
        at_base = BaseRef(context.base_sha, access if context.repository else None)
    if inputs.baseline == BASE:
        if at_base is not None:
            base_ref = at_base
        else:
            event = context.event_name if context else "this"
            notes.append(
                f"baseline: base needs a pull_request or merge_group event; the {event or 'local'} event has no base "
                "commit, so the newest saved version whose precheck passed is the baseline"
            )
    outcome = evaluate(
        Evaluation(
            spec=inputs.spec,
            traces=inputs.traces,
            baseline=None if inputs.baseline == BASE else inputs.baseline or None,
            baseline_ref=base_ref,
            recordings_at=at_base,
            goldens_at=at_base,
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
                caches_at=at_base,
            ),
            shard=inputs.shard,
            embedding_cache=inputs.embedding_cache,
            progress="agentci",
        )
    )
    outcome.run.warnings[:0] = notes
    return outcome


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
            file_annotations.Annotation(
                "error", "", 0, "AgentCI", f"internal error ({type(exc).__name__}); please report it with the log above"
            )
        )
        publisher.annotate([])
        return EXIT_ERROR


def run_action(env: Mapping[str, str], publisher: Publisher) -> int:
    """Read, evaluate, publish, then decide the exit code."""
    publisher.mask_secrets()
    try:
        inputs = read_inputs(env)
        if inputs.spec == SPEC_FILE and not Path(SPEC_FILE).exists():  # the default name, and no such file
            found, notice = default_spec(Path())
            if notice:
                publisher.warning(notice)
                inputs = inputs.model_copy(update={"spec": str(found)})
        event = load_event(env.get("GITHUB_EVENT_PATH"))
        context = resolve(env, event)
        outcome = outcome_of(inputs, env, context)
        run, diff, recordings, goldens = outcome.run, outcome.diff, outcome.recordings, outcome.goldens
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
        write_file(inputs.results_path, results_json.chunks(run, diff, recordings, goldens), what="the results file")
    except OutputError as exc:
        publisher.error(Problem("agentci", 0, str(exc)))
        status = max(status, EXIT_ERROR)
    history = read_trend(inputs, context, run, publisher)
    try:
        html_path = write_html_report(inputs, run, diff, publisher, markdown.Beside(history, recordings, goldens))
    except LinkedPath as exc:
        publisher.error(Problem("agentci", 0, str(exc)))
        status, html_path = max(status, EXIT_ERROR), ""
    links = markdown.Links(
        blob_url=context.blob_url,
        run_url=context.run_url,
        sha=context.head_sha,
        report_url=f"{context.run_url}#artifacts" if html_path and context.run_url else None,
    )
    publisher.untrusted(console.render_with_diff(run, diff, history, recordings, goldens).splitlines())
    title = markdown.title_for(inputs.comment_header) + (
        f" · shard {inputs.shard.index}/{inputs.shard.count}" if inputs.shard else ""
    )
    publisher.summary(
        markdown.render_summary(run, title, links, diff=diff, beside=markdown.Beside(history, recordings, goldens))
    )
    comment_url, found_annotations = "", []
    if inputs.shard is None:  # a shard job leaves the annotations, check run and comment to the merge job
        shown = PublishedRun(run=run, diff=diff, history=history, links=links, recordings=recordings, goldens=goldens)
        comment_url = publish_comment(inputs, context, shown, publisher)
        found_annotations = file_annotations.annotations_for(run, workspace)
        on_check_run = bool(
            inputs.check_run
            and context.head_sha
            and inputs.github_token
            and publish_check_run(inputs, context, shown, found_annotations, check_conclusion(status, run), publisher)
        )
        if on_check_run or not inputs.annotations:
            found_annotations = []
    append_run(inputs, context, event, run, status != EXIT_PASS, publisher)
    publisher.outputs(outputs_for(run, inputs.results_path, comment_url, html_path))
    publisher.annotate(found_annotations)  # last, so the action's own warnings above are counted in GitHub's cap
    # publish-only: the evaluating workflow already failed the pull request; this job fails only when it cannot work
    return EXIT_PASS if inputs.results and status == EXIT_FAIL else status
