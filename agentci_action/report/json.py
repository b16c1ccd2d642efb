"""The results JSON (agentci.results/v1) and the diff JSON (agentci.diff/v1): interfaces other tools read."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, TypeAdapter
from pydantic_core import PydanticSerializationError

from ..diff import RunDiff
from ..engine.results import RunResult

_ANY = TypeAdapter(Any)


def dumps(value: BaseModel | Any) -> str:
    """Indented JSON of a model or of plain JSON data, by pydantic's compiled serialiser. A string it cannot
    encode (a lone surrogate, which trace JSON may hold) takes json.dumps instead, with the same layout; the
    output boundary (output.py) then replaces the surrogate."""
    try:
        if isinstance(value, BaseModel):
            return value.model_dump_json(indent=2)
        return _ANY.dump_json(value, indent=2).decode()
    except PydanticSerializationError:  # mode="json" fails on such a dict key too; the python mode's is the same JSON
        data = value.model_dump(mode="python") if isinstance(value, BaseModel) else value
        return json.dumps(data, indent=2, ensure_ascii=False)


def render(run: RunResult, diff: RunDiff | None = None) -> str:
    """The results JSON; with a diff against the baseline, it is the top-level `diff` field (agentci.diff/v1)."""
    text = dumps(run)
    if diff is None:
        return text + "\n"
    nested = dumps(diff).replace("\n", "\n  ")
    return text.removesuffix("\n}") + f',\n  "diff": {nested}\n}}\n'  # the run's own fields stay as they were


def render_diff(diff: RunDiff) -> str:
    """The diff JSON (schema_version agentci.diff/v1)."""
    return dumps(diff) + "\n"
