"""`agentci queries`: the selected queries as JSON Lines {id, query}."""

from __future__ import annotations

import argparse

from agentci_action._util.errors import EXIT_PASS
from agentci_action.cli._arguments import add_spec_argument, shard_option, split_list
from agentci_action.cli._reporting import write_output


def add_arguments(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "queries", help="list the spec's queries as JSON Lines {id, query} (with --shard: that shard's)"
    )
    add_spec_argument(parser)
    parser.add_argument("--tags", action="append", help="only queries with one of these tags (comma-separated)")
    parser.add_argument("--shard", help="only shard INDEX/COUNT, as `test --shard` selects it")
    parser.add_argument("--output", help="write to this file")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """The selected queries as JSON Lines {id, query}: what to run the agent on (in a matrix job, its shard's)."""
    import json

    from agentci_action.pipeline.shard import select_shard
    from agentci_action.spec.loader import load_spec

    shard = shard_option(args.shard)
    spec = load_spec(args.spec, tags=split_list(args.tags) or None)
    queries = select_shard(spec.queries, shard) if shard else spec.queries
    write_output(
        "".join(json.dumps({"id": q.key, "query": q.query}, ensure_ascii=False) + "\n" for q in queries), args.output
    )
    return EXIT_PASS
