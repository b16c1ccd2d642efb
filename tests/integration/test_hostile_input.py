"""Broken and hostile input gets a message at its file and line, never a traceback or a hang.

Nesting depth, $ref cycles, FIFOs, and trace files with an unclosed record, a byte-order mark or bytes that are not
UTF-8.
"""

from __future__ import annotations

import json
import os
import time

import pytest
from helpers import run_cli

from agentci_action._util import patterns
from agentci_action._util.limits import MAX_ALIAS_VALUES, MAX_NESTING, REGEX_TIMEOUT_S, deeper_than
from agentci_action.engine import metrics

SPEC = """
agent: demo
queries:
  - id: math
    query: "What is 2+2?"
    correctness: {expected_in_answer: ["4"]}
"""
DEEP = "[" * 1000 + "]" * 1000


def test_deeper_than_counts_levels_without_recursion():
    assert not deeper_than(4, 0) and not deeper_than([], 1) and deeper_than([], 0)
    assert deeper_than([[{}]], 2) and not deeper_than([[{}]], 3)
    very_deep: list = []
    for _ in range(100_000):
        very_deep = [very_deep]
    assert deeper_than(very_deep) and not deeper_than(very_deep, 100_001)


def assert_clean(done) -> None:
    assert "Traceback" not in done.stderr and "RecursionError" not in done.stderr


BLOCK_DEEP = "".join(f"\n      {'  ' * i}a:" for i in range(3000)) + " 1"


@pytest.mark.parametrize(
    "value, line",
    [
        ("tags: " + DEEP, 6),
        ("correctness:\n      json_schema: " + "{items: " * 1000 + "{}" + "}" * 1000, 7),
        ("tags: " + "[" * 100_000, 6),  # unclosed: libyaml's composer recursed once per level and crashed
        ("correctness:\n      json_schema: " + "{a: " * 5000 + "1" + "}" * 5000, 7),
        ("correctness:\n      json_schema: " + "{a: " * 5000 + "1", 7),  # unclosed: the syntax error's path
        ("correctness:\n      json_schema:" + BLOCK_DEEP, 7 + MAX_NESTING - 1),  # block mappings, a level a line
    ],
    ids=["1000 [", "1000 {", "100,000 [ unclosed", "5,000 {", "5,000 { unclosed", "3,000 block mappings"],
)
def test_a_spec_nested_deep_is_an_error_at_its_line(write, value, line):
    spec = write("spec.yaml", f"agent: demo\nqueries:\n  - id: q\n    query: hello\n\n    {value}\n")
    done = run_cli("validate", spec)
    assert_clean(done)
    assert done.returncode == 1
    assert f"{spec}:{line}: nested deeper than {MAX_NESTING} lists and mappings" in done.stderr.splitlines()
    tested = run_cli("test", spec, "--traces", spec)  # stops at the spec, before the traces
    assert_clean(tested)
    assert tested.returncode == 2 and f"{spec}:{line}: nested deeper than {MAX_NESTING}" in tested.stderr


def test_a_key_nested_deep_is_refused_without_being_built(write):
    spec = write("spec.yaml", SPEC + "    metadata:\n      ? " + DEEP + "\n      : 1\n")
    done = run_cli("validate", spec)
    assert_clean(done)
    assert f"{spec}:7: keys must be strings, got a list" in done.stderr.splitlines()


@pytest.mark.parametrize("fast", [True, False], ids=["libyaml", "pure"])
def test_a_syntax_error_deep_in_the_spec_is_reported_without_recursion(write, monkeypatch, fast):
    """libyaml composes 600 levels, then stops at the missing `]`.

    The pure-Python parser, which reads what libyaml refuses, then recursed two frames a level into a RecursionError.
    Now its events are walked first (a loop), and the depth is the error. Without libyaml, the same from the first read.
    """
    import yaml

    from agentci_action.spec import loader

    if not fast:
        monkeypatch.setattr(loader, "_FAST_LOADER", yaml.SafeLoader)
    spec = write("spec.yaml", SPEC + "    tags: " + "[" * 600 + "a" + "]" * 599 + "\n")
    with pytest.raises(loader.SpecError) as caught:
        loader.load_spec(spec)
    assert [str(p) for p in caught.value.problems] == [f"{spec}:6: nested deeper than {MAX_NESTING} lists and mappings"]


def test_a_spec_byte_that_is_not_utf8_is_named_by_line_and_column(write, tmp_path):
    spec = tmp_path / "spec.yaml"
    spec.write_bytes((SPEC + "    tags: [café, ça]\n").encode("utf-8").replace("ça".encode(), b"\xe7a"))
    done = run_cli("validate", spec)
    assert done.returncode == 1
    assert done.stderr.splitlines()[0] == f"{spec}:7: not UTF-8: byte 0xe7 at column 18 (save the spec as UTF-8)"
    control = write("control.yaml", SPEC + "    tags: [a\x07b]\n")
    done = run_cli("validate", control)
    assert_clean(done)
    assert (
        done.stderr.splitlines()[0] == f"{control}:6: YAML syntax error: control characters are not allowed (column 13)"
    )


@pytest.mark.parametrize("depth", [300, 2000])
def test_tool_call_arguments_nested_deep_are_an_error_at_the_record(write, tmp_path, depth):
    spec = write("spec.yaml", SPEC + "    path: {expected_tool_calls: [{name: calc, arguments: {a: 1}}]}\n")
    nested = '{"a": [' * depth + "{}" + "]}" * depth
    (tmp_path / "t.jsonl").write_text(
        '{"id": "other", "final_answer": "x"}\n'
        f'{{"id": "math", "final_answer": "4", "tool_calls": [{{"name": "calc", "arguments": {nested}}}]}}\n'
    )
    done = run_cli("test", "--spec", spec, "--traces", tmp_path / "t.jsonl")
    assert_clean(done)
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"error: {tmp_path / 't.jsonl'}:2: a record nested deeper than {MAX_NESTING} lists and objects"
    ]


def test_an_answer_nested_1000_deep_fails_its_json_schema_check(write, write_traces):
    spec = write("spec.yaml", SPEC.replace('expected_in_answer: ["4"]', "json_schema: {type: array}"))
    traces = write_traces("t.jsonl", [{"id": "math", "final_answer": DEEP}, {"id": "x", "final_answer": "[]"}])
    done = run_cli("test", "--spec", spec, "--traces", traces, "--format", "json")
    assert_clean(done)
    assert done.returncode == 1
    correctness = json.loads(done.stdout)["results"][0]["correctness"]
    assert correctness["status"] == "fail"
    assert correctness["messages"] == [f"answer is JSON nested deeper than {MAX_NESTING} levels: not validated"]


def test_ref_cycles_are_caught_by_validate_at_their_line(write):
    spec = write(
        "spec.yaml",
        """
        agent: demo
        queries:
          - id: itself
            query: a
            correctness:
              json_schema: {$ref: '#'}
          - id: pair
            query: b
            correctness:
              json_schema:
                $defs: {a: {$ref: '#/$defs/b'}, b: {allOf: [{$ref: '#/$defs/a'}]}}
                $ref: '#/$defs/a'
          - id: recursive-is-fine
            query: c
            correctness:
              json_schema: {type: object, properties: {child: {$ref: '#'}}}
        """,
    )
    done = run_cli("validate", spec)
    assert_clean(done)
    assert done.returncode == 1
    assert done.stderr.splitlines()[:2] == [
        f"{spec}:6: queries[0].correctness.json_schema: invalid JSON Schema: "
        "a $ref cycle validation would follow forever: # → #",
        f"{spec}:10: queries[1].correctness.json_schema: invalid JSON Schema: "
        "a $ref cycle validation would follow forever: #/$defs/a → #/$defs/b → #/$defs/b/allOf/0 → #/$defs/a",
    ]
    assert "invalid (2 problems)" in done.stderr


def test_a_fifo_never_blocks_as_spec_include_or_trace(write, write_traces, tmp_path):
    os.mkfifo(tmp_path / "fifo.yaml")
    spec = write("spec.yaml", SPEC)
    included = write("inc.yaml", "agent: demo\nqueries: !include fifo.yaml\n")
    fifo = tmp_path / "fifo.yaml"
    done = run_cli("validate", fifo)
    assert done.returncode == 1 and f"{fifo}: not a regular file" in done.stderr
    done = run_cli("validate", included)
    assert done.returncode == 1 and f"{included}:2: !include 'fifo.yaml': not a regular file" in done.stderr
    done = run_cli("test", "--spec", spec, "--traces", fifo)
    assert done.returncode == 2 and f"error: {fifo}: not a regular file" in done.stderr


def test_an_unclosed_jsonl_record_is_reported_at_the_line_it_starts(write, tmp_path):
    spec = write("spec.yaml", SPEC)
    (tmp_path / "t.jsonl").write_text(
        '{"id": "math", "final_answer": "4"}\n{"id": "x", "final_answer": "5"\n\n{"id": "y"}\n'
    )
    done = run_cli("test", "--spec", spec, "--traces", tmp_path / "t.jsonl")
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"error: {tmp_path / 't.jsonl'}:2: malformed JSON in the record that starts here: "
        "Expecting ',' delimiter (line 4, column 1)"
    ]


def test_a_trace_file_with_a_byte_order_mark_is_read(write, tmp_path):
    spec = write("spec.yaml", SPEC)
    (tmp_path / "t.json").write_bytes(b"\xef\xbb\xbf" + json.dumps({"id": "math", "final_answer": "4"}).encode())
    done = run_cli("test", "--spec", spec, "--traces", tmp_path / "t.json")
    assert done.returncode == 0, done.stderr


def test_bytes_that_are_not_utf8_are_reported_by_line(write, tmp_path):
    spec = write("spec.yaml", SPEC)
    (tmp_path / "t.jsonl").write_bytes(b'{"id": "math",\n "final_answer": "caf\xe9"}\n')
    done = run_cli("test", "--spec", spec, "--traces", tmp_path / "t.jsonl")
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"error: {tmp_path / 't.jsonl'}:2: not UTF-8: byte 0xe9 at column 22 (save the file as UTF-8)"
    ]


# --- hangs ------------------------------------------------------------------------------------------------------


def test_a_catastrophic_regex_is_an_error_of_its_check_not_a_hang(write, write_traces):
    """(a|aa)+$ on 'aaaa…!' backtracks exponentially (Python's re would never return).

    Both the answer regex and an argument regex give up after the time bound, and the query is an error (exit 2) naming
    the pattern.
    """
    spec = write(
        "spec.yaml",
        """
        agent: demo
        queries:
          - id: math
            query: "What is 2+2?"
            correctness: {regex_match: '(a|aa)+$'}
            path:
              expected_tool_calls: [{name: calc, arguments: {x: {regex: '(a|aa)+$'}}}]
        """,
    )
    hostile = "a" * 60 + "!"
    traces = write_traces(
        "t.jsonl",
        [{"id": "math", "final_answer": hostile, "tool_calls": [{"name": "calc", "arguments": {"x": hostile}}]}],
    )
    done = run_cli("test", "--spec", spec, "--traces", traces, "--format", "json")
    assert_clean(done)
    assert done.returncode == 2
    [result] = json.loads(done.stdout)["results"]
    timeout = f"gave up after {REGEX_TIMEOUT_S:g} s (catastrophic backtracking?): simplify the pattern"
    assert result["line"] == 3
    assert result["correctness"]["status"] == "error"
    assert result["correctness"]["messages"] == [f"regex /(a|aa)+$/ {timeout}"]
    assert result["path"]["messages"] == [f"argument regex /(a|aa)+$/ {timeout}"]


@pytest.mark.parametrize(
    ("pattern", "timed"),
    [
        (r"\b42\b", False),  # no repetition: linear in the text, searched without the timer
        ("(yes|no)-[0-9]", False),
        ("(a|aa)+$", True),
        ("a*b", True),
        (r"\+", True),  # an escaped quantifier is counted too: conservative
        ("x{2,}", True),
        ("(?=a)a", True),  # group extensions carry '?'
    ],
)
def test_a_pattern_is_timed_unless_it_has_no_repetition(pattern, timed):
    search, timeout = patterns.compiled(pattern)
    assert timeout == (REGEX_TIMEOUT_S if timed else None)
    assert patterns.found(pattern, "a" * 3 + " 42 yes-1 +b xx") is bool(search.search("a" * 3 + " 42 yes-1 +b xx"))


def test_a_pattern_without_repetition_stays_fast_on_hostile_text():
    hostile = "ab" * 200_000 + "!"  # alternation backtracks a bounded number of times per position, never more
    start = time.process_time()
    assert patterns.compiled("(a|ab)(c|bcd)x")[1] is None
    assert not patterns.found("(a|ab)(c|bcd)x", hostile)
    assert time.process_time() - start < 5


def test_sequence_similarity_is_computed_once_per_pair():
    calls = []

    def exact(p, r):
        calls.append(1)
        return 0.5

    similarity = metrics._pairwise(exact, lambda p, r: 0.0)
    long = [f"t{i % 7}" for i in range(2_000)]
    assert [similarity(long, list(reversed(long))) for _ in range(4)] == [0.5] * 4
    assert len(calls) == 1


def test_sequence_similarity_of_huge_traces_is_a_flagged_lower_bound_within_the_cell_budget(monkeypatch):
    """Past MAX_SEQUENCE_CELLS the lists are cut into aligned blocks, their exact metrics a lower bound.

    The blocks' exact metrics cost at most the budget together: a lower bound, exact when the differences do not
    straddle a block boundary.
    """
    monkeypatch.setattr(metrics, "MAX_SEQUENCE_CELLS", 10_000)  # 100 calls a side, so the test is quick
    predicted = [f"tool{i % 20}" for i in range(1_000)]
    changed = [*predicted[:500], "other", *predicted[501:]]
    assert metrics.sequence_similarity_is_approximate(predicted, changed)
    assert metrics.lcs_similarity(predicted, changed) == 2 * 999 / 2_000
    assert metrics.edit_similarity(predicted, changed) == 1 - 1 / 1_000
    shifted = predicted[1:] + predicted[:1]  # the exact LCS keeps 999 of 1,000; blocks lose one per boundary
    assert metrics.lcs_similarity(predicted, shifted) <= 2 * 999 / 2_000
    assert metrics.lcs_similarity(predicted, shifted) >= 2 * (999 - 100) / 2_000
    small = ["a", "b", "c"], ["a", "c"]
    assert not metrics.sequence_similarity_is_approximate(*small) and metrics.lcs_similarity(*small) == 0.8


# --- spec loader ------------------------------------------------------------------------------------------------

ALIAS_BOMB = """agent: demo
l1: &a1 [q, q, q, q, q, q, q, q, q]
l2: &a2 [*a1, *a1, *a1, *a1, *a1, *a1, *a1, *a1, *a1]
l3: &a3 [*a2, *a2, *a2, *a2, *a2, *a2, *a2, *a2, *a2]
l4: &a4 [*a3, *a3, *a3, *a3, *a3, *a3, *a3, *a3, *a3]
l5: &a5 [*a4, *a4, *a4, *a4, *a4, *a4, *a4, *a4, *a4]
l6: &a6 [*a5, *a5, *a5, *a5, *a5, *a5, *a5, *a5, *a5]
l7: &a7 [*a6, *a6, *a6, *a6, *a6, *a6, *a6, *a6, *a6]
l8: &a8 [*a7, *a7, *a7, *a7, *a7, *a7, *a7, *a7, *a7]
queries:
  - id: q
    query: hi
    tags: *a8
"""


def test_an_alias_bomb_is_refused_at_an_anchor_line_in_moments(write):
    """9⁸ (43 million) values from a 700-byte file: refused once aliases have expanded to MAX_ALIAS_VALUES."""
    spec = write("spec.yaml", ALIAS_BOMB)
    done = run_cli("validate", spec)
    assert done.returncode == 1
    assert done.stderr.splitlines()[0] == (
        f"{spec}:6: aliases expand to more than {MAX_ALIAS_VALUES:,} values (an alias bomb?); "
        "this anchor is where the expansion starts"
    )


def test_ordinary_anchors_and_merge_keys_still_load(write):
    spec = write(
        "spec.yaml",
        """
        agent: demo
        queries:
          - {id: a, query: one, correctness: &shared {expected_in_answer: ["4"]}}
          - {id: b, query: two, correctness: *shared}
          - {id: c, query: three, correctness: {<<: *shared, not_in_answer: ["5"]}}
        """,
    )
    done = run_cli("validate", spec)
    assert done.returncode == 0, done.stderr


def test_a_duplicate_query_id_is_listed_with_every_other_problem_in_one_pass(write):
    spec = write(
        "spec.yaml",
        """
        agent: demo
        queries:
          - id: same
            query: one
          - id: same
            query: two
            tags: not-a-list
        """,
    )
    done = run_cli("validate", spec)
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        f"{spec}:5: duplicate query id 'same' (first used at line 3)",
        f"{spec}:7: queries[1].tags: Input should be a valid list",
        f"{spec}: invalid (2 problems)",
    ]
