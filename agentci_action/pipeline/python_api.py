"""The Python API's two calls that may run the agent.

`run_agent` for traces, and `run_spec`, which evaluates traces (and runs the agent first when given none).
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentci_action.compare.suite_gates import with_gates
from agentci_action.engine.evaluate_spec import DEFAULT_FAIL_ON, Settings, evaluate_spec
from agentci_action.pipeline.agent_runs import RunPlan, run_queries
from agentci_action.pipeline.shard import select_shard
from agentci_action.run.execute import RunOptions
from agentci_action.spec.replay_modes import replay_override

if TYPE_CHECKING:
    from agentci_action.engine.results import RunResult
    from agentci_action.spec.models import AgentCISpec, QuerySpec
    from agentci_action.trace.canonical import Trace


def run_agent(
    spec: AgentCISpec,
    agent: Callable[..., Any] | None = None,
    *,
    queries: list[QuerySpec] | None = None,
    runs: int | None = None,
    workers: int | None = None,
    timeout_s: float | None = None,
    output: str | Path | None = None,
    replay: str | None = None,
    fail_on: frozenset[str] = DEFAULT_FAIL_ON,
) -> list[Trace]:
    """Run the agent on `queries` (default: the spec's) as `agentci run` does and return every run's trace.

    In query and run order; a run that gave no trace is an error record (`trace.run_error`), evaluated as an error.

    `agent` is a callable used instead of the spec's `runner:` (as `python:` would call it: the query, and id, run,
    tags, metadata, and a conversation turn's turn, history and session_id when it names them; sync or async). The
    traces are also written to `output` when given. `replay` is `agentci run --replay`: a mode (replay, record,
    record-missing) or off, instead of runner.replay's. Simulated users are replayed from their recordings, else
    played through the spec's judge_config with the keys in the environment. `fail_on` (pipeline.blocking's
    parse_fail_on set) says which failing turn blocks, where a conversation's stop_on_failure ends it.
    """
    with tempfile.TemporaryDirectory(prefix="agentci-traces-") as scratch:
        options = RunOptions(
            Path(output or scratch), runs=runs, workers=workers, timeout_s=timeout_s, replay=replay_override(replay)
        )
        return run_queries(spec, options, RunPlan(fail_on=fail_on), queries=queries, agent=agent).traces


def run_spec(
    spec: AgentCISpec,
    traces: list[Trace] | None = None,
    *,
    agent: Callable[..., Any] | None = None,
    queries: list[QuerySpec] | None = None,
    **evaluation: Any,
) -> RunResult:
    """Evaluate `queries` against `traces`; without traces, run the agent first (`agent`, else the spec's runner).

    Other keyword arguments are the engine's: baselines, judge, embedder, settings (its fail_on also ends a conversation
    under stop_on_failure where the evaluation will block), shard. Over the whole suite (no `queries`, no shard) the
    spec's `suite:` gates are judged too; those comparing with a baseline run (max_cost_multiplier, max_regressions)
    need `agentci_action.evaluate` and are skipped here.
    """
    whole = queries is None and evaluation.get("shard") is None
    if evaluation.get("shard") is not None:
        queries = select_shard(queries if queries is not None else spec.queries, evaluation["shard"])
    if traces is None:
        settings: Settings = evaluation.get("settings") or Settings()
        traces = run_agent(spec, agent, queries=queries, fail_on=settings.fail_on)
    run = evaluate_spec(spec, traces, queries=queries, **evaluation)
    if whole:  # the whole suite: its gates (none that need a baseline)
        with_gates(run, spec.suite)
    return run
