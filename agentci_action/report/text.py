"""Make untrusted text inert for a terminal or a log: one line, no control characters."""

from __future__ import annotations

import re

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def one_line(text: object, limit: int | None = None) -> str:
    """Newlines become '⏎', other control characters (ANSI escapes included) '\\xNN'; cut to `limit` with '…'."""
    value = _CONTROL.sub(lambda m: "⏎" if m.group() in "\r\n" else f"\\x{ord(m.group()):02x}", str(text))
    if limit is not None and len(value) > limit:
        value = value[: limit - 1] + "…"
    return value
