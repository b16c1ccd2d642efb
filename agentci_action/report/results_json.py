"""The results JSON (agentci.results/v2) and the diff JSON (agentci.diff/v3): interfaces other tools read."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from agentci_action._util.json_text import dumps
from agentci_action.compare.diff_schema import RunDiff
from agentci_action.compare.golden_changes import GoldenChange
from agentci_action.compare.recording_changes import RecordingChange
from agentci_action.engine.results import RunResult


def chunks(
    run: RunResult,
    diff: RunDiff | None = None,
    recordings: Sequence[RecordingChange] = (),
    goldens: Sequence[GoldenChange] = (),
) -> Iterator[str]:
    """render(run, diff, recordings, goldens) a piece at a time: the run's fields, then each query's result as it is serialised.

    A results file of 10k queries is never held whole (as text, nor as the data pydantic builds it from), and the text
    is the same as one dumps of the run: each result is dumped alone and indented to its place.
    """
    head = dumps(run.model_copy(update={"results": []}))
    if diff is not None:  # the diff follows the run's own fields, which stay as they were
        head = _with_key(head, "diff", dumps(diff))
    changed: dict[str, Sequence[RecordingChange | GoldenChange]] = {
        "recordings_changed": recordings,  # compare/recording_changes.py
        "goldens_changed": goldens,  # compare/golden_changes.py
    }
    for key, changes in changed.items():  # what a PR changed: last, each only when there is some
        if changes:
            head = _with_key(head, key, dumps([change.as_json() for change in changes]))
    if not run.results:
        yield head + "\n"
        return
    before, after = head.split(_EMPTY_RESULTS, 1)
    yield before + '\n  "results": ['
    for index, result in enumerate(run.results):
        yield ("\n    " if index == 0 else ",\n    ") + dumps(result).replace("\n", "\n    ")
    yield "\n  ]" + after + "\n"


def _with_key(head: str, key: str, value: str) -> str:
    """`head`, a JSON object's text, with `key` added last: `value` (JSON text) indented to its place."""
    return head.removesuffix("\n}") + f',\n  "{key}": ' + value.replace("\n", "\n  ") + "\n}"


_EMPTY_RESULTS = '\n  "results": []'  # top-level keys alone are indented two spaces; a string holds no raw newline


def render(
    run: RunResult,
    diff: RunDiff | None = None,
    recordings: Sequence[RecordingChange] = (),
    goldens: Sequence[GoldenChange] = (),
) -> str:
    """The results JSON; with a diff against the baseline, it is the top-level `diff` field (agentci.diff/v3).

    With recordings changed against the PR's base commit, `recordings_changed`: [{query, run, change, detail}]; with
    golden queries changed, `goldens_changed`: [{query, change, line, detail, provenance}].
    """
    return "".join(chunks(run, diff, recordings, goldens))


def render_diff(diff: RunDiff) -> str:
    """The diff JSON (schema_version agentci.diff/v3)."""
    return dumps(diff) + "\n"
