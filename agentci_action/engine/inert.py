"""Untrusted values (tool names, argument values from traces) rendered as one short, inert line for messages.

Inert: no line breaks, control or invisible formatting characters (each is escaped as \\uXXXX), and at most
`limit` characters (cut with '…'). The renderers add their own escaping (workflow commands, markdown) on top.
"""

from __future__ import annotations

import json
import unicodedata
from typing import Any

DEFAULT_LIMIT = 60
_UNSAFE_CATEGORIES = {"Cc", "Cf", "Zl", "Zp"}  # controls, invisible formatting (bidi overrides), line/paragraph separators


def _escape(text: str) -> str:
    return "".join(f"\\u{ord(ch):04x}" if unicodedata.category(ch) in _UNSAFE_CATEGORIES else ch for ch in text)


def _cut(text: str, limit: int) -> str:
    """Escape, then shorten to `limit` characters; only a prefix is escaped, so huge values cost little."""
    escaped = _escape(text[: limit + 1])
    return escaped if len(escaped) <= limit and len(text) <= limit else escaped[: limit - 1] + "…"


def inert_name(name: str, limit: int = DEFAULT_LIMIT) -> str:
    """A tool name or key as plain text: 'search', or 'evil\\u000aname' for a name holding a newline."""
    return _cut(str(name), limit)


def inert_value(value: Any, limit: int = DEFAULT_LIMIT) -> str:
    """A JSON value as JSON text: strings quoted ('"Paris"'), numbers bare ('3'), objects with sorted keys."""
    return _cut(json.dumps(value, ensure_ascii=False, sort_keys=True, default=repr), limit)
