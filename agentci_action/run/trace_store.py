"""The output directory: one canonical JSON Lines file per query, rewritten whole each time one of its runs ends.

`<id>.jsonl`, one line per run, in run order; rewritten as a temporary file, then a rename, so a run killed at any
moment leaves only complete files. Runs that failed are kept as error records (see traces.error_trace) until a later run
of the same index succeeds.
"""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path

from pydantic_core import PydanticSerializationError

from agentci_action._util.errors import TraceError
from agentci_action._util.output import replace_file
from agentci_action._util.text import one_line
from agentci_action.run.secrets import Masker
from agentci_action.spec.models import ID_PATTERN
from agentci_action.trace.adapters import canonical_json
from agentci_action.trace.canonical import Trace
from agentci_action.trace.json_records import read_records


class TraceStore:
    def __init__(self, directory: Path, masker: Masker):
        self.directory = directory
        self.masker = masker
        self._runs: dict[str, dict[int, Trace]] = {}
        self._lock = threading.Lock()

    def file(self, query_id: str) -> Path:
        return query_file(self.directory, query_id)

    def finished(self, query_id: str) -> dict[int, Trace]:
        """The runs of a query already in the directory that produced a trace (for --resume).

        Error records are forgotten. A file AgentCI cannot read is an error naming it.
        """
        path = self.file(query_id)
        if not path.is_file():
            return {}
        try:
            traces = canonical_json.convert(read_records(path), str(path))
        except TraceError as exc:
            raise TraceError.at(
                str(path), exc.problems[0].line, f"cannot resume from it: {exc.problems[0].message}"
            ) from None
        kept = {t.run or 0: t for t in traces if t.id == query_id and t.run_error is None}
        with self._lock:
            self._runs[query_id] = dict(kept)
        return kept

    def add(self, trace: Trace) -> Path:
        """Record one run's trace (or error record) and rewrite its query's file atomically."""
        query_id = trace.id or ""
        with self._lock:
            runs = self._runs.setdefault(query_id, {})
            runs[trace.run or 0] = trace
            text = "".join(self.masker(line(t)) + "\n" for _, t in sorted(runs.items()))
            return replace_file(self.file(query_id), text, "the traces")


_QUERY_ID = re.compile(ID_PATTERN)


def query_file(directory: Path, query_id: str) -> Path:
    """`<directory>/<query_id>.jsonl`: always one name inside `directory`.

    ValueError when `query_id` is not a query id (a span may name anything, such as `../../x` or an absolute path).
    """
    path = directory / f"{query_id}.jsonl"
    if not _QUERY_ID.fullmatch(query_id) or path.parent != directory:
        raise ValueError(f"{one_line(query_id, 80)!r} is not a query id ({ID_PATTERN})")
    return path


def line(trace: Trace) -> str:
    """A trace as one canonical JSON line (unset fields left out).

    A string pydantic cannot encode (a lone surrogate) takes json.dumps instead; the file writer (output.utf8) then
    replaces it with U+FFFD.
    """
    try:
        return trace.model_dump_json(by_alias=True, exclude_none=True)
    except PydanticSerializationError:
        data = trace.model_dump(mode="python", by_alias=True, exclude_none=True)
        return json.dumps(data, ensure_ascii=False, separators=(",", ":"))
