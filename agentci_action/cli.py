"""The `agentci` command: validate a spec, test traces against it, print its JSON Schema, start a project.

Exit codes: 0 pass (warnings allowed) · 1 a blocking layer failed (`validate`: the spec is invalid) ·
2 the spec, the traces or an infrastructure dependency made evaluation impossible.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path

from .errors import EXIT_ERROR, EXIT_FAIL, EXIT_PASS, AgentCIError, SpecError
from .engine.results import RunResult, Status
from .trace.adapters import FORMATS as TRACE_FORMATS

FORMATS = ("console", "json")


def exit_code(run: RunResult) -> int:
    """2 when any query could not be evaluated, 1 when any query blocks, else 0."""
    if any(r.status is Status.ERROR for r in run.results):
        return EXIT_ERROR
    if any(r.blocking for r in run.results):
        return EXIT_FAIL
    return EXIT_PASS


def renderer(fmt: str) -> Callable[[RunResult], str]:
    from .report import console, json

    return {"console": console.render, "json": json.render}[fmt]


def _split(values: list[str] | None) -> list[str]:
    return [item.strip() for value in values or [] for item in value.split(",") if item.strip()]


def cmd_validate(args: argparse.Namespace) -> int:
    from .spec.loader import load_spec

    try:
        spec = load_spec(args.spec)
    except SpecError as exc:
        for problem in exc.problems:
            print(problem, file=sys.stderr)
        print(f"{args.spec}: invalid ({len(exc.problems)} problem{'s' * (len(exc.problems) != 1)})", file=sys.stderr)
        return EXIT_FAIL
    print(f"{args.spec}: valid · agent {spec.agent!r} · {len(spec.queries)} queries")
    return EXIT_PASS


def cmd_test(args: argparse.Namespace) -> int:
    from .engine.runner import Settings, parse_fail_on
    from .evaluate import Evaluation, JudgeOptions, evaluate

    try:
        fail_on = parse_fail_on(args.fail_on)
    except ValueError as exc:
        raise SpecError.at("--fail-on", 0, str(exc)) from None
    run = evaluate(Evaluation(spec=args.spec, traces=args.traces, baseline_traces=args.baseline_traces or [],
                              trace_format=args.trace_format, tags=_split(args.tags),
                              settings=Settings(fail_on=fail_on, workers=args.workers),
                              judge=JudgeOptions(mode=args.judge_mode, cache=args.judge_cache, sample_ensemble=args.sample_ensemble, environ=os.environ)))
    write_output(renderer(args.format)(run), args.output)
    return exit_code(run)


def _fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"expected a fraction between 0 and 1, got {text!r}")
    return value


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {text!r}")
    return int(text)


def write_output(text: str, output: str | None) -> None:
    if output:
        path = Path(output)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)


def cmd_schema(args: argparse.Namespace) -> int:
    from .spec.schema import render_schema

    write_output(render_schema(), args.output)
    return EXIT_PASS


def cmd_init(args: argparse.Namespace) -> int:
    from .init import init_project

    for path in init_project(Path(args.directory)):
        print(f"wrote {path}")
    print("next: agentci test --spec agentci_spec.yaml --traces traces/")
    return EXIT_PASS


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="agentci", description="Regression tests for AI agents: correctness, path and cost.")
    sub = parser.add_subparsers(dest="command", required=True)

    validate = sub.add_parser("validate", help="check a spec; exit 1 listing every problem as file:line: message")
    validate.add_argument("spec")
    validate.set_defaults(func=cmd_validate)

    test = sub.add_parser("test", help="evaluate traces against a spec")
    test.add_argument("--spec", required=True, help="the spec YAML")
    test.add_argument("--traces", required=True, action="append", help="trace file, directory or glob (repeatable)")
    test.add_argument("--baseline-traces", action="append", help="accepted traces to compare with (sequence similarity, match mode, cost multiplier); "
                      "up to 5 per query are variants, and the closest is used")
    test.add_argument("--trace-format", default=None, choices=["auto", *TRACE_FORMATS], help="trace format (default: detected per file)")
    test.add_argument("--tags", action="append", help="only queries with one of these tags (comma-separated)")
    test.add_argument("--fail-on", default="correctness", help="layers that block: correctness,path,cost or none (default: correctness)")
    test.add_argument("--workers", type=_positive, default=4, help="concurrent judge calls (default 4)")
    test.add_argument("--judge-mode", choices=("auto", "required", "off"), default="auto",
                      help="auto: judge checks without a key or cached verdict are skipped; required: that is an error (exit 2); off: never judge")
    test.add_argument("--judge-cache", help="verdict cache to read and update (default: .agentci/judge-cache.json beside the spec); commit it")
    test.add_argument("--sample-ensemble", type=_fraction, default=1.0, metavar="F",
                      help="run the judge_config ensemble on a fixed, hash-chosen share F of the judge checks (default 1: all)")
    test.add_argument("--format", choices=FORMATS, default="console")
    test.add_argument("--output", help="write the report to this file instead of standard output")
    test.set_defaults(func=cmd_test)

    schema = sub.add_parser("schema", help="print the spec's JSON Schema")
    schema.add_argument("--output", help="write to this file")
    schema.set_defaults(func=cmd_schema)
    init = sub.add_parser("init", help="write a starter spec, an example trace and a GitHub workflow")
    init.add_argument("directory", nargs="?", default=".", help="where to write them (default: here)")
    init.set_defaults(func=cmd_init)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except AgentCIError as exc:
        for line in str(exc).splitlines():
            print(f"error: {line}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        return EXIT_ERROR


if __name__ == "__main__":
    sys.exit(main())
