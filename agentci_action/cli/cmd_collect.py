"""`agentci collect`: receive an agent's OpenTelemetry spans on 127.0.0.1 and write them as trace files."""

from __future__ import annotations

import argparse
from pathlib import Path

from agentci_action._util.errors import InfraError, SpecError


def add_arguments(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "collect",
        help="receive an agent's OpenTelemetry spans (OTLP/HTTP on 127.0.0.1) and write them as traces, one file per "
        "query, until Ctrl-C or until the command after -- exits",
    )
    parser.add_argument("--output", required=True, help="directory for the trace files (<query id>.jsonl)")
    parser.add_argument(
        "--port", type=int, default=4318, help="port on 127.0.0.1 (default 4318, OTLP/HTTP's own; 0: any free one)"
    )
    parser.add_argument(
        "--quiet", type=float, default=1.0, help="seconds without new spans before the files are rewritten"
    )
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- a command to run with the OTEL_* variables set")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from agentci_action.run.capture.collect import collect

    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    try:
        return collect(Path(args.output), args.port, command or None, args.quiet, environ=args.env)
    except FileNotFoundError as exc:
        raise SpecError.at("collect", 0, f"command not found: {exc.filename}") from None
    except OSError as exc:
        raise InfraError(
            f"cannot listen on 127.0.0.1:{args.port} ({exc.strerror or exc}): pass --port 0 for any free port"
        ) from None
