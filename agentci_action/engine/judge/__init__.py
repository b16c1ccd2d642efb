"""The LLM judge behind the engine's `Judge` protocol: Anthropic and OpenAI, a verdict cache, ensembles.

`build_judge` turns the spec's judge_config and the command line's choices into a judge (or None
for judge-mode off). Keys are read from the mapping it is given, never printed.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from agentci_action.engine.judge.cache import VerdictCache
from agentci_action.engine.judge.llm import LLMJudge
from agentci_action.model_access.keys import base_urls_from_environment, keys_from_environment
from agentci_action.model_access.spend import SpendCap
from agentci_action.spec.models import JudgeConfig, ModelPrice

JUDGE_MODES = ("auto", "required", "off")


def build_judge(
    config: JudgeConfig | None,
    environ: Mapping[str, str],
    *,
    cache_path: str | Path | None = None,
    mode: Literal["auto", "required", "off"] = "auto",
    sample_ensemble: float | None = None,
    max_cost_usd: float | None = None,
    pricing: Mapping[str, ModelPrice] | None = None,
    spend: SpendCap | None = None,
) -> LLMJudge | None:
    """A judge for the spec (judge_config's defaults when it has none), or None when mode is off.

    `sample_ensemble` F runs judge_config.ensemble's models on a fixed, hash-chosen share F of the checks
    (enabled or not); None leaves it to `ensemble.enabled` (every check or none). The judge's own calls
    are priced like the agent's: the spec's `pricing:` first, then the bundled table. `max_cost_usd` caps the
    judge's spend in the run beside judge_config.max_cost_usd: the lower cap holds; `spend`, a cap already counting
    other calls (the simulated users'), is used instead.
    """
    if mode == "off":
        return None
    if sample_ensemble is not None and not 0.0 <= sample_ensemble <= 1.0:
        raise ValueError(f"sample-ensemble must be a fraction between 0 and 1, got {sample_ensemble}")
    return LLMJudge(
        config=config or JudgeConfig(),
        api_keys=keys_from_environment(environ),
        base_urls=base_urls_from_environment(environ),
        cache=VerdictCache(cache_path),
        mode=mode,
        sample_ensemble=sample_ensemble,
        max_cost_usd=max_cost_usd,
        pricing=pricing or {},
        spend=spend,
    )


__all__ = ["JUDGE_MODES", "LLMJudge", "VerdictCache", "build_judge"]
