"""Merge the shards' results files into one run, refusing anything that would not equal the unsharded run.

The shards must be exactly 1..n of one n, come from the same spec (spec hash, so the same tags too) and
fail-on, and hold disjoint queries that together are the whole suite. The merge orders the results as
the spec does and recomputes the summary from them, so the merged run equals the unsharded one.
"""

from __future__ import annotations

from agentci_action._util.errors import InputError, Problem
from agentci_action.engine.evaluate_spec import summarize
from agentci_action.engine.results import RunResult, ShardInfo
from agentci_action.spec.models import AgentCISpec, private_attributes, spec_hash


def check_shards(spec: AgentCISpec, shards: dict[str, RunResult]) -> None:
    """Raise InputError naming the files unless `shards` (file → results) are the complete, disjoint shards of `spec`."""
    if not shards:
        raise InputError(Problem(spec.path, 0, "no shard results files to merge"))
    problems = []
    expected_hash = spec_hash(spec)
    shard_of: dict[str, ShardInfo] = {}  # file → its shard, for the files that are shards of this spec
    for file, run in shards.items():
        if run.shard is None:
            problems.append(
                Problem(file, 0, "not a shard results file (`agentci test --shard` writes one, to its --output)")
            )
        elif run.spec_hash != expected_hash:
            problems.append(
                Problem(
                    file,
                    0,
                    f"written for a different spec (hash {run.spec_hash[:12]}, {spec.path} has {expected_hash[:12]}): "
                    "every shard and the merge must use the same spec and tags",
                )
            )
        else:
            shard_of[file] = run.shard
    if problems:
        raise InputError(problems)
    counts = {shard.count for shard in shard_of.values()}
    if len(counts) > 1:
        raise InputError(
            [
                Problem(file, 0, f"shard {shard.index}/{shard.count}: the shards disagree on the shard count")
                for file, shard in shard_of.items()
            ]
        )
    count = counts.pop()
    seen: dict[int, str] = {}
    owner: dict[str, str] = {}
    for file, run in shards.items():
        index = shard_of[file].index
        if index in seen:  # one line for the file: its queries are the other file's, each would repeat it
            problems.append(Problem(file, 0, f"overlapping shards: shard {index}/{count} is also in {seen[index]}"))
            continue
        seen[index] = file
        for result in run.results:
            if result.id in owner:
                problems.append(
                    Problem(file, 0, f"overlapping shards: query {result.id!r} is also in {owner[result.id]}")
                )
            owner.setdefault(result.id, file)
    missing_shards = [i for i in range(1, count + 1) if i not in seen]
    if missing_shards:
        problems.append(
            Problem(
                spec.path,
                0,
                f"missing shard{'s' * (len(missing_shards) > 1)} {', '.join(f'{i}/{count}' for i in missing_shards)}",
            )
        )
    fail_ons = {tuple(run.summary.fail_on) for run in shards.values()}
    if len(fail_ons) > 1:
        problems.append(
            Problem(spec.path, 0, f"the shards were run with different fail-on settings: {sorted(fail_ons)}")
        )
    if not missing_shards and not problems:
        absent = [q for q in spec.queries if q.key not in owner]
        problems.extend(Problem(q.file, q.line, f"query {q.key!r} is in no shard's results") for q in absent)
        stray = sorted(set(owner) - {q.key for q in spec.queries})
        problems.extend(Problem(owner[i], 0, f"query {i!r} is not in the spec") for i in stray)
    if problems:
        raise InputError(problems)


def merge_shards(spec: AgentCISpec, shards: dict[str, RunResult]) -> RunResult:
    """One run from complete, disjoint shards (see check_shards): results in spec order, warnings once each, summary anew."""
    check_shards(spec, shards)
    by_id = {result.id: result for run in shards.values() for result in run.results}
    results = [by_id[q.key] for q in spec.queries]
    warnings = list(dict.fromkeys(w for run in shards.values() for w in run.warnings))
    first = next(iter(shards.values()))
    fail_on = frozenset(first.summary.fail_on)
    run = RunResult(
        agent=spec.agent,
        spec=spec.path,
        spec_hash=first.spec_hash,
        summary=summarize(results, fail_on, spec.composite),
        results=results,
        warnings=warnings,
    )
    private_attributes(run)["_selected_tags"] = spec.selected_tags  # the shards' --tags, as evaluate_spec keeps them
    return run
