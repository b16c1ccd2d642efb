"""The keys and endpoints of AgentCI's own model calls: one environment variable each per provider, never printed."""

from __future__ import annotations

from collections.abc import Mapping

KEY_VARIABLES = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}


def keys_from_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """provider → API key, from ANTHROPIC_API_KEY / OPENAI_API_KEY."""
    return {provider: environ[variable] for provider, variable in KEY_VARIABLES.items() if environ.get(variable)}


BASE_URL_VARIABLES = {"anthropic": "ANTHROPIC_BASE_URL", "openai": "OPENAI_BASE_URL"}


def base_urls_from_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """provider → endpoint, from ANTHROPIC_BASE_URL / OPENAI_BASE_URL in `environ`.

    The SDKs would otherwise read them from the process's environment instead of the one the caller passed.
    """
    return {provider: environ[variable] for provider, variable in BASE_URL_VARIABLES.items() if environ.get(variable)}
