"""Regression or noise, over a diff's queries.

Each query's pass-rate verdict, the suite's change in pass rate with its interval, and the bootstrap intervals of cost
and latency ratios. The statistics are the engine's (compare/significance.py, suite_change.py, bootstrap.py); this module
reads them off the two sides of a diff.

- A query run once on each side keeps the rule it always had, said as such (`one_run`): its status going from pass
  or warn to fail or error is `regressed`, the reverse `improved`, anything else `unchanged`.
- With repeated runs on either side (`exact`), the engine's tests decide; the fewer- and more-passes p-values are
  Holm-adjusted over every query compared this way, so the verdicts are settled on the whole diff at once
  (`settle`): after a diff of all queries, and again after merging the shards' diffs, with the same result.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, Field

from agentci_action._util.text import plural
from agentci_action.compare.bootstrap import clustered_ratio_interval, ratio_interval, seed_for
from agentci_action.compare.significance import ChangeVerdict, Comparison, compare, settled, verdicts
from agentci_action.compare.suite_change import PassRateChange, pass_rate_change
from agentci_action.engine.results import Status
from agentci_action.spec.models import SignificanceSpec

FAILING = (Status.FAIL, Status.ERROR)


class PassVerdict(BaseModel):
    """Whether a query's pass rate changed beyond noise, baseline → current."""

    verdict: ChangeVerdict
    method: Literal["one_run", "exact"] = Field(
        description="one_run: one run per side, the status rule without a confidence; exact: the tests on pass counts."
    )
    passed_before: int
    runs_before: int
    passed_after: int
    runs_after: int
    p_value: float | None = Field(
        None,
        description="One-sided p-value for fewer passes now: Fisher's exact test, adjusted for the looks of adaptive "
        "runs (the plain test's with one look); null for one_run.",
    )
    p_holm: float | None = Field(None, description="p_value Holm-adjusted over the `compared` queries.")
    p_improved: float | None = Field(None, description="The same for more passes now.")
    p_improved_holm: float | None = None
    p_no_drop: float | None = Field(
        None,
        description="p-value that the pass rate fell by `drop` or more from the baseline's (exact binomial test, "
        "adjusted for the looks): unchanged when at most 1 − power.",
    )
    plan: list[int] = Field(
        default_factory=list,
        description="The run counts the verdict was looked at (adaptive runs' plan; one count for a fixed number of "
        "runs); the p-values are adjusted for every look of it.",
    )
    compared: int = Field(0, description="The queries compared with tests, over which Holm adjusts.")
    more_runs: int | None = Field(
        None,
        description="Inconclusive: about how many more current runs would decide at the current pass rate; null "
        "when more current runs alone would not (the baseline's runs limit the test).",
    )


def pass_verdict(
    before: Sequence[Status],
    after: Sequence[Status],
    status_before: Status | None,
    status_after: Status | None,
    plan: Sequence[int] | None,
    drop: float,
) -> PassVerdict:
    """The query's verdict before `settle`.

    Each side's run statuses in run order (a run passes when its status is pass), the query's status on each side, and
    the adaptive runs' plan (None for a fixed number of runs).
    """
    passed_before, passed_after = list(before).count(Status.PASS), list(after).count(Status.PASS)
    counts = {
        "passed_before": passed_before,
        "runs_before": len(before),
        "passed_after": passed_after,
        "runs_after": len(after),
    }
    if len(before) == 1 and len(after) == 1:
        fell = status_before not in FAILING and status_after in FAILING
        rose = status_before in FAILING and status_after not in FAILING
        verdict = ChangeVerdict.REGRESSED if fell else ChangeVerdict.IMPROVED if rose else ChangeVerdict.UNCHANGED
        return PassVerdict(verdict=verdict, method="one_run", **counts)
    found = compare([s is Status.PASS for s in after], passed_before, len(before), plan or (len(after),), drop)
    return PassVerdict(
        verdict=ChangeVerdict.INCONCLUSIVE,  # until settle() has seen every query
        method="exact",
        p_value=found.p_fewer,
        p_improved=found.p_more,
        p_no_drop=found.p_no_drop,
        plan=list(found.plan),
        **counts,
    )


def _comparison(verdict: PassVerdict, drop: float) -> Comparison:
    assert verdict.p_value is not None and verdict.p_improved is not None and verdict.p_no_drop is not None
    return Comparison(
        passed=verdict.passed_after,
        runs=verdict.runs_after,
        base_passed=verdict.passed_before,
        base_runs=verdict.runs_before,
        p_fewer=verdict.p_value,
        p_more=verdict.p_improved,
        p_no_drop=verdict.p_no_drop,
        plan=tuple(verdict.plan),
        drop=drop,
    )


def settle(found: Sequence[PassVerdict], significance: SignificanceSpec) -> None:
    """Decide every `exact` verdict in place, Holm-adjusted over all of them (compare.significance.verdicts)."""
    exact = [v for v in found if v.method == "exact"]
    decided = verdicts([_comparison(v, significance.drop) for v in exact], significance.confidence, significance.power)
    for verdict, outcome in zip(exact, decided):
        verdict.verdict = outcome.verdict
        verdict.p_holm = outcome.adjusted_fewer
        verdict.p_improved_holm = outcome.adjusted_more
        verdict.compared = outcome.compared
        verdict.more_runs = outcome.more_runs


def undecided(verdict: PassVerdict, significance: SignificanceSpec, compared: int) -> bool:
    """Whether adaptive runs should give the query more runs.

    Compared by tests and not yet settled whatever the other `compared` queries show (compare.significance.settled).
    """
    if verdict.method != "exact":
        return False
    return not settled(_comparison(verdict, significance.drop), significance.confidence, significance.power, compared)


def suite_change(found: Sequence[PassVerdict], confidence: float) -> PassRateChange | None:
    """The suite's paired change in pass rate over the queries run on both sides (compare.suite_change)."""
    return pass_rate_change(
        [(v.passed_before / v.runs_before, v.passed_after / v.runs_after) for v in found], confidence
    )


def run_ratio_interval(
    key: str, figure: str, before: Sequence[float | None], after: Sequence[float | None], confidence: float
) -> tuple[float, float] | None:
    """A query's bootstrap interval of mean(after) / mean(before) for one per-run figure.

    Seeded by the query and the figure; None with one run per side (the thresholds decide) or a value unknown on either
    side.
    """
    if len(before) < 2 and len(after) < 2:
        return None
    if any(v is None for v in before) or any(v is None for v in after):
        return None
    known_before = [float(v) for v in before if v is not None]
    known_after = [float(v) for v in after if v is not None]
    return ratio_interval(known_before, known_after, confidence, seed_for(key, figure))


def total_ratio_interval(
    figure: str, means: Sequence[tuple[str, float | None, float | None]], confidence: float
) -> tuple[float, float] | None:
    """The suite's bootstrap interval of Σ after / Σ before for one figure.

    The queries (key, mean before, mean after) are resampled as pairs; over the queries known on both sides, seeded by
    the figure and their keys.
    """
    known = sorted((key, b, a) for key, b, a in means if b is not None and a is not None)
    return clustered_ratio_interval(
        [b for _, b, _ in known if b is not None],
        [a for _, _, a in known if a is not None],
        confidence,
        seed_for(figure, *(key for key, _, _ in known)),
    )


def p_value(p: float) -> str:
    """A p-value as a reader takes it in: 'p = 0.01', 'p = 0.0043', 'p < 0.0001'."""
    return "p < 0.0001" if p < 0.0001 else f"p = {p:.2g}"


def verdict_words(found: PassVerdict, before_label: str, significance: SignificanceSpec) -> str:
    """The query's pass-rate verdict in words (raw: escape it).

    '' for one run per side whose status held. 'regressed: 3 of 10 runs passed vs 9 of 10
    in v2 (p = 0.0099)', with the Holm adjustment and the looks when they moved the p-value; 'inconclusive: …; about 8
    more runs would decide: runs.max 28 (the query's runs, 20 now)': the setting that would give them.
    """
    if found.method == "one_run":
        if found.verdict is ChangeVerdict.UNCHANGED:
            return ""
        went = "pass → fail" if found.verdict is ChangeVerdict.REGRESSED else "fail → pass"
        return f"{found.verdict.value}: {went} against {before_label}, one run per side (no confidence measured)"
    counts = (
        f"{found.passed_after} of {plural(found.runs_after, 'run')} passed vs {found.passed_before} of "
        f"{found.runs_before} in {before_label}"
    )
    if found.verdict is ChangeVerdict.UNCHANGED:
        return (
            f"unchanged: {counts} (a drop of {100 * significance.drop:g} points ruled out with "
            f"{significance.power:.0%} power)"
        )
    p, holm = (
        (found.p_improved, found.p_improved_holm)
        if found.verdict is ChangeVerdict.IMPROVED
        else (found.p_value, found.p_holm)
    )
    assert p is not None and holm is not None
    looks = f", over {len(found.plan)} looks" if len(found.plan) > 1 else ""
    adjusted = f"; {holm:.2g} after Holm over {found.compared} queries" if found.compared > 1 and holm > p else ""
    text = f"{found.verdict.value}: {counts} ({p_value(p)}{looks}{adjusted})"
    if found.verdict is ChangeVerdict.INCONCLUSIVE:
        text += (
            f"; about {plural(found.more_runs, 'more run')} would decide: runs.max {found.runs_after + found.more_runs} "
            f"(the query's runs, {found.runs_after} now)"
            if found.more_runs
            else f"; more runs now would not decide: the baseline's {found.runs_before} runs limit the test"
        )
    return text
