"""AgentCI: regression tests for AI agents in CI.

The Python API: `load_spec(path, tags=None)`, `load_traces(patterns)`,
`judge_for(spec, mode="auto", cache=None)`,
`run_spec(spec, traces=None, agent=None, queries=None, baselines=None, judge=None, settings=Settings())` (without
traces it runs the agent first) and `run_agent(spec, agent=None, runs=None, output=None) -> traces`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ._version import __version__

if TYPE_CHECKING:
    from .engine.judge import LLMJudge
    from .engine.runner import Settings
    from .runner.api import run_agent, run_spec
    from .spec.loader import load_spec
    from .spec.models import AgentCISpec
    from .trace.load import load_traces

_LAZY = {
    "Settings": "engine.runner",
    "run_spec": "runner.api",
    "run_agent": "runner.api",
    "load_spec": "spec.loader",
    "load_traces": "trace.load",
}


def __getattr__(name: str) -> Any:
    """The API's names, imported on first use: `agentci --help` and `validate` need none of the engine."""
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
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
    from .evaluate import JudgeOptions
    from .evaluate import judge_for as build

    return build(
        spec,
        JudgeOptions(
            mode=mode,
            cache=str(cache) if cache is not None else None,
            sample_ensemble=sample_ensemble,
            max_cost_usd=max_cost_usd,
            environ=os.environ if environ is None else environ,
        ),
    )


__all__ = ["Settings", "__version__", "judge_for", "load_spec", "load_traces", "run_agent", "run_spec"]
