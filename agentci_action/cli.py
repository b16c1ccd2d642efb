"""The `agentci` command: validate a spec, test traces against it (whole or one shard), merge shards, list queries,
save, list and diff baselines, collect an agent's OpenTelemetry spans as traces, print the JSON Schema, start a
project.

Exit codes: 0 pass (warnings allowed) · 1 a blocking layer failed (`validate`: the spec is invalid;
`save`: the traces fail the correctness precheck) ·
2 the spec, the traces or an infrastructure dependency made evaluation impossible.
"""

from __future__ import annotations

import argparse
import math
import os
import shlex
import sys
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from ._version import __version__
from .errors import EXIT_ERROR, EXIT_FAIL, EXIT_PASS, AgentCIError, SpecError
from .output import write_file, write_stream
from .spec.names import SPEC_FILE, default_spec
from .trace.formats import FORMATS as TRACE_FORMATS

if TYPE_CHECKING:  # each command imports what it needs, so `agentci --help` and `validate` start fast
    from collections.abc import Callable, Iterator

    from .base_ref import BaseRef
    from .diff import RunDiff
    from .engine.results import RunResult, ShardInfo
    from .evaluate import JudgeOptions, Outcome
    from .runner.execute import AgentRun, RunOptions

FORMATS = ("console", "json", "github", "markdown", "html", "junit", "prometheus")


def exit_code(run: RunResult) -> int:
    """2 when any query could not be evaluated, 1 when any query or suite gate blocks, else 0."""
    from .engine.results import Status

    if any(r.status is Status.ERROR for r in run.results):
        return EXIT_ERROR
    if any(r.blocking for r in run.results) or any(g.blocking for g in run.gates):
        return EXIT_FAIL
    return EXIT_PASS


def render(fmt: str, run: RunResult, diff: RunDiff | None = None) -> str | Iterator[str]:
    """The report in `fmt`. console, markdown (the job summary) and html (one self-contained page) include the diff
    against the baseline;
    github is the step log the action prints: the console report inside stop-commands, then the annotations."""
    from .report import annotations, console, html, json, junit, markdown, prometheus

    if fmt == "github":
        return "\n".join(annotations.github_log(run, diff, os.environ.get("GITHUB_WORKSPACE") or os.getcwd())) + "\n"
    if fmt == "markdown":
        return markdown.render_summary(run, diff=diff)
    if fmt == "html":
        return html.render_html(run, diff)
    if fmt == "console":
        return console.render_with_diff(run, diff)
    if fmt == "json":
        return json.chunks(run, diff)  # written a query at a time: a results file is never held whole
    return {"junit": junit.render, "prometheus": prometheus.render}[fmt](run)


def write_report(report: str | Iterator[str], fmt: str, output: str | None) -> None:
    """write_output, except that a console report for standard output under GitHub Actions goes between
    stop-commands markers: the runner reads `::command` lines from the log even after leading spaces, and the
    report holds untrusted text (queries, answers, tool names)."""
    if isinstance(report, str) and fmt == "console" and not output and os.environ.get("GITHUB_ACTIONS") == "true":
        from .report.annotations import stop_commands

        report = "\n".join(stop_commands(report.splitlines())) + "\n"
    write_output(report, output)


def _split(values: list[str] | None) -> list[str]:
    return [item.strip() for value in values or [] for item in value.split(",") if item.strip()]


def add_spec_argument(parser: argparse.ArgumentParser, help: str = "the spec YAML") -> None:
    """The spec, named either way (`agentci test SPEC` or `--spec SPEC`); by default ./agentci_spec.yaml."""
    text = f"{help} (default: ./{SPEC_FILE})"
    parser.add_argument("spec_path", nargs="?", metavar="SPEC", help=text)
    parser.add_argument("--spec", dest="spec_option", metavar="SPEC", help=f"{text}; the same as SPEC")


def resolve_spec(args: argparse.Namespace) -> str:
    """The spec path given as SPEC or --spec (the same when both), else the default file in the working directory.
    `merge`'s positional arguments are shard files: a first one ending in .yaml or .yml is the spec."""
    positional: str | None = args.spec_path
    option: str | None = args.spec_option
    shards = getattr(args, "shards", None)
    if shards and positional is None and shards[0].endswith((".yaml", ".yml")):
        positional = shards.pop(0)
    if positional and option and Path(positional) != Path(option):
        raise SpecError.at(positional, 0, f"the spec is named twice, as {positional} and --spec {option}: give one")
    if positional:
        return positional
    if option:
        return option
    path, notice = default_spec(Path())
    if path is None:
        raise SpecError.at(
            SPEC_FILE, 0, f"no spec named and no {SPEC_FILE} here: give its path (SPEC or --spec), or run agentci init"
        )
    if notice:
        print(f"warning: {notice}", file=sys.stderr)
    return str(path)


@contextmanager
def pydantic_plugins_off() -> Iterator[None]:
    """PYDANTIC_DISABLE_PLUGINS=__all__ inside, as it was after. pydantic looks for plugins in every installed
    distribution's entry points when it builds its first model: 3 ms in a bare environment, more beside an agent's
    many packages. While the variable is set it caches no answer, so models built later get their plugins."""
    saved = os.environ.get("PYDANTIC_DISABLE_PLUGINS")
    os.environ["PYDANTIC_DISABLE_PLUGINS"] = "__all__"
    try:
        yield
    finally:
        if saved is None:
            del os.environ["PYDANTIC_DISABLE_PLUGINS"]
        else:
            os.environ["PYDANTIC_DISABLE_PLUGINS"] = saved


def cmd_validate(args: argparse.Namespace) -> int:
    """validate builds and runs only the spec's models, without pydantic's plugins: it runs no user code and starts
    no process, so nothing else sees the variable that turns them off."""
    from .gcpause import gc_paused

    with gc_paused(), pydantic_plugins_off():  # the spec's models: objects that live until exit (gcpause.py)
        from .spec.loader import load_spec

        try:
            spec = load_spec(args.spec)
        except SpecError as exc:
            for problem in exc.problems:
                print(problem, file=sys.stderr)
            print(
                f"{args.spec}: invalid ({len(exc.problems)} problem{'s' * (len(exc.problems) != 1)})", file=sys.stderr
            )
            return EXIT_FAIL
    count = len(spec.queries)  # report.text.plural's wording, without importing the reports into validate
    say(f"{args.spec}: valid · agent {spec.agent!r} · {count} {'query' if count == 1 else 'queries'}")
    return EXIT_PASS


def _shard_option(text: str | None) -> ShardInfo | None:
    """--shard I/N, or None when absent; a malformed value is a usage error (exit 2)."""
    from .engine.shard import parse_shard

    try:
        return parse_shard(text) if text else None
    except ValueError as exc:
        raise SpecError.at("--shard", 0, str(exc)) from None


def _fail_on(args: argparse.Namespace) -> frozenset[str]:
    from .engine.runner import parse_fail_on

    try:
        return parse_fail_on(args.fail_on)
    except ValueError as exc:
        raise SpecError.at("--fail-on", 0, str(exc)) from None


def cmd_test(args: argparse.Namespace) -> int:
    from .engine.runner import Settings
    from .evaluate import Evaluation, evaluate

    fail_on = _fail_on(args)
    shard = _shard_option(args.shard)
    if shard and not args.output:
        raise SpecError.at(
            "--shard", 0, "a shard writes its results file to --output, e.g. --output results/shard-2.json"
        )
    with ExitStack() as stack:
        traces = traces_to_evaluate(args, stack, shard)
        outcome = evaluate(
            Evaluation(
                spec=args.spec,
                traces=traces,
                baseline=args.baseline,
                baseline_traces=args.baseline_traces or [],
                trace_format=args.trace_format,
                tags=_split(args.tags),
                embedding_cache=args.embedding_cache,
                settings=Settings(fail_on=fail_on, workers=args.workers),
                shard=shard,
                judge=_judge_options(args),
                baseline_ref=_base_ref(args),
                progress="agentci test",
            )
        )
    run = outcome.run
    if shard:  # --output takes the shard results file; the report goes to standard output
        from .report import json

        write_output(json.chunks(run, outcome.diff), args.output)  # the merge judges the gates from its diff
        write_report(render(args.format, run), args.format, None)
        return exit_code(run)
    return report_outcome(outcome, args)


def report_outcome(outcome: Outcome, args: argparse.Namespace) -> int:
    """The run and its diff against the baseline as --format asks, to --output; the run's exit code. A format that
    does not show the diff's warnings (json, junit, prometheus) has them said on standard error."""
    if outcome.diff and args.format not in ("console", "github", "markdown", "html"):
        _warn(outcome.diff.warnings)
    write_report(render(args.format, outcome.run, outcome.diff), args.format, args.output)
    return exit_code(outcome.run)


def _base_ref(args: argparse.Namespace) -> BaseRef | None:
    """--baseline-ref REF, read through git, else through the GitHub API when GITHUB_TOKEN and GITHUB_REPOSITORY
    are set (as in a workflow's run: step); None without the option."""
    from .base_ref import BaseRef, GitHubAccess, check_ref

    if not getattr(args, "baseline_ref", None):
        return None
    token, repository = os.environ.get("GITHUB_TOKEN", ""), os.environ.get("GITHUB_REPOSITORY", "")
    api = os.environ.get("GITHUB_API_URL") or "https://api.github.com"
    return BaseRef(check_ref(args.baseline_ref), GitHubAccess(repository, token, api) if token and repository else None)


def _judge_options(args: argparse.Namespace) -> JudgeOptions:
    """The judge as --judge-mode, --judge-cache, --judge-max-cost-usd and --sample-ensemble ask (keys from the
    environment)."""
    from .evaluate import JudgeOptions

    return JudgeOptions(
        mode=args.judge_mode,
        cache=args.judge_cache,
        sample_ensemble=getattr(args, "sample_ensemble", None),
        max_cost_usd=args.judge_max_cost_usd,
        environ=os.environ,
    )


def cmd_run(args: argparse.Namespace) -> int:
    """Run the agent on the selected queries and write their traces: 0 every run gave a trace, 1 the agent
    failed on some (crashed, printed no trace), 2 some failed for infrastructure reasons after their retries."""
    from .runner import RunOptions

    options = RunOptions(Path(args.output), args.runs, args.workers, args.timeout, args.resume, args.capture)
    outcome = run_the_agent(args.spec, _split(args.tags), _shard_option(args.shard), options)
    return EXIT_ERROR if outcome.infra else EXIT_FAIL if outcome.failed else EXIT_PASS


def run_the_agent(spec_path: str, tags: list[str], shard: ShardInfo | None, options: RunOptions) -> AgentRun:
    """The spec's runner on the selected queries (tags, then shard), progress and summary on stderr."""
    from .engine.shard import select_shard
    from .runner import run_agent
    from .runner.execute import terminate_on_sigterm
    from .spec.loader import load_spec

    spec = load_spec(spec_path, tags=tags or None)
    queries = select_shard(spec.queries, shard) if shard else spec.queries
    with terminate_on_sigterm():
        outcome = run_agent(spec, options, queries=queries)
    print(outcome.summary(options.output), file=sys.stderr)
    return outcome


def traces_to_evaluate(args: argparse.Namespace, stack: ExitStack, shard: ShardInfo | None = None) -> list[str]:
    """--traces as given; without them the spec's runner runs the agent first, into --record DIR (else a temporary
    directory), and those traces are evaluated. A spec without a runner needs --traces."""
    traces: list[str] | None = args.traces  # append: None when not given
    if traces:
        return traces
    import tempfile

    from .runner import RunOptions

    record = args.record or stack.enter_context(tempfile.TemporaryDirectory(prefix="agentci-traces-"))
    run_the_agent(args.spec, _split(getattr(args, "tags", None)), shard, RunOptions(Path(record)))
    return [record]


def cmd_merge(args: argparse.Namespace) -> int:
    from .evaluate import merge

    return report_outcome(merge(args.spec, args.shards, _split(args.tags)), args)


def cmd_queries(args: argparse.Namespace) -> int:
    """The selected queries as JSON Lines {id, query}: what to run the agent on (in a matrix job, its shard's)."""
    import json

    from .engine.shard import select_shard
    from .spec.loader import load_spec

    shard = _shard_option(args.shard)
    spec = load_spec(args.spec, tags=_split(args.tags) or None)
    queries = select_shard(spec.queries, shard) if shard else spec.queries
    write_output(
        "".join(json.dumps({"id": q.key, "query": q.query}, ensure_ascii=False) + "\n" for q in queries), args.output
    )
    return EXIT_PASS


def _warn(notes: list[str]) -> None:
    for note in notes:
        print(f"warning: {note}", file=sys.stderr)


def cmd_save(args: argparse.Namespace) -> int:
    from .baselines import PrecheckFailed, git_commit, save_baseline
    from .engine.runner import Settings
    from .evaluate import JudgeProgress, judge_for
    from .spec.loader import load_spec
    from .trace.load import load_traces

    spec = load_spec(args.spec)
    with ExitStack() as stack:
        traces = load_traces(traces_to_evaluate(args, stack), args.trace_format, spec.pricing)
    failed = [trace.run_error for trace in traces if trace.run_error]
    if failed:
        for error in failed:
            print(f"error: {error}", file=sys.stderr)
        print(
            f"error: {len(failed)} run(s) of the agent gave no trace, so {args.version!r} was not saved",
            file=sys.stderr,
        )
        return EXIT_ERROR
    judge = judge_for(spec, _judge_options(args))
    progress = JudgeProgress("agentci save", spec, judge, None, workers=Settings().workers)
    try:
        path, baseline, failures = save_baseline(
            spec,
            traces,
            args.version,
            force=args.force_save,
            overwrite=args.overwrite,
            commit=git_commit(Path(args.spec).resolve().parent),
            judge=judge,
            observe=progress.observe,
        )
    except PrecheckFailed as exc:
        print(
            f"error: precheck failed: {len(exc.problems)} {'query fails' if len(exc.problems) == 1 else 'queries fail'} "
            f"as `agentci test` judges them, so {args.version!r} was not saved "
            "(--force-save saves it anyway and records that the precheck failed):",
            file=sys.stderr,
        )
        for problem in exc.problems:
            print(f"  {problem}", file=sys.stderr)
        return EXIT_FAIL
    finally:
        progress.finish()
        if judge is not None:
            judge.cache.save()  # verdicts already paid for are kept, whatever the precheck decided
    for problem in failures:
        print(f"warning: precheck failed, saved anyway (--force-save): {problem}", file=sys.stderr)
    precheck = "precheck passed" if baseline.metadata.precheck_passed else "precheck FAILED, forced"
    unverified = sum(baseline.metadata.unverified_checks.values())
    if unverified:  # passed without them: say so, as `test` does (the metadata records them too)
        precheck += f", {unverified} correctness {'check' if unverified == 1 else 'checks'} not verified"
        from .report.text import unverified_note

        print(f"warning: {unverified_note(baseline.metadata.unverified_checks)}", file=sys.stderr)
    from .report.text import plural

    counts = f"{plural(len(baseline.queries), 'query', 'queries')}, {plural(baseline.trace_count, 'trace')}"
    say(f"saved baseline {baseline.version}: {counts}, {precheck} → {path}")
    return EXIT_PASS


def cmd_baselines(args: argparse.Namespace) -> int:
    from .baselines import baseline_dir, list_headers
    from .report.text import one_line
    from .spec.loader import load_spec

    spec = load_spec(args.spec)
    stored = list_headers(spec)
    if not stored:
        say(
            f"no baselines in {baseline_dir(spec)} yet; `agentci save --spec {args.spec} --traces T --version V` records one"
        )
        return EXIT_PASS
    default = next((s for s in reversed(stored) if s.header.metadata.precheck_passed), None)
    rows = [("", "VERSION", "CAPTURED", "QUERIES", "TRACES", "PRECHECK", "AGENT", "MODELS", "FILE")]
    for item in stored:
        b = item.header
        rows.append(
            (
                "*" if item is default else "",
                b.version,
                b.captured_at,
                str(b.queries),
                str(b.traces),
                ("passed" if b.metadata.precheck_passed else "failed")
                + (f", {n} unverified" if (n := sum(b.metadata.unverified_checks.values())) else ""),
                b.agent,
                ",".join(b.metadata.models) or "-",
                str(item.file),
            )
        )
    widths = [max(len(one_line(row[i])) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        say("  ".join(one_line(cell).ljust(width) for cell, width in zip(row, widths)).rstrip())
    say(
        "\n* the default for `agentci test`: the newest version whose precheck passed"
        if default
        else "\nno version passed its precheck, so `agentci test` uses no baseline unless --baseline names one"
    )
    return EXIT_PASS


def cmd_diff(args: argparse.Namespace) -> int:
    from .engine.runner import Settings
    from .evaluate import compare_versions

    if not args.baseline and not args.baseline_ref:
        raise SpecError.at("--baseline", 0, "name the version compared from (--baseline V), or --baseline-ref REF")

    outcome = compare_versions(
        args.spec,
        args.baseline,
        args.compare,
        _judge_options(args),
        args.embedding_cache,
        Settings(fail_on=_fail_on(args), workers=args.workers),
        _base_ref(args),
        progress="agentci diff",
    )
    diff = outcome.diff
    assert diff is not None
    if args.format not in ("console", "html"):
        _warn(diff.warnings)
    write_report(render_diff(args.format, outcome.run, diff), args.format, args.output)
    return EXIT_FAIL if any(g.blocking for g in diff.gates) else EXIT_PASS


def render_diff(fmt: str, run: RunResult, diff: RunDiff) -> str:
    """The diff of two versions in `fmt`; html is the page `test --format html` writes, for the compared version."""
    from .report import diff_console, diff_markdown, html, json

    if fmt == "html":
        return html.render_html(run, diff)
    return {"console": diff_console.render_diff, "json": json.render_diff, "markdown": diff_markdown.render_markdown}[
        fmt
    ](diff)


def _number(text: str, fits: Callable[[float], bool], expected: str) -> float:
    """`text` as a number that `fits` (NaN and text that is no number never do), else a usage error."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not fits(value):
        raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}")
    return value


def _fraction(text: str) -> float:
    return _number(text, lambda v: 0.0 <= v <= 1.0, "a fraction between 0 and 1")


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {text!r}")
    return int(text)


def _dollars(text: str) -> float:
    return _number(text, lambda v: 0 <= v < math.inf, "an amount of US dollars, 0 or more")


def _seconds(text: str) -> float:
    return _number(text, lambda v: 0 < v < math.inf, "a number of seconds above 0")


def write_output(text: str | Iterator[str], output: str | None) -> None:
    """`text` to the file `output`, else to standard output; a failed write is an OutputError (exit 2)."""
    if output:
        write_file(output, text)
    else:
        write_stream(text)


def say(text: str) -> None:
    """One line of the command's own output on standard output."""
    write_stream(text + "\n", what="the output")


def cmd_schema(args: argparse.Namespace) -> int:
    from .spec.schema import render_schema

    write_output(render_schema(), args.output)
    return EXIT_PASS


def cmd_collect(args: argparse.Namespace) -> int:
    from .capture.collect import collect
    from .errors import InfraError

    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    try:
        return collect(Path(args.output), port=args.port, command=command or None, quiet_s=args.quiet)
    except FileNotFoundError as exc:
        raise SpecError.at("collect", 0, f"command not found: {exc.filename}") from None
    except OSError as exc:
        raise InfraError(
            f"cannot listen on 127.0.0.1:{args.port} ({exc.strerror or exc}): pass --port 0 for any free port"
        ) from None


def cmd_init(args: argparse.Namespace) -> int:
    from .init import init_project

    directory = Path(args.directory)
    for path in init_project(directory):
        say(f"wrote {path}")
    # paths as the user reaches them from here, wherever the files went
    spec, traces = shlex.quote(str(directory / "agentci_spec.yaml")), shlex.quote(str(directory / "traces")) + "/"
    say(f"next: agentci test --spec {spec} --traces {traces}")
    return EXIT_PASS


def add_judge_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--judge-mode",
        choices=("auto", "required", "off"),
        default="auto",
        help="auto: judge checks without a key or cached verdict are skipped; required: that is an error (exit 2); off: never judge",
    )
    parser.add_argument(
        "--judge-cache",
        help="verdict cache to read and update (default: .agentci/judge-cache.json beside the spec); commit it",
    )
    parser.add_argument(
        "--judge-max-cost-usd",
        type=_dollars,
        default=None,
        metavar="USD",
        help="no judge call starts once the judge has spent this much in the run (with judge_config.max_cost_usd "
        "too, the lower cap holds); the checks left are reported as not verified",
    )


def add_fail_on_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--fail-on",
        default="correctness,suite",
        help="what blocks (exit 1): correctness, path, cost, suite (the spec's suite: gates), or none "
        "(default: correctness,suite)",
    )


def add_evaluation_arguments(parser: argparse.ArgumentParser) -> None:
    """How queries are evaluated, the same on `test` and `diff`: the judge, its workers, the embedding cache."""
    parser.add_argument("--workers", type=_positive, default=4, help="concurrent judge calls (default 4)")
    add_judge_arguments(parser)
    parser.add_argument(
        "--sample-ensemble",
        type=_fraction,
        default=None,
        metavar="F",
        help="run judge_config.ensemble's models on a fixed, hash-chosen share F of the judge checks, even when "
        "the ensemble is not enabled (default: every check if enabled, none if not)",
    )
    parser.add_argument(
        "--embedding-cache", help="JSON file of cached embeddings for semantic similarity (read, then updated)"
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agentci", description="Regression tests for AI agents: correctness, path and cost."
    )
    parser.add_argument("--version", action="version", version=f"agentci {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    validate = sub.add_parser("validate", help="check a spec; exit 1 listing every problem as file:line: message")
    add_spec_argument(validate)
    validate.set_defaults(func=cmd_validate)

    test = sub.add_parser("test", help="evaluate traces against a spec")
    add_spec_argument(test)
    test.add_argument(
        "--traces",
        action="append",
        help="trace file, directory or glob (repeatable); without it the spec's runner: runs the agent first",
    )
    test.add_argument("--record", help="without --traces: keep the agent's traces in this directory")
    test.add_argument(
        "--baseline",
        help="saved baseline version to compare with (default: the newest whose precheck passed; 'none': no baseline)",
    )
    test.add_argument(
        "--baseline-ref",
        metavar="REF",
        help="compare with the baseline as it is at this commit (e.g. origin/main, or the PR's base sha): the traces "
        "at --traces' paths there, else its saved version (--baseline V, default the newest that passed); through "
        "git, else the GitHub API (GITHUB_TOKEN, GITHUB_REPOSITORY)",
    )
    test.add_argument(
        "--baseline-traces",
        action="append",
        help="accepted traces to compare with instead of a saved version "
        "(sequence similarity, match mode, cost multiplier); up to 5 per query are variants, and the closest is used",
    )
    test.add_argument(
        "--trace-format",
        default=None,
        choices=["auto", *TRACE_FORMATS],
        help="trace format (default: detected per file)",
    )
    test.add_argument("--tags", action="append", help="only queries with one of these tags (comma-separated)")
    add_fail_on_argument(test)
    add_evaluation_arguments(test)
    test.add_argument(
        "--format",
        choices=FORMATS,
        default="console",
        help="console (default); json (the results file); github (the action's step log: the report inside "
        "stop-commands, then the annotations as workflow commands); markdown (the job summary); html (one "
        "self-contained page: summary, diff, answers beside the baseline's, tool routes, charts); junit; prometheus",
    )
    test.add_argument(
        "--output",
        help="write the report to this file instead of standard output (with --shard: the shard results file)",
    )
    test.add_argument(
        "--shard",
        help="evaluate only shard INDEX/COUNT (e.g. 2/4) of the queries, chosen by id hash; "
        "writes the shard results JSON to --output and the --format report to standard output",
    )
    test.set_defaults(func=cmd_test)

    run = sub.add_parser("run", help="run the agent (the spec's runner:) on the queries and write their traces")
    add_spec_argument(run, "the spec YAML, with a `runner:`")
    run.add_argument("--output", required=True, help="directory for the traces: <query id>.jsonl, one line per run")
    run.add_argument("--tags", action="append", help="only queries with one of these tags (comma-separated)")
    run.add_argument("--shard", help="only shard INDEX/COUNT of the queries, as `test --shard` selects them")
    run.add_argument("--runs", type=_positive, help="runs per query (default: each query's `runs`, else 1)")
    run.add_argument("--workers", type=_positive, help="runs at the same time (default: runner.workers)")
    run.add_argument("--timeout", type=_seconds, help="seconds per run (default: runner.timeout_s)")
    run.add_argument(
        "--resume", action="store_true", help="keep the runs already in --output that gave a trace; run the rest"
    )
    run.add_argument(
        "--capture",
        choices=("output", "otel"),
        help="where each run's trace comes from (default: runner.capture): the agent's output, or the OpenTelemetry "
        "spans it exports (received on 127.0.0.1; docs/otel-capture.md)",
    )
    run.set_defaults(func=cmd_run)

    merge = sub.add_parser("merge", help="combine shard results files into one run: report and exit code as `test`")
    merge.add_argument(
        "shards", nargs="+", help="[SPEC] then shard results files or globs, e.g. 'results/shard-*.json'"
    )
    merge.add_argument("--spec", dest="spec_option", metavar="SPEC", help="the spec YAML the shards were run with")
    merge.set_defaults(spec_path=None)
    merge.add_argument("--tags", action="append", help="the --tags the shards were run with")
    merge.add_argument("--format", choices=FORMATS, default="console")
    merge.add_argument("--output", help="write the report to this file instead of standard output")
    merge.set_defaults(func=cmd_merge)

    queries = sub.add_parser(
        "queries", help="list the spec's queries as JSON Lines {id, query} (with --shard: that shard's)"
    )
    add_spec_argument(queries)
    queries.add_argument("--tags", action="append", help="only queries with one of these tags (comma-separated)")
    queries.add_argument("--shard", help="only shard INDEX/COUNT, as `test --shard` selects it")
    queries.add_argument("--output", help="write to this file")
    queries.set_defaults(func=cmd_queries)

    save = sub.add_parser("save", help="save traces as a golden baseline version, after a correctness precheck")
    add_spec_argument(save, "the spec YAML (the baseline goes under its baseline_dir)")
    save.add_argument(
        "--traces",
        action="append",
        help="trace file, directory or glob (repeatable); without it the spec's runner: runs the agent first",
    )
    save.add_argument("--record", help="without --traces: keep the agent's traces in this directory")
    save.add_argument("--version", required=True, help="version name, e.g. v2-fixed")
    save.add_argument(
        "--force-save", action="store_true", help="save even when correctness fails (recorded in the metadata)"
    )
    save.add_argument("--overwrite", action="store_true", help="replace an existing version")
    save.add_argument(
        "--trace-format",
        default=None,
        choices=["auto", *TRACE_FORMATS],
        help="trace format (default: detected per file)",
    )
    add_judge_arguments(save)
    save.set_defaults(func=cmd_save)

    baselines = sub.add_parser("baselines", help="list the saved baseline versions")
    add_spec_argument(baselines)
    baselines.set_defaults(func=cmd_baselines)

    diff = sub.add_parser(
        "diff", help="compare two baseline versions: correctness, path and cost per query and in total"
    )
    add_spec_argument(diff)
    diff.add_argument("--baseline", help="the version compared from (with --baseline-ref: as saved at REF)")
    diff.add_argument(
        "--baseline-ref",
        metavar="REF",
        help="read the --baseline version (default: the newest that passed) as saved at this commit",
    )
    diff.add_argument("--compare", required=True, help="the version compared to")
    add_evaluation_arguments(diff)
    add_fail_on_argument(diff)
    diff.add_argument("--format", choices=("console", "json", "markdown", "html"), default="console")
    diff.add_argument("--output", help="write the diff to this file instead of standard output")
    diff.set_defaults(func=cmd_diff)

    schema = sub.add_parser("schema", help="print the spec's JSON Schema")
    schema.add_argument("--output", help="write to this file")
    schema.set_defaults(func=cmd_schema)
    collect = sub.add_parser(
        "collect",
        help="receive an agent's OpenTelemetry spans (OTLP/HTTP on 127.0.0.1) and write them as traces, one file per "
        "query, until Ctrl-C or until the command after -- exits",
    )
    collect.add_argument("--output", required=True, help="directory for the trace files (<query id>.jsonl)")
    collect.add_argument(
        "--port", type=int, default=4318, help="port on 127.0.0.1 (default 4318, OTLP/HTTP's own; 0: any free one)"
    )
    collect.add_argument(
        "--quiet", type=float, default=1.0, help="seconds without new spans before the files are rewritten"
    )
    collect.add_argument("command", nargs=argparse.REMAINDER, help="-- a command to run with the OTEL_* variables set")
    collect.set_defaults(func=cmd_collect)
    init = sub.add_parser("init", help="write a starter spec, an example trace and a GitHub workflow")
    init.add_argument("directory", nargs="?", default=".", help="where to write them (default: here)")
    init.set_defaults(func=cmd_init)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if hasattr(args, "spec_option"):
            args.spec = resolve_spec(args)
        command: Callable[[argparse.Namespace], int] = args.func
        return command(args)
    except AgentCIError as exc:
        for line in str(exc).splitlines():
            print(f"error: {line}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        return EXIT_ERROR


if __name__ == "__main__":
    sys.exit(main())
