"""Untrusted text made inert, and sizes in the UTF-8 bytes GitHub's limits count.

Inert: one line without control characters for a terminal or log; markdown or HTML text.
"""

from __future__ import annotations

import math
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


def snippet(text: str, limit: int = 80) -> str:
    """`text` on one line (runs of whitespace one space), cut to `limit` characters with "…"."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _escape(char: str) -> str:
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


_HTML = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
_MARKDOWN = re.compile(r"([\\`*_\[\]{}()|~!])")
_ZWSP = "\u200b"


# What GitHub's markdown links by itself in text (its autolink extension): a scheme's `://` and a `www.` host.
_AUTOLINK = re.compile(r"(?<=:)(?=//)|(?<=\bwww)(?=\.)", re.IGNORECASE)


def html_text(text: object, limit: int = 120) -> str:
    """Untrusted text inside an HTML element (where markdown escapes would show).

    One line, entities, broken mentions and links.

    `@` and `#` get a zero-width space after them, so nothing becomes a mention or an issue link; so do the `:` of
    `://` and a `www` before its dot, so a bare URL is not turned into a link.
    """
    value = "".join(_HTML.get(ch, ch) for ch in one_line(text, limit))
    value = value.replace("@", "@" + _ZWSP).replace("#", "#" + _ZWSP)
    return _AUTOLINK.sub(_ZWSP, value) if ("//" in value or "ww" in value.lower()) else value


def inline(text: object, limit: int = 300) -> str:
    """Untrusted text → inert inline markdown: html_text, then markdown punctuation backslash-escaped."""
    return _MARKDOWN.sub(r"\\\1", html_text(text, limit))


def utf8_size(text: str) -> int:
    """Bytes in UTF-8: GitHub's summary and comment limits count these (never fewer than characters).

    A lone surrogate counts 3, as the U+FFFD that replaces it when written (_util/output.py).
    """
    return len(text.encode("utf-8", "surrogatepass"))


def fit(parts: list[str], used: int, budget: int) -> tuple[list[str], int]:
    """The longest prefix of `parts` that keeps `used` within `budget` bytes, and the bytes used then."""
    kept = []
    for part in parts:
        if used + utf8_size(part) > budget:
            break
        kept.append(part)
        used += utf8_size(part)
    return kept, used


def unverified_note(reasons: dict[str, int], shown: int = 5) -> str:
    """'3 correctness checks skipped, not passed: <reason> (×2); <reason>' from RunResult.unverified(); '' when none."""
    if not reasons:
        return ""
    total = sum(reasons.values())
    parts = [reason + (f" (×{n})" if n > 1 else "") for reason, n in list(reasons.items())[:shown]]
    more = f"; {len(reasons) - shown} more reasons" if len(reasons) > shown else ""
    noun = "check" if total == 1 else "checks"
    return f"{total} correctness {noun} skipped, not passed: {'; '.join(parts)}{more}"


_BACKTICKS = re.compile(r"`+")


def code_block(lines: list[str], language: str = "text") -> str:
    """Untrusted lines as a fenced code block.

    Inert (GitHub renders no HTML, mention or link inside one), each line without control characters (one_line), with
    `@` and `<` broken by a zero-width space (no mention, tag or copy of the hidden marker even when the text is quoted
    out of the block), the fence one backtick longer than any run of backticks in the text so nothing in it can close
    the block.
    """
    body = [one_line(line).replace("@", "@" + _ZWSP).replace("<", "<" + _ZWSP) for line in lines]
    longest = max((len(run) for line in body for run in _BACKTICKS.findall(line)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n" + "".join(f"{line}\n" for line in body) + f"{fence}\n"


def usd(value: float) -> str:
    """'$0.0040'; '<$0.0001' for a cost above 0 that rounds to 0, never a false '$0.0000'."""
    return "<$0.0001" if 0 < value < 0.00005 else f"${value:.4f}"


def usd_pair(first: float, second: float) -> tuple[str, str]:
    """Two amounts compared (a ratio of them shown beside).

    With 3 significant digits of the smaller non-zero one, so the figures explain the ratio, trailing zeros dropped down
    to 4 decimals. 0.00014 and 0.0000401 → ('$0.00014', '$0.0000401'), not '$0.0001 vs $0.0000'; 0.012 and 0.005 →
    ('$0.0120', '$0.0050').
    """
    smallest = min((abs(v) for v in (first, second) if v), default=1.0)
    decimals = min(12, max(4, 2 - math.floor(math.log10(smallest))))

    def shown(value: float) -> str:
        whole, _, fraction = f"{value:.{decimals}f}".partition(".")
        return f"${whole}.{fraction.rstrip('0').ljust(4, '0')}"

    return shown(first), shown(second)


def milliseconds(value: float) -> str:
    """'1,200 ms'; '<1 ms' for a duration above 0 that rounds to 0 (a local agent's spans), never a false '0 ms'."""
    return "<1 ms" if 0 < value < 0.5 else f"{value:,.0f} ms"


def points(rate_change: float) -> str:
    """A change in a rate in percentage points, signed with a true minus: 0.042 → '+4.2', −0.1667 → '−16.7', 0 → '0'."""
    text = f"{100 * rate_change:+.1f}".removesuffix(".0").replace("-", "−")
    return "0" if text in ("+0", "−0") else text


def percent(share: float) -> str:
    """A share as a percentage with the one decimal a count's share may need: 0.125 → '12.5%', 0.25 → '25%'."""
    return f"{100 * share:.1f}".removesuffix(".0") + "%"


def plural(count: float, one: str, many: str | None = None) -> str:
    """'1 query', '2 queries', '0 checks': the count and the noun that agrees with it."""
    return f"{count:,.0f} {one if count == 1 else many or one + 's'}"


def model_calls_phrase(replayed: int, live: int, paid_usd: float | None, missed: int, separator: str = " · ") -> str:
    """How the agent's model calls were answered under runner.replay, in one line.

    E.g. "12 replayed · 1 live · $0.0021 paid · 1 call with no recorded answer" (what was paid is the live calls' cost;
    None: unknown).
    """
    paid = "cost unknown" if paid_usd is None else f"{usd(paid_usd)} paid" if paid_usd else "nothing paid"
    parts = [f"{replayed:,} replayed", f"{live:,} live", paid]
    if missed:
        parts.append(f"{plural(missed, 'call')} with no recorded answer")
    return separator.join(parts)
