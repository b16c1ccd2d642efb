"""Where a run's trace comes from.

The agent's own output (`agent_output`), or the OpenTelemetry spans it exports to a receiver on 127.0.0.1 (`otel`, with
`receiver`, `otlp`, `environment`, `run_traces`); `collect` is the receiver alone, for agents driven by something else
than `agentci run`.
"""

from __future__ import annotations

from collections.abc import Mapping

from agentci_action._util.errors import SpecError
from agentci_action.run.capture.agent_output import Capture, OutputCapture
from agentci_action.spec.runner_config import OTEL_NEEDS_COMMAND, RunnerSpec


def capture_for(runner: RunnerSpec, chosen: str | None, inherited: Mapping[str, str]) -> Capture:
    """The capture `chosen` (`agentci run --capture`), else the runner's; `inherited` is the agent's environment.

    SpecError for `otel` with a `python:` runner.
    """
    if (chosen or runner.capture) != "otel":
        return OutputCapture()
    if runner.command is None:
        raise SpecError.at(*runner.where("python"), OTEL_NEEDS_COMMAND)
    # imported here: OTLP's protobuf modules are start-up time every run that captures output would pay for nothing
    from agentci_action.run.capture.otel import OtelCapture

    return OtelCapture(inherited)


__all__ = ["Capture", "OutputCapture", "capture_for"]
