"""Trace loading: files, directories, globs, lists and JSON Lines; errors with file and line; derived totals."""

import json

import pytest

from agentci_action._util.errors import TraceError
from agentci_action.trace.load import load_traces


def test_file_list_jsonl_directory_and_glob(tmp_path, write, write_traces):
    write_traces("runs/a.jsonl", [{"id": "a"}, {"id": "b"}])
    write("runs/b.json", json.dumps([{"id": "c"}, {"id": "d"}], indent=2))
    write("runs/c.json", json.dumps({"query": "e"}))
    write("runs/notes.txt", "ignored: not a trace file")
    assert [t.id or t.query for t in load_traces([str(tmp_path / "runs")])] == ["a", "b", "c", "d", "e"]
    assert len(load_traces([str(tmp_path / "runs" / "*.json")])) == 3
    traces = load_traces([str(tmp_path / "runs" / "b.json")])
    assert [t.source.rsplit(":", 1)[1] for t in traces] == ["2", "5"]


def test_malformed_json_names_the_line(write):
    path = write("t.jsonl", '{"id": "a"}\n{"id": "b", }\n')
    with pytest.raises(TraceError) as caught:
        load_traces([str(path)])
    (problem,) = caught.value.problems
    assert (problem.file, problem.line) == (str(path), 2) and "malformed JSON" in problem.message


def test_invalid_fields_name_the_line_of_the_field_and_its_path(write):
    path = write("t.json", '[\n  {"id": "a"},\n  {"id": "b",\n   "tool_calls": [{"nme": "x"}]}\n]\n')
    with pytest.raises(TraceError) as caught:
        load_traces([str(path)])
    messages = [str(p) for p in caught.value.problems]
    assert f"{path}:4: tool_calls[0].name: required key is missing" in messages  # the line of the object lacking it
    assert f"{path}:4: tool_calls[0]: unknown key 'nme'; did you mean 'name'?" in messages


def test_an_unknown_key_suggests_the_closest_field_by_the_name_the_file_writes(write):
    path = write(
        "t.jsonl",
        '{"id": "a", "handoffs": [{"form": "triage", "to": "billing"}]}\n'
        '{"id": "b", "llm_calls": [{"model": "m", "input_tokns": 3}], "zzz": 1}\n',
    )
    with pytest.raises(TraceError) as caught:
        load_traces([str(path)])
    assert [str(p) for p in caught.value.problems] == [
        f"{path}:1: handoffs[0]: unknown key 'form'; did you mean 'from'?",  # the alias, not the attribute
        f"{path}:2: llm_calls[0]: unknown key 'input_tokns'; did you mean 'input_tokens'?",
        f"{path}:2: unknown key 'zzz'; valid keys: id, query, final_answer, tool_calls, llm_calls, handoffs, "
        "retrieved_context, total_duration_ms, total_cost_usd, total_tokens, total_llm_calls, run, turns, metadata",
    ]


@pytest.mark.parametrize("number", ["1e400", "-1e400", "NaN", "Infinity"])
def test_an_infinite_or_nan_cost_or_duration_is_an_error_at_its_line(write, number):
    """json.loads reads 1e400 as inf and accepts NaN and Infinity: a cost of inf would make every total inf."""
    path = write(
        "t.jsonl",
        '{"id": "a"}\n' + f'{{"id": "b", "total_duration_ms": {number}, "llm_calls": [{{"cost_usd": {number}}}]}}\n',
    )
    with pytest.raises(TraceError) as caught:
        load_traces([str(path)])
    messages = [str(p) for p in caught.value.problems]
    assert f"{path}:2: llm_calls[0].cost_usd: Input should be a finite number" in messages
    assert f"{path}:2: total_duration_ms: Input should be a finite number" in messages


def test_a_field_error_inside_a_multi_line_object_names_the_field_line(write):
    record = {
        "id": "a",
        "final_answer": "x",
        "tool_calls": [{"name": "search"}, {"name": "fetch", "argumnts": {"q": 1}}],
        "handoffs": [{"from": "a"}],
        "metadata": {"tool_calls": "not a field error"},
        "total_tokens": -1,
    }
    path = write("t.json", json.dumps(record, indent=2))
    lines = path.read_text().splitlines()
    line_of = lambda fragment: next(n for n, text in enumerate(lines, 1) if fragment in text)  # noqa: E731
    with pytest.raises(TraceError) as caught:
        load_traces([str(path)])
    assert [(p.line, p.message.split(":")[0]) for p in caught.value.problems] == [
        (line_of('"argumnts"'), "tool_calls[1]"),
        (line_of('"from"') - 1, "handoffs[0].to"),  # a missing key: the line where its object starts
        (line_of('"total_tokens"'), "total_tokens"),
    ]


def test_a_canonical_file_with_one_bad_record_reports_that_record_not_an_unknown_format(write, write_traces):
    records = [
        {"id": "a", "query": "q1", "final_answer": "x"},
        {"id": "b", "query": "q2"},
        {"id": "c", "query": "q3"},
        {"qeury": "q4", "final_answer": "y"},
    ]
    path = write_traces("typo.jsonl", records)
    for trace_format in (None, "canonical"):
        with pytest.raises(TraceError) as caught:
            load_traces([str(path)], trace_format=trace_format)
        assert [str(p) for p in caught.value.problems] == [f"{path}:4: unknown key 'qeury'; did you mean 'query'?"]
    other = write("other.jsonl", '{"event": "start", "payload": {}}\n{"event": "end", "id": "x"}\n')
    with pytest.raises(TraceError, match="unrecognised trace format"):
        load_traces([str(other)])


def test_every_bad_file_is_reported(write):
    one = write("d/one.json", "not json")
    two = write("d/two.json", json.dumps({"final_answer": "no id or query"}))
    with pytest.raises(TraceError) as caught:
        load_traces([str(one.parent)])
    assert {p.file for p in caught.value.problems} == {str(one), str(two)}


def test_missing_and_empty(tmp_path, write):
    with pytest.raises(TraceError, match="no trace files found"):
        load_traces([str(tmp_path / "nothing*.json")])
    with pytest.raises(TraceError, match="trace file is empty"):
        load_traces([str(write("e.json", "  \n"))])
    with pytest.raises(TraceError, match="expected a trace object"):
        load_traces([str(write("n.json", "[1, 2]"))], trace_format="canonical")
    with pytest.raises(TraceError, match="unknown trace format 'xml'"):
        load_traces([str(write("x.json", '{"id": "a"}'))], trace_format="xml")


def test_totals_are_derived_from_calls_and_unknown_cost_stays_unknown(write_traces):
    llm = {"input_tokens": 100, "output_tokens": 20, "cost_usd": 0.01, "duration_ms": 500}
    path = write_traces(
        "t.jsonl",
        [
            {"id": "a", "llm_calls": [llm, llm], "tool_calls": [{"name": "s", "duration_ms": 100}]},
            {"id": "b", "llm_calls": [llm, {"input_tokens": 5}]},
            {"id": "c", "llm_calls": [llm], "total_tokens": 7, "total_cost_usd": 0.5, "total_duration_ms": 9},
        ],
    )
    a, b, c = load_traces([str(path)])
    assert (a.total_tokens, a.total_llm_calls, a.total_cost_usd, a.total_duration_ms) == (
        240,
        2,
        pytest.approx(0.02),
        1100,
    )
    assert b.total_cost_usd is None and b.total_tokens == 125
    assert (c.total_tokens, c.total_cost_usd, c.total_duration_ms) == (7, 0.5, 9)


def test_a_list_file_is_parsed_once_and_malformed_lists_name_their_line(write, monkeypatch):
    from agentci_action.trace import json_records as load

    decoded = []

    class Counting(json.JSONDecoder):
        def raw_decode(self, s, idx=0):
            value, end = super().raw_decode(s, idx)
            decoded.append(value)
            return value, end

    monkeypatch.setattr(load, "_DECODER", Counting())
    path = write("list.json", ' [ {"id": "a"} ,\n\n  {"id": "b"}\n]\n')
    assert [(r.value["id"], r.line) for r in load.read_records(path)] == [("a", 1), ("b", 3)]
    assert decoded == [{"id": "a"}, {"id": "b"}]  # each item once, never the whole list again
    assert load.read_records(write("empty.json", " [ ] ")) == []
    assert [r.value for r in load.read_records(write("two.json", '[{"id": "a"}]\n{"id": "b"}\n'))] == [
        [{"id": "a"}],
        {"id": "b"},
    ]
    for text, line in (
        ('[{"id": "a"},\n{"id": "b"},\n]', 3),
        ('[{"id": "a"}\n{"id": "b"}]', 2),
        ('[{"id": "a"},\n{"id": }]', 2),
    ):
        with pytest.raises(TraceError) as caught:
            load.read_records(write("bad.json", text))
        (problem,) = caught.value.problems
        assert problem.line == line and "malformed JSON" in problem.message


def test_loaded_traces_are_compact_and_unchanged(write_traces):
    """Loaded traces share one fields-set per distinct set of fields and intern tool and model names.

    Every value, the fields set and copying are as pydantic's own models give them.
    """
    from agentci_action.trace.canonical import Trace

    records = [
        {
            "id": f"q{i}",
            "final_answer": "ok",
            "tool_calls": [{"name": "search", "arguments": {"q": i}}, {"name": "fetch", "result": "r", "error": None}],
            "llm_calls": [{"model": "gpt-4o-mini", "input_tokens": 10, "output_tokens": 2, "cost_usd": 0.001}],
        }
        for i in range(3)
    ]
    traces = load_traces([write_traces("t.jsonl", records)])
    fresh = [Trace.model_validate(r).with_derived_totals() for r in records]
    assert [t.model_dump() for t in traces] == [t.model_dump() for t in fresh]
    assert [t.model_dump(exclude_unset=True) for t in traces] == [t.model_dump(exclude_unset=True) for t in fresh]
    first, second = traces[0].tool_calls, traces[1].tool_calls
    assert first[0].model_fields_set == {"name", "arguments"} and first[1].model_fields_set == {
        "name",
        "result",
        "error",
    }
    assert first[0].__pydantic_fields_set__ is second[0].__pydantic_fields_set__
    assert first[1].__pydantic_fields_set__ is not first[0].__pydantic_fields_set__
    assert first[0].name is second[0].name and traces[0].llm_calls[0].model is traces[2].llm_calls[0].model
    changed = first[0].model_copy(update={"duration_ms": 5.0})  # a copy adds to its own set, never the shared one
    assert changed.model_fields_set == {"name", "arguments", "duration_ms"}
    assert second[0].model_fields_set == {"name", "arguments"}


def test_tool_names_follow_the_calls_they_were_read_from():
    from agentci_action.trace.canonical import ToolCall, Trace

    trace = Trace(id="q", tool_calls=[ToolCall(name="search"), ToolCall(name="fetch")])
    names = trace.tool_names
    names.append("mutated")  # a fresh list each time: the kept names are not the caller's to change
    assert trace.tool_names == ["search", "fetch"]
    replaced = trace.model_copy(update={"tool_calls": [ToolCall(name="shell")]})
    assert replaced.tool_names == ["shell"] and trace.tool_names == ["search", "fetch"]
    trace.tool_calls.append(ToolCall(name="answer"))
    assert trace.tool_names == ["search", "fetch", "answer"]
