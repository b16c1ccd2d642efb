"""Secrets never printed: every line of every secret, and the credentials of any URL, replaced by ***.

A secret is matched line by line (a multi-line token or key is masked on every line, and an exception that quotes
a header with the value escaped, 'token abc\\ndef', still loses each part). Lines shorter than MIN_SECRET_LINE
characters are left alone: masking them would blank out ordinary words, and they reveal nothing on their own.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

MASK = "***"
MIN_SECRET_LINE = 4
# scheme://user:password@host or scheme://token@host
_URL_CREDENTIALS = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s@]+@")


def secret_parts(secrets: Iterable[str]) -> list[str]:
    """Each secret's lines (stripped) of at least MIN_SECRET_LINE characters, longest first, no repeats."""
    parts = {
        line.strip()
        for secret in secrets
        if secret
        for line in secret.splitlines()
        if len(line.strip()) >= MIN_SECRET_LINE
    }
    return sorted(parts, key=len, reverse=True)


def redact(text: str, secrets: Iterable[str]) -> str:
    """`text` with every part of every secret, and every URL's credentials, replaced by ***."""
    for part in secret_parts(secrets):
        text = text.replace(part, MASK)
    return _URL_CREDENTIALS.sub(rf"\g<1>{MASK}@", text)
