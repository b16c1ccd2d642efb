"""Results files written by an earlier run (`agentci test --format json`, a shard's --output).

Read back as an `Outcome`, validated like any input since a fork's workflow may have written them.
"""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass, field

from pydantic import BaseModel, ValidationError

from agentci_action._util.errors import InputError
from agentci_action._util.limits import MAX_RESULTS_BYTES, MAX_RESULTS_NESTING, deeper_than
from agentci_action.compare.diff_schema import RunDiff
from agentci_action.compare.golden_changes import GoldenChange
from agentci_action.compare.recording_changes import RecordingChange
from agentci_action.engine.results import RunResult


class ChangeLists(BaseModel):
    """What the PR changed, as the results JSON's keys: read back for the publish-only and the merge jobs."""

    recordings_changed: list[RecordingChange] = []
    goldens_changed: list[GoldenChange] = []


@dataclass(frozen=True)
class Outcome:
    """The results, the diff against the baseline when there was one (its warnings included), what the PR changed.

    What the PR changed: the recordings and the golden queries, against its base commit. A shard has no diff: the
    diff needs every query's traces, which no single shard holds.
    """

    run: RunResult
    diff: RunDiff | None = None
    recordings: list[RecordingChange] = field(default_factory=list)  # changed since the base commit
    goldens: list[GoldenChange] = field(default_factory=list)  # the spec's queries changed since the base commit


def read_shards(patterns: list[str]) -> dict[str, Outcome]:
    """Shard results files matching the glob patterns, by file name, each with the diff of its queries.

    The diff when it was compared with a baseline; each must parse as results JSON.
    """
    import glob

    files = sorted({file for pattern in patterns for file in (glob.glob(pattern) or [pattern])})
    shards, problems = {}, []
    for file in files:
        try:
            shards[file] = _read_document(file, "shard results")
        except InputError as exc:
            problems.extend(exc.problems)
    if problems:
        raise InputError(problems)
    return shards


def _read_document(path: str, what: str) -> Outcome:
    """A results file's run, its diff (when it has one) and the recordings and golden queries the PR changed.

    InputError naming the file when it is not one, or when it is larger or nested deeper than a results file may be
    (_util/limits.py): it may be a fork's forged artifact.
    """
    try:
        with open(path, "rb") as file:
            if not stat.S_ISREG(os.fstat(file.fileno()).st_mode):
                raise InputError.at(path, 0, f"cannot read {what}: not a regular file")
            data = file.read(MAX_RESULTS_BYTES + 1)
        if len(data) > MAX_RESULTS_BYTES:
            raise InputError.at(
                path, 0, f"{what} is larger than {MAX_RESULTS_BYTES >> 20} MiB, more than AgentCI reads"
            )
        document = json.loads(data)
        del data  # the text, no longer needed while the document is validated
        if deeper_than(document, MAX_RESULTS_NESTING):
            raise RecursionError
        run = RunResult.model_validate(document)
        diff = RunDiff.model_validate(document["diff"]) if "diff" in document else None
        changed = ChangeLists.model_validate(document)
    except OSError as exc:
        raise InputError.at(path, 0, f"cannot read {what}: {exc.strerror or exc}") from None
    except RecursionError:  # json's own limit is about 1,000 levels
        raise InputError.at(
            path, 0, f"not an agentci results file: nested deeper than {MAX_RESULTS_NESTING} lists and objects"
        ) from None
    except ValueError as exc:  # JSON and pydantic errors alike
        why = _first_error(exc) if isinstance(exc, ValidationError) else str(exc)
        raise InputError.at(path, 0, f"not an agentci results file: {why}") from None
    return Outcome(run, diff, changed.recordings_changed, changed.goldens_changed)


def _first_error(exc: ValidationError) -> str:
    """'results.0.path.details.reference: String should match pattern ...': where the first error is, and what."""
    error = exc.errors(include_url=False)[0]
    where = ".".join(str(part) for part in error["loc"])
    return f"{where}: {error['msg']}" if where else error["msg"]


def read_results(path: str) -> Outcome:
    """A results file written by an earlier run (the action's publish-only mode), with its diff when it has one.

    The file may come from a fork's workflow: it is validated like any input, and a shard's file is refused.
    """
    outcome = _read_document(path, "the results file")
    if outcome.run.shard is not None:
        raise InputError.at(path, 0, "a shard results file: publish the merge job's results instead")
    return outcome
