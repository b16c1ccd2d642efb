"""`json_schema` checks stay offline: every `$ref` resolves inside the schema itself (or to a bundled
JSON Schema meta-schema), and nothing is ever fetched.

jsonschema's default registry retrieves unknown http(s) references with urllib; a spec must not make
the action download (or hang on) a URL, so validation and the run both use `local_registry`.
"""

from __future__ import annotations

from typing import Any

import jsonschema
from jsonschema_specifications import REGISTRY as META_SCHEMAS
from referencing import Registry, Resource
from referencing.exceptions import Unresolvable
from referencing.jsonschema import DRAFT202012, Specification, specification_with

REF_KEYWORDS = ("$ref", "$dynamicRef")
DATA_KEYWORDS = frozenset({"enum", "const", "default", "examples"})  # their values are data, not subschemas


def local_registry(schema: dict[str, Any]) -> tuple[Registry, Resource]:
    """The meta-schemas plus the schema itself (under its `$id`, or ''). The registry's retrieve is
    referencing's default, which never fetches: any other URI is Unresolvable."""
    resource = _specification(schema).create_resource(schema)
    return META_SCHEMAS.with_resource(resource.id() or "", resource), resource


def _specification(schema: dict[str, Any]) -> Specification:
    """The dialect `$schema` names; 2020-12 (jsonschema's default) when it names none or an unknown one."""
    dialect = schema.get("$schema")
    return specification_with(dialect if isinstance(dialect, str) else "", default=DRAFT202012)


def local_validator(schema: dict[str, Any]) -> Any:
    """The validator class the schema's `$schema` names (default 2020-12), bound to `local_registry`."""
    registry, _ = local_registry(schema)
    return jsonschema.validators.validator_for(schema)(schema, registry=registry)


def unresolvable_refs(schema: dict[str, Any]) -> list[str]:
    """One sentence for every `$ref`/`$dynamicRef` that does not resolve within the schema, naming the
    reference and where it sits; a nested `$id` changes the base URI as JSON Schema says."""
    registry, root = local_registry(schema)
    problems: list[str] = []
    _walk(schema, registry.resolver(base_uri=root.id() or ""), _specification(schema), (), problems)
    return problems


def _walk(node: Any, resolver: Any, specification: Specification, at: tuple, problems: list[str]) -> None:
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
