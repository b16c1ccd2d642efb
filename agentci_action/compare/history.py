"""How the agent trends.

The runs on the default branch, one JSON line each (`agentci.history/v1`), and the figures read from them. Pure: the
files are read and written by compare/history_git.py (a local repository) and the GitHub edge (the action).

From the entries, oldest first (the metrics reference's formulas, over versions instead of tiers):

    change_fail_percentage = changes whose run failed the gate / changes
    revert_rate            = changes later reverted / changes      (a change is reverted when a later commit's message
                             says "This reverts commit <sha>" of one of its commits, as `git revert` writes it)
    variance               = Σ (x − μ)² / n over the versions' pass rates (or costs): the population variance
    slope                  = the least-squares change per run, of pass rate and of cost

A pull request's figures are compared with the last `window` runs: each figure's band is μ ± max(2σ, floor), the
floor 0 for the pass rate and the composite and COST_TOLERANCE·μ for cost and tokens (the diff's own tolerance, so a
history of identical costs still allows what the diff calls unchanged), cut to the values the figure can take (0..1 for
the rates, ≥ 0 for cost and tokens). With fewer than MIN_BAND_RUNS runs there is no band. A figure outside its band on the worse side is an alert; on the better side, a note.

A history branch is written by whoever can push to it, so its lines are read as untrusted: a line that is not an
entry of this schema version (not JSON, wrong types, a figure that is not finite or is out of its range, a line
longer than MAX_HISTORY_LINE) is skipped, and one warning names the lines skipped. The figures are bounded so that
no sum, square or sparkline over them can overflow.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agentci_action._util.limits import MAX_HISTORY_LINE
from agentci_action._util.text import one_line
from agentci_action._version import __version__
from agentci_action.compare.diff import COST_TOLERANCE
from agentci_action.engine.results import RunResult, Status
from agentci_action.engine.stats import tidy

HISTORY_SCHEMA_VERSION = "agentci.history/v1"
DEFAULT_WINDOW = 20  # runs on the default branch a trend and a band look back over
MIN_BAND_RUNS = 3
_REVERTS = re.compile(r"This reverts commit ([0-9a-f]{7,40})", re.IGNORECASE)
MAX_COUNT = 10**9  # queries, runs, dollars: far past any suite, far below where a square overflows a float
MAX_TOKENS = 10**15
SKIPPED_SHOWN = 3  # skipped lines the warning describes; the rest are counted


class HistoryEntry(BaseModel):
    """One run on the default branch (every figure finite and within its range: see the module docstring)."""

    model_config = ConfigDict(allow_inf_nan=False)

    schema_version: str = HISTORY_SCHEMA_VERSION
    commit: str = Field(description="The commit the run evaluated (the push's head).")
    commits: list[str] = Field(default_factory=list, description="Every commit the change brought (for reverts).")
    reverts: list[str] = Field(default_factory=list, description="Commits this change's messages say it reverts.")
    date: str = Field(description="ISO 8601 time of the run.")
    agent: str
    spec: str
    agentci_version: str = __version__
    status: Status
    failed_gate: bool = Field(description="The run failed the gate: its job exited 1 or 2.")
    total: int = Field(ge=0, le=MAX_COUNT)
    passed: int = Field(ge=0, le=MAX_COUNT)
    pass_rate: float = Field(ge=0, le=1, description="passed / total: queries passing (warnings allowed).")
    composite_score: float = Field(ge=0, le=1)
    cost_usd: float = Field(ge=0, le=MAX_COUNT)
    cost_unknown: int = Field(0, ge=0, le=MAX_COUNT)
    total_tokens: int = Field(ge=0, le=MAX_TOKENS)
    queries: dict[str, Status] = Field(default_factory=dict, description="Each query's status.")
    input_tokens: dict[str, Annotated[float, Field(ge=0, le=MAX_TOKENS)]] = Field(
        default_factory=dict, description="Input tokens by component, if seen."
    )


def entry_of(
    run: RunResult,
    *,
    failed: bool,
    commit: str,
    date: str,
    commits: Iterable[str] = (),
    messages: Iterable[str] = (),
) -> HistoryEntry:
    """The history entry of `run` at `commit`; `messages` are its commits' messages (for the reverts they name)."""
    s = run.summary
    return HistoryEntry(
        commit=commit,
        commits=list(dict.fromkeys([*commits, commit])),
        reverts=sorted(reverted(messages)),
        date=date,
        agent=run.agent,
        spec=run.spec,
        status=s.status,
        failed_gate=failed,
        total=s.total,
        passed=s.passed,
        pass_rate=tidy(s.passed / s.total) if s.total else 0.0,
        composite_score=s.composite_score,
        cost_usd=s.cost_usd,
        cost_unknown=s.cost_unknown,
        total_tokens=s.total_tokens,
        queries={r.id: r.status for r in run.results},
        input_tokens=dict(s.tokens.components) if s.tokens else {},
    )


def reverted(messages: Iterable[str]) -> set[str]:
    """The commits (full or abbreviated shas, lower case) that commit messages say they revert."""
    return {sha.lower() for message in messages for sha in _REVERTS.findall(message or "")}


def read_entries(text: str, source: str, warn: Callable[[str], None]) -> list[HistoryEntry]:
    """The entries of a history file (JSON Lines, oldest first).

    Lines that are not entries are skipped, and `warn` is called once naming them (see the module docstring).
    """
    entries, skipped = [], []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            entries.append(_entry(line))
        except _Unusable as exc:
            skipped.append(f"line {number} ({exc})")
    if skipped:
        shown = "; ".join(skipped[:SKIPPED_SHOWN]) + (
            f"; and {len(skipped) - SKIPPED_SHOWN} more" if len(skipped) > SKIPPED_SHOWN else ""
        )
        lines = "line" if len(skipped) == 1 else "lines"
        warn(f"{one_line(source, 200)}: skipped {len(skipped)} {lines} that are not history entries: {shown}")
    return entries


class _Unusable(Exception):
    """A history line that is not an entry; str() says why, in a few words."""


def _entry(line: str) -> HistoryEntry:
    if len(line) > MAX_HISTORY_LINE:
        raise _Unusable(f"longer than {MAX_HISTORY_LINE:,} characters")
    try:
        data = json.loads(line)
    except RecursionError:  # brackets nested thousands deep
        raise _Unusable("nested too deep") from None
    except ValueError as exc:
        raise _Unusable(f"not JSON: {one_line(str(exc), 80)}") from None
    if not isinstance(data, dict):
        raise _Unusable("not a JSON object")
    if data.get("schema_version", HISTORY_SCHEMA_VERSION) != HISTORY_SCHEMA_VERSION:
        raise _Unusable(f"schema_version {one_line(repr(data['schema_version']), 60)} is not {HISTORY_SCHEMA_VERSION}")
    try:
        return HistoryEntry.model_validate(data)
    except RecursionError:
        raise _Unusable("nested too deep") from None
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"]) or "the line"
        raise _Unusable(f"{one_line(where, 60)}: {one_line(error['msg'], 80)}") from None


def appended(text: str, entry: HistoryEntry) -> str:
    """The history file's text with `entry` as its last line."""
    return (text if not text or text.endswith("\n") else text + "\n") + entry.model_dump_json() + "\n"


def _matches(sha: str, named: set[str]) -> bool:
    sha = sha.lower()
    return any(sha.startswith(other) or other.startswith(sha) for other in named)


@dataclass(frozen=True)
class Spread:
    """One figure over the versions: population variance and standard deviation, range, least-squares slope per run."""

    mean: float
    variance: float
    std_dev: float
    min: float
    max: float
    slope: float
    last: float


def spread(values: list[float]) -> Spread | None:
    """The figure's Spread over `values` (oldest first); None without a value."""
    if not values:
        return None
    n = len(values)
    mean = sum(values) / n
    variance = sum((v - mean) ** 2 for v in values) / n
    centre = (n - 1) / 2
    spread_x = sum((i - centre) ** 2 for i in range(n))
    slope = sum((i - centre) * (v - mean) for i, v in enumerate(values)) / spread_x if spread_x else 0.0
    return Spread(
        tidy(mean), tidy(variance), tidy(math.sqrt(variance)), min(values), max(values), tidy(slope), values[-1]
    )


@dataclass(frozen=True)
class HistoryFigures:
    """The reference's stability figures over a history (see the module docstring)."""

    runs: int
    change_fail_percentage: float | None
    revert_rate: float | None
    reverted: list[str]
    pass_rate: Spread | None
    cost_usd: Spread | None
    composite_score: Spread | None


def history_figures(entries: list[HistoryEntry], messages: Iterable[str] = ()) -> HistoryFigures:
    """CFP, revert rate and each figure's spread over the versions.

    The revert rate is read from the entries' own `reverts` and the repository's commit `messages`.
    """
    named = reverted(messages) | {sha.lower() for e in entries for sha in e.reverts}
    gone = [e.commit for e in entries if any(_matches(sha, named) for sha in e.commits or [e.commit])]
    n = len(entries)
    return HistoryFigures(
        runs=n,
        change_fail_percentage=tidy(sum(e.failed_gate for e in entries) / n) if n else None,
        revert_rate=tidy(len(gone) / n) if n else None,
        reverted=gone,
        pass_rate=spread([e.pass_rate for e in entries]),
        cost_usd=spread([e.cost_usd for e in entries]),
        composite_score=spread([e.composite_score for e in entries]),
    )


# figure → (label, floor of the band's width as a share of the mean, whether higher is better, the figure's ceiling)
TREND_FIGURES = {
    "pass_rate": ("pass rate", 0.0, True, 1.0),
    "composite_score": ("composite", 0.0, True, 1.0),
    "cost_usd": ("cost", COST_TOLERANCE, False, math.inf),
    "total_tokens": ("tokens", COST_TOLERANCE, False, math.inf),
}


@dataclass(frozen=True)
class TrendLine:
    """One figure over the last runs on the default branch, this run's value beside, and its band."""

    figure: str
    label: str
    values: list[float]
    current: float | None
    low: float | None
    high: float | None
    higher_is_better: bool

    @property
    def outside(self) -> str:
        """'worse', 'better' or '' (inside the band, or no band)."""
        if self.current is None or self.low is None or self.high is None:
            return ""
        if self.low <= self.current <= self.high:
            return ""
        above = self.current > self.high
        return "better" if above == self.higher_is_better else "worse"


@dataclass(frozen=True)
class Trend:
    """The last runs on the default branch (commits, oldest first) and this run's figures against them."""

    commits: list[str]
    lines: list[TrendLine]
    figures: HistoryFigures

    @property
    def alerts(self) -> list[TrendLine]:
        return [line for line in self.lines if line.outside == "worse"]


def _figure(entry: HistoryEntry | RunResult, name: str) -> float:
    if isinstance(entry, HistoryEntry):
        return float(getattr(entry, name))
    s = entry.summary
    return float(s.passed / s.total if s.total else 0.0) if name == "pass_rate" else float(getattr(s, name))


def trend(entries: list[HistoryEntry], run: RunResult | None = None, window: int = DEFAULT_WINDOW) -> Trend:
    """The last `window` entries of one spec's history as trend lines, with `run`'s figures and bands beside."""
    recent = entries[-window:]
    lines = []
    for name, (label, floor, higher, ceiling) in TREND_FIGURES.items():
        values = [_figure(e, name) for e in recent]
        low = high = None
        if len(values) >= MIN_BAND_RUNS:
            mean = sum(values) / len(values)
            width = max(2 * math.sqrt(sum((v - mean) ** 2 for v in values) / len(values)), floor * abs(mean))
            low, high = tidy(max(mean - width, 0.0)), tidy(min(mean + width, ceiling))
        current = _figure(run, name) if run is not None else None
        lines.append(TrendLine(name, label, values, current, low, high, higher))
    return Trend([e.commit for e in recent], lines, history_figures(recent))


def series_entries(entries: list[HistoryEntry], spec: str) -> list[HistoryEntry]:
    """The entries of one spec (a history file may hold several specs' runs)."""
    return [e for e in entries if e.spec == spec]
