"""`agentci goldens`: traces promoted to golden queries of the spec, selected, deduplicated, masked and checked.

Steps: load the spec and the traces (any format `agentci test --traces` reads); select the traces (ids, filters, then a
sample); propose a golden from each (pipeline/golden_proposals.py); merge the traces of one query id into one golden
(its runs: the golden follows the route most of them took, ties to the first); drop what the spec already has and
near-duplicates (pipeline/golden_dedupe.py) and, unless asked not to, a second golden on the same route; flag what
masking changed the meaning of, or what `agentci test` could not match to its trace; insert the rest into the spec's
text (pipeline/golden_yaml.py), load that text as the spec it would be, and evaluate each new golden on the traces it
came from with the engine `agentci test --traces` uses. Nothing is written here: `write` does it, once all this passed.
"""

from __future__ import annotations

import json
import os
import random
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentci_action._util.errors import Problem, SpecError, TraceError
from agentci_action._util.git import git_text
from agentci_action._util.output import replace_file
from agentci_action.engine.checks.agent import task_completed
from agentci_action.engine.evaluate_spec import evaluate_spec
from agentci_action.engine.results import ERROR, FAIL, WARN, QueryResult
from agentci_action.pipeline.golden_dedupe import NearDuplicates, words
from agentci_action.pipeline.golden_proposals import GoldenOptions, Masking, Proposal, Route, proposal, query_text
from agentci_action.pipeline.golden_yaml import appended, new_spec
from agentci_action.run.secrets import Masker
from agentci_action.spec.loader import load_spec
from agentci_action.spec.models import AgentCISpec, Provenance, QuerySpec
from agentci_action.trace.canonical import Trace
from agentci_action.trace.load import load_traces

DEFAULT_SIMILARITY = 0.8


@dataclass(frozen=True)
class Selection:
    """Which traces are promoted: by id, by filters on the trace (all must hold), then a seeded sample of the goldens."""

    ids: tuple[str, ...] = ()
    failed: bool = False
    slower_than_ms: float | None = None
    costlier_than_usd: float | None = None
    tools: tuple[str, ...] = ()  # any of them called
    framework: str | None = None
    where: tuple[tuple[str, str], ...] = ()  # metadata KEY=VALUE (a list value: holds VALUE)
    sample: int | None = None
    seed: int = 0


@dataclass(frozen=True)
class Dedupe:
    """Near-duplicate queries (word-set Jaccard at least `similarity`) and, with `same_route`, a route already kept.

    A route alone is opt-in: on τ-bench two different requests (cancel a booking; ask why its insurance is missing) were
    met with the same single lookup of the same reservation, and route-alone dedupe merged them.
    """

    similarity: float = DEFAULT_SIMILARITY
    same_route: bool = False


@dataclass(frozen=True)
class PromotionRequest:
    """What to promote from where into which file; `output` None: into the spec itself."""

    spec: str
    traces: list[str]
    trace_format: str | None = None
    output: str | None = None
    selection: Selection = Selection()
    dedupe: Dedupe = Dedupe()
    options: GoldenOptions = field(default_factory=GoldenOptions)
    environ: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Dropped:
    """A trace not promoted, and why."""

    source: str
    key: str
    reason: str


@dataclass
class Promotion:
    """What `agentci goldens` found and would write: the goldens, the flagged and dropped ones, the new text."""

    target: Path
    read: int  # traces read
    selected: int  # traces selected
    margin: float = 0.5  # the cost budget's, above the observed figure
    kept: list[Proposal] = field(default_factory=list)  # written
    flagged: list[Proposal] = field(default_factory=list)  # not written: Proposal.flag says why
    dropped: list[Dropped] = field(default_factory=list)
    sampled_from: int = 0  # goldens the sample was drawn from (0: no sample)
    added: str = ""  # the YAML added to the target
    text: str = ""  # the target's whole new text
    verdicts: dict[str, str] = field(default_factory=dict)  # golden id → how it does on its source traces
    failing: list[str] = field(default_factory=list)  # goldens (not incidents) failing on their source traces


def promote(request: PromotionRequest) -> Promotion:
    """Everything `agentci goldens` decides, nothing written (see the module docstring).

    SpecError or TraceError, naming the file and line, for a spec that does not validate, traces that cannot be read,
    a selected trace without a query, or a golden whose id is the id of a different query already in the spec.
    """
    spec = load_spec(request.spec)
    target = Path(request.output or request.spec)
    same_file = request.output is None or Path(request.output).resolve() == Path(request.spec).resolve()
    existing = list(spec.queries) + ([] if same_file or not target.exists() else load_spec(target).queries)
    traces = load_traces(request.traces, request.trace_format, spec.pricing)
    chosen = [trace for trace in traces if _selected(trace, request.selection)]
    _check_queries(chosen)
    secrets = Masker.for_environment(spec.runner.env if spec.runner else {}, request.environ)
    masking, commit = Masking(secrets), git_text(target.resolve().parent, "rev-parse", "HEAD").strip()
    options = request.options
    proposals = [proposal(t, _provenance(t, target, commit, options), options, masking) for t in chosen]
    promotion = Promotion(target, read=len(traces), selected=len(chosen), margin=options.cost_margin)
    goldens = _deduplicated(_by_query(proposals), existing, request.dedupe, promotion)
    goldens = _sampled(goldens, request.selection, promotion)
    for golden in goldens:
        golden.flag = golden.flag or _unmatched(golden)
    promotion.kept = [golden for golden in goldens if not golden.flag]
    promotion.flagged = [golden for golden in goldens if golden.flag]
    if promotion.kept:
        _with_text(promotion, spec)
        _evaluated(promotion, traces)
    return promotion


def write(promotion: Promotion) -> None:
    """The target's new text, in one step (its mode kept; a new spec readable by all)."""
    mode = promotion.target.stat().st_mode & 0o777 if promotion.target.exists() else 0o644
    replace_file(promotion.target, promotion.text, "the spec", mode=mode)


def failed(trace: Trace) -> bool:
    """The run failed: its status says the task did not complete, a tool call failed, or the runner got no trace."""
    return task_completed(trace) is False or any(c.error for c in trace.tool_calls) or trace.run_error is not None


def _selected(trace: Trace, selection: Selection) -> bool:
    """Whether every part of the selection holds for the trace (a sample is drawn later, from the goldens)."""
    checks = (
        not selection.ids or trace.id in selection.ids,
        not selection.failed or failed(trace),
        selection.slower_than_ms is None or (trace.total_duration_ms or 0) > selection.slower_than_ms,
        selection.costlier_than_usd is None or (trace.total_cost_usd or 0) > selection.costlier_than_usd,
        not selection.tools or any(name in selection.tools for name in trace.tool_sequence),
        selection.framework is None or trace.metadata.get("source_format") == selection.framework,
        all(_holds(trace.metadata.get(key), value) for key, value in selection.where),
    )
    return all(checks)


def _holds(found: Any, value: str) -> bool:
    if isinstance(found, list):
        return value in [str(item) for item in found]
    return found is not None and str(found) == value


def _check_queries(traces: list[Trace]) -> None:
    """TraceError naming each trace (file:line) that cannot become a golden: no query, or a turn without one."""
    problems = []
    for trace in traces:
        where = split_source(trace.source)
        if trace.turns:
            empty = [str(n + 1) for n, turn in enumerate(trace.turns) if not query_text(turn)]
            if empty:
                message = f"conversation {trace.id or ''!r}: turn {', '.join(empty)} has no user message to promote"
                problems.append(Problem(*where, message))
        elif not query_text(trace):
            problems.append(
                Problem(
                    *where,
                    f"trace {trace.id or ''!r} has no query (the user's input) to promote: record it in the trace "
                    "(`query`, or metadata agentci.query), or leave the trace out of the selection (--id, filters)",
                )
            )
    if problems:
        raise TraceError(problems)


def _provenance(trace: Trace, target: Path, commit: str, options: GoldenOptions) -> dict[str, Any]:
    """Where the trace came from: its file and line (relative to the target spec), ids, format, time, the commit."""
    file, line = split_source(trace.source)
    source = os.path.relpath(Path(file).resolve(), target.resolve().parent).replace(os.sep, "/")
    calls = trace.llm_calls or [call for turn in trace.turns for call in turn.llm_calls]
    found = {
        "source": f"{source}:{line}" if line else source,
        "trace_id": trace.metadata.get("trace_id") or trace.metadata.get("session_id") or trace.id,
        "framework": trace.metadata.get("source_format"),
        "timestamp": next((call.timestamp for call in calls if call.timestamp), None),
        "promoted_commit": commit or None,
        "incident": True if options.incident is not None else None,
    }
    return {key: str(value) if key != "incident" else value for key, value in found.items() if value is not None}


def _by_query(proposals: list[Proposal]) -> list[tuple[Proposal, list[Proposal]]]:
    """The proposals of one query id as one golden: the run on the route most of them took (ties: the first)."""
    groups: dict[str, list[Proposal]] = {}
    for found in proposals:
        groups.setdefault(found.key, []).append(found)
    merged = []
    for runs in groups.values():
        routes = Counter(run.route for run in runs)
        most = max(routes.values())
        chosen = next(run for run in runs if routes[run.route] == most)
        chosen.runs, chosen.routes = len(runs), len(routes)
        merged.append((chosen, [run for run in runs if run is not chosen]))
    return merged


def _existing_route(query: QuerySpec) -> Route:
    calls = query.path.expected_tool_calls if query.path and query.path.expected_tool_calls else []
    return tuple((call.name or "", json.dumps(call.arguments or {}, sort_keys=True)) for call in calls)


def _text_of(query: QuerySpec) -> str:
    return "\n".join(turn.user for turn in query.turns) if query.turns else query.query


def _deduplicated(
    groups: list[tuple[Proposal, list[Proposal]]], existing: list[QuerySpec], dedupe: Dedupe, promotion: Promotion
) -> list[Proposal]:
    """The goldens not already in the spec, nor near-duplicates or (with same_route) route twins of one kept before.

    Every trace left out is in promotion.dropped with its reason. SpecError for a golden whose id is taken by a
    different query of the spec (an id is never overwritten).
    """
    known = {query.key: query for query in existing}
    texts = {query.key: words(_text_of(query)) for query in existing}
    goldens = [chosen for chosen, _ in groups]
    index = NearDuplicates(dedupe.similarity, [*texts.values(), *(words(g.text) for g in goldens)])
    routes: dict[Route, str] = {}
    for key, found in texts.items():
        index.add(key, found)
        if route := _existing_route(known[key]):
            routes.setdefault(route, key)
    kept, clashes = [], []
    taken = set(known) | {chosen.key for chosen in goldens}  # the goldens' own ids are told apart by _by_query
    for chosen, others in groups:
        promotion.dropped += [Dropped(o.trace.source, o.key, f"another run of {chosen.key!r}") for o in others]
        reason = ""
        if (query := known.get(chosen.key)) is not None:
            if _text_of(query) != chosen.text and chosen.key == chosen.trace.id:
                where = f"{query.file}:{query.line}"
                clashes.append(
                    Problem(
                        *split_source(chosen.trace.source),
                        f"id {chosen.key!r} is already the id of a different query at {where}: an id is never "
                        "overwritten; leave the trace out (--id, filters) or change the query there",
                    )
                )
                continue
            reason = f"already in the spec as {chosen.key!r} ({query.file}:{query.line})"
            if _text_of(query) != chosen.text:  # an id derived from other words: the next free one
                chosen.golden["id"] = _free(chosen.key, taken)
                reason = ""
        found = words(chosen.text)
        if not reason and (near := index.find(found)) is not None:
            reason = f"near-duplicate of {near[0]!r} (similarity {near[1]:.2f})"
        if not reason and dedupe.same_route and chosen.route and chosen.route in routes:
            reason = f"same route as {routes[chosen.route]!r}: {' → '.join(name for name, _ in chosen.route)}"
        if reason:
            promotion.dropped.append(Dropped(chosen.trace.source, chosen.key, reason))
            continue
        kept.append(chosen)
        taken.add(chosen.key)
        index.add(chosen.key, found)
        if chosen.route:
            routes.setdefault(chosen.route, chosen.key)
    if clashes:
        raise SpecError(clashes)
    return kept


def _free(key: str, taken: set[str]) -> str:
    """`key`, else `key-2`, `key-3`…: the first not taken."""
    n, candidate = 2, key
    while candidate in taken:
        candidate, n = f"{key}-{n}", n + 1
    return candidate


def split_source(source: str) -> tuple[str, int]:
    """'file:line', as a trace's source and a golden's provenance give it, as (file, line); line 0 when it names none."""
    file, _, line = source.rpartition(":")
    return (file, int(line)) if line.isdigit() else (source, 0)


def provenance_file(provenance: Provenance, spec: Path) -> Path:
    """The file a promoted golden of the spec at `spec` came from (its provenance is relative to the spec), resolved."""
    return (spec.parent / split_source(provenance.source)[0]).resolve()


def _sampled(goldens: list[Proposal], selection: Selection, promotion: Promotion) -> list[Proposal]:
    """`selection.sample` of the goldens, drawn with its seed, in their order; all of them without a sample."""
    if selection.sample is None or selection.sample >= len(goldens):
        return goldens
    promotion.sampled_from = len(goldens)
    chosen = set(random.Random(selection.seed).sample(range(len(goldens)), selection.sample))
    left = [golden for n, golden in enumerate(goldens) if n not in chosen]
    promotion.dropped += [Dropped(g.trace.source, g.key, "not in the sample") for g in left]
    return [golden for n, golden in enumerate(goldens) if n in chosen]


def _unmatched(golden: Proposal) -> str:
    """Why `agentci test` could not match the golden to its trace (neither by id nor by query text), or ""."""
    trace = golden.trace
    if trace.id == golden.key or query_text(trace) == golden.golden.get("query", golden.text):
        return ""
    return "`agentci test` could not match it to its trace: the trace has no usable id and its query was masked"


def _with_text(promotion: Promotion, spec: AgentCISpec) -> None:
    """The target's new text with the goldens, validated as the spec it would be (SpecError: never written)."""
    goldens = [golden.golden for golden in promotion.kept]
    target = promotion.target
    if target.exists():
        old = target.read_text(encoding="utf-8")
        promotion.text = appended(old, str(target), goldens)
        promotion.added = _added(old, promotion.text)
    else:
        promotion.text = promotion.added = new_spec(spec.agent, goldens)


def _added(old: str, new: str) -> str:
    """The lines `new` holds that `old` does not (one block inserted into it)."""
    start = next((n for n, (a, b) in enumerate(zip(old, new)) if a != b), len(old))
    start = new.rfind("\n", 0, start) + 1
    return new[start : start + len(new) - len(old)]


def _evaluated(promotion: Promotion, traces: list[Trace]) -> None:
    """Each new golden evaluated on the traces `agentci test --traces` would match it with, as that command does."""
    loaded = load_spec(promotion.target, text=promotion.text)
    keys = {golden.key for golden in promotion.kept}
    queries = [query for query in loaded.queries if query.key in keys]
    incidents = {golden.key for golden in promotion.kept if golden.golden["provenance"].get("incident")}
    run = evaluate_spec(loaded, list(traces), queries=queries)
    for result in run.results:
        promotion.verdicts[result.id] = _verdict(result, result.id in incidents)
        if result.status in (FAIL, ERROR) and result.id not in incidents:
            promotion.failing.append(result.id)


def _verdict(result: QueryResult, incident: bool) -> str:
    """How a golden does on its source traces, in a sentence."""
    layers = (result.correctness, result.path, result.cost)
    failing = [f"{c.name}: {c.message}" for layer in layers for c in layer.checks if c.status in (FAIL, ERROR)]
    if result.status in (FAIL, ERROR):
        said = "; ".join(failing) or result.status.value
        return (
            f"fails on its source trace, as an incident should ({said})"
            if incident
            else f"FAILS on its source trace ({said})"
        )
    if incident:
        return "passes on its source trace: as an incident it should fail (give --expect-answer, --expect-route or --forbid-tool, or edit it)"
    if result.status is WARN:
        warned = [c.name for layer in layers for c in layer.checks if c.status is WARN]
        return f"passes on its source trace (warnings: {', '.join(warned) or 'see agentci test'})"
    return "passes on its source trace"
