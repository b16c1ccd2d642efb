"""Flags and values more than one command takes (the spec, --fail-on, the judge, shards), read the same way by each."""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from agentci_action._util.errors import SpecError
from agentci_action.spec.names import SPEC_FILE, default_spec
from agentci_action.spec.replay_modes import REPLAY_OFF, ReplayMode, ReplayOverride, replay_override

if TYPE_CHECKING:  # annotations only: each command imports the stages it needs when it runs
    from agentci_action.compare.base_ref import BaseRef
    from agentci_action.engine.results import ShardInfo
    from agentci_action.pipeline.judge_wiring import JudgeOptions

import argparse

FORMATS = ("console", "json", "github", "markdown", "html", "junit", "prometheus")


def split_list(values: list[str] | None) -> list[str]:
    return [item.strip() for value in values or [] for item in value.split(",") if item.strip()]


def add_spec_argument(parser: argparse.ArgumentParser, help: str = "the spec YAML") -> None:
    """The spec, named either way (`agentci test SPEC` or `--spec SPEC`); by default ./agentci_spec.yaml."""
    text = f"{help} (default: ./{SPEC_FILE})"
    parser.add_argument("spec_path", nargs="?", metavar="SPEC", help=text)
    parser.add_argument("--spec", dest="spec_option", metavar="SPEC", help=f"{text}; the same as SPEC")


def resolve_spec(args: argparse.Namespace) -> str:
    """The spec path given as SPEC or --spec (the same when both), else the default file in the working directory.

    `merge`'s positional arguments are shard files: a first one ending in .yaml or .yml is the spec.
    """
    positional: str | None = args.spec_path
    option: str | None = args.spec_option
    shards = getattr(args, "shards", None)
    if shards and positional is None and shards[0].endswith((".yaml", ".yml")):
        positional = shards.pop(0)
    if positional and option and Path(positional) != Path(option):
        raise SpecError.at(positional, 0, f"the spec is named twice, as {positional} and --spec {option}: give one")
    if positional:
        return positional
    if option:
        return option
    path, notice = default_spec(Path())
    if path is None:
        raise SpecError.at(
            SPEC_FILE, 0, f"no spec named and no {SPEC_FILE} here: give its path (SPEC or --spec), or run agentci init"
        )
    if notice:
        print(f"warning: {notice}", file=sys.stderr)
    return str(path)


def shard_option(text: str | None) -> ShardInfo | None:
    """--shard I/N, or None when absent; a malformed value is a usage error (exit 2)."""
    from agentci_action.pipeline.shard import parse_shard

    try:
        return parse_shard(text) if text else None
    except ValueError as exc:
        raise SpecError.at("--shard", 0, str(exc)) from None


def fail_on_option(args: argparse.Namespace) -> frozenset[str]:
    """--fail-on as a set of layers; the default for a command without the flag (`save`)."""
    from agentci_action.pipeline.blocking import parse_fail_on

    try:
        return parse_fail_on(getattr(args, "fail_on", None))
    except ValueError as exc:
        raise SpecError.at("--fail-on", 0, str(exc)) from None


def add_baseline_ref_argument(parser: argparse.ArgumentParser) -> None:
    """--baseline-ref REF: the baseline as it is at a commit, as `test` and `run` compare with it."""
    parser.add_argument(
        "--baseline-ref",
        metavar="REF",
        help="compare with the baseline as it is at this commit (e.g. origin/main, or the PR's base sha): the traces "
        "at --traces' paths there, else its saved version (--baseline V, default the newest that passed); through "
        "git, else the GitHub API (GITHUB_TOKEN, GITHUB_REPOSITORY)",
    )


def base_ref_option(args: argparse.Namespace, option: str = "baseline_ref") -> BaseRef | None:
    """The base ref --baseline-ref REF (or another option naming a commit) names; None without the option.

    Read through git, else through the GitHub API when GITHUB_TOKEN and GITHUB_REPOSITORY are set in `args.env` (as in a
    workflow's run: step).
    """
    from agentci_action.compare.base_ref import BaseRef, GitHubAccess, check_ref

    if not getattr(args, option, None):
        return None
    env = args.env
    token, repository = env.get("GITHUB_TOKEN", ""), env.get("GITHUB_REPOSITORY", "")
    api = env.get("GITHUB_API_URL") or "https://api.github.com"
    return BaseRef(
        check_ref(getattr(args, option)), GitHubAccess(repository, token, api) if token and repository else None
    )


def judge_options(args: argparse.Namespace) -> JudgeOptions:
    """The judge as --judge-mode, --judge-cache, --judge-max-cost-usd and --sample-ensemble ask.

    Keys from the command's environment, `args.env`.
    """
    from agentci_action.pipeline.judge_wiring import JudgeOptions

    return JudgeOptions(
        mode=args.judge_mode,
        cache=args.judge_cache,
        sample_ensemble=getattr(args, "sample_ensemble", None),
        max_cost_usd=args.judge_max_cost_usd,
        environ=args.env,
        caches_at=base_ref_option(args, "trust_caches_at"),
    )


def number(text: str, fits: Callable[[float], bool], expected: str) -> float:
    """`text` as a number that `fits` (NaN and text that is no number never do), else a usage error."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not fits(value):
        raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}")
    return value


def fraction(text: str) -> float:
    return number(text, lambda v: 0.0 <= v <= 1.0, "a fraction between 0 and 1")


def positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {text!r}")
    return int(text)


def dollars(text: str) -> float:
    return number(text, lambda v: 0 <= v < math.inf, "an amount of US dollars, 0 or more")


def seconds(text: str) -> float:
    return number(text, lambda v: 0 < v < math.inf, "a number of seconds above 0")


def add_replay_argument(parser: argparse.ArgumentParser) -> None:
    """--replay: how the agent's model calls are answered while AgentCI runs it (runner.replay's mode)."""
    parser.add_argument(
        "--replay",
        choices=(*ReplayMode, REPLAY_OFF),
        help="the agent's model calls through AgentCI's proxy (default: runner.replay's mode, when the spec has one): "
        "replay (answered from the recordings beside the spec; a call with none is an error, never a live call), "
        "record (all live, recordings rewritten), record-missing (recorded ones replayed, the rest live and "
        "recorded), off (straight to the provider); docs/guides/replay.md",
    )


def replay_option(args: argparse.Namespace) -> ReplayOverride:
    """--replay as a ReplayMode, REPLAY_OFF, or None when absent (runner.replay's mode)."""
    return replay_override(args.replay)


def add_judge_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--judge-mode",
        choices=("auto", "required", "off"),
        default="auto",
        help="auto: judge checks without a key or cached verdict are skipped; required: that is an error (exit 2); off: never judge",
    )
    parser.add_argument(
        "--judge-cache",
        help="verdict cache to read and update (default: .agentci/judge-cache.json beside the spec); commit it",
    )
    parser.add_argument(
        "--trust-caches-at",
        metavar="REF",
        help="on a pull request, its base commit: the verdict and embedding caches are used only as they are there "
        "(what the pull request added or changed is judged again with a key, else not verified); through git, else "
        "the GitHub API (GITHUB_TOKEN, GITHUB_REPOSITORY). The action does this itself",
    )
    parser.add_argument(
        "--judge-max-cost-usd",
        type=dollars,
        default=None,
        metavar="USD",
        help="no judge call starts once the judge has spent this much in the run (with judge_config.max_cost_usd "
        "too, the lower cap holds); the checks left are reported as not verified",
    )


def add_fail_on_argument(parser: argparse.ArgumentParser, what: str = "what blocks (exit 1)") -> None:
    parser.add_argument(
        "--fail-on",
        default="correctness,suite",
        help=f"{what}: correctness, path, cost, suite (the spec's suite: gates), or none (default: correctness,suite)",
    )


def add_evaluation_arguments(parser: argparse.ArgumentParser) -> None:
    """How queries are evaluated, the same on `test` and `diff`: the judge, its workers, the embedding cache."""
    parser.add_argument("--workers", type=positive, default=4, help="concurrent judge calls (default 4)")
    add_judge_arguments(parser)
    parser.add_argument(
        "--sample-ensemble",
        type=fraction,
        default=None,
        metavar="F",
        help="run judge_config.ensemble's models on a fixed, hash-chosen share F of the judge checks, even when "
        "the ensemble is not enabled (default: every check if enabled, none if not)",
    )
    parser.add_argument(
        "--embedding-cache", help="JSON file of cached embeddings for semantic similarity (read, then updated)"
    )
