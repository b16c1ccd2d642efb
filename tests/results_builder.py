"""Build RunResult objects by hand for the renderers' tests (no engine involved)."""

from __future__ import annotations

from agentci_action.engine.results import LayerResult, QueryResult, Reliability, RunResult, ScoreResult, Status, Summary
from agentci_action.engine.stats import wilson_interval
from agentci_action.engine.suite_figures import aggregate

HOSTILE = "::error file=x::pwned %0A@octocat <details>|`tick`| <!-- agentci-comment: agentci --> #1"


def layer(status: str, *messages: str, **details) -> LayerResult:
    return LayerResult(status=Status(status), messages=list(messages), details=details)


def single_run(status: str) -> tuple[Reliability, ScoreResult]:
    """The reliability and score of one run that passed (unless `status` is fail) and was not scored."""
    passed = int(status != "fail")
    reliability = Reliability(
        runs=1,
        passed=passed,
        pass_rate=passed,
        pass_at_k=passed,
        pass_hat_k=passed,
        pass_rate_ci95=wilson_interval(passed, 1),
        flaky=False,
        run_statuses=[Status.PASS if passed else Status.FAIL],
    )
    return reliability, ScoreResult(composite=passed, grade="A" if passed else "F")


def query(
    qid: str,
    line: int,
    status: str,
    correctness=None,
    path=None,
    cost=None,
    blocking=None,
    text: str = "What is the refund policy?",
) -> QueryResult:
    reliability, score = single_run(status)
    return QueryResult(
        id=qid,
        query=text,
        file="agentci_spec.yaml",
        line=line,
        status=Status(status),
        blocking=status == "fail" if blocking is None else blocking,
        correctness=correctness or layer("pass"),
        path=path or layer("pass", tool_calls=2, sequence_similarity=1.0, reference="baseline", loops_detected=0),
        cost=cost or layer("pass", cost_usd=0.0021, total_tokens=812, cost_multiplier=1.05),
        reliability=reliability,
        score=score,
    )


def run(*results: QueryResult, agent: str = "support-bot", warnings: list[str] | None = None) -> RunResult:
    counts = {s: sum(r.status is s for r in results) for s in Status}
    overall = next((s for s in (Status.ERROR, Status.FAIL, Status.WARN) if counts[s]), Status.PASS)
    return RunResult(
        agentci_version="2.0.0",  # fixed, so a release does not rewrite the golden files
        agent=agent,
        spec="agentci_spec.yaml",
        results=list(results),
        warnings=warnings or [],
        summary=Summary(
            status=overall,
            total=len(results),
            passed=counts[Status.PASS] + counts[Status.WARN],
            failed=counts[Status.FAIL],
            warnings=counts[Status.WARN],
            errors=counts[Status.ERROR],
            cost_usd=sum(r.cost.details.get("cost_usd") or 0 for r in results),
            fail_on=["correctness", "suite"],
            aggregates=aggregate(list(results)),
        ),
    )


def mixed_run() -> RunResult:
    """One pass, one path warning, one cost warning, one correctness failure with hostile agent text."""
    return run(
        query("refund-policy", 4, "pass"),
        query(
            "order-status",
            11,
            "warn",
            path=layer(
                "warn",
                "tool recall: 0.50 < min 0.8 (missing: lookup_order)",
                tool_calls=3,
                sequence_similarity=0.67,
                reference="baseline",
                tool_recall=0.5,
                loops_detected=1,
            ),
        ),
        query(
            "cancel_order",
            19,
            "warn",
            cost=layer(
                "warn",
                "cost 2.40× the baseline (max 1.5×): $0.0120 vs $0.0050",
                cost_usd=0.012,
                total_tokens=4100,
                cost_multiplier=2.4,
            ),
        ),
        query(
            "prompt-injection",
            27,
            "fail",
            text=HOSTILE,
            correctness=layer("fail", f"answer does not contain 'refund': {HOSTILE}"),
        ),
    )
