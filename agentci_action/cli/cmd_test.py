"""`agentci test`: evaluate traces against a spec (the whole suite or one shard), against the baseline.

Without --traces the spec's runner runs the agent first, and adaptive runs (`runs: {min, max}`) give the queries still
undecided against the baseline more runs. The engine is imported when the command runs, not when the parser is built.
"""

from __future__ import annotations

import argparse
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING

from agentci_action._util.errors import SpecError
from agentci_action.cli._arguments import (
    FORMATS,
    add_baseline_ref_argument,
    add_evaluation_arguments,
    add_fail_on_argument,
    add_replay_argument,
    add_spec_argument,
    base_ref_option,
    fail_on_option,
    judge_options,
    replay_option,
    shard_option,
    split_list,
)
from agentci_action.cli._reporting import render, report_outcome, write_output, write_report
from agentci_action.spec.trace_formats import TRACE_FORMATS

if TYPE_CHECKING:
    from agentci_action.compare.history import Trend
    from agentci_action.engine.results import RunResult


def add_arguments(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("test", help="evaluate traces against a spec")
    add_spec_argument(parser)
    parser.add_argument(
        "--traces",
        action="append",
        help="trace file, directory or glob (repeatable); without it the spec's runner: runs the agent first",
    )
    parser.add_argument("--record", help="without --traces: keep the agent's traces in this directory")
    add_replay_argument(parser)
    parser.add_argument(
        "--baseline",
        help="saved baseline version to compare with (default: the newest whose precheck passed; 'none': no baseline)",
    )
    add_baseline_ref_argument(parser)
    parser.add_argument(
        "--baseline-traces",
        action="append",
        help="accepted traces to compare with instead of a saved version "
        "(sequence similarity, match mode, cost multiplier); up to 5 per query are variants, and the closest is used",
    )
    parser.add_argument(
        "--trace-format",
        default=None,
        choices=["auto", *TRACE_FORMATS],
        help="trace format (default: detected per file)",
    )
    parser.add_argument("--tags", action="append", help="only queries with one of these tags (comma-separated)")
    add_fail_on_argument(parser)
    add_evaluation_arguments(parser)
    parser.add_argument(
        "--format",
        choices=FORMATS,
        default="console",
        help="console (default); json (the results file); github (the action's step log: the report inside "
        "stop-commands, then the annotations as workflow commands); markdown (the job summary); html (one "
        "self-contained page: summary, diff, answers beside the baseline's, tool routes, charts); junit; prometheus",
    )
    parser.add_argument(
        "--output",
        help="write the report to this file instead of standard output (with --shard: the shard results file)",
    )
    parser.add_argument(
        "--history",
        metavar="BRANCH|FILE",
        help="show the trend of the runs on the default branch beside this run, with an alert when it leaves a "
        "figure's band: the history kept on this branch of the repository (e.g. agentci-history; also origin's) or "
        "in this JSON Lines file (`agentci history`)",
    )
    parser.add_argument(
        "--history-series", default="agentci", help="the series on the history branch (default: agentci)"
    )
    parser.add_argument(
        "--shard",
        help="evaluate only shard INDEX/COUNT (e.g. 2/4) of the queries, chosen by id hash; "
        "writes the shard results JSON to --output and the --format report to standard output",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from agentci_action.engine.evaluate_spec import Settings
    from agentci_action.pipeline.agent_runs import RunPlan, more_runs_into, recorded_traces
    from agentci_action.pipeline.evaluation import Evaluation, evaluate
    from agentci_action.pipeline.simulated_users import shared_spend
    from agentci_action.run import RunOptions
    from agentci_action.spec.loader import load_spec, select_tags

    fail_on = fail_on_option(args)
    shard = shard_option(args.shard)
    if shard and not args.output:
        raise SpecError.at(
            "--shard", 0, "a shard writes its results file to --output, e.g. --output results/shard-2.json"
        )
    judge = judge_options(args)
    whole = load_spec(args.spec)  # once: the agent runs on the tagged queries, the evaluation needs every query
    if not args.traces:  # the agent runs first: its simulated users and the judge spend under one cap
        judge = shared_spend(whole, judge)
    with ExitStack() as stack:
        traces, more = args.traces, None
        if not traces:  # adaptive runs (`runs: {min, max}`) may give undecided queries more runs into the same place
            tags = split_list(args.tags)
            spec = select_tags(whole, tags) if tags else whole
            plan = RunPlan(shard=shard, fail_on=fail_on, judge=judge, environ=args.env, command=True)
            traces = [recorded_traces(spec, args.record, replay_option(args), plan, stack)]
            more = more_runs_into(spec, RunOptions(Path(traces[0]), replay=replay_option(args)), plan)
        outcome = evaluate(
            Evaluation(
                spec=whole,
                traces=traces,
                baseline=args.baseline,
                baseline_traces=args.baseline_traces or [],
                trace_format=args.trace_format,
                tags=split_list(args.tags),
                embedding_cache=args.embedding_cache,
                settings=Settings(fail_on=fail_on, workers=args.workers),
                shard=shard,
                judge=judge,
                baseline_ref=base_ref_option(args),
                recordings_at=base_ref_option(args),
                goldens_at=base_ref_option(args),
                progress="agentci test",
            ),
            more,
        )
    run = outcome.run
    if shard:  # --output takes the shard results file; the report goes to standard output
        from agentci_action.pipeline.blocking import exit_code
        from agentci_action.report import results_json

        # the merge judges the gates from the diff, and lists the recordings and goldens the PR changed
        write_output(results_json.chunks(run, outcome.diff, outcome.recordings, outcome.goldens), args.output)
        write_report(render(args.format, run, args.env), args.format, None, args.env)
        return exit_code(run)
    return report_outcome(outcome, args, trend_of(args, run))


def trend_of(args: argparse.Namespace, run: RunResult) -> Trend | None:
    """The trend of `run`'s spec on the default branch, from --history; None without it."""
    if not args.history:
        return None
    from agentci_action.cli._reporting import warn
    from agentci_action.compare.history import read_entries, series_entries, trend
    from agentci_action.compare.history_git import history_text

    text, where = history_text(args.history, series=args.history_series)
    return trend(series_entries(read_entries(text, where, lambda note: warn([note])), run.spec), run)
