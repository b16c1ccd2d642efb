"""The results JSON (agentci.results/v1) and the diff JSON (agentci.diff/v1): interfaces other tools read."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel, TypeAdapter
from pydantic_core import PydanticSerializationError

from agentci_action.compare.diff import RunDiff
from agentci_action.engine.results import ResultData, RunResult

_ANY = TypeAdapter(Any)


def dumps(value: BaseModel | ResultData | Any) -> str:
    """Indented JSON of a model (or a query's result) or of plain JSON data, by pydantic's compiled serialiser. A string it cannot
    encode (a lone surrogate, which trace JSON may hold) takes json.dumps instead, with the same layout; the
    output boundary (_util/output.py) then replaces the surrogate."""
    try:
        if isinstance(value, (BaseModel, ResultData)):
            return value.model_dump_json(indent=2)
        return _ANY.dump_json(value, indent=2).decode()
    except PydanticSerializationError:  # mode="json" fails on such a dict key too; the python mode's is the same JSON
        data = value.model_dump(mode="python") if isinstance(value, (BaseModel, ResultData)) else value
        return json.dumps(data, indent=2, ensure_ascii=False)


def chunks(run: RunResult, diff: RunDiff | None = None) -> Iterator[str]:
    """render(run, diff) a piece at a time: the run's fields, then each query's result as it is serialised. A
    results file of 10k queries is never held whole (as text, nor as the data pydantic builds it from), and the
    text is the same as one dumps of the run: each result is dumped alone and indented to its place."""
    head = dumps(run.model_copy(update={"results": []}))
    if diff is not None:  # the diff is the last top-level field; the run's own fields stay as they were
        head = head.removesuffix("\n}") + ',\n  "diff": ' + dumps(diff).replace("\n", "\n  ") + "\n}"
    if not run.results:
        yield head + "\n"
        return
    before, after = head.split(_EMPTY_RESULTS, 1)
    yield before + '\n  "results": ['
    for index, result in enumerate(run.results):
        yield ("\n    " if index == 0 else ",\n    ") + dumps(result).replace("\n", "\n    ")
    yield "\n  ]" + after + "\n"


_EMPTY_RESULTS = '\n  "results": []'  # top-level keys alone are indented two spaces; a string holds no raw newline


def render(run: RunResult, diff: RunDiff | None = None) -> str:
    """The results JSON; with a diff against the baseline, it is the top-level `diff` field (agentci.diff/v1)."""
    return "".join(chunks(run, diff))


def render_diff(diff: RunDiff) -> str:
    """The diff JSON (schema_version agentci.diff/v1)."""
    return dumps(diff) + "\n"
