"""The `agentci` command.

The parser, made of each command's own flags (cli/cmd_<command>.py: `add_arguments` and `run`), and `main`. Each command
imports the stages it needs when it runs, so `agentci --help` and `validate` start fast.

Exit codes: 0 pass (warnings allowed) · 1 a blocking layer failed (`validate`: the spec is invalid;
`save`: the traces fail the correctness precheck) ·
2 the spec, the traces or an infrastructure dependency made evaluation impossible.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Mapping
from contextlib import ExitStack, redirect_stderr, redirect_stdout
from typing import TextIO

from agentci_action._util.errors import EXIT_ERROR, AgentCIError
from agentci_action._version import __version__
from agentci_action.cli import (
    cmd_baselines,
    cmd_collect,
    cmd_diff,
    cmd_goldens,
    cmd_history,
    cmd_init,
    cmd_merge,
    cmd_queries,
    cmd_record,
    cmd_run,
    cmd_save,
    cmd_schema,
    cmd_test,
    cmd_validate,
)
from agentci_action.cli._arguments import resolve_spec

COMMANDS = (
    cmd_validate,
    cmd_test,
    cmd_run,
    cmd_record,
    cmd_merge,
    cmd_queries,
    cmd_save,
    cmd_goldens,
    cmd_baselines,
    cmd_diff,
    cmd_history,
    cmd_schema,
    cmd_collect,
    cmd_init,
)  # in the order `agentci --help` lists them


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agentci", description="Regression tests for AI agents: correctness, path and cost."
    )
    parser.add_argument("--version", action="version", version=f"agentci {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    for command in COMMANDS:
        command.add_arguments(sub)
    return parser


def main(
    argv: list[str] | None = None,
    *,
    env: Mapping[str, str] | None = None,
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> int:
    """Run one command; returns its exit code.

    `env` (default os.environ) is where the commands read their settings (the judge's keys, GITHUB_*) and what the
    agent's processes inherit; it reaches them as `args.env`. `out` and `err` stand in for standard output and
    error while the command runs: everything AgentCI prints (reports, progress, the run stage's own logs) goes
    through sys.stdout and sys.stderr, so they are swapped for the call, as github/action.py's `main` takes its `out`.
    """
    with ExitStack() as streams:
        if out is not None:
            streams.enter_context(redirect_stdout(out))
        if err is not None:
            streams.enter_context(redirect_stderr(err))
        try:
            args = build_parser().parse_args(argv)
        except SystemExit as exc:  # --help, --version, a usage error: argparse has printed; its code is ours
            return exc.code if isinstance(exc.code, int) else 0
        args.env = os.environ if env is None else env
        try:
            if hasattr(args, "spec_option"):
                args.spec = resolve_spec(args)
            command: Callable[[argparse.Namespace], int] = args.func
            return command(args)
        except AgentCIError as exc:
            for line in str(exc).splitlines():
                print(f"error: {line}", file=sys.stderr)
            return exc.exit_code
        except KeyboardInterrupt:
            return EXIT_ERROR


if __name__ == "__main__":
    sys.exit(main())
