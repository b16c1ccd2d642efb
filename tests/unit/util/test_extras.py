"""A lean install (`pip install agentci-action`, no extras).

A feature whose optional dependency is missing stops with exit 2 and names the extra to install, never with a traceback.
The package is made missing the way Python sees an absent one (None in sys.modules: ModuleNotFoundError); .ci/compat
runs the core suite in a real lean venv.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from helpers import ROOT, hermetic_environment

from agentci_action._util.errors import InfraError
from agentci_action._util.extras import EXTRA_OF, require

SPEC = """\
agent: demo
judge_config:
  model: {model}
queries:
  - id: q
    query: What is 2+2?
    reference_answer: "The answer is 4."
    checks:
      answer: {{{check}}}
    correctness:
      llm_judge: {judge}
"""


def agentci_without(module: str, tmp_path, spec: str, **env: str) -> subprocess.CompletedProcess:
    """The real CLI in a subprocess in which `module` cannot be imported."""
    (tmp_path / "s.yaml").write_text(spec)
    (tmp_path / "t.jsonl").write_text('{"id": "q", "final_answer": "The answer is 4."}\n')
    code = (
        f"import sys; sys.modules[{module!r}] = None; from agentci_action.cli.main import main; "
        "sys.exit(main(['test', '--spec', 's.yaml', '--traces', 't.jsonl']))"
    )
    return subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, env=hermetic_environment(**env)
    )


@pytest.mark.parametrize("module, check", [("sacrebleu", "min_bleu"), ("rouge_score", "min_rouge_l")])
def test_a_text_metric_without_its_library_names_the_text_extra(tmp_path, module, check):
    done = agentci_without(module, tmp_path, SPEC.format(model="gpt-5-mini", check=f"{check}: 0.1", judge="[]"))
    assert done.returncode == 2
    assert "pip install 'agentci-action[text]'" in done.stderr and "Traceback" not in done.stderr


def test_the_judge_without_its_sdk_names_the_extra_and_without_a_key_skips_as_before(tmp_path, llm):
    judge = "[{template: actionable_steps}]"
    spec = SPEC.format(model="gpt-5-mini", check="normalized_exact_match: true", judge=judge).replace(
        "model: gpt-5-mini", f"model: gpt-5-mini\n  base_url: {llm.openai_url}"
    )
    done = agentci_without("openai", tmp_path, spec, OPENAI_API_KEY="sk-test")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "pip install 'agentci-action[openai]'" in done.stderr and "Traceback" not in done.stderr
    assert agentci_without("openai", tmp_path, spec).returncode == 0  # no key: skipped with the reason, no SDK needed


def test_require_names_the_extra_of_every_optional_package(monkeypatch):
    for module, extra in EXTRA_OF.items():
        monkeypatch.setitem(sys.modules, module, None)
        with pytest.raises(InfraError, match=rf"pip install 'agentci-action\[{extra}\]'"):
            require(module, "A feature")


def test_a_broken_optional_package_keeps_its_own_error(tmp_path, monkeypatch):
    """Installed but failing on a dependency of its own: that error says more than 'install the extra'."""
    (tmp_path / "sacrebleu.py").write_text("import a_module_that_is_not_there\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "sacrebleu", raising=False)
    with pytest.raises(ModuleNotFoundError, match="a_module_that_is_not_there"):
        require("sacrebleu", "BLEU")


def test_every_extra_named_exists_in_pyproject():
    import tomllib

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert set(EXTRA_OF.values()) <= set(extras)
