"""`agentci run`: run the agent (the spec's `runner:`) on the selected queries and write their traces; `test` and
`save` run it the same way when given no --traces."""

from __future__ import annotations

import sys
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING

from agentci_action._util.errors import EXIT_ERROR, EXIT_FAIL, EXIT_PASS
from agentci_action.cli._arguments import (
    add_fail_on_argument,
    add_replay_argument,
    add_spec_argument,
    fail_on_option,
    positive,
    seconds,
    shard_option,
    split_list,
)

if TYPE_CHECKING:  # annotations only: each command imports the stages it needs when it runs
    from collections.abc import Callable, Mapping

    from agentci_action.engine.results import ShardInfo
    from agentci_action.pipeline.evaluation import JudgeOptions, MoreRuns
    from agentci_action.run.execute import AgentRun, RunOptions
    from agentci_action.spec.models import QuerySpec

import argparse


def add_arguments(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("run", help="run the agent (the spec's runner:) on the queries and write their traces")
    add_spec_argument(parser, "the spec YAML, with a `runner:`")
    parser.add_argument("--output", required=True, help="directory for the traces: <query id>.jsonl, one line per run")
    parser.add_argument("--tags", action="append", help="only queries with one of these tags (comma-separated)")
    parser.add_argument("--shard", help="only shard INDEX/COUNT of the queries, as `test --shard` selects them")
    parser.add_argument(
        "--runs", type=positive, help="runs per query (default: each query's `runs`, a range's minimum, else 1)"
    )
    parser.add_argument("--workers", type=positive, help="runs at the same time (default: runner.workers)")
    parser.add_argument("--timeout", type=seconds, help="seconds per run (default: runner.timeout_s)")
    parser.add_argument(
        "--resume", action="store_true", help="keep the runs already in --output that gave a trace; run the rest"
    )
    parser.add_argument(
        "--capture",
        choices=("output", "otel"),
        help="where each run's trace comes from (default: runner.capture): the agent's output, or the OpenTelemetry "
        "spans it exports (received on 127.0.0.1; docs/otel-capture.md)",
    )
    add_replay_argument(parser)
    add_fail_on_argument(
        parser, "what blocks a conversation's turn under stop_on_failure, as `test --fail-on` judges it"
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the agent on the selected queries and write their traces: 0 every run gave a trace, 1 the agent
    failed on some (crashed, printed no trace), 2 some failed for infrastructure reasons after their retries."""
    from agentci_action.run import RunOptions

    options = RunOptions(
        Path(args.output), args.runs, args.workers, args.timeout, args.resume, args.capture, args.replay
    )
    outcome = run_the_agent(
        args.spec, split_list(args.tags), shard_option(args.shard), options, fail_on_option(args), args.env
    )
    return EXIT_ERROR if outcome.infra else EXIT_FAIL if outcome.failed else EXIT_PASS


def run_the_agent(
    spec_path: str,
    tags: list[str],
    shard: ShardInfo | None,
    options: RunOptions,
    fail_on: frozenset[str],
    env: Mapping[str, str],
    runs_of: Callable[[QuerySpec], int | None] | None = None,
    judge: JudgeOptions | None = None,
) -> AgentRun:
    """The spec's runner on the selected queries (tags, then shard), progress and summary on stderr; a
    conversation under stop_on_failure ends at the turn that blocks under `fail_on`. `runs_of` gives a query's runs
    instead of its `runs:` (the minimum of a range), None to leave it out. Simulated users are played through the
    judge `judge` describes (default: the spec's, keys from `env`, the environment the agent inherits)."""
    from functools import partial

    from agentci_action.engine.evaluate_spec import turn_stops
    from agentci_action.engine.shard import select_shard
    from agentci_action.run import run_agent
    from agentci_action.run.execute import terminate_on_sigterm
    from agentci_action.spec.loader import load_spec

    spec = load_spec(spec_path, tags=tags or None)
    queries = select_shard(spec.queries, shard) if shard else spec.queries
    if runs_of is not None:
        queries = [q.model_copy(update={"runs": runs}) for q in queries if (runs := runs_of(q)) is not None]
    users = None
    if any(query.simulated_user is not None for query in queries):  # the judge's stack, only when it plays a user
        from agentci_action.pipeline.evaluation import JudgeOptions
        from agentci_action.pipeline.simulated_users import simulated_user_for

        users = simulated_user_for(spec, judge or JudgeOptions(environ=env))
    with terminate_on_sigterm():
        outcome = run_agent(
            spec,
            options,
            queries=queries,
            environ=env,
            stop_after=partial(turn_stops, fail_on=fail_on),
            simulated_user=users,
        )
    print(outcome.summary(options.output), file=sys.stderr)
    return outcome


def traces_to_evaluate(
    args: argparse.Namespace,
    stack: ExitStack,
    shard: ShardInfo | None = None,
    runs_of: Callable[[QuerySpec], int | None] | None = None,
    judge: JudgeOptions | None = None,
) -> list[str]:
    """--traces as given; without them the spec's runner runs the agent first (each query's `runs`, the minimum of a
    range, or `runs_of`), into --record DIR (else a temporary directory), and those traces are evaluated (a
    conversation's stop_on_failure judged with the command's --fail-on). A spec without a runner needs --traces."""
    traces: list[str] | None = args.traces  # append: None when not given
    if traces:
        return traces
    import tempfile

    from agentci_action.run import RunOptions

    record = args.record or stack.enter_context(tempfile.TemporaryDirectory(prefix="agentci-traces-"))
    options = RunOptions(Path(record), replay=args.replay)
    tags = split_list(getattr(args, "tags", None))
    run_the_agent(args.spec, tags, shard, options, fail_on_option(args), args.env, runs_of, judge)
    return [record]


def more_runs_into(
    spec_path: str,
    tags: list[str],
    shard: ShardInfo | None,
    record: str,
    fail_on: frozenset[str],
    env: Mapping[str, str],
    replay: str | None = None,
    judge: JudgeOptions | None = None,
) -> MoreRuns:
    """Adaptive runs' next batch: the named queries run until each has its target, the runs in `record` kept (the
    model calls answered as `replay`, `--replay`, says; simulated users played through `judge`; stop_on_failure
    judged with `fail_on`; the agent inheriting `env`)."""
    from agentci_action.run import RunOptions

    def more(targets: dict[str, int]) -> None:
        options = RunOptions(Path(record), resume=True, replay=replay)
        run_the_agent(spec_path, tags, shard, options, fail_on, env, lambda q: targets.get(q.key), judge)

    return more
