"""Secrets kept out of a recorded answer.

A model that repeats the key an agent put in its prompt ("You said: my key is sk-...") must not leave it in a committed
recording.

Every string of the answer is masked as the request's are (request_keys.Volatility.secrets, each occurrence
replaced by the placeholder): a JSON body's strings, a text body, and a stream's frames. A stream sends its text in
pieces, and a key may be cut between two frames ("sk-pr" | "oj-abc..."): the strings at the same place of the same
event's frames (`choices.0.delta.content` of every chunk, `delta.text` of every `content_block_delta`) are read as
one text, in order, and each occurrence of a secret in it is replaced in the frame where it starts and cut from the
frames it runs on into. Only string values change, so every frame stays the JSON object it was, with the same
fields: the agent is replayed the same answer, the secret masked. A base64 body (not text) is left as it is.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from agentci_action.run.replay.request_keys import PLACEHOLDER, Volatility, mask_strings

Place = tuple[str | int, ...]  # keys and list indexes from a frame's top


def masked_answer(content: dict[str, Any], volatility: Volatility) -> dict[str, Any]:
    """A recorded answer's content with every secret of `volatility` masked (the content itself when none is)."""
    pattern = volatility.secret_pattern
    if pattern is None:
        return content
    if "body" in content:
        return {"body": mask_strings(content["body"], (pattern,))}
    if "text" in content:
        return {"text": pattern.sub(PLACEHOLDER, content["text"])}
    if "stream" in content:
        return {"stream": _masked_frames(content["stream"], pattern)}
    return content


def _masked_frames(frames: list[dict[str, Any]], pattern: re.Pattern[str]) -> list[dict[str, Any]]:
    """The frames with every secret masked, one read across the frames that continue the same string."""
    runs: dict[tuple[Any, Place], list[tuple[int, Place, str]]] = {}
    for index, frame in enumerate(frames):
        for place, text in _strings(frame, ()):
            runs.setdefault((frame.get("event"), place), []).append((index, place, text))
    changed = [dict(frame) for frame in frames]
    for pieces in runs.values():
        whole = "".join(text for _, _, text in pieces)
        spans = [match.span() for match in pattern.finditer(whole) if match.end() > match.start()]
        if not spans:
            continue
        start = 0
        for index, place, text in pieces:
            end = start + len(text)
            overlapping = [(max(a, start), min(b, end), a >= start) for a, b in spans if a < end and b > start]
            masked = _cut(text, start, overlapping)
            if masked != text:
                changed[index] = _replaced(changed[index], place, masked)
            start = end
    return changed


def _cut(text: str, offset: int, spans: list[tuple[int, int, bool]]) -> str:
    """`text` (which starts at `offset` of the whole) with each span cut out, the placeholder where a secret starts."""
    out, position = [], 0
    for a, b, starts in sorted(spans):
        out.append(text[position : a - offset])
        if starts:
            out.append(PLACEHOLDER)
        position = b - offset
    out.append(text[position:])
    return "".join(out)


def _strings(value: Any, place: Place) -> Iterator[tuple[Place, str]]:
    """Every string in `value`, with its place, in order."""
    if isinstance(value, str):
        yield place, value
    elif isinstance(value, dict):
        for name, item in value.items():
            yield from _strings(item, (*place, name))
    elif isinstance(value, list):
        for number, item in enumerate(value):
            yield from _strings(item, (*place, number))


def _replaced(value: Any, place: Place, text: str) -> Any:
    """A copy of `value` with the string at `place` replaced by `text`, copying only the containers on the way."""
    if not place:
        return text
    head, rest = place[0], place[1:]
    copy = dict(value) if isinstance(value, dict) else list(value)
    copy[head] = _replaced(value[head], rest, text)  # type: ignore[index]
    return copy
