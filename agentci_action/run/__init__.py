"""Runs the agent on a spec's queries and writes its traces (`agentci run`).

Everything after it reads those files as if the user had recorded them. Processes, the agent's output and the trace
files stay in this package.

Modules: jobs (what a run is given, how it fails) · process (a command, its timeout and process group) ·
python_call (a function: in worker processes, or a caller's callable in-process) · worker (a worker process's
side) · agents_sdk (an Agents SDK RunResult, read through the SDK's tracing) · capture/ (where a run's trace comes
from: the agent's output, or its OpenTelemetry spans) · replay/ (the model-call proxy: recordings beside the spec,
replayed or live) · records (records → one canonical trace) · trace_store (atomic per-query JSON Lines, --resume) ·
secrets (masking) · execute (workers, retries, the whole run) · simulated_conversation (a simulated user's
conversation) · user_simulator (the LLM playing that user, through model_access/).
"""

from __future__ import annotations

from agentci_action.run.capture import Capture, OutputCapture
from agentci_action.run.execute import AgentRun, RunOptions, RunSetup, run_agent
from agentci_action.run.jobs import Finished, InfraFailure, Job, RunFailure

__all__ = [
    "AgentRun",
    "Capture",
    "Finished",
    "InfraFailure",
    "Job",
    "OutputCapture",
    "RunFailure",
    "RunOptions",
    "RunSetup",
    "run_agent",
]
