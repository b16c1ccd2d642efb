"""The parts of record and replay that are pure.

Request keys and volatile parts, SSE frames, the recording file (written the same way every time, read back exactly,
refused at its line when broken), usage and miss wording.
"""

from __future__ import annotations

import json
import random

import pytest

from agentci_action.run.replay import misses, recordings, sse_frames
from agentci_action.run.replay.recordings import (
    RecordedCall,
    RecordedRequest,
    RecordedResponse,
    RecordingError,
)
from agentci_action.run.replay.request_keys import PLACEHOLDER, Volatility, request_key
from agentci_action.run.replay.wire_usage import WireUsage, usage_of
from agentci_action.spec.runner_config import volatile_path

# -- keys ------------------------------------------------------------------------------------------------------------


BUILT_IN = Volatility.declared()


def key(body, volatility=BUILT_IN):
    return request_key("openai", "POST", "/chat/completions", {}, {"body": volatility.mask(body)})


def test_the_key_ignores_key_order_and_keeps_stream_and_every_value():
    assert key({"model": "m", "messages": [1, 2]}) == key({"messages": [1, 2], "model": "m"})
    assert key({"model": "m", "stream": True}) != key({"model": "m"})
    assert key({"messages": [1, 2]}) != key({"messages": [2, 1]})
    assert key({"t": 1}) != key({"t": 1.5}) and key({"t": "1"}) != key({"t": 1})


def test_built_in_volatile_fields_are_masked_at_the_top_level_only():
    first = {"model": "m", "user": "u-1", "metadata": {"session": "a"}, "prompt_cache_key": "s-1"}
    second = {"model": "m", "user": "u-2", "metadata": {"session": "b"}, "prompt_cache_key": "s-2"}
    assert key(first) == key(second)
    assert Volatility.declared().mask(first)["user"] == PLACEHOLDER
    assert key({"tools": [{"user": 1}]}) != key({"tools": [{"user": 2}]})


@pytest.mark.parametrize(
    ("path", "parts"),
    [
        ("messages.*.content", ("messages", "*", "content")),
        ("$.messages[*].content", ("messages", "*", "content")),
        ("input[0].id", ("input", "0", "id")),
        ("metadata", ("metadata",)),
    ],
)
def test_volatile_paths_parse(path, parts):
    assert volatile_path(path) == parts


@pytest.mark.parametrize("path", ["", "a..b", ".a", "a."])
def test_a_malformed_volatile_path_is_refused(path):
    with pytest.raises(ValueError, match="volatile path"):
        volatile_path(path)


def test_declared_paths_and_patterns_mask_and_masking_twice_changes_nothing():
    volatility = Volatility.declared(
        paths=["messages.*.tool_call_id", "input.1"], patterns=[r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"]
    )
    body = {
        "messages": [
            {"role": "tool", "tool_call_id": "call_abc", "content": "checked at 2026-11-20T10:00:00Z: ok"},
            {"role": "user", "content": "hi"},
        ],
        "input": ["keep", "drop", "keep"],
    }
    once = volatility.mask(body)
    assert once["messages"][0] == {"role": "tool", "tool_call_id": PLACEHOLDER, "content": "checked at <volatile>: ok"}
    assert once["messages"][1] == {"role": "user", "content": "hi"}
    assert once["input"] == ["keep", PLACEHOLDER, "keep"]
    assert volatility.mask(once) == once
    assert body["messages"][0]["tool_call_id"] == "call_abc"  # the request itself is not changed
    assert volatility.mask({"other": 1}) == {"other": 1}  # a path that does not occur is ignored


def test_a_pattern_that_does_not_compile_is_refused():
    with pytest.raises(ValueError, match="does not compile"):
        Volatility.declared(patterns=["(unclosed"])


# -- SSE frames --------------------------------------------------------------------------------------------------------

STREAM = (
    b'event: message_start\ndata: {"type":"message_start","n":1}\n\n'
    b": a comment, dropped\n\n"
    b"id: 7\nretry: 100\ndata: line one\ndata: line two\n\n"
    b'event: ping\r\ndata: {"type":"ping"}\r\n\r\n'
    b"data: [DONE]\n\n"
)


def test_a_stream_splits_into_the_same_frames_whatever_its_chunks():
    whole = [frame for frame, _ in sse_frames.FrameSplitter().feed(STREAM)]
    assert whole == [
        {"event": "message_start", "data": {"type": "message_start", "n": 1}},
        {"id": "7", "retry": "100", "text": "line one\nline two"},
        {"event": "ping", "data": {"type": "ping"}},
        {"text": "[DONE]"},
    ]
    rng = random.Random(7)
    for _ in range(50):
        splitter, found, at = sse_frames.FrameSplitter(), [], 0
        while at < len(STREAM):
            step = rng.randint(1, 9)
            found += [frame for frame, _ in splitter.feed(STREAM[at : at + step])]
            at += step
        assert found == whole


def test_frames_are_written_back_with_their_framing():
    frames = [frame for frame, _ in sse_frames.FrameSplitter().feed(STREAM)]
    written = sse_frames.encode_stream(frames)
    assert written == (
        b'event: message_start\ndata: {"type":"message_start","n":1}\n\n'
        b"id: 7\nretry: 100\ndata: line one\ndata: line two\n\n"
        b'event: ping\ndata: {"type":"ping"}\n\n'
        b"data: [DONE]\n\n"
    )
    assert [f for f, _ in sse_frames.FrameSplitter().feed(written)] == frames


def test_a_stream_cut_short_keeps_its_last_frame():
    splitter = sse_frames.FrameSplitter()
    assert [f for f, _ in splitter.feed(b'data: {"a":1}\n\ndata: {"b"')] == [{"data": {"a": 1}}]
    assert [f for f, _ in splitter.rest()] == [{"text": '{"b"'}]


# -- recording files ---------------------------------------------------------------------------------------------------

TRICKY = [
    "",
    " ",
    "yes",
    "1.0",
    "null",
    "# not a comment",
    "trailing space ",
    "two\nlines",
    "ends with newline\n",
    "two newlines\n\n",
    "  indented\nfirst line",
    "line with trailing space \nnext",
    "tab\there\nand\r\nCRLF",
    "unicode: 21°C, 東京, emoji 🌤",
    "- looks: like yaml\n- list",
    "\ttab first\nline",
    "NUL \x00 and bell \x07",
]


def call(body, answer, stream=None) -> RecordedCall:
    content = {"stream": stream} if stream is not None else {"body": answer}
    return RecordedCall(
        request=RecordedRequest(provider="openai", method="POST", path="/chat/completions", content={"body": body}),
        response=RecordedResponse(status=200, headers={"content-type": "application/json"}, content=content),
    )


def test_a_recording_reads_back_exactly_and_renders_the_same_bytes(tmp_path):
    calls = [
        call({"messages": [{"role": "user", "content": text}], "n": 1.5, "big": 2**70}, {"answer": text, "ok": None})
        for text in TRICKY
    ]
    frames = [{"event": "e", "data": {"x": [1, "two\nlines"]}}, {"text": "[DONE]"}]
    calls.append(call({"stream": True}, None, stream=frames))
    text = recordings.render("q", 3, calls)
    path = tmp_path / "run-3.json"
    recordings.write(path, text)
    back = recordings.read(path)
    assert (back.query, back.run, len(back.calls)) == ("q", 3, len(calls))
    lines = text.splitlines()
    for index, (original, read) in enumerate(zip(calls, back.calls)):
        assert read.request.content == original.request.content
        assert read.response.content == original.response.content
        assert lines[back.line(index) - 1] == "    {" and lines[back.line(index)] == '      "request": {'
    assert recordings.render("q", 3, back.calls) == text
    assert '"content": "two\\nlines"' in text and "東京" in text  # readable: one value per line, unicode as is
    assert '"model"' not in text


def test_every_cut_of_a_recording_is_refused_at_a_line_of_the_file(tmp_path):
    calls = [call({"messages": [{"role": "user", "content": f"q{i}"}]}, {"a": i}) for i in range(3)]
    text = recordings.render("q", 0, calls)
    path = tmp_path / "run-0.json"
    for cut in range(1, len(text) - 1, 7):
        path.write_text(text[:cut])
        with pytest.raises(RecordingError) as caught:
            recordings.read(path)
        assert caught.value.file == str(path)
        assert (
            caught.value.line == text[:cut].count("\n") + 1 or caught.value.line == text[:cut].rstrip().count("\n") + 1
        )
        assert "it was cut short" in caught.value.message


CALL = '{"request": {"provider": "openai", "method": "POST", "path": "/x"}, "response": {"status": 200, "body": {}}}'


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ('{"version": 1,\n "query": "q",\n "run": 0,\n "calls": [\n  {"request": {]\n}', 5, "is not valid JSON"),
        ('{"version": 2, "query": "q", "run": 0, "calls": []}', 1, "version 2 is not 1"),
        ('{\n"version": 1,\n"query": "q",\n"run": 0,\n"calls": {}\n}', 5, "calls: expected a list"),
        (
            '{"version": 1, "query": "q", "run": 0, "calls": [\n' + CALL + ',\n{"request": {"provider": "openai"}}\n]}',
            3,
            "call 2: has no `response` object",
        ),
        (
            '{"version": 1, "query": "q", "run": 0, "calls": [\n{"request": {"provider": "openai", "method": "POST",\n'
            '"path": "/x"}, "response": {\n"status": "200", "body": {}}}]}',
            4,
            "response.status must be an HTTP status number",
        ),
        (
            '{"version": 1, "query": "q", "run": 0, "calls": [{"request": {"provider": "openai", "method": "POST", '
            '"path": "/x"},\n "response": {"status": 200, "stream": [\n{"data": {}},\n["not", "a", "frame"]]}}]}',
            4,
            "stream frame 2",
        ),
        ("[]", 1, "is not a recording"),
    ],
)
def test_a_broken_recording_is_refused_at_its_line(tmp_path, text, line, message):
    path = tmp_path / "run-0.json"
    path.write_text(text)
    with pytest.raises(RecordingError) as caught:
        recordings.read(path)
    assert (caught.value.line, caught.value.file) == (line, str(path))
    assert message in caught.value.message
    assert str(caught.value).startswith(f"{path}:{line}: ")


def test_bodies_that_are_not_json_are_kept_as_text_or_base64():
    assert recordings.content_of(b'{"a": 1}', "application/json") == {"body": {"a": 1}}
    assert recordings.content_of(b"plain", "text/plain") == {"text": "plain"}
    assert recordings.content_of(b"\xff\x00", None) == {"base64": "/wA="}
    assert recordings.content_of(b"", None) == {}
    for content in ({"body": {"a": [1]}}, {"text": "plain"}, {"base64": "/wA="}):
        assert recordings.content_of(recordings.payload_bytes(content), None) == content


# -- usage ---------------------------------------------------------------------------------------------------------


def response(content) -> RecordedResponse:
    return RecordedResponse(status=200, headers={}, content=content)


def test_usage_is_read_where_each_api_reports_it():
    chat = {
        "model": "gpt",
        "usage": {"prompt_tokens": 10, "completion_tokens": 3, "prompt_tokens_details": {"cached_tokens": 4}},
    }
    assert usage_of("openai", response({"body": chat})) == WireUsage("gpt", 10, 3, 4)
    responses = {
        "model": "gpt",
        "usage": {"input_tokens": 9, "output_tokens": 2, "input_tokens_details": {"cached_tokens": 1}},
    }
    assert usage_of("openai", response({"body": responses})) == WireUsage("gpt", 9, 2, 1)
    stream = [{"data": {"model": "gpt", "choices": []}}, {"data": {**chat, "choices": []}}, {"text": "[DONE]"}]
    assert usage_of("openai", response({"stream": stream})) == WireUsage("gpt", 10, 3, 4)
    completed = [{"event": "response.completed", "data": {"type": "response.completed", "response": responses}}]
    assert usage_of("openai", response({"stream": completed})) == WireUsage("gpt", 9, 2, 1)
    assert usage_of("openai", response({"stream": [{"data": {"model": "gpt"}}]})) == WireUsage("gpt")
    message = {
        "model": "claude",
        "usage": {
            "input_tokens": 5,
            "output_tokens": 7,
            "cache_read_input_tokens": 20,
            "cache_creation_input_tokens": 3,
        },
    }
    assert usage_of("anthropic", response({"body": message})) == WireUsage("claude", 28, 7, 20, 3)
    events = [
        {
            "data": {
                "type": "message_start",
                "message": {"model": "claude", "usage": {"input_tokens": 5, "output_tokens": 1}},
            }
        },
        {"data": {"type": "message_delta", "usage": {"output_tokens": 4}}},
        {"data": {"type": "message_delta", "usage": {"output_tokens": 9}}},
    ]
    assert usage_of("anthropic", response({"stream": events})) == WireUsage("claude", 5, 9)
    assert not usage_of("openai", response({"text": "oops"})).known


# -- misses --------------------------------------------------------------------------------------------------------


def request(body, path="/chat/completions") -> RecordedRequest:
    return RecordedRequest(provider="openai", method="POST", path=path, content={"body": body})


def recording_of(tmp_path, calls: list[RecordedCall]) -> recordings.Recording:
    path = tmp_path / "run-0.json"
    recordings.write(path, recordings.render("q", 0, calls))
    return recordings.read(path)


def test_a_miss_names_the_changed_line_of_the_system_prompt(tmp_path):
    system = [{"role": "system", "content": "Be an agent.\nUse tools.\nBe brief."}, {"role": "user", "content": "hi"}]
    recorded = recording_of(
        tmp_path,
        [
            call({"model": "m", "messages": [{"role": "user", "content": "other question"}]}, {}),
            call({"model": "m", "messages": system}, {}),
        ],
    )
    now = request(
        {"model": "m", "messages": [{**system[0], "content": "Be an agent.\nUse tools.\nBe thorough."}, system[1]]}
    )
    text = misses.explain(now, 2, recorded.path, recorded)
    starts = [n for n, line in enumerate(recorded.text.splitlines(), 1) if line == "    {"]
    assert recorded.line(1) == starts[1] == 29
    assert text == (
        f"call 2 (POST openai /chat/completions): no recorded request matches; the nearest (call 2 at "
        f"{recorded.path}:29) differs: messages[0].content (the system prompt) changed at line 3: "
        "recorded 'Be brief.', now 'Be thorough.'"
    )


def test_a_miss_counts_what_it_does_not_spell_out_and_says_when_answers_are_used_up(tmp_path):
    recorded = recording_of(tmp_path, [call({"model": "m", "temperature": 0, "tools": [1, 2], "a": 1, "b": 2}, {})])
    now = request({"model": "n", "temperature": 1, "tools": [1], "a": 2, "b": 3})
    text = misses.explain(now, 1, recorded.path, recorded)
    assert "a changed: recorded '1', now '2'; b changed: recorded '2', now '3'; model (the model) changed" in text
    assert text.endswith("; and 2 more differences")
    again = misses.explain(recorded.calls[0].request, 2, recorded.path, recorded)
    assert "asks it more often than the recorded run did" in again
    absent = misses.explain(now, 1, tmp_path / "none.json", None)
    assert absent.endswith(f"not recorded yet ({tmp_path / 'none.json'} does not exist)")


def test_differences_list_added_and_removed_items():
    found = misses.differences({"messages": [1, 2]}, {"messages": [1, 2, 3], "tools": []})
    assert [(misses.path_text(d.path), d.kind) for d in found] == [("messages[2]", "added"), ("tools", "added")]
    assert json.dumps(misses.preview("x" * 200)).count("x") == misses.PREVIEW - 1
