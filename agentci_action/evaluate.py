"""One evaluation, as both the CLI and the action run it: spec + traces (+ baselines) → RunResult,
or spec + shard results files → the merged RunResult.

The edges (cli.py, action.py) turn their arguments or inputs into an `Evaluation` (or a merge) and publish
the result; everything between reading the files and the RunResult happens here, once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .engine.results import RunResult, ShardInfo
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
    shard: ShardInfo | None = None  # evaluate only this shard's queries


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
    return run_spec(spec, traces, baselines=baselines, settings=request.settings, shard=request.shard)


def read_shards(patterns: list[str]) -> dict[str, RunResult]:
    """Shard results files matching the glob patterns, by file name; each must parse as results JSON."""
    import glob

    from pydantic import ValidationError

    from .errors import InputError, Problem

    files = sorted({file for pattern in patterns for file in (glob.glob(pattern) or [pattern])})
    shards, problems = {}, []
    for file in files:
        try:
            shards[file] = RunResult.model_validate_json(Path(file).read_bytes())
        except OSError as exc:
            problems.append(Problem(file, 0, f"cannot read shard results: {exc.strerror or exc}"))
        except ValidationError as exc:
            problems.append(Problem(file, 0, f"not an agentci results file: {exc.errors()[0]['msg']}"))
    if problems:
        raise InputError(problems)
    return shards


def merge(spec: str, shard_results: list[str], tags: list[str] | None = None) -> RunResult:
    """The shards' results files (paths or globs) as one run of the spec (loaded with the shards' tags)."""
    from .engine.merge import merge_shards
    from .spec.loader import load_spec

    return merge_shards(load_spec(spec, tags=tags or None), read_shards(shard_results))
