"""`agentci validate`: check a spec; exit 1 listing every problem as file:line: message.

Warnings, such as a simulated user that runs once, are printed the same way and leave the exit code 0.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from agentci_action._util.errors import EXIT_FAIL, EXIT_PASS, SpecError
from agentci_action.cli._arguments import add_spec_argument
from agentci_action.cli._reporting import say


def add_arguments(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("validate", help="check a spec; exit 1 listing every problem as file:line: message")
    add_spec_argument(parser)
    parser.set_defaults(func=run)


@contextmanager
def pydantic_plugins_off() -> Iterator[None]:
    """PYDANTIC_DISABLE_PLUGINS=__all__ inside, as it was after.

    Pydantic looks for plugins in every installed distribution's entry points when it builds its first model: 3 ms in a
    bare environment, more beside an agent's many packages. While the variable is set it caches no answer, so models
    built later get their plugins.
    """
    saved = os.environ.get("PYDANTIC_DISABLE_PLUGINS")
    os.environ["PYDANTIC_DISABLE_PLUGINS"] = "__all__"
    try:
        yield
    finally:
        if saved is None:
            del os.environ["PYDANTIC_DISABLE_PLUGINS"]
        else:
            os.environ["PYDANTIC_DISABLE_PLUGINS"] = saved


def run(args: argparse.Namespace) -> int:
    """validate builds and runs only the spec's models, without pydantic's plugins.

    It runs no user code and starts no process, so nothing else sees the variable that turns them off.
    """
    from agentci_action._util.gcpause import gc_paused

    with gc_paused(), pydantic_plugins_off():  # the spec's models: objects that live until exit (_util/gcpause.py)
        from agentci_action.spec.loader import load_spec

        try:
            spec = load_spec(args.spec)
        except SpecError as exc:
            for problem in exc.problems:
                print(problem, file=sys.stderr)
            print(
                f"{args.spec}: invalid ({len(exc.problems)} problem{'s' * (len(exc.problems) != 1)})", file=sys.stderr
            )
            return EXIT_FAIL
    from agentci_action.spec.advice import advice

    for warning in advice(spec):
        print(f"{warning.file}:{warning.line}: warning: {warning.message}", file=sys.stderr)
    count = len(spec.queries)  # report.text.plural's wording, without importing the reports into validate
    say(f"{args.spec}: valid · agent {spec.agent!r} · {count} {'query' if count == 1 else 'queries'}")
    return EXIT_PASS
