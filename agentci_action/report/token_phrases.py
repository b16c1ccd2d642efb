"""Where the tokens went, in words every report shares.

The split of the input by component, the reference's token figures, and which components moved in a diff (with the
schemas, tool results and documents that moved in each).

Plain text with inert names (one line, at most 60 characters each); each renderer escapes the phrase as its format
needs (markdown, HTML).
"""

from __future__ import annotations

import math

from agentci_action._util.text import usd
from agentci_action.compare.diff_schema import ComponentChange, ItemChange, TokensDiff
from agentci_action.engine.arguments import inert_name
from agentci_action.engine.results import TokenAttribution

LABELS = {
    "system_prompt": "system prompt",
    "tool_schemas": "tool schemas",
    "history": "history",
    "tool_results": "tool results",
    "retrieved_context": "retrieved context",
    "query": "query",
    "framing": "framing",  # what the provider adds around the messages, beyond the counted texts
    "unexplained": "unexplained",  # reported beyond the count and the framing (the gap of an estimate)
    "unattributed": "not attributable",  # calls whose request the trace does not show
    "output": "output",
}
MAX_MOVED = 3  # components named per query; the JSON has every one


def tokens(value: float) -> str:
    """A token count as reports show it: '3,100', '12.5' for a mean."""
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.1f}"


def _signed(value: float) -> str:
    return ("+" if value > 0 else "−" if value < 0 else "±") + tokens(abs(value))


def label(component: str) -> str:
    return LABELS.get(component, component.replace("_", " "))


def split(found: TokenAttribution, limit: int = 6) -> str:
    """'tool schemas 640 (52%) · history 250 (20%) · …', largest first."""
    total = sum(found.components.values())
    ranked = sorted(found.components.items(), key=lambda item: -item[1])
    return " · ".join(
        f"{label(name)} {tokens(value)} ({value / total:.0%})" if total else f"{label(name)} {tokens(value)}"
        for name, value in ranked[:limit]
    )


def counted_by(found: TokenAttribution) -> str:
    """How the split was counted: 'o200k_base, exact'; 'o200k_base, estimate: 12 tokens reported beyond count and framing'.

    The gap is signed: an estimate whose count exceeds the reported input says 'fewer than'.
    """
    if found.exact:
        return f"{found.tokenizer}, exact"
    if not found.gap:
        return f"{found.tokenizer}, estimate"
    word = "beyond" if found.gap > 0 else "fewer than"
    return f"{found.tokenizer}, estimate: {tokens(abs(found.gap))} tokens reported {word} count and framing"


def figures(found: TokenAttribution) -> list[str]:
    """The reference's token figures, each with its one-line definition; no rule reads them, so reports fold them."""
    ratio = found.token_efficiency_ratio
    lines = [f"schema overhead {tokens(found.schema_overhead)}: the input tokens of the tool definitions sent"]
    if found.skill_efficiency is not None:
        lines.append(
            f"skill efficiency {found.skill_efficiency:.2f}: system prompt tokens / (system prompt + tool schema tokens)"
        )
    if ratio is not None:
        shown = "∞ (no system prompt)" if math.isinf(ratio) else f"{ratio:.2g}"
        lines.append(f"token efficiency ratio {shown}: tool schema tokens / system prompt tokens")
    return lines


def _item(component: str, item: ItemChange) -> str:
    """What moved in one item: a tool that gained parameters, results that grew, a schema or document added."""
    name, delta = f"`{inert_name(item.name)}`", item.tokens
    before, after = delta.before or 0, delta.after or 0
    if item.parameters is not None and item.parameters.change:
        change = item.parameters.change
        word = "gained" if change > 0 else "lost"
        return f"{name} {word} {abs(change):g} parameter{'s' if abs(change) != 1 else ''}"
    if not before:
        return f"{name} added ({tokens(after)})"
    if not after:
        return f"{name} gone (was {tokens(before)})"
    if component == "tool_results":
        return f"{name} returns {after / before:.1f}× the text ({tokens(before)} → {tokens(after)})"
    return f"{name} {tokens(before)} → {tokens(after)}"


def _cost(delta: float | None) -> str:
    """', +$0.0012' for the cost a component's tokens added (', −…' saved); '' when unknown or nothing."""
    if not delta or not math.isfinite(delta):
        return ""
    return f", {'+' if delta > 0 else '−'}{usd(abs(delta))}"


def moved(change: ComponentChange) -> str:
    """'tool schemas +3,100 tokens, +$0.0005: `search_flights` gained 4 parameters'.

    The cost as the cost layer priced the call's input, when known.
    """
    count = change.tokens.change or 0
    word = "token" if abs(count) == 1 else "tokens"
    head = f"{label(change.component)} {_signed(count)} {word}{_cost(change.cost_usd.change)}"
    items = [_item(change.component, item) for item in change.items]
    return head + (": " + "; ".join(items) if items else "")


def moved_lines(diff: TokensDiff | None, limit: int = MAX_MOVED) -> list[str]:
    """One phrase per component that moved, the largest first; and how many more."""
    if diff is None or not diff.components:
        return []
    lines = [moved(change) for change in diff.components[:limit]]
    if len(diff.components) > limit:
        lines.append(f"and {len(diff.components) - limit} more components moved")
    if not diff.exact:
        lines.append("(token counts estimated: a count plus framing differs from the provider's reported input)")
    return lines


def summary_line(found: TokenAttribution | None, per: str = "") -> str:
    """'input tokens[ per run]: tool schemas 640 (52%) · … (o200k_base, exact)'; '' without."""
    if found is None:
        return ""
    return f"input tokens{per}: {split(found)} ({counted_by(found)})"
