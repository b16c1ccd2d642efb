"""One pytest test per golden query, with AgentCI as the library.

    pytest examples/pytest            # or in parallel: pytest -n auto examples/pytest

Each test evaluates one query of an example spec (dev-agent: deterministic checks only; rag: LLM judge
checks too, answered offline from the verdict cache beside its spec) against its recorded trace. It
fails with the layer messages when a blocking layer (correctness, or a forbidden tool) fails or a check
could not be evaluated (status error, e.g. the judge's retries ran out), and is
skipped, with the reason, when a check could not run (no judge key and no cached verdict): a check
that was never run must not read as passed. Parametrising by query id keeps test ids stable, so
pytest-xdist can distribute them.
"""

from pathlib import Path

import pytest

from agentci_action import judge_for, load_spec, load_traces, run_spec

EXAMPLES = Path(__file__).resolve().parent.parent
SUITES = {}
for name in ("dev-agent", "rag"):
    spec = load_spec(EXAMPLES / name / "agentci_spec.yaml")
    SUITES[name] = spec, load_traces([str(EXAMPLES / name / "traces")]), judge_for(spec)


@pytest.fixture(scope="module", autouse=True)
def keep_new_verdicts():
    """Verdicts the judge fetched (with a key) go into each spec's verdict cache, so a rerun needs no request."""
    yield
    for _, _, judge in SUITES.values():
        if judge is not None:
            judge.cache.save()


@pytest.mark.parametrize(
    ("suite", "query"),
    [(name, q) for name, (spec, _, _) in SUITES.items() for q in spec.queries],
    ids=lambda value: value if isinstance(value, str) else value.key,
)
def test_golden_query(suite, query):
    spec, traces, judge = SUITES[suite]
    run = run_spec(spec, traces, queries=[query], judge=judge)
    (result,) = run.results
    problems = result.correctness.messages + result.path.messages
    assert not result.blocking and result.status != "error", f"{result.file}:{result.line}: " + "; ".join(problems)
    if unverified := run.unverified():
        pytest.skip("not verified: " + "; ".join(unverified))
