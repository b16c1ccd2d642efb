"""`agentci diff`: compare two saved baseline versions, per query and in total, in three tiers."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentci_action._util.errors import EXIT_FAIL, EXIT_PASS, SpecError
from agentci_action.cli._arguments import (
    add_evaluation_arguments,
    add_fail_on_argument,
    add_spec_argument,
    base_ref_option,
    fail_on_option,
    judge_options,
)
from agentci_action.cli._reporting import warn, write_report

if TYPE_CHECKING:  # annotations only: each command imports the stages it needs when it runs
    from agentci_action.compare.diff_schema import RunDiff
    from agentci_action.engine.results import RunResult

import argparse


def add_arguments(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "diff",
        help="compare two baseline versions: correctness, path and cost per query and in total; the exit code as "
        "`test` would give the compared version against the other",
    )
    add_spec_argument(parser)
    parser.add_argument("--baseline", help="the version compared from (with --baseline-ref: as saved at REF)")
    parser.add_argument(
        "--baseline-ref",
        metavar="REF",
        help="read the --baseline version (default: the newest that passed) as saved at this commit",
    )
    parser.add_argument("--compare", required=True, help="the version compared to")
    add_evaluation_arguments(parser)
    add_fail_on_argument(parser)
    parser.add_argument("--format", choices=("console", "json", "markdown", "html"), default="console")
    parser.add_argument("--output", help="write the diff to this file instead of standard output")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from agentci_action.engine.evaluate_spec import Settings
    from agentci_action.pipeline.blocking import exit_code
    from agentci_action.pipeline.evaluation import VersionComparison, compare_versions

    if not args.baseline and not args.baseline_ref:
        raise SpecError.at("--baseline", 0, "name the version compared from (--baseline V), or --baseline-ref REF")

    outcome = compare_versions(
        VersionComparison(
            spec=args.spec,
            baseline=args.baseline,
            compare=args.compare,
            judge=judge_options(args),
            embedding_cache=args.embedding_cache,
            settings=Settings(fail_on=fail_on_option(args), workers=args.workers),
            baseline_ref=base_ref_option(args),
            progress="agentci diff",
        )
    )
    diff = outcome.diff
    assert diff is not None
    if args.format not in ("console", "html"):
        warn(diff.warnings)
    write_report(render_diff(args.format, outcome.run, diff), args.format, args.output, args.env)
    # the compared version judged as `agentci test` would judge it, or a diff gate that blocks
    return max(exit_code(outcome.run), EXIT_FAIL if any(g.blocking for g in diff.gates) else EXIT_PASS)


def render_diff(fmt: str, run: RunResult, diff: RunDiff) -> str:
    """The diff of two versions in `fmt`; html is the page `test --format html` writes, for the compared version."""
    from agentci_action.report import diff_console, diff_markdown, html, results_json

    if fmt == "html":
        return html.render_html(run, diff)
    return {
        "console": diff_console.render_diff,
        "json": results_json.render_diff,
        "markdown": diff_markdown.render_markdown,
    }[fmt](diff)
