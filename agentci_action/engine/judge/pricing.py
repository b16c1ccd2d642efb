"""What the judge's own calls cost, kept apart from the agent's cost.

USD = input_tokens × input price + output_tokens × output price, prices per million tokens, matched
by the longest model-name prefix; an unknown model costs None (reported as unknown, never as 0).
"""

from __future__ import annotations

# USD per million tokens: (input, output), as the providers published them; other models are "unknown".
JUDGE_PRICES: dict[str, tuple[float, float]] = {
    "claude-opus-4-6": (5.0, 25.0),
    "claude-opus-4-5": (5.0, 25.0),
    "claude-opus-4-1": (15.0, 75.0),
    "claude-opus-4-0": (15.0, 75.0),
    "claude-opus-4-20250514": (15.0, 75.0),
    "claude-sonnet-4-6": (3.0, 15.0),
    "claude-sonnet-4-5": (3.0, 15.0),
    "claude-sonnet-4-0": (3.0, 15.0),
    "claude-sonnet-4-20250514": (3.0, 15.0),
    "claude-haiku-4-5": (1.0, 5.0),
    "gpt-5-nano": (0.05, 0.4),
    "gpt-5-mini": (0.25, 2.0),
    "gpt-5": (1.25, 10.0),
    "gpt-4.1-nano": (0.1, 0.4),
    "gpt-4.1-mini": (0.4, 1.6),
    "gpt-4.1": (2.0, 8.0),
    "gpt-4o-mini": (0.15, 0.6),
    "gpt-4o": (2.5, 10.0),
    "o4-mini": (1.1, 4.4),
    "o3": (2.0, 8.0),
}


def judge_cost_usd(model: str, input_tokens: int, output_tokens: int) -> float | None:
    """The USD cost of one judge call, or None when the model is not in the table."""
    matches = [prefix for prefix in JUDGE_PRICES if model.startswith(prefix)]
    if not matches:
        return None
    input_price, output_price = JUDGE_PRICES[max(matches, key=len)]
    return (input_tokens * input_price + output_tokens * output_price) / 1_000_000
