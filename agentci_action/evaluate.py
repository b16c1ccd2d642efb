"""One evaluation, as both the CLI and the action run it: spec + traces (+ baselines) → RunResult.

The edges (cli.py, action.py) turn their arguments or inputs into an `Evaluation` and publish the
result; everything between reading the files and the RunResult happens here, once.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .engine.results import RunResult
from .engine.runner import Settings


@dataclass(frozen=True)
class Evaluation:
    """What to evaluate; paths as the user gave them (files, directories or globs)."""

    spec: str
    traces: list[str]
    baseline_traces: list[str] = field(default_factory=list)
    trace_format: str | None = None
    tags: list[str] = field(default_factory=list)
    settings: Settings = Settings()


def evaluate(request: Evaluation) -> RunResult:
    """Load the spec and the traces (priced with the spec's pricing), group the baselines, run every layer."""
    from .engine.runner import group_traces, run_spec
    from .spec.loader import load_spec
    from .trace.load import load_traces

    spec = load_spec(request.spec, tags=request.tags or None)
    traces = load_traces(request.traces, request.trace_format, spec.pricing)
    baselines = {}
    if request.baseline_traces:
        baseline_traces = load_traces(request.baseline_traces, request.trace_format, spec.pricing)
        baselines = group_traces(spec.queries, baseline_traces).by_query
    return run_spec(spec, traces, baselines=baselines, settings=request.settings)
