"""What blocks: the fail-on text both edges take, and the exit code a run ends with.

The fail-on text: `--fail-on`, the action's `fail-on` input. The exit code: 0 pass · 1 a blocking query or suite gate ·
2 a query that could not be evaluated.
"""

from __future__ import annotations

from agentci_action._util.errors import EXIT_ERROR, EXIT_FAIL, EXIT_PASS
from agentci_action.engine.evaluate_spec import DEFAULT_FAIL_ON
from agentci_action.engine.results import RunResult, Status

FAIL_ON_CHOICES = ("correctness", "path", "cost", "suite", "none")


def parse_fail_on(text: str | list[str] | None) -> frozenset[str]:
    """'correctness,path' → {'correctness', 'path'}; 'none' → {} ; empty → the default {'correctness', 'suite'}."""
    items = text.split(",") if isinstance(text, str) else list(text or [])
    names = {item.strip().lower() for item in items if item.strip()}
    unknown = names - set(FAIL_ON_CHOICES)
    if unknown:
        raise ValueError(
            f"unknown fail-on layer(s) {', '.join(sorted(unknown))}; choose from {', '.join(FAIL_ON_CHOICES)}"
        )
    if "none" in names and len(names) > 1:
        raise ValueError("fail-on 'none' cannot be combined with other layers")
    if not names:
        return DEFAULT_FAIL_ON
    return frozenset(names - {"none"})


def exit_code(run: RunResult) -> int:
    """2 when any query could not be evaluated, 1 when any query or suite gate blocks, else 0."""
    if any(r.status is Status.ERROR for r in run.results):
        return EXIT_ERROR
    if any(r.blocking for r in run.results) or any(g.blocking for g in run.gates):
        return EXIT_FAIL
    return EXIT_PASS
