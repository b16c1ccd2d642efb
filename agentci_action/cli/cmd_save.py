"""`agentci save`: save traces as a golden baseline version, after the correctness precheck `test` would run."""

from __future__ import annotations

import argparse
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING

from agentci_action._util.errors import EXIT_ERROR, EXIT_FAIL, EXIT_PASS
from agentci_action.cli._arguments import (
    add_judge_arguments,
    add_replay_argument,
    add_spec_argument,
    fail_on_option,
    judge_options,
    replay_option,
    split_list,
)
from agentci_action.cli._reporting import say
from agentci_action.spec.trace_formats import TRACE_FORMATS

if TYPE_CHECKING:  # annotations only: the command imports the stages it needs when it runs
    from agentci_action.spec.models import QuerySpec


def _max_runs(query: QuerySpec) -> int:
    """Without --traces a baseline is recorded at each query's most runs (a range's max).

    Every later verdict against it is only as sure as its runs let it be.
    """
    return query.max_runs


def add_arguments(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("save", help="save traces as a golden baseline version, after a correctness precheck")
    add_spec_argument(parser, "the spec YAML (the baseline goes under its baseline_dir)")
    parser.add_argument(
        "--traces",
        action="append",
        help="trace file, directory or glob (repeatable); without it the spec's runner: runs the agent first",
    )
    parser.add_argument("--record", help="without --traces: keep the agent's traces in this directory")
    parser.add_argument(
        "--tags", action="append", help="only queries with one of these tags (comma-separated): the version holds those"
    )
    add_replay_argument(parser)
    parser.add_argument("--version", required=True, help="version name, e.g. v2-fixed")
    parser.add_argument(
        "--force-save", action="store_true", help="save even when correctness fails (recorded in the metadata)"
    )
    parser.add_argument("--overwrite", action="store_true", help="replace an existing version")
    parser.add_argument(
        "--trace-format",
        default=None,
        choices=["auto", *TRACE_FORMATS],
        help="trace format (default: detected per file)",
    )
    add_judge_arguments(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from agentci_action.compare.baselines import PrecheckFailed, SaveOptions, git_commit, save_baseline
    from agentci_action.engine.evaluate_spec import Settings
    from agentci_action.pipeline.agent_runs import RunPlan, recorded_traces
    from agentci_action.pipeline.judge_wiring import JudgeProgress, configured_judge, trust_at_base
    from agentci_action.spec.loader import load_spec, select_tags
    from agentci_action.spec.models import spec_hash
    from agentci_action.trace.load import load_traces

    whole = load_spec(args.spec)
    tags = split_list(args.tags)
    spec = select_tags(whole, tags) if tags else whole
    with ExitStack() as stack:
        # a range's maximum: the baseline is the side every later verdict leans on
        plan = RunPlan(runs_of=_max_runs, fail_on=fail_on_option(args), environ=args.env, command=True)
        paths = args.traces or [recorded_traces(spec, args.record, replay_option(args), plan, stack)]
        traces = load_traces(paths, args.trace_format, spec.pricing)
    failed = [trace.run_error for trace in traces if trace.run_error]
    if failed:
        for error in failed:
            print(f"error: {error}", file=sys.stderr)
        print(
            f"error: {len(failed)} run(s) of the agent gave no trace, so {args.version!r} was not saved",
            file=sys.stderr,
        )
        return EXIT_ERROR
    options = judge_options(args)
    judge = configured_judge(spec, options)
    if judge is not None and options.caches_at is not None:
        for note in trust_at_base([judge.cache], options.caches_at):
            print(f"warning: {note}", file=sys.stderr)
    progress = JudgeProgress("agentci save", spec, judge, None, workers=Settings().workers)
    try:
        path, baseline, failures = save_baseline(
            spec,
            traces,
            args.version,
            SaveOptions(
                force=args.force_save,
                overwrite=args.overwrite,
                commit=git_commit(Path(args.spec).resolve().parent),
                spec_hash=spec_hash(whole),
            ),
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
        from agentci_action._util.text import unverified_note

        print(f"warning: {unverified_note(baseline.metadata.unverified_checks)}", file=sys.stderr)
    from agentci_action._util.text import plural

    counts = f"{plural(len(baseline.queries), 'query', 'queries')}, {plural(baseline.trace_count, 'trace')}"
    say(f"saved baseline {baseline.version}: {counts}, {precheck} → {path}")
    return EXIT_PASS
