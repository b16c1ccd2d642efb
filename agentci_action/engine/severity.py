"""What a path, process or cost rule's failure is: `fail` or `warn`, as its block's `severity` map says (else the rule's
default: the allow- and deny-lists fail, the rest warn). A failure whose severity the spec sets names it first, so
the same rule reading `fail` in one query and `warn` in another always says why: `[match_mode: severity fail] …`."""

from __future__ import annotations

from typing import Any

from agentci_action.engine.results import FAIL, WARN, Check
from agentci_action.spec.check_models import Severity
from agentci_action.spec.models import RuleBlock


def failed(block: RuleBlock, rule: str, message: str, data: dict[str, Any] | None = None) -> Check:
    """The check of `rule` that did not hold: status FAIL or WARN by its severity, recorded in `data["severity"]`;
    the message tagged when the spec sets that severity."""
    severity = block.severity_of(rule)
    if rule in block.severity:
        message = f"[{rule}: severity {severity.value}] {message}"
    return Check(
        rule, FAIL if severity is Severity.FAIL else WARN, message, {**(data or {}), "severity": severity.value}
    )
