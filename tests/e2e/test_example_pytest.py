"""The pytest example (examples/pytest) runs one test per query, under pytest in processes of its own.

With pytest-xdist and without, from the examples' folder and from the repository's root, and with a judge check that
could not run skipped with its reason.
"""

import shutil
import subprocess
import sys

from helpers import ROOT, hermetic_environment


def run_pytest(examples, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *extra, str(examples / "pytest")],
        capture_output=True,
        text=True,
        cwd=examples,
        env=hermetic_environment(),
    )


def test_pytest_integration_example_runs_one_test_per_query_in_parallel():
    result = run_pytest(ROOT / "examples", "-n", "2")
    assert result.returncode == 0, result.stdout + result.stderr
    assert (
        "10 passed" in result.stdout and "skipped" not in result.stdout
    )  # the rag judge checks ran, from the shipped verdicts


def test_pytest_examples_runs_with_pytest_alone_from_the_repository_root():
    """As docs/examples.md runs it after the README's install.

    Pytest without pytest-xdist (`-p no:xdist`), from the root of a checkout, whose own configuration adds `-n auto`.
    """
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", "examples/pytest"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=hermetic_environment(),
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "10 passed" in result.stdout


def test_pytest_integration_example_skips_with_the_reason_when_a_judge_check_could_not_run(tmp_path):
    for name in ("pytest", "dev-agent", "rag"):
        shutil.copytree(
            ROOT / "examples" / name, tmp_path / name, ignore=shutil.ignore_patterns(".agentci", "__pycache__")
        )
    result = run_pytest(tmp_path, "-rs")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "7 passed, 3 skipped" in result.stdout
    reasons = {
        line.split(": ", 1)[1] for line in result.stdout.splitlines() if line.startswith("SKIPPED")
    }  # pytest groups equal reasons
    assert reasons == {
        f"not verified: {check} skipped: no ANTHROPIC_API_KEY is set and no cached verdict matches this answer"
        for check in ("llm_judge", "hallucination_check")
    }
