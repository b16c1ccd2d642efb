"""One pytest test per golden query, with AgentCI as the library.

    pytest examples/pytest            # or in parallel: pytest -n auto examples/pytest

Each test evaluates one query of the dev-agent spec against its recorded trace and fails
with the layer messages when a blocking layer (correctness, or a forbidden tool) fails.
Parametrising by query id keeps test ids stable, so pytest-xdist can distribute them.
"""

from pathlib import Path

import pytest

from agentci_action import load_spec, load_traces, run_spec

EXAMPLE = Path(__file__).resolve().parent.parent / "dev-agent"
SPEC = load_spec(EXAMPLE / "agentci_spec.yaml")
TRACES = load_traces([str(EXAMPLE / "traces")])


@pytest.mark.parametrize("query", SPEC.queries, ids=lambda query: query.key)
def test_golden_query(query):
    (result,) = run_spec(SPEC, TRACES, queries=[query]).results
    problems = result.correctness.messages + result.path.messages
    assert not result.blocking, f"{result.file}:{result.line}: " + "; ".join(problems)
