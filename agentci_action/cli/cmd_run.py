"""`agentci run`: run the agent (the spec's `runner:`) on the selected queries and write their traces.

`test` and `save` run it the same way (pipeline/agent_runs.py) when given no --traces. Queries with a range of runs
(`runs: {min, max}`) take the batches `test` would give them against the baseline, so the traces handed to the action
are the runs the terminal would have decided on.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from agentci_action._util.errors import EXIT_ERROR, EXIT_FAIL, EXIT_PASS
from agentci_action.cli._arguments import (
    add_baseline_ref_argument,
    add_fail_on_argument,
    add_replay_argument,
    add_spec_argument,
    base_ref_option,
    fail_on_option,
    positive,
    replay_option,
    seconds,
    shard_option,
    split_list,
)


def add_arguments(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("run", help="run the agent (the spec's runner:) on the queries and write their traces")
    add_spec_argument(parser, "the spec YAML, with a `runner:`")
    parser.add_argument("--output", required=True, help="directory for the traces: <query id>.jsonl, one line per run")
    parser.add_argument("--tags", action="append", help="only queries with one of these tags (comma-separated)")
    parser.add_argument("--shard", help="only shard INDEX/COUNT of the queries, as `test --shard` selects them")
    parser.add_argument(
        "--runs",
        type=positive,
        help="runs per query (default: each query's `runs`, else 1; a range's minimum, then more runs of the queries "
        "still undecided against the baseline, up to its maximum, as `agentci test` takes them)",
    )
    parser.add_argument(
        "--baseline",
        help="the saved baseline version adaptive runs compare with, as `test --baseline` (default: the newest whose "
        "precheck passed; 'none': each range's minimum only)",
    )
    add_baseline_ref_argument(parser)
    parser.add_argument("--workers", type=positive, help="runs at the same time (default: runner.workers)")
    parser.add_argument("--timeout", type=seconds, help="seconds per run (default: runner.timeout_s)")
    parser.add_argument(
        "--resume", action="store_true", help="keep the runs already in --output that gave a trace; run the rest"
    )
    parser.add_argument(
        "--capture",
        choices=("output", "otel"),
        help="where each run's trace comes from (default: runner.capture): the agent's output, or the OpenTelemetry "
        "spans it exports (received on 127.0.0.1; docs/guides/otel-capture.md)",
    )
    add_replay_argument(parser)
    parser.add_argument(
        "--agent-python",
        metavar="PYTHON",
        help="the Python that runs a `python:` runner's function, where the agent's packages are installed (default: "
        "the one running agentci); the run action gives its `python` input",
    )
    add_fail_on_argument(
        parser, "what blocks a conversation's turn under stop_on_failure, as `test --fail-on` judges it"
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the agent on the selected queries and write their traces.

    0 every run gave a trace, 1 the agent failed on some (crashed, printed no trace), 2 some failed for infrastructure
    reasons after their retries.
    """
    from agentci_action.engine.evaluate_spec import Settings
    from agentci_action.pipeline.agent_runs import RunPlan, runs_until_decided
    from agentci_action.pipeline.evaluation import Evaluation
    from agentci_action.pipeline.judge_wiring import JudgeOptions
    from agentci_action.run import RunOptions
    from agentci_action.spec.loader import load_spec, select_tags

    options = RunOptions(
        Path(args.output),
        args.runs,
        args.workers,
        args.timeout,
        args.resume,
        args.capture,
        replay_option(args),
        interpreter=args.agent_python,
    )
    tags, fail_on, shard = split_list(args.tags), fail_on_option(args), shard_option(args.shard)
    whole = load_spec(args.spec)  # the evaluation of adaptive runs needs every query, the agent runs the tagged ones
    spec = select_tags(whole, tags) if tags else whole
    judge = JudgeOptions(environ=args.env)
    plan = RunPlan(shard=shard, fail_on=fail_on, judge=judge, environ=args.env, command=True)
    evaluation = Evaluation(
        spec=whole,
        traces=[args.output],
        baseline=args.baseline,
        baseline_ref=base_ref_option(args),
        tags=tags,
        settings=Settings(fail_on=fail_on),
        shard=shard,
        judge=judge,
    )
    outcomes = runs_until_decided(spec, options, plan, evaluation)
    return EXIT_ERROR if any(o.infra for o in outcomes) else EXIT_FAIL if any(o.failed for o in outcomes) else EXIT_PASS
