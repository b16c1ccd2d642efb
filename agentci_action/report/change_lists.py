"""A section listing what a pull request changed (recordings, golden queries): counts, then the first few entries."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from agentci_action._util.text import inline, one_line
from agentci_action.compare.base_ref import KINDS


@dataclass(frozen=True)
class ChangeList:
    """A section: its `title`, each entry's kind ("added", ...) and line, `shown` lines listed, each cut to `limit`."""

    title: str
    kinds: Sequence[str]
    entries: Sequence[str]
    shown: int = 5
    limit: int = 300

    def counts(self) -> str:
        """'2 added · 1 changed · 1 removed' (only the kinds there are)."""
        found = Counter(self.kinds)
        return " · ".join(f"{found[kind]} {kind}" for kind in KINDS if found[kind])

    def markdown(self) -> str:
        """The section in markdown, its entries inert ('' when there are none)."""
        if not self.entries:
            return ""
        lines = [f"### {self.title}", "", self.counts(), ""]
        lines += [f"- {inline(entry, self.limit)}" for entry in self.entries[: self.shown]]
        if len(self.entries) > self.shown:
            lines.append(f"- and {len(self.entries) - self.shown} more")
        return "\n".join(lines) + "\n"

    def console_lines(self) -> list[str]:
        """The section on the console (nothing when there are no entries)."""
        if not self.entries:
            return []
        more = [f"  and {len(self.entries) - self.shown} more"] if len(self.entries) > self.shown else []
        shown = (f"  {one_line(entry, self.limit)}" for entry in self.entries[: self.shown])
        return [f"{self.title}: {self.counts()}", *shown, *more]
