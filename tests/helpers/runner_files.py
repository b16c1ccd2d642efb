"""The files the GitHub runner reads back from a step, parsed as it parses them."""

from __future__ import annotations


def github_outputs(text: str) -> dict[str, str]:
    """GITHUB_OUTPUT as the runner reads it: `name=value` lines and `name<<DELIMITER` … `DELIMITER` blocks."""
    found, lines = {}, iter(text.splitlines())
    for line in lines:
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            value = []
            for inner in lines:
                if inner == delimiter:
                    break
                value.append(inner)
            found[name] = "\n".join(value)
        elif "=" in line:
            name, value = line.split("=", 1)
            found[name] = value
    return found


def outside_stop_commands(log: str) -> list[str]:
    """The log's lines the runner reads as workflow commands: those outside every `::stop-commands::` block."""
    outside, stop = [], None
    for line in log.splitlines():
        if stop is None and line.startswith("::stop-commands::"):
            stop = f"::{line.removeprefix('::stop-commands::')}::"
        elif stop is not None and line == stop:
            stop = None
        elif stop is None:
            outside.append(line)
    return outside
