"""The API keys of AgentCI's own model calls: one environment variable per provider, read once, never printed."""

from __future__ import annotations

from collections.abc import Mapping

KEY_VARIABLES = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}


def keys_from_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """provider → API key, from ANTHROPIC_API_KEY / OPENAI_API_KEY."""
    return {provider: environ[variable] for provider, variable in KEY_VARIABLES.items() if environ.get(variable)}
