"""Secret values kept out of everything the runner writes: traces, error messages, progress and summary.

A value is secret when it comes from the runner's `env:` or from an inherited variable whose name says so
(KEY, TOKEN, SECRET, PASSWORD, PASSWD, CREDENTIAL, AUTH, PRIVATE), and is at least MIN_SECRET characters long
(shorter values such as `1` or `fixed` would mask ordinary words).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping

MIN_SECRET = 8
MASK = "***"
SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH|PRIVATE", re.IGNORECASE)


class Masker:
    """Replaces each secret value by *** in text, and in JSON text (where the value appears escaped)."""

    def __init__(self, values: Iterable[str]):
        found = {v for v in values if len(v) >= MIN_SECRET}
        escaped = {json.dumps(v, ensure_ascii=False)[1:-1] for v in found}
        self._pattern = (
            re.compile("|".join(re.escape(v) for v in sorted(found | escaped, key=len, reverse=True)))
            if found
            else None
        )

    @classmethod
    def for_environment(cls, runner_env: Mapping[str, str], environ: Mapping[str, str]) -> Masker:
        return cls([*runner_env.values(), *(v for k, v in environ.items() if SECRET_NAME.search(k))])

    def __call__(self, text: str) -> str:
        return self._pattern.sub(MASK, text) if self._pattern else text
