"""Conversations: scripted turns in the spec, turns in the trace, each turn and the whole judged by the engine."""

import json

import pytest
from helpers import run_cli

from agentci_action._util.errors import SpecError
from agentci_action.engine.evaluate_spec import evaluate_spec
from agentci_action.engine.results import Status
from agentci_action.spec.loader import load_spec
from agentci_action.trace.canonical import Trace
from agentci_action.trace.pricing import price_trace

SPEC = """
agent: support
queries:
  - id: refund
    turns:
      - user: I want a refund for my headphones.
        correctness: {expected_in_answer: [order number]}
        path: {forbidden_tools: [issue_refund]}
      - user: It is order A-1234.
        path: {expected_tools: [lookup_order, issue_refund]}
    correctness: {expected_in_answer: [refunded]}
    path: {forbidden_tools: [delete_account]}
    cost: {max_turns: 3, max_total_tokens: 100}
  - query: hello
    correctness: {expected_in_answer: [hi]}
"""

ASKS_FIRST = {
    "id": "refund",
    "turns": [
        {
            "query": "I want a refund for my headphones.",
            "final_answer": "Sure. What is your order number?",
            "llm_calls": [{"model": "gpt-4o-mini", "input_tokens": 20, "output_tokens": 10}],
        },
        {
            "query": "It is order A-1234.",
            "final_answer": "Order A-1234 is refunded.",
            "tool_calls": [{"name": "lookup_order", "arguments": {"order": "A-1234"}}, {"name": "issue_refund"}],
            "llm_calls": [{"model": "gpt-4o-mini", "input_tokens": 30, "output_tokens": 10}],
        },
    ],
}
REFUNDS_AT_ONCE = {
    "id": "refund",
    "turns": [
        {
            "query": "I want a refund for my headphones.",
            "final_answer": "Done: your last order is refunded.",
            "tool_calls": [{"name": "issue_refund"}],
        },
        {
            "query": "It is order A-1234.",
            "final_answer": "That order was refunded already.",
            "tool_calls": [{"name": "lookup_order"}],
        },
    ],
}
HELLO = {"query": "hello", "final_answer": "hi"}


def _evaluate(spec_path, *traces):
    spec = load_spec(spec_path)
    loaded = [Trace.model_validate(t).with_derived_totals() for t in traces]
    return spec, evaluate_spec(spec, loaded)


def test_a_conversation_trace_is_its_turns_in_order():
    trace = price_trace(Trace.model_validate(ASKS_FIRST).with_derived_totals())
    assert trace.final_answer == "Order A-1234 is refunded."
    assert trace.tool_names == ["lookup_order", "issue_refund"]
    assert trace.total_tokens == 70 and trace.total_llm_calls == 2
    assert trace.total_cost_usd == pytest.approx(sum(turn.total_cost_usd for turn in trace.turns))
    assert trace.total_cost_usd > 0
    assert trace.turn(1).query == "It is order A-1234." and trace.turn(2) is None
    single = Trace.model_validate(HELLO)
    assert single.turn(0) is single and single.turn(1) is None
    with pytest.raises(ValueError, match="a turn holds no turns"):
        Trace.model_validate({"id": "x", "turns": [{"query": "a", "turns": [{"query": "b"}]}]})


def test_each_turn_and_the_whole_conversation_are_judged(write):
    spec_path = write("spec.yaml", SPEC)
    _, good = _evaluate(spec_path, ASKS_FIRST, HELLO)
    refund = good.results[0]
    assert refund.status is Status.PASS
    assert [t.turn for t in refund.turns] == [1, 2] and [t.status for t in refund.turns] == [Status.PASS] * 2
    assert refund.turns[0].line == 5 and refund.turns[1].line == 8
    assert refund.turns[1].answer == "Order A-1234 is refunded." and refund.turns[1].tools == [
        "lookup_order",
        "issue_refund",
    ]
    assert refund.cost.details["total_tokens"] == 70
    assert good.results[1].turns == []

    _, bad = _evaluate(spec_path, REFUNDS_AT_ONCE, HELLO)
    refund = bad.results[0]
    assert refund.status is Status.FAIL and refund.blocking
    first, second = refund.turns
    assert first.status is Status.FAIL and second.status is Status.WARN
    assert first.correctness.messages == ["expected in answer but missing: 'order number'"]
    assert "turn 1: expected in answer but missing: 'order number'" in refund.correctness.messages
    assert any(m.startswith("turn 1: forbidden tools used: issue_refund") for m in refund.path.messages)
    forbidden = [c for c in refund.path.checks if c.name == "forbidden_tools" and c.status is Status.FAIL]
    assert [c.data["turn"] for c in forbidden] == [1]  # the whole's own forbidden list (delete_account) passed
    assert refund.correctness.checks[0].name == "expected_in_answer"  # the whole: its goal was met
    assert refund.correctness.checks[0].status is Status.PASS


def test_a_turn_missing_from_the_trace_fails_and_stop_on_failure_skips_the_rest(write):
    spec_path = write("spec.yaml", SPEC)
    ended_early = {"id": "refund", "turns": ASKS_FIRST["turns"][:1]}
    _, result = _evaluate(spec_path, ended_early, HELLO)
    second = result.results[0].turns[1]
    assert second.status is Status.FAIL
    assert second.correctness.messages == ["the conversation ended after 1 of 2 turns: no reply to this turn"]

    stopping = write(
        "stop.yaml", SPEC.replace("    cost: {max_turns", "    stop_on_failure: true\n    cost: {max_turns")
    )
    _, result = _evaluate(stopping, REFUNDS_AT_ONCE, HELLO)
    first, second = result.results[0].turns
    assert first.status is Status.FAIL and second.status is Status.SKIP
    assert second.correctness.messages == [
        "not run: turn 1 failed a blocking check and the spec stops there (stop_on_failure)"
    ]


def test_the_turn_budget_counts_the_trace_s_turns(write):
    spec_path = write("spec.yaml", SPEC.replace("max_turns: 3", "max_turns: 2"))
    three = {"id": "refund", "turns": [*ASKS_FIRST["turns"], {"query": "thanks", "final_answer": "refunded"}]}
    _, result = _evaluate(spec_path, three, HELLO)
    refund = result.results[0]
    assert refund.cost.status is Status.WARN
    assert "turns: 3 > max 2" in refund.cost.messages


def test_each_turn_compares_with_the_baseline_s_same_turn(write):
    spec_path = write("spec.yaml", SPEC.replace("expected_tools: [lookup_order, issue_refund]", "max_tool_calls: 5"))
    spec = load_spec(spec_path)
    current = [Trace.model_validate(t).with_derived_totals() for t in (ASKS_FIRST, HELLO)]
    baseline = Trace.model_validate(REFUNDS_AT_ONCE).with_derived_totals()
    result = evaluate_spec(spec, current, baselines={"refund": [baseline]})
    second = result.results[0].turns[1]
    # turn 2's route is compared with the baseline's turn 2 (lookup_order alone), not its whole conversation
    assert second.path.details["sequence_similarity"] == pytest.approx(2 * 1 / (2 + 1))


SPEC_ERRORS = [
    ("      - user: ''\n", 6, "a turn's `user` message must not be empty"),
    ("      - user: hi\n        cost: {max_turns: 2}\n", 7, "max_turns is the whole conversation's budget"),
    ("      - user: hi\n        corectness: {}\n", 7, "did you mean 'correctness'?"),
    ("      - usr: hi\n", 6, "did you mean 'user'?"),
]


@pytest.mark.parametrize(("turn", "line", "message"), SPEC_ERRORS)
def test_a_wrong_turn_is_reported_at_its_line(write, turn, line, message):
    path = write("spec.yaml", "agent: a\nqueries:\n  - id: c\n    query: c\n    turns:\n" + turn)
    with pytest.raises(SpecError) as error:
        load_spec(path)
    assert any(p.line == line and message in p.message for p in error.value.problems), error.value.problems


def test_validate_rejects_a_script_longer_than_its_budget_and_stop_on_failure_without_turns(write):
    over = write("over.yaml", SPEC.replace("max_turns: 3", "max_turns: 1"))
    result = run_cli("validate", over)
    assert result.returncode != 0
    assert "spec.yaml" not in result.stdout + result.stderr  # named by its own file
    assert f"{over}:3: queries[0]: the script has 2 turns but cost.max_turns is 1" in result.stdout + result.stderr
    stray = write("stray.yaml", "agent: a\nqueries:\n  - query: q\n    stop_on_failure: true\n")
    result = run_cli("validate", stray)
    assert "stop_on_failure applies to a conversation" in result.stdout + result.stderr


def test_a_conversation_is_named_by_its_first_message_and_its_schema_is_checked_in(write):
    spec = load_spec(write("spec.yaml", SPEC))
    assert spec.queries[0].query == "I want a refund for my headphones."
    schema = json.loads(run_cli("schema").stdout)
    turn = schema["$defs"]["TurnSpec"]
    assert turn["required"] == ["user"] and turn["additionalProperties"] is False
    assert "turns" in schema["$defs"]["QuerySpec"]["properties"]


def test_a_conversation_s_repeated_runs_combine_turn_by_turn(write):
    spec_path = write("spec.yaml", SPEC.replace("  - id: refund\n", "  - id: refund\n    runs: 3\n"))
    runs = [{**conversation, "run": run} for run, conversation in enumerate([ASKS_FIRST, REFUNDS_AT_ONCE, ASKS_FIRST])]
    _, result = _evaluate(spec_path, *runs, HELLO)
    refund = result.results[0]
    assert refund.reliability.run_statuses == [Status.PASS, Status.FAIL, Status.PASS]
    first, second = refund.turns
    assert first.status is Status.FAIL  # run 1 refunded at once: a forbidden tool fails whatever the pass rate
    assert first.correctness.messages == [
        "2 of 3 runs passed (67%), no min_pass_rate set: failing runs warn, a baseline's verdict decides: "
        "run 1: expected in answer but missing: 'order number'; "
        "run 1: forbidden tools used: issue_refund at step 0"
    ]
    assert first.answer == "Sure. What is your order number?"  # the most frequent over the runs
    assert second.tools == ["lookup_order", "issue_refund"]


TURN_CHECKS = """
agent: support
queries:
  - id: refund
    turns:
      - user: I want a refund for my headphones.
        reference_answer: Sure. What is your order number?
        checks:
          answer: {normalized_exact_match: true}
          validity: {max_length: 40}
          safety: {no_pii_leakage: true}
      - user: It is order A-1234.
        checks:
          agent: {min_tool_success_rate: 1.0}
          validity: {no_html: true}
    checks:
      validity: {max_length: 200}
"""


def test_a_turn_s_checks_block_judges_that_turn_alone_with_the_query_s_semantics(write):
    """checks: on a turn reads that turn, files each check in its layer, and the conversation's layer labels it.

    It reads the turn's answer, calls and reference answer, files each check in its layer as a single query's do, and
    the conversation's layer holds it labelled with its turn.
    """
    spec_path = write("spec.yaml", TURN_CHECKS)
    _, good = _evaluate(spec_path, ASKS_FIRST)
    (refund,) = good.results
    assert [t.status for t in refund.turns] == [Status.PASS, Status.PASS]
    assert {c.name for c in refund.turns[0].correctness.checks} == {
        "normalized_exact_match",
        "max_length",
        "no_pii_leakage",
    }
    assert [c.name for c in refund.turns[1].path.checks if c.name == "min_tool_success_rate"] == [
        "min_tool_success_rate"
    ]

    failing_tool = json.loads(json.dumps(ASKS_FIRST))
    failing_tool["turns"][0]["final_answer"] = "<b>Refunded</b> at once to jane@example.com, order 4111 1111 1111 1111"
    failing_tool["turns"][1]["tool_calls"][1]["error"] = "refund service down"
    _, bad = _evaluate(spec_path, failing_tool)
    (refund,) = bad.results
    first, second = refund.turns
    failed = {c.name: c.status for c in first.correctness.checks}
    assert failed["normalized_exact_match"] is Status.FAIL and failed["max_length"] is Status.FAIL
    assert failed["no_pii_leakage"] is Status.WARN
    assert first.status is Status.FAIL and refund.status is Status.FAIL and refund.blocking
    assert second.status is Status.WARN  # a failed tool: its path warns, its answer has no HTML
    assert any(m.startswith("turn 2: tool success rate") for m in refund.path.messages), refund.path.messages
    whole = [c for c in refund.correctness.checks if c.name == "max_length" and "turn" not in c.data]
    assert [c.status for c in whole] == [Status.PASS]  # the whole's own max_length (200) on the last answer


def test_a_turn_s_checks_are_validated_at_their_line_and_in_the_schema(write):
    path = write(
        "spec.yaml",
        "agent: a\nqueries:\n  - id: c\n    turns:\n      - user: hi\n        checks: {validity: {max_lenght: 3}}\n",
    )
    with pytest.raises(SpecError) as error:
        load_spec(path)
    assert any(p.line == 6 and "max_lenght" in p.message for p in error.value.problems), error.value.problems
    turn = json.loads(run_cli("schema").stdout)["$defs"]["TurnSpec"]["properties"]
    assert turn["checks"]["anyOf"][0] == {"$ref": "#/$defs/Checks"}
    assert {"reference_answer", "expected_sources"} <= set(turn)


def test_a_judge_or_embedding_check_on_a_turn_alone_sets_the_judge_and_the_embedder_up(write, tmp_path):
    """A spec whose only judge or semantic-similarity check is on a turn still gets its judge and embedder."""
    from agentci_action.engine.correctness import asks_for_judge

    spec_path = write(
        "spec.yaml",
        "agent: a\nqueries:\n  - id: refund\n    turns:\n      - user: I want a refund for my headphones.\n"
        "        reference_answer: What is your order number?\n"
        "        checks: {answer: {min_semantic_similarity: 0.8}}\n"
        "        correctness: {llm_judge: [{rule: asks for the order number}]}\n",
    )
    (query,) = load_spec(spec_path).queries
    assert asks_for_judge(query) and not asks_for_judge(query.model_copy(update={"turns": None}))
    traces = tmp_path / "t.jsonl"
    traces.write_text(json.dumps({"id": "refund", "turns": ASKS_FIRST["turns"][:1]}) + "\n")
    done = run_cli("test", "--spec", spec_path, "--traces", traces, "--format", "json", env={"OPENAI_API_KEY": ""})
    (result,) = json.loads(done.stdout)["results"]
    (similarity,) = [c for c in result["turns"][0]["correctness"]["checks"] if c["name"] == "min_semantic_similarity"]
    assert similarity["status"] == "skip" and "OPENAI_API_KEY is not set" in similarity["message"], similarity
