"""PII and secrets in an answer (pattern heuristics), and masking so no report ever shows one.

Kinds, in priority order (a span taken by an earlier kind is not reported again): private keys, API keys and
tokens in common formats, card numbers passing the Luhn check, SSN-shaped numbers, emails, IPv4 addresses,
phone numbers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from cydifflib import SequenceMatcher

_SECRET_PATTERNS = [
    ("private_key", r"-----BEGIN [A-Z ]*PRIVATE KEY-----(?:.*?-----END [A-Z ]*PRIVATE KEY-----|.*)"),  # the whole block
    ("api_key", r"\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{20,}"),  # OpenAI, Anthropic
    ("api_key", r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}"),  # Stripe
    ("api_key", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),  # AWS access key id
    ("api_key", r"\bAIza[0-9A-Za-z_-]{35}"),  # Google
    ("token", r"\bgh[pousr]_[A-Za-z0-9]{36,}"),  # GitHub
    ("token", r"\bgithub_pat_[A-Za-z0-9_]{22,}"),
    ("token", r"\bxox[abprs]-[A-Za-z0-9-]{10,}"),  # Slack
    ("token", r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),  # JWT
    ("token", r"(?i:\bbearer\s+)[A-Za-z0-9._~+/-]{20,}=*"),
]
_PII_PATTERNS = [
    ("card", r"(?<![\d-])\d(?:[ -]?\d){12,18}(?![\d-])"),
    ("ssn", r"(?<![\d-])\d{3}-\d{2}-\d{4}(?![\d-])"),
    ("email", r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}\b"),
    ("ipv4", r"(?<![\d.])(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?![\d.])"),
    ("phone", r"(?<![\w+])(?:\+\d{1,3}[ .-]?)?(?:\(\d{3}\)|\d{3})[ .-]?\d{3}[ .-]?\d{4}(?!\w)"),
    ("phone", r"(?<![\w+])\+\d{1,3}(?:[ .-]?\d{2,4}){2,5}(?!\w)"),
]
PATTERNS = [(kind, re.compile(pattern, re.DOTALL)) for kind, pattern in _SECRET_PATTERNS + _PII_PATTERNS]


def luhn_valid(number: str) -> bool:
    """The Luhn checksum over the digits of `number`.

    Double every second digit from the right (minus 9 above 9), the sum must be divisible by 10. Non-digits are ignored;
    fewer than 13 or more than 19 digits is not a card.
    """
    digits = [int(c) for c in number if c.isdigit()]
    if not 13 <= len(digits) <= 19:
        return False
    total = 0
    for position, digit in enumerate(reversed(digits)):
        if position % 2:
            digit = digit * 2 - 9 if digit > 4 else digit * 2
        total += digit
    return total % 10 == 0


def mask(value: str, kind: str) -> str:
    """A card keeps its last four digits; anything else its first two characters; the rest become '*' (at most 8)."""
    if kind == "card":
        return "**** " + "".join(c for c in value if c.isdigit())[-4:]
    return value[:2] + "*" * min(8, max(3, len(value) - 2))


@dataclass(frozen=True)
class Leak:
    """A secret or personal datum found in the text: its kind and where it is (`value`, raw, stays out of reports)."""

    kind: str
    start: int
    end: int
    value: str  # the raw match: never put it in a report

    @property
    def masked(self) -> str:
        return mask(self.value, self.kind)

    def report(self) -> dict[str, Any]:
        """What a report may show: the kind, the masked value and where it is."""
        return {"kind": self.kind, "masked": self.masked, "start": self.start, "end": self.end}


def find_leaks(text: str) -> list[Leak]:
    """Every PII or secret match, in text order, without overlaps (earlier kinds in PATTERNS win)."""
    findings: list[Leak] = []
    for kind, pattern in PATTERNS:
        for match in pattern.finditer(text):
            if kind == "card" and not luhn_valid(match.group()):
                continue
            if any(match.start() < f.end and f.start < match.end() for f in findings):
                continue
            findings.append(Leak(kind, match.start(), match.end(), match.group()))
    return sorted(findings, key=lambda f: f.start)


MIN_FRAGMENT = 6  # a cut-off piece of a secret this long (e.g. in an 80-character snippet) is masked too


def redact(text: str, findings: list[Leak]) -> str:
    """`text` with every finding's value, and every fragment of it of MIN_FRAGMENT or more characters, masked."""
    for finding in sorted(findings, key=lambda f: -len(f.value)):
        text = text.replace(finding.value, finding.masked)
        minimum = min(MIN_FRAGMENT, len(finding.value))
        while True:
            block = SequenceMatcher(None, text, finding.value, autojunk=False).find_longest_match(
                0, len(text), 0, len(finding.value)
            )
            if block.size < minimum:
                break
            text = text[: block.a] + "***" + text[block.a + block.size :]
    return text


def redact_data(value: Any, findings: list[Leak]) -> Any:
    """redact() applied to every string inside nested dicts and lists."""
    if isinstance(value, str):
        return redact(value, findings)
    if isinstance(value, dict):
        return {key: redact_data(item, findings) for key, item in value.items()}
    if isinstance(value, list):
        return [redact_data(item, findings) for item in value]
    return value
