"""`agentci schema`: print the spec's JSON Schema."""

from __future__ import annotations

import argparse

from agentci_action._util.errors import EXIT_PASS
from agentci_action.cli._reporting import write_output


def add_arguments(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("schema", help="print the spec's JSON Schema")
    parser.add_argument("--output", help="write to this file")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from agentci_action.spec.schema import render_schema

    write_output(render_schema(), args.output)
    return EXIT_PASS
