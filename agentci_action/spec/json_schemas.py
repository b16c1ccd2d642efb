"""`json_schema` checks stay offline.

Every `$ref` resolves inside the schema itself (or to a bundled JSON Schema meta-schema), and nothing is ever fetched.

jsonschema's default registry retrieves unknown http(s) references with urllib; a spec must not make
the action download (or hang on) a URL, so validation and the run both use `local_registry`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from referencing import Registry, Resource, Specification

# jsonschema and referencing are imported by the functions that use them: with the meta-schemas they took a fifth
# of the action's start, and only specs with `json_schema` checks need them.

REF_KEYWORDS = ("$ref", "$dynamicRef")
DATA_KEYWORDS = frozenset({"enum", "const", "default", "examples"})  # their values are data, not subschemas


def local_registry(schema: dict[str, Any]) -> tuple[Registry, Resource]:
    """The meta-schemas plus the schema itself (under its `$id`, or '').

    The registry's retrieve is referencing's default, which never fetches: any other URI is Unresolvable.
    """
    from jsonschema_specifications import REGISTRY as META_SCHEMAS

    resource = _specification(schema).create_resource(schema)
    return META_SCHEMAS.with_resource(resource.id() or "", resource), resource


def _specification(schema: dict[str, Any]) -> Specification[Any]:
    """The dialect `$schema` names; 2020-12 (jsonschema's default) when it names none or an unknown one."""
    from referencing.jsonschema import DRAFT202012, specification_with

    dialect = schema.get("$schema")
    return specification_with(dialect if isinstance(dialect, str) else "", default=DRAFT202012)


def local_validator(schema: dict[str, Any]) -> Any:
    """The validator class the schema's `$schema` names (default 2020-12), bound to `local_registry`."""
    import jsonschema

    registry, _ = local_registry(schema)
    return jsonschema.validators.validator_for(schema)(schema, registry=registry)


def unresolvable_refs(schema: dict[str, Any]) -> list[str]:
    """One sentence for every `$ref`/`$dynamicRef` that does not resolve within the schema.

    Each names the reference and where it sits; a nested `$id` changes the base URI as JSON Schema says.
    """
    registry, root = local_registry(schema)
    problems: list[str] = []
    _walk(schema, registry.resolver(base_uri=root.id() or ""), _specification(schema), (), problems)
    return problems


def _walk(
    node: Any, resolver: Any, specification: Specification[Any], at: tuple[str | int, ...], problems: list[str]
) -> None:
    from referencing.exceptions import Unresolvable

    if isinstance(node, list):
        for i, item in enumerate(node):
            _walk(item, resolver, specification, (*at, i), problems)
    if not isinstance(node, dict):
        return
    resolver = resolver.in_subresource(specification.create_resource(node))
    for keyword in REF_KEYWORDS:
        ref = node.get(keyword)
        if isinstance(ref, str):
            try:
                resolver.lookup(ref)
            except Unresolvable:
                where = "/".join(str(p) for p in (*at, keyword))
                problems.append(
                    f"{keyword} {ref!r} at {where} does not resolve within the schema (remote documents are never fetched)"
                )
    for key, value in node.items():
        if key not in DATA_KEYWORDS:
            _walk(value, resolver, specification, (*at, key), problems)


IN_PLACE = ("allOf", "anyOf", "oneOf", "not", "if", "then", "else", "dependentSchemas")  # besides REF_KEYWORDS


def ref_cycles(schema: dict[str, Any]) -> list[str]:
    """One sentence per cycle of references that validation would follow forever.

    Subschemas applied to the same instance (through $ref and the in-place keywords allOf, anyOf, oneOf, not,
    if/then/else, dependentSchemas) that lead back to themselves, as `{$ref: '#'}` or a → b → a do. A reference reached
    through `properties` or `items` is a recursive schema, not a cycle: each step goes one level into the instance.
    """
    from referencing.exceptions import Unresolvable

    registry, root = local_registry(schema)
    where: dict[int, str] = {}  # id of every subschema → its JSON pointer
    steps: dict[int, list[dict[str, Any]]] = {}  # id of a subschema → the subschemas it applies in place
    stack = [(schema, registry.resolver(base_uri=root.id() or ""), "#")]
    while stack:
        node, resolver, pointer = stack.pop()
        if isinstance(node, list):
            stack.extend((item, resolver, f"{pointer}/{i}") for i, item in enumerate(node))
            continue
        if not isinstance(node, dict) or id(node) in where:
            continue
        resolver = resolver.in_subresource(_specification(schema).create_resource(node))
        where[id(node)], steps[id(node)] = pointer, []
        for keyword in REF_KEYWORDS:
            if isinstance(node.get(keyword), str):
                try:
                    target = resolver.lookup(node[keyword]).contents
                except Unresolvable:
                    continue  # unresolvable_refs names it
                if isinstance(target, dict):
                    steps[id(node)].append(target)
        for keyword in IN_PLACE:
            value = node.get(keyword)
            if keyword == "dependentSchemas" and isinstance(value, dict):
                value = list(value.values())
            steps[id(node)].extend(
                child for child in (value if isinstance(value, list) else [value]) if isinstance(child, dict)
            )
        for key, value in node.items():
            if key not in DATA_KEYWORDS:
                stack.append((value, resolver, f"{pointer}/{key}"))
    return _cycles(where, steps)


def _cycles(where: dict[int, str], steps: dict[int, list[dict[str, Any]]]) -> list[str]:
    """Depth-first search (iterative) for cycles in the in-place graph; each cycle described once."""
    state: dict[int, int] = {}  # 1: on the current path, 2: done
    found: list[str] = []
    for start in where:
        if start in state:
            continue
        path, iterators = [start], [iter(steps.get(start, []))]
        state[start] = 1
        while path:
            child = next(iterators[-1], None)
            if child is None:
                state[path.pop()] = 2
                iterators.pop()
                continue
            key = id(child)
            if state.get(key) == 1:
                loop = [*path[path.index(key) :], key]
                found.append(
                    "a $ref cycle validation would follow forever: " + " → ".join(where.get(k, "?") for k in loop)
                )
            elif key not in state and key in where:
                state[key] = 1
                path.append(key)
                iterators.append(iter(steps.get(key, [])))
    return found
