"""Layer 2, path: soft warnings, except a forbidden tool or one outside allowed_tools, which fail hard.

The reference sequence R for sequence similarity and the match mode is the closest of the query's baseline
variants (its accepted golden traces) when there are any, else the spec's `expected_tools`; with neither,
those two checks do not run. `expected_tool_calls` is checked on its own, under the same match mode.

Every message says where: positions are 0-based indexes into the trace's tool calls ("step 3"), expected
calls are named by their index in the spec ("expected_tool_calls[1]"), and untrusted text is made inert.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from agentci_action._util.patterns import PatternTimeout
from agentci_action.engine import metrics
from agentci_action.engine.arguments import inert_name
from agentci_action.engine.call_matching import CallMatch, match_calls
from agentci_action.engine.results import ERROR, NO_BASELINE, PASS, SKIP, Check, LayerResult
from agentci_action.engine.severity import failed
from agentci_action.spec.models import ExpectedToolCall, MatchMode, PathSpec, RepeatedCalls, SequenceMetric
from agentci_action.trace.canonical import ToolCall, Trace

LISTED = 5  # items named in one part of a message before "(+N more)"


def _listed(items: Sequence[str], total: int | None = None) -> str:
    """Items already made inert, comma-separated, at most LISTED of them.

    `total` counts them when only the first LISTED were labelled (default: len(items)).
    """
    total = len(items) if total is None else total
    return ", ".join(items[:LISTED]) + (f" (+{total - LISTED} more)" if total > LISTED else "")


def _names(items: list[str]) -> str:
    return _listed(list(map(inert_name, items)))


def _positions(positions: list[int]) -> str:
    """'step 3' or 'steps 2, 5, 9'."""
    shown = ", ".join(str(p) for p in positions[:LISTED]) + (", …" if len(positions) > LISTED else "")
    return f"step{'s' if len(positions) > 1 else ''} {shown}"


def _calls_at(found: dict[str, list[int]]) -> str:
    """{'shell': [2, 5]} → 'shell at steps 2, 5'."""
    return _listed([f"{inert_name(name)} at {_positions(positions)}" for name, positions in found.items()])


def closest_variant(
    used: Sequence[str], variants: Sequence[Sequence[str]], mode: MatchMode, metric: SequenceMetric
) -> tuple[int, list[float]]:
    """(index of the closest variant, each variant's sequence similarity to `used`).

    Closest: the variant `used` matches under `mode`, then the highest similarity, then the earliest.
    """
    similarities = [metrics.sequence_similarity(used, variant, metric) for variant in variants]
    distinct = set(used)  # set(P), made once for every variant's match
    scores = [
        (metrics.match(used, variant, mode, distinct).matched, similarity)
        for variant, similarity in zip(variants, similarities)
    ]
    return max(range(len(variants)), key=scores.__getitem__), similarities


def _at_most(
    spec: PathSpec, name: str, actual: float, limit: float, what: str, explain: Callable[..., str], *about: Any
) -> Check:
    """Fails (by the rule's severity) when actual > limit; `explain(*about)` (the explanation) is called only then."""
    if actual <= limit:
        return Check(name, PASS, "", {"actual": actual, "max": limit})
    return failed(spec, name, f"{what}: {actual:g} > max {limit:g}{explain(*about)}", {"actual": actual, "max": limit})


def _at_least(
    spec: PathSpec, name: str, actual: float, limit: float, what: str, explain: Callable[..., str], *about: Any
) -> Check:
    """Fails (by the rule's severity) when actual < limit; `explain(*about)` (the explanation) is called only then."""
    if actual >= limit:
        return Check(name, PASS, "", {"actual": actual, "min": limit})
    return failed(
        spec, name, f"{what}: {actual:.2f} < min {limit:g}{explain(*about)}", {"actual": actual, "min": limit}
    )


def _most_called(used: Sequence[str]) -> str:
    """' (search ×3, fetch ×2)': the most called tools."""
    return f" ({', '.join(f'{inert_name(tool)} ×{n}' for tool, n in Counter(used).most_common(LISTED))})"


def _loops_text(loops: list[metrics.Loop]) -> str:
    """' (search ×2 at steps 0-1; grade ×3 at steps 2-4)'."""
    runs = (f"{inert_name(tool)} ×{count} at steps {start}-{start + count - 1}" for tool, start, count in loops)
    return f" ({'; '.join(runs)})"


def evaluate_path(
    spec: PathSpec | None, trace: Trace, variants: list[Trace] | None = None, extra_checks: list[Check] | None = None
) -> LayerResult:
    """Every path assertion of `spec` on `trace`, then `extra_checks`.

    `extra_checks` are this layer's checks from the query's `checks:` block; metrics are reported even when no threshold
    is set.

    `variants` are the query's accepted baseline traces; the closest one is the reference (details:
    `baseline_variant`, its index, and `variant_similarities`).
    """
    used = trace.tool_sequence
    loops = metrics.find_loops(used)
    tools_used = list(dict.fromkeys(used))  # distinct tools, in order of first use
    repeats = 0
    loop_details = []
    for loop in loops:  # one loop for both figures
        tool, start, count = loop
        repeats += count - 1
        loop_details.append({"tool": tool, "start": start, "count": count})
    details: dict[str, Any] = {
        "tool_calls": len(used),
        "tools_used": tools_used,
        "loops_detected": repeats,  # Σ (count − 1)
        "loops": loop_details,
    }
    chosen = None
    if variants:
        if len(variants) == 1:
            chosen = 0
            details["baseline_variant"] = 0
            details["baseline_variants"] = 1
        else:
            ranking = spec or PathSpec()
            chosen, similarities = closest_variant(
                used, [v.tool_sequence for v in variants], ranking.match_mode, ranking.sequence_metric
            )
            details.update(baseline_variant=chosen, baseline_variants=len(variants), variant_similarities=similarities)
    if spec is None:
        if extra_checks:
            return LayerResult.from_checks(list(extra_checks), details)
        return LayerResult(SKIP, details, ["no path checks"])
    rules = spec.__dict__  # spec/models.py, "fields as a dict"
    used_set = set(tools_used)  # the tools as a set, for recall, precision, the deny-list and the match mode
    checks = _tool_list_checks(spec, used, used_set, details)

    if (max_tool_calls := rules["max_tool_calls"]) is not None:
        checks.append(_at_most(spec, "max_tool_calls", len(used), max_tool_calls, "tool calls", _most_called, used))

    if (expected_tools := rules["expected_tools"]) is not None:
        _expected_tools_checks(spec, expected_tools, tools_used, used_set, details, checks)

    # R: the chosen baseline variant's tools, else expected_tools
    if chosen is not None:
        assert variants is not None  # chosen is one of them
        source = "baseline" if len(variants) == 1 else f"baseline[{chosen}] (closest of {len(variants)} variants)"
        checks += _reference_checks(spec, used, used_set, variants[chosen].tool_sequence, source, details)
    elif expected_tools is not None:
        checks += _reference_checks(spec, used, used_set, expected_tools, "expected_tools", details)
    elif rules["min_sequence_similarity"] is not None:
        # said once per run, not per query (RunResult.without_baseline): no message here
        checks.append(Check("min_sequence_similarity", SKIP, "", {"reason": NO_BASELINE}))

    if rules["expected_tool_calls"] is not None:
        checks.append(_expected_calls_check(spec, trace, details))

    if (max_loops := rules["max_loops"]) is not None:
        checks.append(_at_most(spec, "max_loops", repeats, max_loops, "loops", _loops_text, loops))

    _handoff_checks(spec, trace, details, checks)
    if extra_checks:
        checks += extra_checks
    return LayerResult.from_checks(checks, details)


def _tool_list_checks(spec: PathSpec, used: Sequence[str], used_set: set[str], details: dict[str, Any]) -> list[Check]:
    """forbidden_tools (deny-list) and allowed_tools (allow-list).

    Any violation fails hard, unless their severity is warn.
    """
    rules = spec.__dict__  # spec/models.py, "fields as a dict"
    normalize = rules["tool_name_normalization"]
    checks = []
    if forbidden := rules["forbidden_tools"]:
        calls = metrics.forbidden_calls(used, forbidden, normalize, used_set)
        details["forbidden_violations"] = violations = list(calls)
        details["forbidden_calls"] = calls
        data = {"violations": violations, "calls": calls}
        checks.append(
            failed(spec, "forbidden_tools", f"forbidden tools used: {_calls_at(calls)}", data)
            if calls
            else Check("forbidden_tools", PASS, "", data)
        )
    if (allowed := rules["allowed_tools"]) is not None:
        calls = metrics.disallowed_calls(used, allowed, normalize)
        details["disallowed_calls"] = calls
        checks.append(
            failed(spec, "allowed_tools", f"tools not in allowed_tools: {_calls_at(calls)}", {"calls": calls})
            if calls
            else Check("allowed_tools", PASS, "", {"calls": calls})
        )
    return checks


def _expected_tools_checks(
    spec: PathSpec,
    expected_tools: list[str],
    tools_used: list[str],
    used_set: set[str],
    details: dict[str, Any],
    checks: list[Check],
) -> None:
    """Tool recall, precision and F1 against expected_tools (as sets), with their thresholds' checks."""
    expected = set(expected_tools)
    recall = metrics.tool_recall(expected, used_set)
    precision = metrics.tool_precision(expected, used_set)
    missing = [t for t in dict.fromkeys(expected_tools) if t not in used_set] if recall < 1 else []
    # the used tools not expected, in order: a copy less the few expected ones (a comprehension over every tool used
    # cost three times as much)
    extra = list(tools_used)
    for tool in expected:
        if tool in used_set:
            extra.remove(tool)
    details["tool_recall"] = recall
    details["tool_precision"] = precision
    details["tool_f1"] = metrics.tool_f1(precision, recall)
    details["missing_tools"] = missing
    details["unexpected_tools"] = extra
    if (min_recall := spec.min_tool_recall) is not None:
        checks.append(
            _at_least(spec, "min_tool_recall", recall, min_recall, "tool recall", _listed_as, "missing", missing)
        )
    if (min_precision := spec.min_tool_precision) is not None:
        checks.append(
            _at_least(
                spec, "min_tool_precision", precision, min_precision, "tool precision", _listed_as, "unexpected", extra
            )
        )


def _listed_as(label: str, names: list[str]) -> str:
    """' (missing: a, b)', or nothing without names."""
    return f" ({label}: {_names(names)})" if names else ""


def _divergence_text(index: int, expected: str | None, actual: str | None) -> str:
    return f"first difference at step {index}: expected {expected or '(end)'}, got {actual or '(end)'}"


def _reference_checks(
    spec: PathSpec,
    used: Sequence[str],
    used_set: set[str],
    ref_tools: Sequence[str],
    source: str,
    details: dict[str, Any],
) -> list[Check]:
    """Sequence similarity and the match mode against the reference sequence R (`ref_tools`, from `source`)."""
    rules = spec.__dict__  # spec/models.py, "fields as a dict"
    match_mode, sequence_metric = rules["match_mode"], rules["sequence_metric"]
    mode, metric = _VALUES[match_mode], _VALUES[sequence_metric]
    similarity = metrics.sequence_similarity(used, ref_tools, sequence_metric)
    outcome = metrics.match(used, ref_tools, match_mode, used_set)
    if metrics.sequence_similarity_is_approximate(used, ref_tools):
        details["sequence_similarity_approximate"] = True  # a lower bound from aligned blocks (_util/limits.py)
    details["reference"] = source
    details["sequence_metric"] = metric
    details["sequence_similarity"] = similarity
    details["match_mode"] = {
        "mode": mode,
        "matched": outcome.matched,
        "missing": outcome.missing,
        "unexpected": outcome.unexpected,
        "first_divergence": None if outcome.first_divergence is None else _divergence_dict(outcome.first_divergence),
    }
    checks = []
    if (min_similarity := rules["min_sequence_similarity"]) is not None:
        what = f"sequence similarity ({metric}) against the {source}"
        checks.append(
            _at_least(
                spec, "min_sequence_similarity", similarity, min_similarity, what, _where, outcome, used, ref_tools
            )
        )
    checks.append(
        Check("match_mode", PASS, "", {"mode": mode})
        if outcome.matched
        else failed(
            spec,
            "match_mode",
            f"match mode {mode!r} against the {source} failed: {_explain(outcome, used, ref_tools)}",
            {"mode": mode},
        )
    )
    return checks


def _where(outcome: metrics.MatchOutcome, used: Sequence[str], ref_tools: Sequence[str]) -> str:
    """' (first difference at step i: …)'.

    Where the match mode found P and R diverge, else where they differ in order; nothing when they are equal.
    """
    divergence = outcome.first_divergence or metrics.match(used, ref_tools, MatchMode.STRICT).first_divergence
    return f" ({_divergence_text(*_inert_divergence(divergence))})" if divergence else ""


_VALUES = {member: member.value for enum in (MatchMode, SequenceMetric) for member in enum}  # read per query


def _inert_divergence(divergence: tuple[int, str | None, str | None]) -> tuple[int, str | None, str | None]:
    index, expected, actual = divergence
    return index, None if expected is None else inert_name(expected), None if actual is None else inert_name(actual)


def _divergence_dict(divergence: tuple[int, str | None, str | None]) -> dict[str, Any]:
    index, expected, actual = _inert_divergence(divergence)
    return {"index": index, "expected": expected, "actual": actual}


def _explain(outcome: metrics.MatchOutcome, used: Sequence[str], ref_tools: Sequence[str]) -> str:
    """The first difference, then the missing and unexpected tools.

    When there are none, whether the same calls were made in another order.
    """
    parts = []
    if outcome.first_divergence is not None:
        parts.append(_divergence_text(*_inert_divergence(outcome.first_divergence)))
        if not outcome.missing and not outcome.unexpected and Counter(used) == Counter(ref_tools):
            parts[-1] += " (the same calls in another order)"
    if outcome.missing:
        parts.append(f"missing: {_names(outcome.missing)}")
    if outcome.unexpected:
        parts.append(f"unexpected: {_names(outcome.unexpected)}")
    return "; ".join(parts)


@dataclass(frozen=True)
class _Labels:
    """Inert names for expected steps and trace calls, as messages and details show them."""

    steps: list[ExpectedToolCall]
    calls: list[ToolCall]

    def tools(self, i: int) -> str:
        names = [inert_name(n) for n in self.steps[i].names]
        return names[0] if len(names) == 1 else f"any of ({', '.join(names)})"

    def step(self, i: int | None) -> str | None:
        return None if i is None else f"{self.tools(i)} (expected_tool_calls[{i}])"

    def call(self, j: int | None) -> str | None:
        return None if j is None else inert_name(self.calls[j].name)

    def found(self, i: int | None, j: int | None) -> str | None:
        """Call j as found where step i was wanted: its tool, and whether only its arguments differ."""
        if i is not None and j is not None and self.calls[j].name in self.steps[i].names:
            return f"{self.call(j)} with other arguments"
        return self.call(j)


def _expected_calls_check(spec: PathSpec, trace: Trace, details: dict[str, Any]) -> Check:
    """expected_tool_calls under match_mode, and where the calls diverged.

    The message and details say which step, tool and argument diverged, which expected calls were made out of order and
    which calls repeat a step already matched.
    """
    steps = spec.expected_tool_calls or []
    try:
        outcome = match_calls(steps, trace.tool_calls, spec.match_mode, spec.repeated_calls is RepeatedCalls.IGNORE)
    except PatternTimeout as exc:
        return Check(
            name="expected_tool_calls", status=ERROR, message=f"argument regex /{inert_name(exc.pattern)}/ {exc}"
        )
    labels = _Labels(steps, trace.tool_calls)
    details["expected_tool_calls"] = _call_match_details(outcome, spec.match_mode, labels)
    data = {"mode": spec.match_mode.value}
    if outcome.matched:
        return Check(name="expected_tool_calls", status=PASS, data=data)
    return failed(
        spec,
        "expected_tool_calls",
        f"expected_tool_calls not matched ({spec.match_mode.value}): {_calls_explained(outcome, labels)}",
        data,
    )


def _calls_explained(outcome: CallMatch, labels: _Labels) -> str:
    """Where the calls diverged.

    The first difference, then each expected call made out of order (not also listed as missing and unexpected), each
    repeat, what is missing or unexpected besides, and argument mismatches.
    """
    parts = []
    if outcome.first_divergence is not None:
        d = outcome.first_divergence
        parts.append(_divergence_text(d.index, labels.step(d.step), labels.found(d.step, d.call)))
    placed = {i for i, _ in outcome.out_of_order}
    called = {j for _, j in outcome.out_of_order}
    if outcome.out_of_order:
        parts.append(
            "out of order: " + _listed([f"{labels.step(i)} called at step {j}" for i, j in outcome.out_of_order])
        )
    repeats = {j: i for j, i in outcome.repeated if j not in called}
    if repeats:
        parts.append(
            "repeated: "
            + _listed(
                [
                    f"{labels.call(j)} at step {j} (expected_tool_calls[{i}] was matched already)"
                    for j, i in repeats.items()
                ]
            )
        )
    missing = [i for i in outcome.missing if i not in placed]
    if missing:
        parts.append("missing: " + _listed([labels.step(i) or "" for i in missing[:LISTED]], len(missing)))
    unexpected = [j for j in outcome.unexpected if j not in called and j not in repeats]
    if unexpected:
        parts.append(
            "unexpected: " + _listed([f"{labels.call(j)} at step {j}" for j in unexpected[:LISTED]], len(unexpected))
        )
    for near in outcome.near_misses[:LISTED]:
        if near.mismatches:
            parts.append(
                f"arguments of {labels.call(near.call)} at step {near.call} vs expected_tool_calls[{near.step}]: "
                + _listed([str(m) for m in near.mismatches])
            )
    return "; ".join(parts)


def _call_match_details(outcome: CallMatch, mode: MatchMode, labels: _Labels) -> dict[str, Any]:
    d = outcome.first_divergence
    return {
        "mode": mode.value,
        "matched": outcome.matched,
        "pairs": [{"step": i, "call": j} for i, j in outcome.pairs],
        "missing": [{"step": i, "tool": labels.tools(i)} for i in outcome.missing],
        "unexpected": [{"call": j, "tool": labels.call(j)} for j in outcome.unexpected],
        "out_of_order": [{"step": i, "call": j, "tool": labels.call(j)} for i, j in outcome.out_of_order],
        "repeated": [{"call": j, "step": i, "tool": labels.call(j)} for j, i in outcome.repeated],
        "first_divergence": None
        if d is None
        else {"index": d.index, "expected": labels.step(d.step), "actual": labels.found(d.step, d.call)},
        "argument_mismatches": [
            {
                "step": near.step,
                "call": near.call,
                "tool": labels.call(near.call),
                "key": m.key,
                "expected": m.expected,
                "actual": m.actual,
            }
            for near in outcome.near_misses
            for m in near.mismatches
        ],
    }


def _handoff_checks(spec: PathSpec, trace: Trace, details: dict[str, Any], checks: list[Check]) -> None:
    handoffs = trace.handoffs  # read once: a pydantic attribute
    targets = [h.to for h in handoffs] if handoffs else []  # most traces hand off to no one
    details["handoffs"] = targets
    rules = spec.__dict__  # spec/models.py, "fields as a dict"
    if (expected := rules["expected_handoff"]) is not None:
        checks.append(
            Check("expected_handoff", PASS)
            if expected in targets
            else failed(
                spec,
                "expected_handoff",
                f"expected a handoff to {inert_name(expected)}, got {_names(targets) or 'no handoff'}",
            )
        )
    if (available := rules["expected_handoffs_available"]) is not None:
        allowed = set(available)
        stray = list(dict.fromkeys(t for t in targets if t not in allowed))
        checks.append(
            failed(
                spec,
                "expected_handoffs_available",
                f"handoff to an agent not in expected_handoffs_available: {_names(stray)}",
            )
            if stray
            else Check("expected_handoffs_available", PASS)
        )
    if (max_handoffs := rules["max_handoff_count"]) is not None:
        checks.append(_at_most(spec, "max_handoff_count", len(targets), max_handoffs, "handoffs", _handed_to, targets))


def _handed_to(targets: list[str]) -> str:
    """' (to billing, refunds)'."""
    return f" (to {_names(targets)})"
