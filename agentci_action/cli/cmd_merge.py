"""`agentci merge`: combine shard results files into one run, reported and exiting as `test` would."""

from __future__ import annotations

import argparse

from agentci_action.cli._arguments import FORMATS, split_list
from agentci_action.cli._reporting import report_outcome
from agentci_action.spec.names import SPEC_FILE


def add_arguments(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("merge", help="combine shard results files into one run: report and exit code as `test`")
    parser.add_argument(
        "shards", nargs="+", help="[SPEC] then shard results files or globs, e.g. 'results/shard-*.json'"
    )
    parser.add_argument(
        "--spec",
        dest="spec_option",
        metavar="SPEC",
        help=f"the spec YAML the shards were run with (default: ./{SPEC_FILE})",
    )
    parser.set_defaults(spec_path=None)
    parser.add_argument("--tags", action="append", help="the --tags the shards were run with")
    parser.add_argument("--format", choices=FORMATS, default="console")
    parser.add_argument("--output", help="write the report to this file instead of standard output")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from agentci_action.pipeline.evaluation import merge

    return report_outcome(merge(args.spec, args.shards, split_list(args.tags)), args)
