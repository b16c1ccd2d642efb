"""Optional dependencies: the lean core, and extras for the judge's SDKs, PyGithub and ROUGE/BLEU.

`pip install agentci-action` is the lean core (spec, traces, engine, reports); the judge's SDKs, PyGithub and the
ROUGE/BLEU libraries come with extras (the action's image has them all).

A feature that needs a missing one fails with an error naming the extra (exit 2), never an ImportError.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from agentci_action._util.errors import InfraError

# top-level module → the extra that installs it (pyproject.toml's [project.optional-dependencies])
EXTRA_OF = {
    "anthropic": "anthropic",
    "openai": "openai",
    "github": "github",
    "rouge_score": "text",
    "sacrebleu": "text",
}


def require(module: str, feature: str) -> ModuleType:
    """import_module(module), or an InfraError saying which extra `feature` needs when the package is missing."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        top = module.partition(".")[0]
        if not exc.name or not (module + ".").startswith(exc.name + "."):  # there, but broken: its error says more
            raise
        extra = EXTRA_OF[top]
        raise InfraError(
            f"{feature} needs the optional dependency {top!r}, which is not installed: "
            f"pip install 'agentci-action[{extra}]'"
        ) from None
