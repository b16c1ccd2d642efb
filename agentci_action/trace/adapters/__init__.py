"""Adapters map what a framework emits onto the canonical trace.

An adapter is a module with `NAME`, `detect(records) -> bool` and `convert(records, file) -> list[Trace]`.
`convert` below picks the adapter named by `trace_format`, else the first whose `detect` accepts the file,
else canonical when the file looks canonical but has bad records (reported each at its own line).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Protocol

from agentci_action._util.errors import TraceError
from agentci_action.spec.trace_formats import ADAPTER_MODULES, TRACE_FORMATS
from agentci_action.trace.adapters import canonical_json
from agentci_action.trace.adapters._conventions import SHAPE_ERRORS, shape_problem

if TYPE_CHECKING:
    from agentci_action.trace.canonical import Trace
    from agentci_action.trace.json_records import Record


class Adapter(Protocol):
    """What an adapter module provides (see above)."""

    NAME: str

    def detect(self, records: list[Record]) -> bool: ...

    def convert(self, records: list[Record], file: str) -> list[Trace]: ...


# In detection order (see spec/trace_formats.py): most specific first, canonical last.
ADAPTERS: list[Adapter] = [import_module(f".{module}", __name__) for module in ADAPTER_MODULES.values()]


def _accepts(adapter: Adapter, records: list[Record]) -> bool:
    """The adapter's `detect`; a record shaped too differently for it to look at is simply not its format."""
    try:
        return bool(adapter.detect(records))
    except SHAPE_ERRORS:
        return False


def _convert_with(adapter: Adapter, records: list[Record], file: str) -> list[Trace]:
    """Run one adapter; a shape it did not expect anywhere is an error at the file's first record, never a crash."""
    first = records[0].line if records else 0  # read before converting: an adapter may consume the records
    try:
        return adapter.convert(records, file)
    except SHAPE_ERRORS as exc:
        raise TraceError([shape_problem(file, first, adapter.NAME, exc)]) from None


def convert(records: list[Record], file: str, trace_format: str | None = None) -> list[Trace]:
    """Canonical traces from one file's records, in the named format or the detected one."""
    if trace_format and trace_format != "auto":
        by_name = {adapter.NAME: adapter for adapter in ADAPTERS}
        if trace_format not in by_name:
            raise TraceError.at(file, 0, f"unknown trace format {trace_format!r}; known: {', '.join(TRACE_FORMATS)}")
        return _convert_with(by_name[trace_format], records, file)
    for adapter in ADAPTERS:
        if _accepts(adapter, records):
            return _convert_with(adapter, records, file)
    if canonical_json.looks_canonical(records):
        return _convert_with(canonical_json, records, file)
    first = records[0].line if records else 0
    raise TraceError.at(
        file, first, f"unrecognised trace format; known: {', '.join(TRACE_FORMATS)} (set trace-format to choose)"
    )
