"""A trace as a proposed golden query: its input, reference answer, route, cost budget, starting checks, provenance.

What is proposed (a QuerySpec-shaped dict, in the key order a reviewer reads):
- `id`: the trace's id when it is a valid query id (a rerun of the agent is matched by it), else derived from the query;
  `query`, or a conversation's `turns` (each turn's user message);
- `reference_answer`: the final answer, with `checks.answer.min_rouge_l` (REFERENCE_ROUGE_L) comparing later answers;
- `path.expected_tool_calls`: the calls in order, each with the arguments that identify it. An argument is volatile, and
  left out, when its key says so (VOLATILE_KEY: ids minted per run, timestamps, nonces; plus the keys the user names) or
  its value does (a UUID, a date with a time, a long random token; VOLATILE_VALUES): those differ on every run;
- `cost`: `max_cost_usd` = the observed cost × (1 + margin), rounded up to 3 significant digits; without a known cost,
  `max_total_tokens` likewise; none when the trace recorded no model calls;
- `checks`: `safety.no_pii_leakage` when the answer holds none, `agent.task_completion` when the trace says it completed;
- `tags: [promoted]` (and `incident`), and `provenance` (models.Provenance).
An incident (a failing trace promoted with a corrected expectation) keeps none of the failing run's answer or route:
its expectations are the ones given (`expected_in_answer`, the route's tools, `forbidden_tools`), made to fail.

Redaction before anything is written: every string is masked of the environment's secret-named values (run/secrets.py)
and of the PII and secrets the quality checks know (engine/checks/leakage.py), and each mask is reported with where it
was. A masked argument is left out of the expected arguments (a masked value matches no call); a masked query or user
message changes what the agent would be asked, so the golden is flagged and not written unless the user keeps it.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import ROUND_CEILING, Decimal
from typing import Any

from agentci_action.engine.checks.agent import task_completed
from agentci_action.engine.checks.answer import rouge_f1
from agentci_action.engine.checks.leakage import find_leaks, redact
from agentci_action.spec.loader import slugify
from agentci_action.spec.models import ID_PATTERN
from agentci_action.trace.canonical import ToolCall, Trace

REFERENCE_ROUGE_L = 0.5  # the answer's ROUGE-L F1 against the reference: the same content, in other words
PROMOTED_TAG = "promoted"
INCIDENT_TAG = "incident"
VOLATILE_KEY = re.compile(
    r"(?i)(^|_)(uuid|guid|nonce|request_?id|trace_?id|span_?id|run_?id|call_?id|idempotency_?key|"
    r"timestamp|created(_at)?|updated(_at)?|time|datetime)$"
)
VOLATILE_VALUES = (
    re.compile(r"(?i)^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$"),  # a UUID
    re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}"),  # a date with a time (a date alone names a day: kept)
    re.compile(r"^(?=[A-Za-z0-9_-]*\d)(?=[A-Za-z0-9_-]*[A-Za-z])[A-Za-z0-9_-]{24,}$"),  # a long random token
)
Route = tuple[tuple[str, str], ...]  # (tool, its identifying arguments as canonical JSON) in order


@dataclass(frozen=True)
class Incident:
    """The corrected expectation of an incident: what the answer must hold, the route it must take, tools it must not."""

    expect_in_answer: tuple[str, ...] = ()
    expect_route: tuple[str, ...] = ()
    forbid_tools: tuple[str, ...] = ()


@dataclass(frozen=True)
class GoldenOptions:
    """How goldens are made from traces: the budget's margin, the volatile keys, masking, incidents."""

    cost_margin: float = 0.5
    volatile_keys: tuple[str, ...] = ()
    keep_masked: bool = False
    incident: Incident | None = None


@dataclass
class Proposal:
    """One proposed golden: the dict written to the spec, the trace it came from, and what redaction did."""

    golden: dict[str, Any]
    trace: Trace
    route: Route
    masked: list[str] = field(default_factory=list)  # "email in reference_answer", one per mask
    flag: str = ""  # why it is not written ("" when it is)
    runs: int = 1  # the traces of its id
    routes: int = 1  # the distinct routes among them

    @property
    def key(self) -> str:
        key: str = self.golden["id"]
        return key

    @property
    def text(self) -> str:
        """What the agent is asked: the query, or the user's messages of a conversation."""
        turns = self.golden.get("turns")
        return "\n".join(turn["user"] for turn in turns) if turns else str(self.golden["query"])


class Masking:
    """Masks a string of the environment's secrets then of PII and secret patterns; counts each kind found."""

    def __init__(self, secrets: Callable[[str], str]):
        self._secrets = secrets

    def __call__(self, text: str) -> tuple[str, list[str]]:
        """The masked text and the kind of each mask (`secret` for an environment value)."""
        masked = self._secrets(text)
        kinds = ["secret"] if masked != text else []
        leaks = find_leaks(masked)
        return (redact(masked, leaks) if leaks else masked), kinds + [leak.kind for leak in leaks]


def query_text(trace: Trace) -> str:
    """The trace's query, or "" when it has none."""
    return (trace.query or "").strip()


def golden_id(trace: Trace, query: str, masking: Masking) -> str:
    """The trace's id when it is a valid query id that needs no mask, else one derived from the (masked) query."""
    if trace.id and re.match(ID_PATTERN, trace.id) and not masking(trace.id)[1]:
        return trace.id
    return slugify(query)


def volatile(key: str, value: Any, keys: tuple[str, ...]) -> bool:
    """Whether an argument differs on every run: by its key (VOLATILE_KEY or one given), or by a value inside it."""
    if key in keys or VOLATILE_KEY.search(key):
        return True
    if isinstance(value, str):
        return any(pattern.match(value) for pattern in VOLATILE_VALUES)
    if isinstance(value, dict):
        return any(volatile(str(k), v, keys) for k, v in value.items())
    if isinstance(value, list):
        return any(volatile("", item, keys) for item in value)
    return False


def identifying(call: ToolCall, keys: tuple[str, ...]) -> dict[str, Any]:
    """The call's arguments without the volatile ones (a call whose arguments are no object has none)."""
    if not isinstance(call.arguments, dict):
        return {}
    return {key: value for key, value in call.arguments.items() if not volatile(str(key), value, keys)}


def route_of(trace: Trace, keys: tuple[str, ...]) -> Route:
    """The trace's calls in order, each with its identifying arguments: two runs on this route did the same."""
    return tuple((call.name, json.dumps(identifying(call, keys), sort_keys=True)) for call in trace.tool_calls)


def round_up(value: float, digits: int = 3) -> float:
    """`value` rounded up to `digits` significant digits (0.000402123 → 0.000403): a budget never below its figure."""
    if value <= 0:
        return 0.0
    exponent = math.floor(math.log10(value)) - digits + 1
    return float(Decimal(repr(value)).quantize(Decimal(f"1e{exponent}"), rounding=ROUND_CEILING))


def budget(trace: Trace, margin: float) -> dict[str, Any]:
    """`max_cost_usd` from the observed cost, else `max_total_tokens` from the tokens, each × (1 + margin); or none."""
    if "total_cost_usd" not in trace.unrecorded_totals and trace.total_cost_usd:
        return {"max_cost_usd": round_up(trace.total_cost_usd * (1 + margin))}
    if "total_tokens" not in trace.unrecorded_totals and trace.total_tokens:
        return {"max_total_tokens": math.ceil(trace.total_tokens * (1 + margin))}
    return {}


def expected_calls(trace: Trace, keys: tuple[str, ...]) -> list[dict[str, Any]]:
    """`expected_tool_calls` of the trace's route: each call's name and its identifying arguments."""
    calls = []
    for call in trace.tool_calls:
        arguments = identifying(call, keys)
        calls.append({"name": call.name, **({"arguments": arguments} if arguments else {})})
    return calls


def starting_checks(trace: Trace, reference: str | None) -> dict[str, Any]:
    """The checks a user would start from: the answer against the reference, no PII in it, the task completed.

    A reference that had to be masked differs from the answer it came from: its ROUGE-L threshold is then the source
    answer's own score against it (rounded down to 2 decimals) when that is below REFERENCE_ROUGE_L, so the golden still
    passes on its source trace.
    """
    checks: dict[str, Any] = {}
    if reference is not None:
        floor = REFERENCE_ROUGE_L
        if reference != trace.final_answer:
            floor = min(floor, math.floor(rouge_f1(trace.final_answer, reference)["rougeL"] * 100) / 100)
        checks["answer"] = {"min_rouge_l": floor}
        if not find_leaks(trace.final_answer):
            checks["safety"] = {"no_pii_leakage": True}
    if task_completed(trace):
        checks["agent"] = {"task_completion": True}
    return checks


def incident_expectations(incident: Incident) -> dict[str, Any]:
    """The corrected expectation as blocks that fail the failing run: correctness, and path at fail severity."""
    blocks: dict[str, Any] = {}
    if incident.expect_in_answer:
        blocks["correctness"] = {"expected_in_answer": list(incident.expect_in_answer)}
    path: dict[str, Any] = {}
    if incident.expect_route:
        path["expected_tool_calls"] = [{"name": name} for name in incident.expect_route]
        path["severity"] = {"expected_tool_calls": "fail"}
    if incident.forbid_tools:
        path["forbidden_tools"] = list(incident.forbid_tools)
    if path:
        blocks["path"] = path
    return blocks


def proposal(trace: Trace, provenance: dict[str, Any], options: GoldenOptions, masking: Masking) -> Proposal:
    """The golden proposed from `trace` (see the module docstring), masked, with what masking did."""
    masked: list[str] = []

    def mask(text: str, where: str) -> str:
        clean, kinds = masking(text)
        masked.extend(f"{kind} in {where}" for kind in kinds)
        return clean

    keys = options.volatile_keys
    golden: dict[str, Any] = {}
    if trace.turns:
        turns = [{"user": mask(query_text(turn), f"turns[{n}].user")} for n, turn in enumerate(trace.turns)]
        golden["id"] = golden_id(trace, turns[0]["user"], masking)
        golden["turns"] = turns
    else:
        golden["query"] = mask(query_text(trace), "query")
        golden = {"id": golden_id(trace, golden["query"], masking), **golden}
    flag = f"its {'user messages' if trace.turns else 'query'} had to be masked" if masked else ""
    golden["tags"] = [PROMOTED_TAG, INCIDENT_TAG] if options.incident else [PROMOTED_TAG]
    if options.incident is not None:
        golden.update(incident_expectations(options.incident))
    else:
        if trace.final_answer.strip():
            golden["reference_answer"] = mask(trace.final_answer, "reference_answer")
        calls = _masked_calls(expected_calls(trace, keys), mask)
        if calls:
            golden["path"] = {"expected_tool_calls": calls}
    if cost := budget(trace, options.cost_margin):
        golden["cost"] = cost
    if options.incident is None and (checks := starting_checks(trace, golden.get("reference_answer"))):
        golden["checks"] = checks
    golden["provenance"] = {
        key: mask(v, f"provenance.{key}") if isinstance(v, str) else v for key, v in provenance.items()
    }
    return Proposal(golden, trace, route_of(trace, keys), masked, flag if not options.keep_masked else "")


def _masked_calls(calls: list[dict[str, Any]], mask: Callable[[str, str], str]) -> list[dict[str, Any]]:
    """The expected calls with every masked argument left out (a masked value would match no call)."""
    for n, call in enumerate(calls):
        arguments = call.get("arguments") or {}
        for key, value in list(arguments.items()):
            where = f"expected_tool_calls[{n}].arguments.{key} (left out)"
            text = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else value
            if mask(text, where) != text:
                del arguments[key]
        if "arguments" in call and not arguments:
            del call["arguments"]
    return calls
