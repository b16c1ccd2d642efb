"""Running the agent on a loaded spec, composed once for `run`, `test`, `save` and the Python API.

The queries selected (a shard of them, the runs each gets), the simulated users played through the judge, and a
conversation under stop_on_failure ended at the turn that blocks under fail-on. Without --traces, `test` and `save` run
it into a directory and evaluate what it wrote; adaptive runs' next batches resume there. `run` takes the same batches
(runs_until_decided), so the traces it hands to the action are the runs `test` would have taken.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Callable, Mapping
from contextlib import ExitStack, nullcontext
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

from agentci_action.compare.baselines import list_headers
from agentci_action.engine.evaluate_spec import DEFAULT_FAIL_ON, turn_stops
from agentci_action.engine.results import ShardInfo
from agentci_action.pipeline.evaluation import NO_BASELINE, Evaluation, MoreRuns, evaluate
from agentci_action.pipeline.judge_wiring import JudgeOptions
from agentci_action.pipeline.shard import select_shard
from agentci_action.pipeline.simulated_users import simulated_user_for
from agentci_action.run.execute import AgentRun, RunOptions, RunSetup, run_agent, terminate_on_sigterm
from agentci_action.spec.models import AgentCISpec, QuerySpec
from agentci_action.spec.replay_modes import ReplayOverride


@dataclass(frozen=True)
class RunPlan:
    """Which runs of which queries, beyond `RunOptions`: only the `shard`'s queries.

    `runs_of` gives a query's runs instead of its `runs:` (None leaves the query out); a conversation under
    stop_on_failure ends at the turn that blocks under `fail_on`; simulated users are played through the judge
    `judge` describes (None: the spec's, keys from `environ`). The agent inherits `environ` (None: this process's). A
    `command`'s run prints its summary on stderr, and SIGTERM stops it as Ctrl-C does.
    """

    shard: ShardInfo | None = None
    runs_of: Callable[[QuerySpec], int | None] | None = None
    fail_on: frozenset[str] = DEFAULT_FAIL_ON
    judge: JudgeOptions | None = None
    environ: Mapping[str, str] | None = None
    command: bool = False


def run_queries(
    spec: AgentCISpec,
    options: RunOptions,
    plan: RunPlan,
    *,
    queries: list[QuerySpec] | None = None,
    agent: Callable[..., Any] | None = None,
) -> AgentRun:
    """The agent (the spec's runner, else `agent`) on `queries` (default: the spec's) as `plan` selects them."""
    selected = queries if queries is not None else spec.queries
    selected = select_shard(selected, plan.shard) if plan.shard else selected
    if plan.runs_of is not None:
        runs_of = plan.runs_of
        selected = [q.model_copy(update={"runs": runs}) for q in selected if (runs := runs_of(q)) is not None]
    users = None
    if any(query.simulated_user is not None for query in selected):  # the judge's stack, only when it plays a user
        users = simulated_user_for(spec, plan.judge or JudgeOptions(environ=plan.environ or os.environ))
    stop_after = partial(turn_stops, fail_on=plan.fail_on)
    with terminate_on_sigterm() if plan.command else nullcontext():
        setup = RunSetup(
            queries=selected, agent=agent, environ=plan.environ, stop_after=stop_after, simulated_user=users
        )
        outcome = run_agent(spec, options, setup)
    if plan.command:
        print(outcome.summary(options.output), file=sys.stderr)
    return outcome


def recorded_traces(
    spec: AgentCISpec, record: str | None, replay: ReplayOverride, plan: RunPlan, stack: ExitStack
) -> str:
    """The directory holding the traces to evaluate: the agent run into it.

    Into `record`, else a temporary directory `stack` removes; its model calls answered as `replay` (--replay) says.
    """
    directory = record or stack.enter_context(tempfile.TemporaryDirectory(prefix="agentci-traces-"))
    run_queries(spec, RunOptions(Path(directory), replay=replay), plan)
    return directory


def more_runs_into(
    spec: AgentCISpec, options: RunOptions, plan: RunPlan, outcomes: list[AgentRun] | None = None
) -> MoreRuns:
    """Adaptive runs' next batch: the named queries run until each has its target, the runs in `options.output` kept.

    Each batch's outcome is appended to `outcomes` when given.
    """

    def more(targets: dict[str, int]) -> None:
        outcome = run_queries(spec, replace(options, resume=True), replace(plan, runs_of=lambda q: targets.get(q.key)))
        if outcomes is not None:
            outcomes.append(outcome)

    return more


def adaptive(spec: AgentCISpec, options: RunOptions, evaluation: Evaluation) -> bool:
    """Whether adaptive runs may add batches.

    Some query has a range (`runs: {min, max}`), no fixed --runs, and a baseline to compare with: one at a base commit,
    or a saved version unless the baseline is "none" (without one `test` runs each range's minimum, and nothing need be
    evaluated).
    """
    ranged = options.runs is None and any(query.run_plan is not None for query in spec.queries)
    if evaluation.baseline_ref is not None:
        return ranged
    return ranged and (evaluation.baseline or "").lower() != NO_BASELINE and bool(list_headers(spec))


def runs_until_decided(spec: AgentCISpec, options: RunOptions, plan: RunPlan, evaluation: Evaluation) -> list[AgentRun]:
    """`agentci run`: the agent into `options.output`, then the batches adaptive runs give it, as `agentci test` does.

    With a range to use (`adaptive`), the traces written are evaluated as `evaluation` says (its baseline, tags, judge
    and fail-on) and the queries still undecided get their next batch, the evaluation loop of `agentci test` itself;
    its verdicts are the action's to report. Without a baseline the minimum alone is run, as `test` runs it. Every
    batch's outcome, in order.
    """
    outcomes = [run_queries(spec, options, plan)]
    if adaptive(spec, options, evaluation):
        evaluate(evaluation, more_runs_into(spec, options, plan, outcomes))
    return outcomes
