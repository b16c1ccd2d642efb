"""One evaluation, as both the CLI and the action run it: spec + traces (+ baselines) → RunResult.

The edges (cli.py, action.py) turn their arguments or inputs into an `Evaluation` and publish the
result; everything between reading the files and the RunResult happens here, once.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from .engine.results import RunResult
from .engine.runner import Settings


@dataclass(frozen=True)
class JudgeOptions:
    """How the LLM judge runs: `environ` is where its keys are read (ANTHROPIC_API_KEY, OPENAI_API_KEY)."""

    mode: Literal["auto", "required", "off"] = "auto"
    cache: str | None = None  # verdict cache file; default .agentci/judge-cache.json beside the spec
    sample_ensemble: float = 1.0
    environ: Mapping[str, str] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class Evaluation:
    """What to evaluate; paths as the user gave them (files, directories or globs)."""

    spec: str
    traces: list[str]
    baseline_traces: list[str] = field(default_factory=list)
    trace_format: str | None = None
    tags: list[str] = field(default_factory=list)
    settings: Settings = Settings()
    judge: JudgeOptions = JudgeOptions()


def evaluate(request: Evaluation) -> RunResult:
    """Load the spec and the traces (priced with the spec's pricing), group the baselines, run every layer.

    The judge's verdict cache is saved even when the run fails, so verdicts already paid for are kept.
    """
    from .engine.judge import build_judge
    from .engine.runner import group_traces, run_spec
    from .spec.loader import load_spec
    from .trace.load import load_traces

    spec = load_spec(request.spec, tags=request.tags or None)
    traces = load_traces(request.traces, request.trace_format, spec.pricing)
    baselines = {}
    if request.baseline_traces:
        baseline_traces = load_traces(request.baseline_traces, request.trace_format, spec.pricing)
        baselines = group_traces(spec.queries, baseline_traces).by_query
    options = request.judge
    cache = options.cache or Path(spec.path).parent / ".agentci" / "judge-cache.json"
    judge = build_judge(spec.judge_config, options.environ, cache_path=cache, mode=options.mode,
                        sample_ensemble=options.sample_ensemble, pricing=spec.pricing)
    try:
        return run_spec(spec, traces, baselines=baselines, judge=judge, settings=request.settings)
    finally:
        if judge is not None:
            judge.cache.save()
