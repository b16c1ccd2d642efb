"""AgentCI: regression tests for AI agents in CI.

The Python API: `load_spec(path, tags=None)`, `load_traces(patterns)` and
`run_spec(spec, traces, queries=None, baselines=None, judge=None, settings=Settings())`.
"""

from .engine.runner import Settings, run_spec
from .spec.loader import load_spec
from .trace.load import load_traces

__all__ = ["Settings", "load_spec", "load_traces", "run_spec"]
