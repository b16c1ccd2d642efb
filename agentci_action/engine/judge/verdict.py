"""A judge's verdict, the schema the providers must answer in, and how verdicts become pass or fail."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

LABELS = ("pass", "fail", "borderline")
# Ties in an ensemble vote go to the most cautious label.
_CAUTION = {"fail": 2, "borderline": 1, "pass": 0}


class Verdict(BaseModel):
    """Structured output required from every judge: the rationale comes with the score."""

    model_config = ConfigDict(extra="forbid")

    score: int = Field(..., ge=1, le=5, description="1 (fails the rubric) to 5 (fully meets it).")
    label: Literal["pass", "fail", "borderline"]
    rationale: str = Field(..., description="A short explanation of the score.")


VERDICT_TOOL = "record_verdict"  # the structured output's name (Anthropic's tool)
VERDICT_DESCRIPTION = "Record the verdict on the material."
# The JSON Schema sent to the providers (strict mode wants every property required and no extras).
VERDICT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "score": {
            "type": "integer",
            "enum": [1, 2, 3, 4, 5],
            "description": "1 (fails the rubric) to 5 (fully meets it)",
        },
        "label": {"type": "string", "enum": list(LABELS)},
        "rationale": {"type": "string", "description": "one or two sentences explaining the score"},
    },
    "required": ["score", "label", "rationale"],
    "additionalProperties": False,
}


def parse_verdict(data: object) -> Verdict | None:
    """The verdict in `data` (a dict, or a JSON string), or None when it does not match the schema."""
    try:
        if isinstance(data, (str, bytes)):
            return Verdict.model_validate_json(data)
        return Verdict.model_validate(data)
    except ValidationError:
        return None


def threshold_score(threshold: float) -> int:
    """int(threshold × 5 + 0.5) clamped to 1..5: standard rounding, so 0.5 → 3 and 0.7 → 4 (not banker's)."""
    return max(1, min(5, int(threshold * 5 + 0.5)))


@dataclass(frozen=True)
class Decision:
    passed: bool
    score: float  # a single verdict's score, or the ensemble's mean
    label: str  # a single verdict's label, or the majority label


def decide(verdicts: list[Verdict], threshold: float) -> Decision:
    """One verdict passes when score ≥ threshold_score.

    Several (an ensemble, majority vote): pass when the majority label is not `fail` and the mean
    score ≥ threshold_score; a tied vote takes the most cautious label (fail, then borderline).
    """
    needed = threshold_score(threshold)
    if len(verdicts) == 1:
        only = verdicts[0]
        return Decision(only.score >= needed, only.score, only.label)
    votes = Counter(v.label for v in verdicts)
    majority = max(votes, key=lambda label: (votes[label], _CAUTION[label]))
    mean = sum(v.score for v in verdicts) / len(verdicts)
    return Decision(majority != "fail" and mean >= needed, round(mean, 2), majority)
