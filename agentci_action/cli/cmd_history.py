"""`agentci history`: the runs on the default branch, and how the agent trends.

The trend: change fail percentage, revert rate, the variance of pass rate and cost across versions. `--append` adds a
run's results to the history.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from agentci_action._util.errors import EXIT_PASS

FORMATS = ("console", "json", "csv", "markdown")


def add_arguments(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("history", help="show or export the runs on the default branch and how they trend")
    parser.add_argument(
        "--history",
        default="agentci-history",
        metavar="BRANCH|FILE",
        help="where the history is kept: a branch of the repository (default agentci-history; origin's too) or a "
        "JSON Lines file",
    )
    parser.add_argument("--series", default="agentci", help="the series on the branch: the action's comment-header")
    parser.add_argument("--repo", default=".", help="the git repository (default: the working directory)")
    parser.add_argument("--spec", help="only the runs of this spec (its path as the runs recorded it)")
    parser.add_argument("--last", type=int, default=0, help="only the last N runs (default: all)")
    parser.add_argument(
        "--append",
        metavar="RESULTS",
        help="add the run of this results file (agentci test --format json) to the history instead of showing it",
    )
    parser.add_argument("--commit", help="with --append: the commit the run evaluated (default: the repository's HEAD)")
    parser.add_argument(
        "--commits",
        metavar="RANGE",
        help="with --append: the commits the change brought (e.g. BEFORE..AFTER of a push; default: --commit alone)",
    )
    parser.add_argument("--format", choices=FORMATS, default="console", help="console (default), json, csv, markdown")
    parser.add_argument("--output", help="write to this file instead of standard output")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from agentci_action.cli._reporting import say, warn, write_output
    from agentci_action.compare.history import history_figures, read_entries, trend
    from agentci_action.compare.history_git import commit_messages, history_text
    from agentci_action.report import history_export

    repo = Path(args.repo)
    if args.append:
        say(append(args, repo))
        return EXIT_PASS
    text, where = history_text(args.history, repo, args.series)
    entries = read_entries(text, where, lambda note: warn([note]))
    if args.spec:
        entries = [e for e in entries if e.spec == args.spec]
    if args.last > 0:
        entries = entries[-args.last :]
    figures = history_figures(entries, commit_messages(repo))
    if args.format == "markdown":
        from agentci_action.report.trend_report import markdown

        report = markdown(trend(entries, window=len(entries) or 1), "Latest") if entries else ""
    else:
        report = history_export.render(args.format, entries, figures, where)
    write_output(report, args.output)
    return EXIT_PASS


def append(args: argparse.Namespace, repo: Path) -> str:
    """Add the results file's run to the history (file or branch); what was done, in words."""
    import shlex
    from datetime import UTC, datetime

    from agentci_action._util.errors import InputError
    from agentci_action._util.git import git_text
    from agentci_action.compare.history import entry_of
    from agentci_action.compare.history_git import append_history, history_file
    from agentci_action.engine.results import RunResult
    from agentci_action.pipeline.blocking import exit_code

    try:
        results = RunResult.model_validate_json(Path(args.append).read_bytes())
    except (OSError, ValueError) as exc:
        raise InputError.at(args.append, 0, f"not a results file: {str(exc).splitlines()[0]}") from None

    commit = args.commit or git_text(repo, "rev-parse", "HEAD").strip()
    if not commit:
        raise InputError.at(str(repo), 0, "no commit to record: pass --commit SHA (or run inside the repository)")
    span = args.commits or f"{commit}^!"
    commits = git_text(repo, "rev-list", span).split() or [commit]
    messages = [m for m in git_text(repo, "log", "--format=%B%x00", span).split("\x00") if m.strip()]
    entry = entry_of(
        results,
        failed=exit_code(results) != 0,
        commit=commit,
        date=datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
        commits=reversed(commits),
        messages=messages,
    )
    target = Path(args.history)
    if target.suffix == ".jsonl" or target.is_file():
        from agentci_action._util.output import write_file
        from agentci_action.compare.history import appended

        write_file(str(target), appended(target.read_text(encoding="utf-8") if target.is_file() else "", entry))
        return f"added the run at {commit[:12]} to {target}"
    made = append_history(repo, entry, args.history, args.series)
    return (
        f"added the run at {commit[:12]} to {args.history}:{history_file(args.series)} (commit {made[:12]}); "
        f"share it with `git push origin {shlex.quote(args.history)}`"
    )
