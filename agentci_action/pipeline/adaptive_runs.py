"""Adaptive runs (`runs: {min, max, batch}`): after each round, which queries get more runs, and how many.

A query with a range gets its next batch (the next look of its plan) while its verdict against the baseline is
undecided whatever the other queries show (compare/pass_verdicts.undecided: not regressed or improved at the
Bonferroni bar, not unchanged) and it is below its maximum. No batch starts once the agent's runs so far cost
`runner.max_cost_usd`, or once the judge's spend cap is reached (later runs could not be judged): the queries left
undecided stay inconclusive, and a warning says why.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from agentci_action._util.text import plural, usd
from agentci_action.compare.diff_schema import RunDiff
from agentci_action.compare.pass_verdicts import undecided
from agentci_action.engine.results import RunResult
from agentci_action.spec.models import AgentCISpec


@dataclass
class NextRuns:
    """The runs each query should reach next (query id → runs), and why adaptive runs stopped early, if they did."""

    targets: dict[str, int] = field(default_factory=dict)
    stopped: str = ""


def next_runs(spec: AgentCISpec, run: RunResult, diff: RunDiff, judge_spent: bool = False) -> NextRuns:
    """The next round of adaptive runs for `run` (the queries it evaluated, with `spec`'s plans) given its `diff`.

    The Bonferroni bar counts every query of `spec`, so a shard stops a query only where the whole suite would.
    """
    queries = {q.key: q for q in spec.queries}
    verdicts = {q.id: q.pass_rate for q in diff.queries if q.pass_rate is not None}
    targets = {}
    for result in run.results:
        query, verdict = queries.get(result.id), verdicts.get(result.id)
        plan = query.run_plan if query else None
        if plan is None or verdict is None or result.runs >= plan[-1]:
            continue
        if undecided(verdict, diff.significance, len(spec.queries)):
            targets[result.id] = next(look for look in plan if look > result.runs)
    if not targets:
        return NextRuns()
    left = f"{plural(len(targets), 'query', 'queries')} left undecided"
    cap = spec.runner.max_cost_usd if spec.runner else None
    if cap is not None and run.summary.cost_usd >= cap:
        return NextRuns(
            stopped=f"adaptive runs stopped: the agent's runs cost {usd(run.summary.cost_usd)}, at runner.max_cost_usd "
            f"{usd(cap)}; {left}"
        )
    if judge_spent:
        return NextRuns(stopped=f"adaptive runs stopped: the judge's spend cap is reached; {left}")
    return NextRuns(targets=targets)
