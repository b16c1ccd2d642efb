"""`agentci record`: record the agent's model calls beside the spec, so every run after it replays them.

The spec's runner runs on the selected queries with runner.replay's proxy in `record-missing` mode (what is recorded is
replayed, the rest goes to the provider and is recorded), or `record` with --all (everything again). It writes only
`<recordings>/<query id>/run-<n>.json`, no traces, and says what to commit. It is the one command every "not
recorded" message names (run/replay/recordings.py's `record_command`).
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

from agentci_action._util.errors import EXIT_ERROR, EXIT_FAIL, EXIT_PASS
from agentci_action.cli._arguments import add_spec_argument, split_list


def add_arguments(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "record", help="record the agent's model calls (needs its key) so runs replay them with no key: commit them"
    )
    add_spec_argument(parser, "the spec YAML, with a `runner:`")
    parser.add_argument("--tags", action="append", help="only queries with one of these tags (comma-separated)")
    parser.add_argument(
        "--all",
        action="store_true",
        help="record every call again (default: replay what is recorded, record only what is missing)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Record the missing calls (every call with --all).

    0 every run gave a trace, 1 the agent failed on some, 2 some failed for infrastructure reasons.
    """
    import tempfile

    from agentci_action._util.text import plural
    from agentci_action.pipeline.agent_runs import RunPlan, run_queries
    from agentci_action.run.execute import RunOptions, terminate_on_sigterm
    from agentci_action.run.replay.recordings import stale_folders
    from agentci_action.spec.loader import load_spec
    from agentci_action.spec.replay_modes import ReplayMode
    from agentci_action.spec.runner_config import ReplaySpec

    spec = load_spec(args.spec, tags=split_list(args.tags) or None)
    with tempfile.TemporaryDirectory(prefix="agentci-record-") as scratch, terminate_on_sigterm():
        options = RunOptions(Path(scratch), replay=ReplayMode.RECORD if args.all else ReplayMode.RECORD_MISSING)
        outcome = run_queries(spec, options, RunPlan(environ=args.env))
    for trace in outcome.traces:
        if trace.run_error:
            print(f"✗ {trace.id} run {trace.run}: {trace.run_error}", file=sys.stderr)
    folder = Path(spec.path).parent / ((spec.runner.replay if spec.runner else None) or ReplaySpec()).recordings
    figures = outcome.replay
    print(
        f"agentci record: {plural(len(outcome.traces), 'run')} · "
        f"{plural(figures.live if figures else 0, 'model call')} recorded, "
        f"{figures.replayed if figures else 0} kept → {folder}/ (commit it: git add {shlex.quote(str(folder))})",
        file=sys.stderr,
    )
    for stale in stale_folders(folder, {q.key for q in load_spec(args.spec).queries}):
        print(
            f"note: {stale}/ records a query the spec no longer has: remove it with `rm -r {shlex.quote(str(stale))}`",
            file=sys.stderr,
        )
    if spec.runner is not None and spec.runner.replay is None:
        print(
            "note: the spec's runner has no `replay:`, so `agentci test` calls the model instead of these recordings: "
            "add `replay: {}` under `runner:`",
            file=sys.stderr,
        )
    return EXIT_ERROR if outcome.infra else EXIT_FAIL if outcome.failed else EXIT_PASS
