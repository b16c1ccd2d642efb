"""A pydantic validation error in the user's words.

The field's path as written in the file, "required key is missing" for a missing one, and for an unknown key the closest
valid key (did you mean …?) of the object that holds it. Spec, trace and baseline errors are worded the same way.
"""

from __future__ import annotations

import types
import typing
from typing import Any

from pydantic import BaseModel


def field_path(loc: tuple[str | int, ...]) -> str:
    """`("tool_calls", 1, "arguments")` → `tool_calls[1].arguments`."""
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def field_message(
    error: Any, root: type[BaseModel], shown: tuple[str | int, ...] | None = None, name_parent: bool = False
) -> str:
    """One error of `root.model_validate` (an item of `ValidationError.errors()`) as a sentence.

    `shown` is the location as the file writes it, when that differs from the model's (default: the error's);
    `name_parent` starts an unknown key's sentence with the path of the object holding it (where the line alone
    does not say which object, as in a one-line JSON record).
    """
    loc = tuple(error["loc"])
    shown = loc if shown is None else tuple(shown)
    if error["type"] == "extra_forbidden":
        import difflib  # only to word this error: `agentci validate` of a valid spec needs none of it

        holder = _model_at(root, loc[:-1])
        valid = _keys(holder) if holder else []
        guess = difflib.get_close_matches(str(loc[-1]), valid, n=1, cutoff=0.6)
        hint = f"; did you mean {guess[0]!r}?" if guess else (f"; valid keys: {', '.join(valid)}" if valid else "")
        parent = f"{field_path(shown[:-1])}: " if name_parent and shown[:-1] else ""
        return f"{parent}unknown key {loc[-1]!r}{hint}"
    if error["type"] == "literal_error" and loc[-1:] == ("[key]",):  # a key of a map of named rules (`severity`)
        return _unknown_map_key(error, shown[:-1])
    where = f"{field_path(shown)}: " if shown else ""
    if error["type"] == "missing":
        return f"{where}required key is missing"
    return where + str(error["msg"]).removeprefix("Value error, ")


def _unknown_map_key(error: Any, shown: tuple[str | int, ...]) -> str:
    """'path.severity: unknown rule 'match_mod'; did you mean 'match_mode'?': a map whose keys are named rules."""
    import difflib
    import re

    key = shown[-1] if shown else error["input"]
    valid = re.findall(r"'([^']*)'", str((error.get("ctx") or {}).get("expected", "")))
    guess = difflib.get_close_matches(str(key), valid, n=1, cutoff=0.6)
    hint = f"; did you mean {guess[0]!r}?" if guess else (f"; valid: {', '.join(valid)}" if valid else "")
    where = f"{field_path(shown[:-1])}: " if shown[:-1] else ""
    return f"{where}unknown rule {key!r}{hint}"


def _keys(model: type[BaseModel]) -> list[str]:
    """The keys a file writes for the model's fields (their aliases where they have one)."""
    return [field.alias or name for name, field in model.model_fields.items()]


def _model_at(model: type[BaseModel], loc: tuple[str | int, ...]) -> type[BaseModel] | None:
    """The pydantic model that holds the field at `loc` (for suggesting the closest valid key).

    `loc` may pass through list items, the values of user-keyed maps (argument_rules, pricing) and union members.
    """
    current: Any = model
    for part in loc:
        current = _inside(current, part)
        if current is None:
            return None
    return next((option for option in _options(current) if _is_model(option)), None)


def _inside(annotation: Any, part: str | int) -> Any:
    """The annotation of `part` within `annotation`.

    `part` is a field or its alias, a list index, a map key or a union member's name.
    """
    for option in _options(annotation):
        origin = typing.get_origin(option)
        if _is_model(option):
            field = next((f for n, f in option.model_fields.items() if part in (n, f.alias)), None)
            if field is not None:
                return field.annotation
            if part == option.__name__:
                return option
        if origin is list and isinstance(part, int):
            return typing.get_args(option)[0]
        if origin is dict:
            return typing.get_args(option)[1]
    return None


def _options(annotation: Any) -> list[Any]:
    """The members of a union (Optional included), else the annotation itself."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return [member for arg in typing.get_args(annotation) for member in _options(arg)]
    return [annotation]


def _is_model(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)
