"""AgentCI: regression tests for AI agents in CI. `load_spec` and `run_spec` are the Python API."""

from .engine.runner import run_spec
from .spec.loader import load_spec

__all__ = ["load_spec", "run_spec"]
