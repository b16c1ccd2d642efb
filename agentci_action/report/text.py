"""Make untrusted text inert for a terminal or a log: one line, no control characters."""

from __future__ import annotations

import re

# controls (ANSI escapes included), line/paragraph separators, and invisible format characters that
# reorder or hide text (bidi overrides and isolates, zero-width characters, byte-order mark)
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]")


def one_line(text: object, limit: int | None = None) -> str:
    """Newlines become '⏎', other such characters '\\xNN' or '\\uNNNN'; cut to `limit` with '…'."""
    value = _CONTROL.sub(lambda m: "⏎" if m.group() in "\r\n" else _escape(m.group()), str(text))
    if limit is not None and len(value) > limit:
        value = value[: limit - 1] + "…"
    return value


def _escape(char: str) -> str:
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
