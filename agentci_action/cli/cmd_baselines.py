"""`agentci baselines`: list the saved baseline versions, marking the one `test` compares with by default."""

from __future__ import annotations

import argparse

from agentci_action._util.errors import EXIT_PASS
from agentci_action.cli._arguments import add_spec_argument
from agentci_action.cli._reporting import say


def add_arguments(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("baselines", help="list the saved baseline versions")
    add_spec_argument(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from agentci_action._util.text import one_line
    from agentci_action.compare.baselines import baseline_dir, list_headers
    from agentci_action.report.baseline_phrases import first_save_command
    from agentci_action.spec.loader import load_spec

    spec = load_spec(args.spec)
    stored = list_headers(spec)
    if not stored:
        how = (
            f"`{first_save_command(args.spec)}` runs the agent (the spec's runner) and records one"
            if spec.runner is not None
            else "`agentci save` records one from the traces of a passing run (--traces, and --version to name it)"
        )
        say(f"no baselines in {baseline_dir(spec)} yet; {how}")
        return EXIT_PASS
    default = next((s for s in reversed(stored) if s.header.metadata.precheck_passed), None)
    rows = [("", "VERSION", "CAPTURED", "QUERIES", "TRACES", "PRECHECK", "AGENT", "MODELS", "FILE")]
    for item in stored:
        b = item.header
        rows.append(
            (
                "*" if item is default else "",
                b.version,
                b.captured_at,
                str(b.queries),
                str(b.traces),
                ("passed" if b.metadata.precheck_passed else "failed")
                + (f", {n} unverified" if (n := sum(b.metadata.unverified_checks.values())) else ""),
                b.agent,
                ",".join(b.metadata.models) or "-",
                str(item.file),
            )
        )
    widths = [max(len(one_line(row[i])) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        say("  ".join(one_line(cell).ljust(width) for cell, width in zip(row, widths)).rstrip())
    say(
        "\n* the default for `agentci test`: the newest version whose precheck passed"
        if default
        else "\nno version passed its precheck, so `agentci test` uses no baseline unless --baseline names one"
    )
    return EXIT_PASS
