"""Layer 1, correctness: hard fail. Deterministic checks first, in the documented order; judge checks after.

Order: expected_in_answer, not_in_answer, exact_match, regex_match, json_schema, then llm_judge
(only if every deterministic check passed), safety_check (only if the judge passed),
hallucination_check (only if safety passed). A judge check that cannot run is `skip`, never `pass`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, TypedDict

from agentci_action._util.limits import MAX_NESTING, deeper_than
from agentci_action._util.patterns import PatternTimeout, found
from agentci_action._util.text import snippet
from agentci_action.engine.arguments import inert_name
from agentci_action.engine.results import ERROR, FAIL, PASS, SKIP, Check, LayerResult, Status
from agentci_action.spec.check_models import Checks
from agentci_action.spec.json_schemas import local_validator
from agentci_action.spec.models import CorrectnessSpec, JudgeRubric, QuerySpec
from agentci_action.trace.canonical import Trace

JUDGE_KINDS = ("llm_judge", "safety_check", "hallucination_check")
STATUSES = ", ".join(status.value for status in Status)


@dataclass(frozen=True)
class JudgeRequest:
    """What a judge needs to score one rubric; answer and context are untrusted text."""

    kind: str  # one of JUDGE_KINDS
    rubric: JudgeRubric
    query_id: str
    query: str
    answer: str
    context: list[str] = field(default_factory=list)  # grounding: retrieved documents and tool results


class _SharedRequestFields(TypedDict):
    """The fields of a JudgeRequest that every judge check of one run shares."""

    query_id: str
    query: str
    answer: str


class Judge(Protocol):
    """Scores a rubric. Returns a Check with status pass, fail, skip (with the reason) or error."""

    def evaluate(self, request: JudgeRequest) -> Check: ...


def judged_check(judge: Judge, request: JudgeRequest) -> Check:
    """judge.evaluate(request), its status made a Status.

    A Check's constructor does not validate, and a judge written outside the engine may give "pass"; anything else is a
    ValueError naming the judge.
    """
    check = judge.evaluate(request)
    if type(check.status) is not Status:
        try:
            check = replace(check, status=Status(check.status))
        except ValueError:
            raise ValueError(
                f"{type(judge).__name__} gave the status {check.status!r}: not one of {STATUSES}"
            ) from None
    return check


def deterministic_checks(spec: CorrectnessSpec, answer: str) -> list[Check]:
    """Every deterministic check the spec asks for, each reporting every failing term."""
    checks: list[Check] = []
    lowered = answer.lower()
    asked = spec.__dict__  # spec/models.py, "fields as a dict"
    # Loops, not list comprehensions (each a call of its own on 3.11): these checks run per run (bench_hot_path).
    if (expected := asked["expected_in_answer"]) is not None:
        missing = []
        for term in expected:
            if term.lower() not in lowered:
                missing.append(term)
        checks.append(
            Check(
                "expected_in_answer",
                FAIL if missing else PASS,
                f"expected in answer but missing: {', '.join(repr(t) for t in missing)}" if missing else "",
                {"missing": missing, "checked": len(expected)},
            )
        )
    if (forbidden := asked["not_in_answer"]) is not None:
        found = []
        for term in forbidden:
            if term.lower() in lowered:
                found.append(term)
        checks.append(
            Check(
                "not_in_answer",
                FAIL if found else PASS,
                f"forbidden in answer but found: {', '.join(repr(t) for t in found)}" if found else "",
                {"found": found, "checked": len(forbidden)},
            )
        )
    if (exact := asked["exact_match"]) is not None:
        ok = answer.strip() == exact.strip()
        checks.append(
            Check(
                name="exact_match",
                status=PASS if ok else FAIL,
                message=""
                if ok
                else f"answer is not the exact expected text (expected {snippet(exact)!r}, got {snippet(answer)!r})",
            )
        )
    if (pattern := asked["regex_match"]) is not None:
        checks.append(_regex_check(pattern, answer))
    if (schema := asked["json_schema"]) is not None:
        checks.append(_json_schema_check(schema, answer))
    return checks


def _regex_check(pattern: str, answer: str) -> Check:
    """Pass when the pattern is found in the answer; an error (not a verdict) when it runs out of time."""
    try:
        ok = found(pattern, answer)
    except PatternTimeout as exc:
        return Check(name="regex_match", status=ERROR, message=f"regex /{inert_name(pattern)}/ {exc}")
    if ok:
        return Check("regex_match", PASS)
    return Check("regex_match", FAIL, f"answer does not match regex /{inert_name(pattern)}/")


def _json_schema_check(schema: dict[str, Any], answer: str) -> Check:
    """The answer parsed as JSON and validated.

    An answer nested deeper than MAX_NESTING levels fails unvalidated (the agent controls its answer: validation
    recurses once per level, and must not crash the run).
    """
    try:
        document = json.loads(answer)
    except json.JSONDecodeError as exc:
        return Check(
            name="json_schema",
            status=FAIL,
            message=f"answer is not JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})",
        )
    except RecursionError:  # deeper than the parser's own limit (about 1,000 levels)
        too_deep = True
    else:
        too_deep = deeper_than(document)
    if too_deep:
        return Check(
            name="json_schema",
            status=FAIL,
            message=f"answer is JSON nested deeper than {MAX_NESTING} levels: not validated",
        )
    from referencing.exceptions import Unresolvable  # with jsonschema, only when a spec validates JSON

    try:
        errors = sorted(local_validator(schema).iter_errors(document), key=lambda e: list(e.absolute_path))
    except Unresolvable as exc:  # validation rejects these; a schema built in code may still carry one
        return Check(
            name="json_schema",
            status=ERROR,
            message=f"the JSON Schema has a $ref that does not resolve: {snippet(str(exc), 120)}",
        )
    if not errors:
        return Check(name="json_schema", status=PASS)
    described = [f"{'/'.join(str(p) for p in e.absolute_path) or '(root)'}: {snippet(e.message, 120)}" for e in errors]
    return Check(
        name="json_schema",
        status=FAIL,
        message=f"answer violates the JSON Schema: {'; '.join(described[:5])}"
        + (f" (+{len(described) - 5} more)" if len(described) > 5 else ""),
        data={"errors": described},
    )


def asks_for_judge(query: QuerySpec) -> bool:
    """Whether the query, or a turn of a conversation, has any judge check.

    llm_judge, safety_check, hallucination_check, checks.safety toxicity or bias.
    """
    return any(_judged(block.correctness, block.checks) for block in (query, *(query.turns or ())))


def _judged(spec: CorrectnessSpec | None, checks: Checks | None) -> bool:
    safety = checks.safety if checks else None
    return (spec is not None and bool(spec.llm_judge or spec.safety_check or spec.hallucination_check)) or (
        safety is not None and bool(safety.toxicity or safety.bias)
    )


def judge_requests(query: QuerySpec, trace: Trace) -> list[JudgeRequest]:
    """The judge checks of a query, in gating order."""
    spec = query.correctness
    if spec is None:
        return []
    asked = transcript(trace) if query.simulated_user is not None and trace.turns else query.query
    common: _SharedRequestFields = {"query_id": query.key, "query": asked, "answer": trace.final_answer}
    requests = [JudgeRequest("llm_judge", rubric, **common) for rubric in spec.llm_judge or []]
    if spec.safety_check:
        requests.append(JudgeRequest("safety_check", spec.safety_check, **common))
    if spec.hallucination_check:
        requests.append(
            JudgeRequest("hallucination_check", spec.hallucination_check, context=grounding_context(trace), **common)
        )
    return requests


def transcript(trace: Trace) -> str:
    """A conversation up to its last user message, a `user:` or `agent:` line per message.

    What a judge rubric reads as the query of a simulated user's conversation, whose answer is the agent's last reply.
    """
    lines = []
    for before, turn in zip([None, *trace.turns], trace.turns):
        lines += [f"agent: {before.final_answer}"] if before is not None else []
        lines.append(f"user: {turn.query or ''}")
    return "\n".join(lines)


def grounding_context(trace: Trace) -> list[str]:
    """Retrieved documents, then tool results, as text: what an answer may be grounded in."""
    context = [doc.text for doc in trace.retrieved_context if doc.text]
    for call in trace.tool_calls:
        if call.result is not None:
            context.append(call.result if isinstance(call.result, str) else json.dumps(call.result, ensure_ascii=False))
    return context


def _skipped(request: JudgeRequest, reason: str) -> Check:
    return Check(
        name=request.kind,
        status=SKIP,
        message=f"{request.kind} skipped: {reason}",
        data={"rule": request.rubric.rule},
    )


def judge_checks(requests: list[JudgeRequest], judge: Judge | None, gate_open: bool) -> list[Check]:
    """Run the judge checks in order, skipping every one after the first that does not pass."""
    checks: list[Check] = []
    blocked_by = None if gate_open else "a deterministic check failed"
    for request in requests:
        if blocked_by:
            checks.append(_skipped(request, blocked_by))
        elif judge is None:
            checks.append(_skipped(request, "no LLM judge is configured"))
        else:
            check = judged_check(judge, request)
            checks.append(check)
            if check.status is not PASS:
                blocked_by = f"an earlier {request.kind} check did not pass"
    return checks


def evaluate_correctness(
    query: QuerySpec, trace: Trace, judge: Judge | None = None, extra_checks: list[Check] | None = None
) -> LayerResult:
    """Layer status: fail if any check failed, error if a judge could not answer, else pass (skip without checks).

    `extra_checks` holds this layer's checks from the query's `checks:` block (engine/checks), appended after the others.
    """
    spec = query.correctness
    if spec is None and not extra_checks:
        return LayerResult(status=SKIP, messages=["no correctness checks"])
    checks = deterministic_checks(spec, trace.final_answer) if spec else []
    if spec is not None:
        asked = spec.__dict__  # spec/models.py, "fields as a dict"
        if asked["llm_judge"] or asked["safety_check"] or asked["hallucination_check"]:
            gate_open = all(c.status is PASS for c in checks)
            checks += judge_checks(judge_requests(query, trace), judge, gate_open)
    if extra_checks:
        checks += extra_checks
    skipped = 0
    for check in checks:  # a loop, not a list comprehension (a call of its own on 3.11): made per run, bench_hot_path
        if check.status is SKIP:
            skipped += 1
    result = LayerResult.from_checks(checks, {"checks_run": len(checks) - skipped, "checks_skipped": skipped})
    if result.status is SKIP and not checks:
        result.messages = ["no correctness checks"]
    return result
