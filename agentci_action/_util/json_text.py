"""Indented JSON text: the one layout of every JSON file AgentCI writes (results, diffs, baselines)."""

from __future__ import annotations

import json
from typing import Any

from pydantic import TypeAdapter
from pydantic_core import PydanticSerializationError

_ANY = TypeAdapter(Any)


def dumps(value: Any) -> str:
    """Indented JSON of a model or of plain JSON data, by pydantic's compiled serialiser.

    The model is a pydantic model, or a result with the same `model_dump_json`. A string it cannot encode (a lone
    surrogate, which trace JSON may hold) takes json.dumps instead, with the same layout; the output boundary
    (_util/output.py) then replaces the surrogate.
    """
    is_model = hasattr(value, "model_dump_json")
    try:
        if is_model:
            text: str = value.model_dump_json(indent=2)
            return text
        return _ANY.dump_json(value, indent=2).decode()
    except PydanticSerializationError:  # mode="json" fails on such a dict key too; the python mode's is the same JSON
        data = value.model_dump(mode="python") if is_model else value
        return json.dumps(data, indent=2, ensure_ascii=False)
