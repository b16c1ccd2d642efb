"""Promoted goldens as YAML text, appended to a spec under a marker, the user's text kept byte for byte.

The spec is never rewritten through a YAML dumper (that would drop its comments and reorder its keys): the goldens are
inserted as text right after the last item of its `queries:` list (a block list; a flow list or an `!include` is refused),
under MARKER (written once: later promotions go below it), indented like the items above. Everything else in the file
is kept as it was, above and below. A new file is a spec of its own: `version`, the spec's `agent`, the goldens.

Trace content is untrusted: each golden is dumped by yaml's safe dumper (every value quoted as its type needs, no tag,
no anchor or alias), and the text is loaded back and must equal what was dumped, so nothing in a value can become YAML
structure, a tag, an anchor, or a line outside its item.
"""

from __future__ import annotations

from typing import Any

import yaml

from agentci_action._util.errors import Problem, SpecError

MARKER = "# --- promoted by agentci goldens ---"
_LIST = "tag:yaml.org,2002:seq"


# libyaml's when PyYAML was built with it: the same text, ten times faster (10,000 goldens: seconds, not a minute)
_SAFE_DUMPER: type[yaml.SafeDumper] = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
_SAFE_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Dumper(_SAFE_DUMPER):  # type: ignore[valid-type,misc]
    """The safe dumper, never writing an anchor or alias (two goldens may share a value)."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def dump_items(goldens: list[dict[str, Any]], indent: int) -> str:
    """The goldens as block-list items at column `indent`, checked to load back as exactly themselves."""
    text = yaml.dump(goldens, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=4096, default_flow_style=False)
    pad = " " * indent
    items = "".join(pad + line if line.strip() else line for line in text.splitlines(keepends=True))
    if yaml.load(items, Loader=_SAFE_LOADER) != goldens:
        raise ValueError("the promoted goldens did not load back as themselves")  # never: a safety net for the dumper
    return items


def new_spec(agent: str, goldens: list[dict[str, Any]]) -> str:
    """A spec file of its own holding the goldens."""
    head = yaml.dump({"version": 1, "agent": agent}, Dumper=_Dumper, sort_keys=False, allow_unicode=True)
    return f"{head}queries:\n{MARKER}\n{dump_items(goldens, 0)}"


def appended(text: str, file: str, goldens: list[dict[str, Any]]) -> str:
    """`text` (a spec) with the goldens inserted after the last item of its `queries:` list (see the module docstring)."""
    sequence = _queries_node(text, file)
    last = sequence.value[-1]
    at = _last_value(last).end_mark.index  # a block's own end is the next token's start: past any comment below it
    if at and text[at - 1] != "\n":  # the item ends inside its last line: insert after that line
        newline = text.find("\n", at)
        at = len(text) if newline < 0 else newline + 1
    before, after = text[:at], text[at:]
    if not before.endswith("\n"):
        before += "\n"
    indent = sequence.start_mark.column
    marker = "" if MARKER in text[: last.start_mark.index] else " " * indent + MARKER + "\n"
    return before + marker + dump_items(goldens, indent) + after


def _last_value(node: yaml.Node) -> yaml.Node:
    """The node written last inside `node` (a scalar, or an empty or flow collection)."""
    while isinstance(node, yaml.CollectionNode) and node.value and not node.flow_style:
        item = node.value[-1]
        node = item[1] if isinstance(node, yaml.MappingNode) else item
    return node


def _queries_node(text: str, file: str) -> yaml.SequenceNode:
    """The `queries:` block list of the spec's text; SpecError (naming the line) when it is anything else."""
    try:
        root = yaml.compose(text, Loader=_SAFE_LOADER)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise SpecError.at(file, mark.line + 1 if mark else 0, f"not valid YAML: {exc}") from None
    if isinstance(root, yaml.MappingNode):
        for key, value in root.value:
            if isinstance(key, yaml.ScalarNode) and key.value == "queries":
                if isinstance(value, yaml.SequenceNode) and not value.flow_style and value.tag == _LIST and value.value:
                    return value
                raise SpecError.at(
                    file,
                    value.start_mark.line + 1,
                    "`queries:` is not a block list of queries (a flow list [...] or an !include): promote into a "
                    "file of its own with --output FILE",
                )
    raise SpecError([Problem(file, 1, "the spec has no `queries:` list to add the goldens to")])
