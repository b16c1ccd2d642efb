"""AgentCI: regression tests for AI agents in CI.

The Python API: `load_spec(path, tags=None)`, `load_traces(patterns)`,
`judge_for(spec, mode="auto", cache=None)`,
`run_spec(spec, traces=None, agent=None, queries=None, baselines=None, judge=None, settings=Settings())` (without
traces it runs the agent first), `run_agent(spec, agent=None, runs=None, output=None) -> traces`, and
`evaluate(Evaluation(...)) -> Outcome`, the whole evaluation `agentci test` runs (baseline diff and suite gates).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from agentci_action._version import __version__

if TYPE_CHECKING:
    from agentci_action.engine.evaluate_spec import Settings
    from agentci_action.engine.judge import LLMJudge
    from agentci_action.pipeline.evaluation import Evaluation, evaluate
    from agentci_action.pipeline.python_api import run_agent, run_spec
    from agentci_action.pipeline.results_files import Outcome
    from agentci_action.spec.loader import load_spec
    from agentci_action.spec.models import AgentCISpec
    from agentci_action.trace.load import load_traces

_LAZY = {
    "Settings": "agentci_action.engine.evaluate_spec",
    "Evaluation": "agentci_action.pipeline.evaluation",
    "Outcome": "agentci_action.pipeline.results_files",
    "evaluate": "agentci_action.pipeline.evaluation",
    "run_spec": "agentci_action.pipeline.python_api",
    "run_agent": "agentci_action.pipeline.python_api",
    "load_spec": "agentci_action.spec.loader",
    "load_traces": "agentci_action.trace.load",
}


def __getattr__(name: str) -> Any:
    """The API's names, imported on first use: `agentci --help` and `validate` need none of the engine."""
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(_LAZY[name]), name)
    globals()[name] = value
    return value


def judge_for(
    spec: AgentCISpec,
    mode: Literal["auto", "required", "off"] = "auto",
    cache: str | Path | None = None,
    *,
    sample_ensemble: float | None = None,
    max_cost_usd: float | None = None,
    environ: Mapping[str, str] | None = None,
) -> LLMJudge | None:
    """The spec's LLM judge as `agentci test` builds it, for `run_spec(..., judge=...)`; None for mode "off".

    Keys come from `environ` (default: os.environ); verdicts are read from `cache` (default: the
    .agentci/judge-cache.json beside the spec), so cached verdicts need no key. Verdicts fetched anew stay
    in memory until `judge.cache.save()`. Without a key or a cached verdict a judge check is `skip`.
    `max_cost_usd` caps the judge's spend beside the spec's judge_config.max_cost_usd (the lower cap holds).
    """
    from agentci_action.pipeline.judge_wiring import JudgeOptions, configured_judge

    return configured_judge(
        spec,
        JudgeOptions(
            mode=mode,
            cache=str(cache) if cache is not None else None,
            sample_ensemble=sample_ensemble,
            max_cost_usd=max_cost_usd,
            environ=os.environ if environ is None else environ,
        ),
    )


__all__ = [
    "Evaluation",
    "Outcome",
    "Settings",
    "__version__",
    "evaluate",
    "judge_for",
    "load_spec",
    "load_traces",
    "run_agent",
    "run_spec",
]
