"""The key a model call is recorded and replayed under: what the request asks, without what changes run to run.

    key = canonical JSON of {provider, method, path, query, body with its volatile parts masked}

Canonical JSON sorts object keys, writes no spaces and keeps every other value as sent (`stream` included: a
streamed and a plain answer are different recordings). Request headers are never part of the key (they carry
keys, SDK versions and retry counts); URL query parameters are, the allow-listed ones only (`api-version`,
`beta`), as the rest may carry a key.

Volatile parts are replaced by the placeholder "<volatile>", in the key and in the recording alike (so a
recording holds no value that differs from run to run, and masking twice changes nothing):
- built-in, at the top level of the body: `user`, `metadata`, `prompt_cache_key`, `safety_identifier`
  (per-user or per-session ids that do not change what the model is asked);
- declared paths: dot-separated keys and list indexes, `*` for any key or index, an optional leading `$.`
  (`messages.*.tool_call_id`, `input.0.content`, `metadata.session`); a path that does not occur is ignored;
- declared patterns: regular expressions whose matches inside any string of the body are masked (a timestamp
  or an id inside a tool result's text, which no path can reach);
- secrets: values masked wherever they occur in a string, of the request and of its answer alike (the agent's
  secret-named variables, the keys its request carries, the replay's placeholder key; answer_secrets.py masks
  an answer, a stream's frames included).

A request whose key matches no recorded one exactly may still match a recorded key with each placeholder read as any
run of a string's non-space characters, none included (`volatile_match`): a secret-named variable the agent puts in
its prompt is recorded masked, and replayed absent (a fork's pull request gets no secrets, and AgentCI cannot know
the name to give it a placeholder) the agent writes nothing, or "None", where the value was.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from agentci_action.run.secrets import MIN_SECRET
from agentci_action.spec.runner_config import volatile_path

PLACEHOLDER = "<volatile>"
BUILT_IN_VOLATILE = ("user", "metadata", "prompt_cache_key", "safety_identifier")
KEYED_QUERY_PARAMETERS = frozenset({"api-version", "beta"})
ANY = "*"


def canonical_json(value: Any) -> str:
    """Sorted keys, no spaces, non-ASCII kept: one text for one value."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


@dataclass(frozen=True)
class Volatility:
    """What is masked out of a request body before it is keyed and recorded."""

    paths: tuple[tuple[str, ...], ...] = ()
    patterns: tuple[re.Pattern[str], ...] = ()
    secrets: frozenset[str] = frozenset()

    @classmethod
    def declared(
        cls, paths: Iterable[str] = (), patterns: Iterable[str] = (), secrets: Iterable[str] = ()
    ) -> Volatility:
        """The built-in paths plus the declared ones, and `secrets`; ValueError for a path or pattern that does not parse.

        Secrets shorter than MIN_SECRET are not masked: they would mask ordinary words.
        """
        compiled = []
        for pattern in patterns:
            try:
                compiled.append(re.compile(pattern))
            except re.error as exc:
                raise ValueError(f"volatile pattern {pattern!r} does not compile: {exc}") from None
        built_in = tuple((name,) for name in BUILT_IN_VOLATILE)
        paths_of = built_in + tuple(volatile_path(p) for p in paths)
        return cls(paths=paths_of, patterns=tuple(compiled)).with_secrets(secrets)

    def with_secrets(self, values: Iterable[str]) -> Volatility:
        """This volatility with `values` as secrets too (those shorter than MIN_SECRET left out)."""
        more = frozenset(v for v in values if len(v) >= MIN_SECRET) - self.secrets
        return dataclasses.replace(self, secrets=self.secrets | more) if more else self

    @functools.cached_property
    def secret_pattern(self) -> re.Pattern[str] | None:
        """One pattern matching any secret, the longest first (a key that contains another is masked whole)."""
        if not self.secrets:
            return None
        return re.compile("|".join(re.escape(v) for v in sorted(self.secrets, key=lambda v: (-len(v), v))))

    @property
    def masks_text(self) -> bool:
        """Whether a string can change here (a pattern or a secret to mask), beyond the body's paths."""
        return bool(self.patterns or self.secrets)

    def mask(self, body: Any) -> Any:
        """A copy of `body` with its volatile parts replaced by PLACEHOLDER (the body itself when nothing is)."""
        masked = body
        for path in self.paths:
            masked = _mask_path(masked, path)
        patterns = (*self.patterns, *([self.secret_pattern] if self.secret_pattern else []))
        if patterns:
            masked = mask_strings(masked, patterns)
        return masked


def _mask_path(value: Any, path: tuple[str, ...]) -> Any:
    """`value` with what `path` names replaced, copying only the containers on the way."""
    if not path:
        return PLACEHOLDER
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        names = list(value) if head == ANY else [head] if head in value else []
        if not names:
            return value
        copy = dict(value)
        for name in names:
            copy[name] = _mask_path(value[name], rest)
        return copy
    if isinstance(value, list):
        if head == ANY:
            return [_mask_path(item, rest) for item in value]
        if head.isdigit() and int(head) < len(value):
            items = list(value)
            items[int(head)] = _mask_path(value[int(head)], rest)
            return items
    return value


def mask_strings(value: Any, patterns: tuple[re.Pattern[str], ...]) -> Any:
    """`value` with every match of `patterns` in any of its strings replaced by PLACEHOLDER."""
    if isinstance(value, str):
        for pattern in patterns:
            value = pattern.sub(PLACEHOLDER, value)
        return value
    if isinstance(value, dict):
        return {name: mask_strings(item, patterns) for name, item in value.items()}
    if isinstance(value, list):
        return [mask_strings(item, patterns) for item in value]
    return value


@functools.lru_cache(maxsize=4096)
def _placeholder_pattern(key: str) -> re.Pattern[str]:
    """`key` with each PLACEHOLDER read as any run of a JSON string's non-space characters, none included."""
    return re.compile(r'[^"\\\s]*'.join(re.escape(part) for part in key.split(PLACEHOLDER)))


def volatile_match(key: str, recorded: Iterable[str]) -> str | None:
    """The first of the `recorded` keys holding a placeholder that `key` matches, reading each as any value; else None."""
    for candidate in recorded:
        if PLACEHOLDER in candidate and _placeholder_pattern(candidate).fullmatch(key):
            return candidate
    return None


def keyed_query(query: dict[str, str]) -> dict[str, str]:
    """The URL query parameters that are recorded and keyed (an allow-list: any other may carry a key)."""
    return {name: value for name, value in query.items() if name in KEYED_QUERY_PARAMETERS}


def request_key(provider: str, method: str, path: str, query: dict[str, str], content: dict[str, Any]) -> str:
    """The key of a request whose content ({"body": JSON} or {"text": ...} or {"base64": ...}) is already masked."""
    return canonical_json({"provider": provider, "method": method, "path": path, "query": query, **content})
