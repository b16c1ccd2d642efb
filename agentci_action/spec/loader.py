"""Load a spec YAML into validated models; every problem names its file and line.

Steps: compose the YAML (remembering where every node is), resolve `!include` (only inside the spec's
directory tree), validate against the models, deep-merge `defaults` into each query (query values win,
lists are replaced), derive missing ids from the query text, and check ids are unique.
"""

from __future__ import annotations

import marshal
import re
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from agentci_action._util.errors import Problem, SpecError, not_utf8
from agentci_action._util.field_errors import field_message
from agentci_action._util.gcpause import gc_paused
from agentci_action._util.limits import MAX_ALIAS_VALUES, MAX_NESTING
from agentci_action.spec.models import AgentCISpec, QuerySpec, private_attributes

DocPath = tuple[str | int, ...]  # a path into the document: keys and list indexes
NOT_A_FILE = "not a regular file (a directory, FIFO or device); name a YAML file"


Location = tuple[str, int]  # (file, line) of one YAML node: a plain tuple, which marshal copies (see compacted)


class _Composer:
    """Turns YAML nodes into plain Python values, recording the location of every key and item."""

    def __init__(self, root_dir: Path):
        self.root_dir = root_dir.resolve()
        self.locations: dict[DocPath, Location] = {}
        self.problems: list[Problem] = []
        self._constructor = yaml.SafeLoader("")  # only its constructor is used:
        # drop its parser's reference to itself, a cycle that would keep every node built here alive until a garbage
        # collection (the engine pauses the collector, then freezes what survived: the tree would never be freed)
        self._constructor.dispose()
        self._including: list[Path] = []
        self._seen: set[int] = set()  # ids of the lists and mappings built so far: met again, one is an alias
        self._alias: yaml.Node | None = None  # the outermost alias being expanded
        self._expanded = 0  # values built through aliases

    def load_file(self, path: Path, at: DocPath = (), text: str | None = None) -> Any:
        """The file's value; `text` stands for its content when given (a spec about to be written)."""
        node = _compose(self._read(path) if text is None else text, str(path))
        if node is None:
            raise SpecError.at(str(path), 0, "file is empty")
        self._including.append(path.resolve())
        try:
            return self._value(node, at, str(path), path.parent)
        finally:
            self._including.pop()
            self._constructor.constructed_objects.clear()  # its memo of every scalar node: the tree is freed now

    @staticmethod
    def _read(path: Path) -> str:
        if path.exists() and not path.is_file():  # reading a FIFO without a writer would wait forever
            raise SpecError.at(str(path), 0, NOT_A_FILE)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            raise SpecError.at(str(path), 0, "spec file not found") from None
        except OSError as exc:
            raise SpecError.at(str(path), 0, f"cannot read spec file: {exc.strerror or exc}") from None
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise SpecError([not_utf8(str(path), data, exc, "spec")]) from None

    def _value(self, node: yaml.Node, at: DocPath, file: str, base_dir: Path) -> Any:
        """The node's value.

        A node met again is an alias: its values are counted, and past MAX_ALIAS_VALUES the spec is refused at the
        anchor's line (nested aliases expand exponentially: a 700-byte alias bomb would take minutes and gigabytes).
        """
        outermost, collection = False, isinstance(node, yaml.CollectionNode)
        if self._alias is not None or (collection and id(node) in self._seen):
            outermost, self._alias = self._alias is None, self._alias or node
            self._expanded += 1
            if self._expanded > MAX_ALIAS_VALUES:
                raise SpecError.at(
                    file,
                    self._alias.start_mark.line + 1,
                    f"aliases expand to more than {MAX_ALIAS_VALUES:,} values (an alias bomb?); "
                    "this anchor is where the expansion starts",
                )
        if collection:  # an aliased scalar is one value: only lists and mappings can multiply
            self._seen.add(id(node))
        try:
            return self._build(node, at, file, base_dir)
        finally:
            if outermost:
                self._alias = None

    def _build(self, node: yaml.Node, at: DocPath, file: str, base_dir: Path) -> Any:
        self.locations.setdefault(at, (file, node.start_mark.line + 1))
        if len(at) > MAX_NESTING and isinstance(node, (yaml.MappingNode, yaml.SequenceNode)):
            self.problems.append(
                Problem(file, node.start_mark.line + 1, f"nested deeper than {MAX_NESTING} lists and mappings")
            )
            return None
        if node.tag == "!include":
            return self._include(node, at, file, base_dir)
        if isinstance(node, yaml.MappingNode):
            self._constructor.flatten_mapping(node)
            result: dict[str, Any] = {}
            for key_node, value_node in node.value:
                line = key_node.start_mark.line + 1
                if not isinstance(key_node, yaml.ScalarNode):  # never built: a key may nest deeper than a value may
                    kind = "a list" if isinstance(key_node, yaml.SequenceNode) else "a mapping"
                    self.problems.append(Problem(file, line, f"keys must be strings, got {kind}"))
                    continue
                key = self._constructor.construct_object(key_node, deep=True)
                if not isinstance(key, str):
                    self.problems.append(Problem(file, line, f"keys must be strings, got {key!r}"))
                    continue
                if key in result:
                    self.problems.append(
                        Problem(file, line, f"duplicate key {key!r} (an earlier value would be silently replaced)")
                    )
                self.locations[(*at, key)] = (file, line)
                result[key] = self._value(value_node, (*at, key), file, base_dir)
            return result
        if isinstance(node, yaml.SequenceNode):
            return [self._value(item, (*at, i), file, base_dir) for i, item in enumerate(node.value)]
        try:
            return self._constructor.construct_object(node, deep=True)
        except yaml.constructor.ConstructorError as exc:
            self.problems.append(Problem(file, node.start_mark.line + 1, f"unsupported YAML value: {exc.problem}"))
            return None

    def _include(self, node: yaml.Node, at: DocPath, file: str, base_dir: Path) -> Any:
        line = node.start_mark.line + 1
        if not isinstance(node, yaml.ScalarNode) or not node.value:
            self.problems.append(Problem(file, line, "!include takes a file path, e.g. `!include shared/judge.yaml`"))
            return None
        target = (base_dir / node.value).resolve()
        if not target.is_relative_to(self.root_dir):
            self.problems.append(
                Problem(file, line, f"!include {node.value!r} points outside the spec's directory {self.root_dir}")
            )
            return None
        if target in self._including:
            self.problems.append(Problem(file, line, f"!include {node.value!r} includes itself (cycle)"))
            return None
        if not target.is_file():
            why = NOT_A_FILE if target.exists() else "file not found"
            self.problems.append(Problem(file, line, f"!include {node.value!r}: {why}"))
            return None
        return self.load_file(target, at)


# libyaml's parser when PyYAML was built with it: the same nodes and line marks, about 12× faster
_FAST_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
# Nesting each composer builds without running out of stack. libyaml's recurses in C once per level, 300-650 bytes
# of stack a level (past about 20,000 levels a thread's 8 MiB run out and the process crashes), and its scanner's
# time grows with the square of the depth (10,000 levels: 0.4 s); the pure-Python one takes two Python frames a level.
# A document that may nest deeper is measured from its events first, which stops at the first level too deep (a
# spec of 10,000 queries written with flow lists, 50,000 brackets, loads in 0.35 s more CPU for it).
_COMPOSABLE_DEPTH = {yaml.SafeLoader: 250}


def _compose(text: str, file: str) -> yaml.Node | None:
    """The document's node tree.

    Where libyaml refuses the document, the pure-Python parser reads it: its wording of a syntax error (what was
    expected, where an unclosed construct opened) is the one users see whichever parser ran, and it reads a few
    documents libyaml refuses (a lone surrogate's escape, "\\ud83d"). A document that may nest deeper than a composer
    can build is measured from its events first (_check_events).
    """
    try:
        if _nesting_bound(text) > _COMPOSABLE_DEPTH.get(_FAST_LOADER, 10_000):
            _check_events(text, file, _FAST_LOADER)  # a syntax error it meets is worded below
        try:
            return yaml.compose(text, Loader=_FAST_LOADER)
        except yaml.MarkedYAMLError as exc:
            refused = exc
        error = _check_events(text, file, yaml.SafeLoader)
        if error is None:  # nested no deeper than MAX_NESTING: the pure composer's recursion is bounded
            try:
                return yaml.compose(text, Loader=yaml.SafeLoader)
            except yaml.MarkedYAMLError as exc:  # the composer's own: an undefined alias
                error = exc
        raise SpecError([_syntax_problem(error or refused, text, file)]) from None
    except yaml.reader.ReaderError as exc:  # a character YAML does not allow: a position, not a mark
        line = text.count("\n", 0, exc.position) + 1
        column = exc.position - text.rfind("\n", 0, exc.position)
        raise SpecError.at(file, line, f"YAML syntax error: {exc.reason} (column {column})") from None


def _nesting_bound(text: str) -> int:
    """An upper bound on how deep the lists and mappings of `text` nest, cheaply.

    A flow collection opens with `[` or `{`, and a block one starts at a column no smaller than its parent's (a
    mapping's sequence may share its column, so at most two levels per column).
    """
    return text.count("[") + text.count("{") + 2 * (max(map(len, text.split("\n"))) + 1)


def _check_events(text: str, file: str, loader: type) -> yaml.MarkedYAMLError | None:
    """Walk the events of `text` with `loader`'s parser, in a loop whatever the depth; the syntax error or None.

    The parser keeps a stack of states, not of calls. SpecError at the first list or mapping nested deeper than
    MAX_NESTING, as _Composer would report it; the syntax error that stops the parser is returned (None when the events
    parse).
    """
    depth = 0
    try:
        for event in yaml.parse(text, Loader=loader):
            if isinstance(event, yaml.CollectionStartEvent):
                if depth > MAX_NESTING:
                    line = event.start_mark.line + 1 if event.start_mark else 0
                    raise SpecError([Problem(file, line, f"nested deeper than {MAX_NESTING} lists and mappings")])
                depth += 1
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
    except yaml.MarkedYAMLError as exc:
        return exc
    return None


def _syntax_problem(exc: yaml.MarkedYAMLError, text: str, file: str) -> Problem:
    """Where a YAML syntax error is.

    When the parser ran off the end of the file looking for a closing quote or bracket, the end is not the mistake:
    point at where the unclosed construct opened (the context mark).
    """
    mark, ran_off = exc.problem_mark, exc.problem_mark is None or exc.problem_mark.index >= len(text.rstrip())
    if ran_off and exc.context_mark is not None:
        return Problem(
            file, exc.context_mark.line + 1, f"YAML syntax error: {exc.problem} {exc.context} that starts here"
        )
    return Problem(file, mark.line + 1 if mark else 0, f"YAML syntax error: {exc.problem or exc.context}")


def _problems(
    exc: ValidationError, root: type[BaseModel], locations: dict[DocPath, Location], prefix: DocPath = ()
) -> list[Problem]:
    problems = []
    for error in exc.errors():
        loc = prefix + tuple(error["loc"])
        for cut in range(len(loc), -1, -1):
            where = locations.get(loc[:cut])
            if where:
                break
        problems.append(Problem(*(where or ("", 0)), field_message(error, root)))
    return problems


def compacted(data: Any) -> Any:
    """A copy of `data`, equal in value and type, made once the node tree it was built from is freed.

    The values (and their locations) were built into the holes the parser's transient events left among the tree's
    nodes, and kept all of the tree's memory resident once it was freed (a spec of 10k queries: 180 MB for 40 MB of
    values); the copy is packed together. marshal copies plain data fast; a YAML value it cannot hold (a set) takes
    pickle.
    """
    try:
        return marshal.loads(marshal.dumps(data))
    except ValueError:
        import pickle  # imported where used: validate of a spec without a set needs none of it

        return pickle.loads(pickle.dumps(data))


def deep_merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """Recursive dict merge: `override` wins; lists and scalars are replaced, not concatenated."""
    merged = dict(base)
    for key, value in override.items():
        if isinstance(merged.get(key), dict) and isinstance(value, dict):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def slugify(text: str, limit: int = 60) -> str:
    """A stable id from query text: lower-case words joined by '-', at most `limit` characters."""
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return slug[:limit].rstrip("-") or "query"


def load_spec(path: str | Path, tags: list[str] | None = None, text: str | None = None) -> AgentCISpec:
    """Load, validate and complete a spec. Raises SpecError listing every problem with file:line.

    With `tags`, keep only the queries carrying at least one of them. With `text`, that is the spec's content instead of
    the file's: a spec is validated, at its own path (its includes resolved beside it), before it is written.
    """
    with gc_paused():  # a spec of 10k queries loads 2.8× faster: it allocates a node per YAML value, and no cycles
        return _load_spec(Path(path), tags, text)


def _load_spec(path: Path, tags: list[str] | None, text: str | None) -> AgentCISpec:
    composer = _Composer(path.parent)
    if path.is_dir():
        raise SpecError.at(str(path), 0, "is a directory; pass the spec YAML file")
    raw, composer.locations = compacted((composer.load_file(path, text=text), composer.locations))
    if not isinstance(raw, dict):
        raise SpecError(
            [
                *composer.problems,
                Problem(
                    str(path), 1, f"the spec must be a mapping with `agent` and `queries`, got {type(raw).__name__}"
                ),
            ]
        )
    duplicates = _duplicate_ids(raw, composer.locations)
    try:
        spec = AgentCISpec.model_validate(raw)
    except ValidationError as exc:
        raise SpecError(composer.problems + duplicates + _problems(exc, AgentCISpec, composer.locations)) from None
    if composer.problems or duplicates:
        raise SpecError(composer.problems + duplicates)

    defaults = raw.get("defaults") or {}
    queries, problems = [], []
    for index, query_raw in enumerate(raw["queries"]):
        at = ("queries", index)
        if not defaults:  # nothing to merge: the query as the spec validated it
            query = spec.queries[index]
        else:
            try:
                query = QuerySpec.model_validate(deep_merge(defaults, query_raw))
            except ValidationError as exc:  # a value valid alone but not once merged
                problems.extend(_problems(exc, QuerySpec, composer.locations, at))
                continue
        query._file, query._line = composer.locations[at]
        for turn_index, turn in enumerate(query.turns or ()):
            turn._line = composer.locations[(*at, "turns", turn_index)][1]
        if query.simulated_user is not None:
            query.simulated_user._line = composer.locations.get((*at, "simulated_user"), (query.file, query.line))[1]
        queries.append(query)
    problems.extend(_assign_ids(queries))
    if problems:
        raise SpecError(problems)

    spec.queries = queries
    spec._path = str(path)
    if spec.runner is not None:  # where the block and its keys are, for errors found when the agent runs
        spec.runner._file, spec.runner._lines = _block_lines("runner", composer.locations)
    if spec.suite is not None:
        spec.suite._file, spec.suite._lines = _block_lines("suite", composer.locations)
    return select_tags(spec, tags) if tags else spec


def select_tags(spec: AgentCISpec, tags: list[str]) -> AgentCISpec:
    """A copy of the loaded `spec` keeping only the queries that carry at least one of `tags`.

    A command that also needs the whole spec (the baseline's hash and matching) loads it once and selects from it.
    """
    wanted = set(tags)
    selected = [q for q in spec.queries if wanted & set(q.tags)]
    if not selected:
        known = sorted({t for q in spec.queries for t in q.tags})
        raise SpecError.at(
            spec.path,
            0,
            f"no query has any of the tags {', '.join(tags)} (tags in this spec: {', '.join(known) or 'none'})",
        )
    chosen = spec.model_copy(update={"queries": selected})
    private_attributes(chosen)["_tags"] = tuple(tags)
    return chosen


def _duplicate_ids(raw: dict[str, Any], locations: dict[DocPath, Location]) -> list[Problem]:
    """Every explicit query id used twice, read from the raw document.

    So that it is listed with every other problem in one pass (not only once the spec is otherwise valid).
    """
    queries = raw.get("queries")
    problems: list[Problem] = []
    taken: dict[str, int] = {}
    for index, query in enumerate(queries if isinstance(queries, list) else []):
        key = query.get("id") if isinstance(query, dict) else None
        where = locations.get(("queries", index))
        if not isinstance(key, str) or where is None:
            continue
        if key in taken:
            problems.append(Problem(*where, f"duplicate query id {key!r} (first used at line {taken[key]})"))
        taken.setdefault(key, where[1])
    return problems


def _block_lines(block: str, locations: dict[DocPath, Location]) -> tuple[str, dict[str, int]]:
    """(file, {key: line}) of a top-level block and its keys; the block's own line under ''."""
    lines = {
        (str(at[1]) if len(at) == 2 else ""): line
        for at, (_, line) in locations.items()
        if at[:1] == (block,) and len(at) <= 2
    }
    return locations[(block,)][0], lines


def _assign_ids(queries: list[QuerySpec]) -> list[Problem]:
    """Derived ids get -2, -3… on collision with an explicit or earlier id.

    Explicit ones are unique by now: _duplicate_ids.
    """
    problems: list[Problem] = []
    taken = {query.id: query.line for query in queries if query.id is not None}
    for query in queries:
        if query.id is None:
            base = candidate = slugify(query.query)
            n = 2
            while candidate in taken:
                candidate, n = f"{base}-{n}", n + 1
            query.id = candidate
            taken[candidate] = query.line
    return problems
