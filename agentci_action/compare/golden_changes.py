"""The golden queries a pull request added, changed or removed against its base commit.

New cases never arrive unseen: the spec, with the files it `!include`s, is read as it is at the base commit
(compare/base_ref.py), loaded like any spec, and its queries are matched with the current spec's by id. A changed
one says in a line what changed: "correctness.expected_in_answer: +'refund'", "query text", "path.expected_tool_calls",
"cost.max_usd: 0.02 → 0.05", "provenance only". A promoted query (`agentci goldens`) carries its provenance, which
the comment shows. A base commit without the spec file adds every query; a base spec that does not load is an
InputError saying so (the evaluation stands without the list).
"""

from __future__ import annotations

import posixpath
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml

from agentci_action._util.errors import InputError, SpecError
from agentci_action.compare.base_ref import (
    KINDS,
    BaseRef,
    Snapshot,
    copy_files,
    open_snapshot,
    repository_path,
    safe_path,
)
from agentci_action.spec.loader import load_spec
from agentci_action.spec.models import AgentCISpec, Provenance, QuerySpec

MAX_SPEC_FILES = 200  # the spec and the files it includes, read at the base commit
PARTS_SHOWN = 3  # what changed in a query, said in its line; the rest counted
NAMES = {"query": "query text"}  # a field's name where the dotted path would not say it
VALUE_LIMIT = 40  # characters of a list item or value quoted in a change


@dataclass(frozen=True)
class GoldenChange:
    """One golden query of the spec: its id, how it changed, its line and (changed) what changed.

    `line` is 'agentci_spec.yaml:42', a repository path: the current spec's, the base's for a removed query;
    `provenance` the current query's when it was promoted (`agentci goldens`), none for a removed one.
    """

    query: str
    change: Literal["added", "changed", "removed"]
    line: str
    detail: str = ""
    provenance: Provenance | None = None

    def as_json(self) -> dict[str, Any]:
        found = self.provenance.model_dump(mode="json") if self.provenance is not None else None
        return {
            "query": self.query,
            "change": self.change,
            "line": self.line,
            "detail": self.detail,
            "provenance": found,
        }


def golden_changes(spec: AgentCISpec, base: BaseRef) -> list[GoldenChange]:
    """The queries of `spec` (the whole spec, before any tags) added, changed or removed since the commit `base` names.

    None ([]) for a spec built in memory, without a file to read at the base commit.
    """
    if not spec.path:
        return []
    directory = Path.cwd().resolve()
    snapshot, root = open_snapshot(base, directory)
    path = repository_path(str(Path(spec.path).resolve()), root, directory)
    if not path:
        return []
    with tempfile.TemporaryDirectory(prefix="agentci-goldens-") as scratch_dir:
        scratch = Path(scratch_dir).resolve()
        before = _base_queries(snapshot, path, scratch) if _copy_spec(snapshot, path, scratch) else {}
    now = {query.key: (query, _line(query, root, directory)) for query in spec.queries}
    changes = []
    for key in [*now, *(key for key in before if key not in now)]:
        if key not in before:
            query, line = now[key]
            changes.append(GoldenChange(key, "added", line, provenance=query.provenance))
        elif key not in now:
            changes.append(GoldenChange(key, "removed", before[key][1]))
        elif detail := what_changed(before[key][0], now[key][0]):
            query, line = now[key]
            changes.append(GoldenChange(key, "changed", line, detail, query.provenance))
    return sorted(changes, key=lambda change: KINDS.index(change.change))  # the new cases first, in the spec's order


def _base_queries(snapshot: Snapshot, path: str, scratch: Path) -> dict[str, tuple[QuerySpec, str]]:
    """The base spec's queries by id, each with its line; InputError when that spec does not load."""
    try:
        loaded = load_spec(scratch / path)
    except SpecError as exc:
        first = str(exc.problems[0]).replace(f"{scratch}/", "") if exc.problems else str(exc)
        more = f" (and {len(exc.problems) - 1} more problems)" if len(exc.problems) > 1 else ""
        raise InputError.at(
            path, 0, f"the spec at the base commit {snapshot.sha[:7]} does not load: {first}{more}"
        ) from None
    return {query.key: (query, _line(query, scratch, scratch)) for query in loaded.queries}


def _line(query: QuerySpec, root: Path, directory: Path) -> str:
    """'agentci_spec.yaml:42': the query's file as a repository path (as the annotations name it), and its line."""
    try:
        file = repository_path(str(Path(query.file).resolve()), root, directory)
    except InputError:  # a spec outside the repository: as it was given
        file = query.file
    return f"{file}:{query.line}"


def _copy_spec(snapshot: Snapshot, path: str, scratch: Path) -> bool:
    """Copy the spec at `path` and the files it `!include`s (inside its directory) into `scratch`.

    False when the base commit has no spec there. An include that is missing or outside is left for the loader to
    report.
    """
    if path not in snapshot.files(path):
        return False
    top, pending, copied = posixpath.dirname(path), [path], set[str]()
    while pending and len(copied) < MAX_SPEC_FILES:
        file = pending.pop()
        if file in copied or not safe_path(file) or file not in snapshot.files(file):
            continue
        copied.add(file)
        copy_files(snapshot, [file], scratch)
        for name in _included(scratch / file):
            target = posixpath.normpath(posixpath.join(posixpath.dirname(file), name))
            if safe_path(target) and (not top or target.startswith(top + "/")):
                pending.append(target)
    return True


def _included(file: Path) -> list[str]:
    """The paths the YAML file's `!include` tags name ([] when it has none or does not parse: the loader says why)."""
    data = file.read_bytes()
    if b"!include" not in data:
        return []
    try:
        node = yaml.compose(data.decode("utf-8"), Loader=yaml.SafeLoader)
    except (yaml.YAMLError, UnicodeDecodeError, RecursionError):
        return []
    found, pending, seen = [], [node] if node is not None else [], set()
    while pending:
        node = pending.pop()
        if id(node) in seen:  # an alias: its nodes are walked once
            continue
        seen.add(id(node))
        if isinstance(node, yaml.ScalarNode) and node.tag == "!include":
            found.append(node.value)
        elif isinstance(node, yaml.SequenceNode):
            pending.extend(node.value)
        elif isinstance(node, yaml.MappingNode):
            pending.extend(value for _, value in node.value)
    return found


def what_changed(before: QuerySpec, after: QuerySpec) -> str:
    """What differs between two versions of a query, in a line ('' when nothing it is evaluated by nor its provenance).

    Its fields as the loader completed them (defaults merged in): each path that differs, a list of plain values
    with the items added and removed, a number or a flag with its old and new value; "provenance only" when only
    the provenance changed.
    """
    old, new = before.model_dump(mode="json"), after.model_dump(mode="json")
    provenance = old.pop("provenance", None) != new.pop("provenance", None)
    parts = _differences(old, new, "")
    if not parts:
        return "provenance only" if provenance else ""
    shown = parts[:PARTS_SHOWN] + ([f"{len(parts) - PARTS_SHOWN} more"] if len(parts) > PARTS_SHOWN else [])
    return "; ".join(shown + (["provenance"] if provenance else []))


def _differences(old: Any, new: Any, path: str) -> list[str]:
    """Each part that differs between `old` and `new` (JSON values), named by its dotted path under `path`."""
    if old == new:
        return []
    if isinstance(old, dict) and isinstance(new, dict):
        keys = dict.fromkeys([*new, *old])
        return [
            part for key in keys for part in _differences(old.get(key), new.get(key), f"{path}.{key}" if path else key)
        ]
    name = NAMES.get(path, path)
    lists = isinstance(old, list | None) and isinstance(new, list | None)  # an absent list is an empty one
    if lists and all(_plain(item) for item in [*(old or []), *(new or [])]):
        added = [f"+{_quoted(item)}" for item in new or [] if item not in (old or [])]
        removed = [f"-{_quoted(item)}" for item in old or [] if item not in (new or [])]
        return [f"{name}: {' '.join(added + removed) or 'order'}"]
    if _plain(old) and _plain(new) and not isinstance(old, str) and not isinstance(new, str):
        return [f"{name}: {_quoted(old)} → {_quoted(new)}"]
    return [name]


def _plain(value: Any) -> bool:
    return value is None or isinstance(value, (str, int, float, bool))


def _quoted(value: Any) -> str:
    """'refund' for a string (cut to VALUE_LIMIT characters), else its JSON spelling (0.05, true, null)."""
    if isinstance(value, str):
        return "'" + (value if len(value) <= VALUE_LIMIT else value[: VALUE_LIMIT - 1] + "…") + "'"
    return "null" if value is None else "true" if value is True else "false" if value is False else str(value)
