"""`agentci goldens`: promote traces (what the agent did) into golden queries of the spec (docs/guides/goldens.md)."""

from __future__ import annotations

import argparse
import math
import shlex
from typing import TYPE_CHECKING

from agentci_action._util.errors import EXIT_FAIL, EXIT_PASS, SpecError
from agentci_action._util.output import write_stream
from agentci_action.cli._arguments import add_spec_argument, dollars, fraction, number, positive, split_list
from agentci_action.spec.trace_formats import TRACE_FORMATS

if TYPE_CHECKING:
    from agentci_action.pipeline.goldens import Promotion, PromotionRequest


def add_arguments(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "goldens",
        help="promote traces into golden queries of the spec: selected, deduplicated, masked, checked on their traces",
    )
    add_spec_argument(parser, "the spec to add the goldens to and compare them with")
    parser.add_argument(
        "--traces", action="append", required=True, help="trace file, directory or glob, in any format (repeatable)"
    )
    parser.add_argument("--trace-format", choices=["auto", *TRACE_FORMATS], help="trace format (default: detected)")
    parser.add_argument(
        "--output",
        metavar="FILE",
        help="write the goldens to this spec file instead (a new one: version, the spec's agent, the goldens; an "
        "existing one: appended to, like the spec)",
    )
    parser.add_argument("--dry-run", action="store_true", help="print what would be added; write nothing")
    select = parser.add_argument_group("selection (every filter given must hold)")
    select.add_argument("--id", action="append", help="only the traces with these ids (repeatable, comma-separated)")
    select.add_argument("--failed", action="store_true", help="only failed runs (status, a tool error, no trace)")
    select.add_argument(
        "--slower-than", type=float, metavar="MS", help="only runs that took longer (total_duration_ms)"
    )
    select.add_argument("--costlier-than", type=dollars, metavar="USD", help="only runs that cost more")
    select.add_argument("--tool", action="append", help="only runs that called one of these tools (repeatable)")
    select.add_argument("--framework", choices=TRACE_FORMATS, help="only traces read in this format")
    select.add_argument(
        "--where",
        action="append",
        metavar="KEY=VALUE",
        help="only traces whose metadata KEY is VALUE (or a list holding it), e.g. session_id=abc, workflow_name=x",
    )
    select.add_argument("--sample", type=positive, metavar="N", help="at most N goldens, drawn at random after dedupe")
    select.add_argument("--seed", type=int, default=0, help="the sample's seed (default 0: the same draw every time)")
    dedupe = parser.add_argument_group("dedupe")
    dedupe.add_argument(
        "--similarity",
        type=_similarity,
        default=0.8,
        metavar="F",
        help="a query whose words overlap a kept one's this much (Jaccard, 0 < F ≤ 1; default 0.8) is a near-duplicate",
    )
    dedupe.add_argument(
        "--same-route",
        action="store_true",
        help="also drop a golden whose route (its tools and their identifying arguments, at least one call) a kept one "
        "already takes, however its query is worded",
    )
    golden = parser.add_argument_group("what a golden holds")
    golden.add_argument(
        "--cost-margin",
        type=_margin,
        default=0.5,
        metavar="F",
        help="the cost budget is the observed cost × (1 + F) (default 0.5: 50%% above)",
    )
    golden.add_argument(
        "--volatile",
        action="append",
        metavar="KEY",
        help="argument keys left out of expected_tool_calls besides the built-in rule (ids, timestamps; repeatable)",
    )
    golden.add_argument(
        "--keep-masked",
        action="store_true",
        help="write goldens whose query had to be masked (default: flagged, not written)",
    )
    incident = parser.add_argument_group("incidents: a failing trace promoted with the corrected expectation")
    incident.add_argument("--incident", action="store_true", help="promote as incidents (provenance.incident: true)")
    incident.add_argument("--expect-answer", action="append", metavar="TEXT", help="the answer must hold TEXT")
    incident.add_argument("--expect-route", metavar="TOOLS", help="the tools it must call, in order (comma-separated)")
    incident.add_argument("--forbid-tool", action="append", metavar="TOOL", help="a tool it must never call")
    parser.set_defaults(func=run)


def _similarity(text: str) -> float:
    value = fraction(text)
    if value == 0:
        raise argparse.ArgumentTypeError("expected a fraction above 0 and at most 1, got 0")
    return value


def _margin(text: str) -> float:
    return number(text, lambda v: 0 <= v < math.inf, "a margin of 0 or more (0.5: 50% above)")


def request_of(args: argparse.Namespace) -> PromotionRequest:
    """The promotion the flags ask for; SpecError (exit 2) for flags that do not fit together."""
    from agentci_action.pipeline.golden_proposals import GoldenOptions, Incident
    from agentci_action.pipeline.goldens import Dedupe, PromotionRequest, Selection

    expectation = Incident(
        tuple(args.expect_answer or ()), tuple(split_list([args.expect_route or ""])), tuple(args.forbid_tool or ())
    )
    if not args.incident and expectation != Incident():
        raise SpecError.at(
            "--incident", 0, "--expect-answer, --expect-route and --forbid-tool describe an incident: add --incident"
        )
    where = []
    for item in args.where or []:
        key, equals, value = item.partition("=")
        if not equals or not key:
            raise SpecError.at("--where", 0, f"expected KEY=VALUE, got {item!r}")
        where.append((key, value))
    selection = Selection(
        ids=tuple(split_list(args.id)),
        failed=args.failed,
        slower_than_ms=args.slower_than,
        costlier_than_usd=args.costlier_than,
        tools=tuple(args.tool or ()),
        framework=args.framework,
        where=tuple(where),
        sample=args.sample,
        seed=args.seed,
    )
    options = GoldenOptions(
        cost_margin=args.cost_margin,
        volatile_keys=tuple(args.volatile or ()),
        keep_masked=args.keep_masked,
        incident=expectation if args.incident else None,
    )
    return PromotionRequest(
        spec=args.spec,
        traces=args.traces,
        trace_format=args.trace_format,
        output=args.output,
        selection=selection,
        dedupe=Dedupe(similarity=args.similarity, same_route=args.same_route),
        options=options,
        environ=args.env,
    )


def run(args: argparse.Namespace) -> int:
    from agentci_action.pipeline.goldens import promote, write

    promotion = promote(request_of(args))
    if args.dry_run and promotion.added:
        write_stream(promotion.added)
    write_stream(report(promotion))
    if not promotion.kept:
        write_stream("nothing to promote\n")
        return EXIT_PASS
    if args.dry_run:
        write_stream("dry run: nothing written\n")
    else:
        write(promotion)
        write_stream(f"wrote {len(promotion.kept)} golden(s) to {promotion.target}\n")
        write_stream(f"{advice(args, promotion)}\n")
    return EXIT_FAIL if promotion.failing else EXIT_PASS


def advice(args: argparse.Namespace, promotion: Promotion) -> str:
    """`next:` the command that evaluates every promoted golden of the spec on the traces it came from.

    `--tags promoted` selects the goldens promoted before too, so the files they came from (their provenance) are
    named beside the traces read now. When one of those cannot be named, a note says which, and no command.
    """
    from agentci_action.pipeline.golden_proposals import PROMOTED_TAG

    earlier, missing = _earlier_sources(args, promotion)
    if missing:
        return (
            f"note: `agentci test {shlex.quote(str(promotion.target))} --tags {PROMOTED_TAG}` evaluates every promoted "
            f"golden, and needs their traces: {'; '.join(missing)}"
        )
    words = ["agentci", "test", str(promotion.target)]
    for traces in [*args.traces, *earlier]:
        words += ["--traces", traces]
    if args.trace_format:
        words += ["--trace-format", args.trace_format]
    return "next: " + shlex.join([*words, "--tags", PROMOTED_TAG])


def _earlier_sources(args: argparse.Namespace, promotion: Promotion) -> tuple[list[str], list[str]]:
    """The files goldens promoted before came from, beyond the traces read now (relative to here), and what is missing.

    Missing: a golden whose source is not a file here (moved, or a URL), or was read in another format than
    --trace-format names for them all.
    """
    import os
    from pathlib import Path

    from agentci_action.pipeline.golden_proposals import PROMOTED_TAG
    from agentci_action.pipeline.goldens import provenance_file
    from agentci_action.spec.loader import load_spec
    from agentci_action.trace.load import resolve_paths

    new = {golden.key for golden in promotion.kept}
    read = {path.resolve() for path in resolve_paths(args.traces)}
    files: dict[Path, None] = {}
    missing = []
    for query in load_spec(promotion.target).queries:
        found = query.provenance
        if PROMOTED_TAG not in query.tags or query.key in new or found is None:
            continue
        file = provenance_file(found, promotion.target)
        if not file.is_file():
            missing.append(f"{query.key!r} came from {found.source}, not found")
        elif args.trace_format and found.framework not in (None, args.trace_format):
            missing.append(f"{query.key!r} was read as {found.framework}, not {args.trace_format}")
        elif file not in read:
            files[file] = None
    return [os.path.relpath(file) for file in files], missing


def report(promotion: Promotion) -> str:
    """What was promoted, flagged and dropped, and how each golden does on its source traces."""
    lines = [
        f"agentci goldens: {promotion.read} trace(s) read, {promotion.selected} selected: {len(promotion.kept)} "
        f"golden(s) to write, {len(promotion.flagged)} flagged, {len(promotion.dropped)} dropped"
        + (
            f" (a sample of {len(promotion.kept) + len(promotion.flagged)} from {promotion.sampled_from})"
            if promotion.sampled_from
            else ""
        )
    ]
    for golden in promotion.kept:
        runs = f", {golden.runs} runs on {golden.routes} route(s)" if golden.runs > 1 else ""
        lines.append(
            f"  + {golden.key} from {golden.golden['provenance']['source']}{runs}: {promotion.verdicts.get(golden.key, '')}"
        )
        if golden.masked:
            lines.append(f"      masked: {'; '.join(golden.masked)}")
        if cost := golden.golden.get("cost"):
            ((name, value),) = cost.items()
            lines.append(f"      budget: {name} {value} (the observed figure + {promotion.margin * 100:g}%)")
    for golden in promotion.flagged:
        lines.append(
            f"  ! {golden.key} from {golden.golden['provenance']['source']}: flagged, not written: {golden.flag}"
        )
        if golden.masked:
            lines.append(
                f"      masked: {'; '.join(golden.masked)} (review it, then pass --keep-masked to write it masked)"
            )
    lines += [f"  - {dropped.key} from {dropped.source}: {dropped.reason}" for dropped in promotion.dropped]
    return "\n".join(lines) + "\n"
