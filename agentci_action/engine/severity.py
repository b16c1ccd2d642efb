"""What a path, process or cost rule's failure is.

`fail` or `warn`, as its block's `severity` map says (else the rule's default: the allow- and deny-lists fail, the rest
warn). A failure whose severity the spec sets names it first, so the same rule reading `fail` in one query and `warn` in
another always says why: `[match_mode: severity fail] …`.
"""

from __future__ import annotations

from typing import Any

from agentci_action.engine.results import FAIL, WARN, Check
from agentci_action.spec.check_models import Severity
from agentci_action.spec.models import DEFAULT_SEVERITY, RuleBlock


def failed(block: RuleBlock, rule: str, message: str, data: dict[str, Any] | None = None) -> Check:
    """The check of `rule` that did not hold.

    Status FAIL or WARN by its severity, recorded in `data["severity"]` (`data`, the caller's fresh dict, becomes the
    check's own); the message tagged when the spec sets that severity.
    """
    chosen = block.severity  # read once: a pydantic attribute
    status, word = _OUTCOMES[chosen.get(rule) or DEFAULT_SEVERITY[rule]]
    if chosen and rule in chosen:
        message = f"[{rule}: severity {word}] {message}"
    data = {} if data is None else data
    data["severity"] = word
    return Check(rule, status, message, data)


# a severity's status and name, looked up once per failure (an Enum member's .value is a slow property)
_OUTCOMES = {Severity.FAIL: (FAIL, "fail"), Severity.WARN: (WARN, "warn")}
