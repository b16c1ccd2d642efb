"""The simulated users of a run, composed here because the stage that runs the agent may not import the engine.

The simulator (run/user_simulator.py) through a judge built from the spec's judge_config and the keys in the
environment, handed to `run_agent` as a callable (trace/simulated_user.py's NextUser).

One spend cap counts AgentCI's own model calls in a command: the simulated users' and then the judge's
(judge_config.max_cost_usd / --judge-max-cost-usd, the lower). `shared_spend` makes it once and puts it in the judge
options both use, so the users spend first and the judge gets what is left.
"""

from __future__ import annotations

from dataclasses import replace

from agentci_action.engine.judge import build_judge
from agentci_action.model_access.spend import spend_cap_for
from agentci_action.pipeline.judge_wiring import JudgeOptions
from agentci_action.run.user_simulator import UserSimulator
from agentci_action.spec.models import AgentCISpec
from agentci_action.trace.simulated_user import NextUser


def shared_spend(spec: AgentCISpec, options: JudgeOptions) -> JudgeOptions:
    """`options` with the command's one spend cap (kept when it has one already)."""
    if options.spend is not None:
        return options
    return replace(options, spend=spend_cap_for(spec.judge_config, options.max_cost_usd))


def simulated_user_for(spec: AgentCISpec, options: JudgeOptions) -> NextUser | None:
    """The simulator playing the spec's simulated users; None when no query has a simulated user.

    Its keys come from `options.environ`, its spend is counted against `options.spend`, else the spec's cap.
    """
    if not any(query.simulated_user is not None for query in spec.queries):
        return None
    options = shared_spend(spec, options)
    judge = build_judge(
        spec.judge_config,
        options.environ,
        max_cost_usd=options.max_cost_usd,
        pricing=spec.pricing,
        spend=options.spend,
    )
    assert judge is not None, "build_judge in mode auto returns a judge"
    return UserSimulator(judge).reply
