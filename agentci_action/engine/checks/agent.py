"""The run as a task: completion, step efficiency, tool success, recovery from tool errors.

The task's final status lives in the canonical trace at `metadata.status` (a string, case-insensitive):
completed, complete, success, succeeded, done or ok mean the task completed; any other value means it did not;
no value means the status is unknown and the checks that need it are skipped (N/A).
"""

from __future__ import annotations

from agentci_action.engine.checks._measured import bounded, skipped, verdict
from agentci_action.engine.results import Check
from agentci_action.spec.check_models import AgentChecks
from agentci_action.trace.canonical import Trace

COMPLETED = frozenset({"completed", "complete", "success", "succeeded", "done", "ok"})
NO_STATUS = "the trace has no metadata.status"


def task_completed(trace: Trace) -> bool | None:
    """True/False from metadata.status; None when the trace does not say."""
    status = trace.metadata.get("status")
    if status is None:
        return None
    return str(status).strip().lower() in COMPLETED


def step_efficiency(expected_steps: int, steps_taken: int) -> float:
    """min(expected_steps / steps_taken, 1); 0.0 when no step was taken."""
    if steps_taken <= 0:
        return 0.0
    return min(expected_steps / steps_taken, 1.0)


def tool_success_rate(trace: Trace) -> float | None:
    """Tool calls without an error / tool calls; None without tool calls."""
    if not trace.tool_calls:
        return None
    return sum(call.error is None for call in trace.tool_calls) / len(trace.tool_calls)


def error_recovery(errors: int, completed: bool | None) -> float | None:
    """1.0 when no tool call failed or the task completed despite failures; 0.0 when it did not; None when unknown."""
    if errors == 0:
        return 1.0
    if completed is None:
        return None
    return 1.0 if completed else 0.0


def evaluate(group: AgentChecks, trace: Trace) -> list[Check]:
    completed = task_completed(trace)
    status = trace.metadata.get("status")
    checks: list[Check | None] = []
    if group.task_completion:
        if completed is None:
            checks.append(skipped("task_completion", NO_STATUS))
        else:
            checks.append(
                verdict(
                    group,
                    "task_completion",
                    completed,
                    f"the task did not complete (metadata.status {str(status)!r})",
                    {"value": 1.0 if completed else 0.0, "status": status},
                )
            )
    if group.expected_steps is not None:
        steps = len(trace.tool_calls)
        check = bounded(
            group,
            "expected_steps",
            step_efficiency(group.expected_steps, steps),
            group.min_step_efficiency,
            f"step efficiency ({steps} steps taken, {group.expected_steps} expected)",
        )
        assert check is not None  # min_step_efficiency has a default
        check.data.update(expected_steps=group.expected_steps, steps_taken=steps)
        checks.append(check)
    checks.append(
        bounded(
            group,
            "min_tool_success_rate",
            tool_success_rate(trace),
            group.min_tool_success_rate,
            "tool success rate",
            missing="the trace has no tool calls",
        )
    )
    if group.error_recovery:
        errors = sum(call.error is not None for call in trace.tool_calls)
        recovery = error_recovery(errors, completed)
        if recovery is None:
            checks.append(
                skipped("error_recovery", f"{errors} tool call(s) failed and {NO_STATUS}", {"errors": errors})
            )
        else:
            checks.append(
                verdict(
                    group,
                    "error_recovery",
                    recovery == 1.0,
                    f"{errors} tool call(s) failed and the task did not complete",
                    {"value": recovery, "errors": errors},
                )
            )
    return [c for c in checks if c is not None]
