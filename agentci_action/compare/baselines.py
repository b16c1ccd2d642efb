"""Versioned golden baselines: save (after a precheck that judges the traces as `agentci test` does), load, list.

Layout: one file per version, `<baseline_dir>/<version>.json`, with `baseline_dir` relative to the spec:

    {"schema_version": "agentci.baseline/v1", "version": "v2-fixed", "agent": "rag-agent",
     "captured_at": "2026-11-22T05:00:00Z",
     "metadata": {"models": [...], "spec_hash": "sha256:…", "git_commit": "…" | null,
                  "precheck_passed": true, "precheck_failures": [], "unverified_checks": {}, "selected_tags": []},
     "queries": {"<query id>": [trace of run 0, trace of run 1, …], …}}

Indented with sorted query ids, so a PR that re-records a baseline shows, line by line, which query's
tools, answer or cost changed; one file per version lets a save be atomic (temporary file, then rename).
The older single-trace shape `{version, agent, captured_at, metadata: {model, spec_hash, precheck_passed},
trace}` still loads, from `<baseline_dir>/<version>.json` or `<baseline_dir>/<agent>/<version>.json`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agentci_action._util.errors import InputError, Problem
from agentci_action._util.field_errors import field_message
from agentci_action._util.gcpause import gc_paused
from agentci_action._util.git import git_text
from agentci_action._util.json_text import dumps
from agentci_action._util.limits import MAX_VERSION_LENGTH
from agentci_action._util.output import LinkedPath, SymbolicLink, describe, publish, utf8
from agentci_action._util.text import one_line
from agentci_action.engine.correctness import Judge
from agentci_action.engine.evaluate_spec import (
    MAX_VARIANTS,
    Observe,
    Settings,
    evaluate_spec,
    group_traces,
    match_traces,
)
from agentci_action.engine.results import LAYERS, Status
from agentci_action.spec.models import AgentCISpec, spec_hash
from agentci_action.trace.canonical import EXAMPLE_KEY, Trace
from agentci_action.trace.pricing import price_trace

BASELINE_SCHEMA_VERSION = "agentci.baseline/v1"
VERSION_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


class BaselineError(InputError):
    """A baseline version that is missing, malformed, or cannot be written."""

    kind = "baseline"


class PrecheckFailed(BaselineError):
    """The traces fail `agentci test` (fail-on correctness): not saved (exit 1) unless forced."""

    exit_code = 1


INIT_EXAMPLE = (
    "agentci init's example trace, not a run of your agent: a baseline is the run of your agent that later runs are "
    "compared with; save one from your agent's own traces (and delete the example query and its trace)"
)


class BaselineMetadata(BaseModel):
    model_config = ConfigDict(extra="allow")  # older files carry e.g. judge_rubric_ids

    models: list[str] = Field(default_factory=list, description="LLM models seen in the traces.")
    spec_hash: str | None = Field(None, description="sha256 of the spec the baseline was saved against.")
    git_commit: str | None = Field(None, description="HEAD of the spec's repository when saved, if known.")
    precheck_passed: bool = Field(
        False, description="Every query passed as `agentci test` judges it when saved (false when forced)."
    )
    precheck_failures: list[str] = Field(default_factory=list, description="What failed, when saved with --force-save.")
    unverified_checks: dict[str, int] = Field(
        default_factory=dict,
        description="Correctness checks the precheck could not run (no judge key or cached verdict, no embedding "
        "provider) in queries that did not fail: reason → how many. The precheck passed without them.",
    )
    selected_tags: list[str] = Field(
        default_factory=list,
        description="The tags its queries were selected by (`agentci save --tags`); empty: every query of the spec.",
    )


class Baseline(BaseModel):
    """One version: every query's traces plus how and when they were captured."""

    model_config = ConfigDict(extra="forbid")

    schema_version: str = BASELINE_SCHEMA_VERSION
    version: str
    agent: str
    captured_at: str
    metadata: BaselineMetadata
    queries: dict[str, list[Trace]]

    @property
    def trace_count(self) -> int:
        return sum(len(runs) for runs in self.queries.values())


@dataclass(frozen=True)
class StoredBaseline:
    """A baseline and the file it came from."""

    baseline: Baseline
    file: Path


def baseline_dir(spec: AgentCISpec) -> Path:
    """The spec's baseline_dir, relative to the spec file."""
    return Path(spec.path).parent / spec.baseline_dir


def git_commit(directory: Path) -> str | None:
    """HEAD of the git repository holding `directory`; None outside a repository or without git."""
    return git_text(directory, "rev-parse", "HEAD", timeout=10).strip() or None


def check_version_name(version: str, option: str = "--version") -> str:
    """`version` when it is a usable name.

    Letters, digits, '.', '_' and '-', starting with a letter or digit, at most MAX_VERSION_LENGTH characters (it names
    a file); BaselineError naming `option` otherwise.
    """
    if len(version) > MAX_VERSION_LENGTH:
        raise BaselineError.at(
            option, 0, f"baseline version name too long ({len(version)} characters; at most {MAX_VERSION_LENGTH})"
        )
    if not VERSION_PATTERN.match(version):
        raise BaselineError.at(
            option,
            0,
            f"invalid baseline version {one_line(version, 80)!r}: use letters, digits, '.', '_' and '-' (e.g. v2-fixed)",
        )
    return version


# --- precheck and save ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Precheck:
    """The precheck's verdict: one problem per query that would fail `test`, and the checks it could not run."""

    failures: list[Problem]
    unverified: dict[str, int]


def precheck(
    spec: AgentCISpec, traces: dict[str, list[Trace]], judge: Judge | None = None, observe: Observe | None = None
) -> Precheck:
    """Every query evaluated as `agentci test` evaluates it with fail-on correctness (and no baseline).

    Its correctness (the `checks:` block's included), forbidden tools, and with repeated runs the min_pass_rate gate
    across them. The judge's checks skip without a judge.

    Returns one problem per query that would fail `test` (or could not be evaluated), at its spec line, and the
    correctness checks skipped in the others (RunResult.unverified).
    """
    run = evaluate_spec(
        spec,
        [t for runs in traces.values() for t in runs],
        judge=judge,
        settings=Settings(fail_on=frozenset({"correctness"})),
        on_result=observe("precheck", len(traces)) if observe else None,
    )
    failures = []
    for result in run.results:
        if result.blocking or result.status is Status.ERROR:
            failed = [
                m
                for name in LAYERS
                if result.layer(name).status in (Status.FAIL, Status.ERROR)
                for m in result.layer(name).messages
            ]
            failures.append(
                Problem(result.file, result.line, f"query {result.id!r}: {'; '.join(failed) or result.status.value}")
            )
    return Precheck(failures, run.unverified())


@dataclass(frozen=True)
class SaveOptions:
    """How a version is saved.

    `force`: even when the precheck fails (the metadata records that it did); `overwrite`: replace an existing file;
    `captured_at` (default: now, UTC) and `commit` (the spec's git commit, when known): recorded in the baseline;
    `spec_hash`: the hash recorded, the whole spec's when the spec saved is a selection of it by tags (default: the
    saved spec's own), as `agentci test --tags` compares the whole spec's with it.
    """

    force: bool = False
    overwrite: bool = False
    captured_at: str | None = None
    commit: str | None = None
    spec_hash: str | None = None


def build_baseline(
    spec: AgentCISpec,
    traces: list[Trace],
    version: str,
    options: SaveOptions,
    judge: Judge | None = None,
    observe: Observe | None = None,
) -> tuple[Baseline, list[Problem]]:
    """The baseline for `traces` (every query of the spec needs one) and the precheck failures.

    Raises BaselineError listing the failures when the precheck fails and `options.force` is false.
    """
    captured_at = options.captured_at or now_utc()  # when the save began, not when its precheck ended
    by_query = match_traces(spec.queries, traces).by_query
    examples = [trace for runs in by_query.values() for trace in runs if EXAMPLE_KEY in trace.metadata]
    if examples:  # saved, it would be the reference of the first real run: a diff against an example
        raise BaselineError([Problem(trace.source, 0, INIT_EXAMPLE) for trace in examples])
    runs = {key: [t.model_copy(update={"id": key}) for t in by_query[key]] for key in sorted(by_query)}
    checked = precheck(spec, runs, judge, observe)
    failures = checked.failures
    if failures and not options.force:
        raise PrecheckFailed(failures)
    models = sorted({call.model for ts in runs.values() for t in ts for call in t.llm_calls if call.model})
    metadata = BaselineMetadata(
        models=models,
        spec_hash=options.spec_hash or spec_hash(spec),
        git_commit=options.commit,
        precheck_passed=not failures,
        precheck_failures=[str(p) for p in failures],
        unverified_checks=checked.unverified,
        selected_tags=list(spec.selected_tags),
    )
    return Baseline(
        version=check_version_name(version), agent=spec.agent, captured_at=captured_at, metadata=metadata, queries=runs
    ), failures


def now_utc() -> str:
    return datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def dump(baseline: Baseline) -> str:
    """The file's text.

    Indented JSON; traces leave out values equal to their default (a new trace field in a later release does not touch
    every baseline), the metadata keeps every key (null says "unknown").
    """
    data = baseline.model_dump(mode="json", exclude={"queries"})
    data["queries"] = {
        key: [t.model_dump(mode="json", by_alias=True, exclude_defaults=True) for t in runs]
        for key, runs in baseline.queries.items()
    }
    return dumps(data) + "\n"


def write_atomic(path: Path, text: str, *, overwrite: bool) -> None:
    """Write `text` to a temporary file beside `path` and fsync it, then publish it in one step.

    Without `overwrite`, a hard link that fails if `path` exists (creation is atomic and exclusive: of two saves racing
    for one version, exactly one wins and the other raises); with it, a rename over `path`.

    An interrupted or failed write (a full disk) leaves any existing file untouched and raises BaselineError; a
    symbolic link on its way is a LinkedPath error, and nothing is written (output.publish).
    """
    version = path.stem
    if path.exists() and not overwrite:
        raise _exists(path)
    try:
        # 0644: 0600 would hide a committed baseline from other users and CI
        publish(path, utf8(text), mode=0o644, overwrite=overwrite, sync=True)
    except FileExistsError:
        raise _exists(path) from None
    except SymbolicLink as link:
        raise LinkedPath(f"baseline version {version!r}", path, link) from None
    except OSError as exc:
        raise BaselineError.at(
            str(path), 0, f"could not write baseline version {version!r}: {describe(exc)}; nothing was changed"
        ) from None


def _exists(path: Path) -> BaselineError:
    return BaselineError.at(
        str(path), 0, f"baseline version {path.stem!r} already exists; pass --overwrite to replace it"
    )


def save_baseline(
    spec: AgentCISpec,
    traces: list[Trace],
    version: str,
    options: SaveOptions = SaveOptions(),
    judge: Judge | None = None,
    observe: Observe | None = None,
) -> tuple[Path, Baseline, list[Problem]]:
    """Precheck (with `judge` for the judge checks; `observe` sees its progress), then write `<baseline_dir>/<version>.json` atomically.

    Returns (file, baseline, precheck failures).
    """
    path = baseline_dir(spec) / f"{check_version_name(version)}.json"
    if path.exists() and not options.overwrite:  # before the precheck's judge calls; write_atomic decides a race
        raise _exists(path)
    baseline, failures = build_baseline(spec, traces, version, options, judge, observe)
    write_atomic(path, dump(baseline), overwrite=options.overwrite)
    return path, baseline, failures


# --- load and list -------------------------------------------------------------------------------


def _line_of(document: yaml.Node | None, loc: tuple[str | int, ...]) -> int:
    """The line of the value at `loc` (keys and list indexes) in a composed JSON document; 0 if unknown."""
    if document is None:
        return 0
    node, line = document, 1
    for part in loc:
        if isinstance(node, yaml.MappingNode):
            found = next(((k, v) for k, v in node.value if k.value == part), None)
            if found is None:
                break
            line, node = found[0].start_mark.line + 1, found[1]
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
            line = node.start_mark.line + 1
        else:
            break
    return line


def _compose(text: str) -> yaml.Node | None:
    """JSON is YAML: YAML's composer keeps every node's line (slow, so only for error messages)."""
    try:
        return yaml.compose(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError:
        return None


def _key_lines(text: str, keys: list[str]) -> dict[str, int]:
    """The line of each query key of the `queries` mapping, in one pass (keys come in file order); 0 if not found."""
    lines, pos, line = {}, max(text.find('"queries"'), 0), 1
    line += text.count("\n", 0, pos)
    for key in keys:
        found = text.find(json.dumps(key, ensure_ascii=False), pos)
        if found < 0:
            found = text.find(json.dumps(key), pos)
        if found < 0:
            lines[key] = 0
            continue
        line += text.count("\n", pos, found)
        lines[key], pos = line, found
    return lines


def _upgrade_single_trace(data: dict[str, Any]) -> dict[str, Any]:
    """The older shape {version, agent, captured_at, metadata: {model, …}, trace} → the current one."""
    metadata = dict(data.get("metadata") or {})
    if "model" in metadata and "models" not in metadata:
        model = metadata.pop("model")
        metadata["models"] = [model] if model else []
    trace = data["trace"]
    key = trace.get("id") or trace.get("query") if isinstance(trace, dict) else None
    return {
        "version": data.get("version"),
        "agent": data.get("agent"),
        "captured_at": data.get("captured_at"),
        "metadata": metadata,
        "queries": {str(key): [trace]},
    }


def read_baseline(path: Path) -> Baseline:
    """Parse and validate one baseline file. Raises BaselineError naming the file and line of every problem.

    A current-shape file is validated straight from its text (compiled); anything else takes the slower
    path that upgrades the older shape or finds the line of every problem.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise BaselineError.at(str(path), 0, f"cannot read baseline file: {exc}") from None
    with gc_paused():
        try:
            baseline, legacy = Baseline.model_validate_json(text), False
        except ValidationError:
            baseline, legacy = _read_slowly(path, text)
        baseline.queries = {key: [t.with_derived_totals() for t in runs] for key, runs in baseline.queries.items()}
    lines = (
        _key_lines(text, list(baseline.queries))
        if not legacy
        else dict.fromkeys(baseline.queries, text.count("\n", 0, max(text.find('"trace"'), 0)) + 1)
    )
    for key, runs in baseline.queries.items():
        for index, trace in enumerate(runs):
            trace._source = f"{path}:{lines[key]}" + (f" (run {index})" if len(runs) > 1 else "")
    return baseline


def _read_slowly(path: Path, text: str) -> tuple[Baseline, bool]:
    """(baseline, whether it was in the older shape), or BaselineError with the line of every problem."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BaselineError.at(str(path), exc.lineno, f"malformed JSON: {exc.msg} (column {exc.colno})") from None
    if not isinstance(data, dict):
        raise BaselineError.at(str(path), 1, f"a baseline file holds one JSON object, got {type(data).__name__}")
    legacy = "trace" in data and "queries" not in data
    try:
        return Baseline.model_validate(_upgrade_single_trace(data) if legacy else data), legacy
    except ValidationError as exc:
        document, problems = _compose(text), []
        for error in exc.errors():
            loc = tuple(error["loc"])
            source_loc = ("trace", *loc[3:]) if legacy and loc[:1] == ("queries",) else loc
            problems.append(
                Problem(
                    str(path),
                    _line_of(document, source_loc),
                    field_message(error, Baseline, source_loc, name_parent=True),
                )
            )
        raise BaselineError(problems) from None


def _is_file(path: Path) -> bool:
    """Whether `path` is a file; False when the name cannot be one (too long for the file system, say)."""
    try:
        return path.is_file()
    except OSError:
        return False


def _candidate_files(directory: Path, agent: str) -> list[Path]:
    return sorted([*directory.glob("*.json"), *(directory / agent).glob("*.json")]) if directory.is_dir() else []


class BaselineHeader(BaseModel):
    """What `agentci baselines` lists of a version: everything but the traces, validated without them."""

    version: str
    agent: str
    captured_at: str
    metadata: BaselineMetadata
    queries: int = 0
    traces: int = 0


@dataclass(frozen=True)
class StoredHeader:
    header: BaselineHeader
    file: Path


def read_header(path: Path) -> BaselineHeader:
    """A version's header (the traces only counted, not validated); BaselineError naming the file when unreadable."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(data, dict) and "trace" in data and "queries" not in data:
            data = _upgrade_single_trace(data)
        runs = data.get("queries") if isinstance(data, dict) else None
        if not isinstance(runs, dict):
            raise ValueError("no queries")
        return BaselineHeader.model_validate(
            {**data, "queries": len(runs), "traces": sum(len(r) for r in runs.values() if isinstance(r, list))}
        )
    except (OSError, UnicodeDecodeError, ValueError, AttributeError, ValidationError):
        read_baseline(path)  # names the file, line and problem
        raise BaselineError.at(str(path), 0, "not a baseline file") from None


def list_headers(spec: AgentCISpec) -> list[StoredHeader]:
    """Every version under the spec's baseline_dir, oldest first (by captured_at, then version).

    Read from the files' headers: the traces are read only for the version a run uses.
    """
    found = [StoredHeader(read_header(path), path) for path in _candidate_files(baseline_dir(spec), spec.agent)]
    first_file: dict[str, Path] = {}
    for item in found:
        earlier = first_file.setdefault(item.header.version, item.file)
        if earlier != item.file:
            raise BaselineError.at(
                str(item.file), 0, f"baseline version {item.header.version!r} is also in {earlier}; rename one"
            )
    return sorted(found, key=lambda s: (s.header.captured_at, s.header.version))


def traces_by_query(
    spec: AgentCISpec, baseline: Baseline
) -> tuple[dict[str, list[Trace]], list[str], dict[str, list[Trace]]]:
    """(the baseline's runs by query id, notes on unmatched runs, the queries since removed from the spec).

    The runs are keyed by the spec's query ids, matched by id else query text; the notes are on runs matching no query
    that are not a removed query's; the removed queries are keyed by their saved key, which the diff lists as removed.

    Calls saved without a cost (an older file, say) are priced with the spec's `pricing`, as trace files are.
    """
    priced = {key: [price_trace(t, spec.pricing) for t in runs] for key, runs in baseline.queries.items()}
    matched = group_traces(spec.queries, [t for runs in priced.values() for t in runs])
    kept = {id(t) for runs in matched.by_query.values() for t in runs}
    removed = {key: runs for key, runs in priced.items() if not any(id(t) in kept for t in runs)}
    stray = [t for key, runs in priced.items() if key not in removed for t in runs if id(t) not in kept]
    unmatched = group_traces(spec.queries, stray).unmatched if stray else []  # words their notes; rarely any
    notes = [f"baseline {baseline.version}: {note}" for note in unmatched]
    return {key: runs for key, runs in matched.by_query.items() if runs}, notes, removed


def reference_variants(runs: list[Trace]) -> list[Trace]:
    """A saved version's golden variants for one query.

    The first run of each distinct tool sequence, in run order, at most MAX_VARIANTS (runs repeating a route add no
    variant; a sixth distinct route is left out).
    """
    seen: dict[tuple[str, ...], Trace] = {}
    for trace in runs:
        seen.setdefault(trace.tool_sequence, trace)
    return list(seen.values())[:MAX_VARIANTS]


def load_baseline(spec: AgentCISpec, version: str | None = None, option: str = "--baseline") -> StoredBaseline | None:
    """Version `version`, or by default the newest whose precheck passed (None when there is none).

    A named version is read from `<baseline_dir>/<version>.json` (or `<baseline_dir>/<agent>/<version>.json`)
    alone, so a corrupt file of another version does not stand in the way; otherwise versions are chosen from
    the files' headers and only the chosen file is read whole. Raises BaselineError listing the available
    versions when `version` does not exist, and naming `option` when it is no version name (check_version_name).
    """
    directory = baseline_dir(spec)
    if version is not None and check_version_name(version, option):
        named = [
            path
            for path in (directory / f"{version}.json", directory / spec.agent / f"{version}.json")
            if _is_file(path)
        ]
        if len(named) == 2:
            raise BaselineError.at(str(named[1]), 0, f"baseline version {version!r} is also in {named[0]}; rename one")
        if named and (stored := read_baseline(named[0])).version == version:
            return StoredBaseline(stored, named[0])
    headers = list_headers(spec)
    if version is None:
        passed = [h for h in headers if h.header.metadata.precheck_passed]
        return StoredBaseline(read_baseline(passed[-1].file), passed[-1].file) if passed else None
    for item in headers:
        if item.header.version == version:
            return StoredBaseline(read_baseline(item.file), item.file)
    available = ", ".join(h.header.version for h in headers) or "none yet (agentci save creates one)"
    raise BaselineError.at(str(directory), 0, f"no baseline version {version!r}; available: {available}")


def compatibility_warnings(spec: AgentCISpec, stored: StoredBaseline, current_hash: str) -> list[str]:
    """Notes when a baseline was saved for another agent or from a different spec (the comparison still runs)."""
    baseline, notes = stored.baseline, []
    if baseline.agent != spec.agent:
        notes.append(
            f"{stored.file}: baseline {baseline.version} was saved for agent {baseline.agent!r}, "
            f"the spec is for {spec.agent!r}; compared anyway"
        )
    if baseline.metadata.spec_hash and baseline.metadata.spec_hash != current_hash:
        notes.append(
            f"{stored.file}: baseline {baseline.version} was saved from another version of the spec: "
            f"{spec_changes(spec, baseline)}; both sides are judged by the current spec (`agentci save` re-saves it)"
        )
    return notes


def spec_changes(spec: AgentCISpec, baseline: Baseline) -> str:
    """What can be told of how `spec` changed since `baseline` was saved: the queries added and gone, else that the rest did.

    A baseline keeps the spec's hash, not its text: beyond its queries, it cannot say which key changed. A version saved
    with --tags holds the queries with one of them: the others are not new.
    """
    tags = set(baseline.metadata.selected_tags)
    saved = set(baseline.queries)
    now = {query.key for query in spec.queries if not tags or tags.intersection(query.tags)}
    said = [
        f"{label} {', '.join(sorted(keys)[:5])}" + (f" and {len(keys) - 5} more" if len(keys) > 5 else "")
        for label, keys in (("queries added since:", now - saved), ("queries gone since:", saved - now))
        if keys
    ]
    if said:
        return "; ".join(said)
    if tags:
        return f"the same queries tagged {', '.join(sorted(tags))}, so another query or key changed"
    return "the same queries, so another key changed (the baseline keeps only the spec's hash)"


@dataclass(frozen=True)
class Reference:
    """What a run is compared with.

    A label (the version), per query id the runs the baseline side is evaluated on and the golden variants the path
    layer compares with, queries of the version no longer in the spec, and warnings about it.

    A saved version's traces are repeated runs: its variants are their distinct routes (reference_variants).
    Baseline traces given on their own (`--baseline-traces`) are variants, one accepted route each: `runs` is
    None, and the diff compares each query with the variant the path layer chose.
    """

    label: str
    variants: dict[str, list[Trace]]
    runs: dict[str, list[Trace]] | None = None
    removed: dict[str, list[Trace]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    commit: str | None = None  # the commit it was read at (--baseline-ref), else None: the working tree


def version_reference(spec: AgentCISpec, stored: StoredBaseline, wanted: set[str] | None = None) -> Reference:
    """A saved version as the reference for `spec` (for the queries in `wanted`, default all), with its warnings."""
    by_query, notes, removed = traces_by_query(spec, stored.baseline)
    runs = {k: v for k, v in by_query.items() if wanted is None or k in wanted}
    return Reference(
        stored.baseline.version,
        {k: reference_variants(v) for k, v in runs.items()},
        runs,
        removed,
        compatibility_warnings(spec, stored, spec_hash(spec)) + notes,
    )


def only_queries(reference: Reference, keys: set[str]) -> Reference:
    """`reference` for the queries in `keys` alone (a shard's): its variants and runs of other queries dropped."""
    return replace(
        reference,
        variants={k: v for k, v in reference.variants.items() if k in keys},
        runs=None if reference.runs is None else {k: v for k, v in reference.runs.items() if k in keys},
    )


def reference_for(full: AgentCISpec, selected: AgentCISpec, version: str | None = None) -> Reference | None:
    """Baseline `version` for the queries of `selected`, the `full` spec possibly filtered by tags.

    Default: the newest whose precheck passed; None when there is none. The hash and the matching of the baseline's
    traces need every query.
    """
    stored = load_baseline(full, version)
    if stored is None:
        return None
    return version_reference(full, stored, {q.key for q in selected.queries})
