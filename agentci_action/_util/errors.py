"""Errors a user can act on: each names the file, the line and what is wrong.

Exit codes: 0 pass, 1 a blocking layer failed, 2 input or infrastructure error.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Self

EXIT_PASS = 0
EXIT_FAIL = 1
EXIT_ERROR = 2


@dataclass(frozen=True)
class Problem:
    """One thing wrong with an input file, at a line (1-based; 0 when unknown)."""

    file: str
    line: int
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where}: {self.message}"


def not_utf8(file: str, data: bytes, exc: UnicodeDecodeError, what: str) -> Problem:
    """Where the first byte of `data` that is not UTF-8 is: its line, and its column in characters (1-based)."""
    line_start = data.rfind(b"\n", 0, exc.start) + 1
    column = len(data[line_start : exc.start].decode("utf-8", "replace")) + 1
    return Problem(
        file,
        data.count(b"\n", 0, exc.start) + 1,
        f"not UTF-8: byte 0x{data[exc.start]:02x} at column {column} (save the {what} as UTF-8)",
    )


class AgentCIError(Exception):
    """Base of every error the CLI and the action report without a stack trace."""

    exit_code = EXIT_ERROR


class InputError(AgentCIError):
    """A spec, trace or baseline file that cannot be used; carries every problem found."""

    kind = "input"

    def __init__(self, problems: list[Problem] | Problem):
        found = [problems] if isinstance(problems, Problem) else list(problems)
        self.problems = sorted(found, key=lambda p: (p.file, p.line))
        super().__init__("\n".join(str(p) for p in self.problems))

    @classmethod
    def at(cls, file: str, line: int, message: str) -> Self:
        return cls(Problem(str(file), line, message))


class SpecError(InputError):
    """The spec YAML is missing, malformed or invalid."""

    kind = "spec"


class TraceError(InputError):
    """A trace file is missing, malformed, or does not match the spec's queries."""

    kind = "trace"


class InfraError(AgentCIError):
    """A dependency (LLM provider, GitHub API, file system) made evaluation impossible."""
