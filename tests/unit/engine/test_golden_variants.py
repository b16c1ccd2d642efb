"""Golden variants: every accepted baseline trace reaches the path layer; the closest one is the reference."""

import textwrap

import pytest

from agentci_action._util.errors import SpecError, TraceError
from agentci_action.engine.evaluate_spec import MAX_VARIANTS, evaluate_spec
from agentci_action.engine.path import evaluate_path
from agentci_action.spec.loader import load_spec
from agentci_action.spec.models import PathSpec
from agentci_action.trace.canonical import Trace

SPEC = """\
agent: weather-agent
queries:
  - id: weather
    query: What is the weather in Paris?
    path:
      match_mode: strict
      min_sequence_similarity: 0.9
      allowed_tools: [search, kb_lookup, rerank, answer]
      expected_tool_calls:
        - any_of: [search, kb_lookup]
          arguments: {q: paris}
        - name: rerank
          optional: true
        - name: answer
    cost:
      max_cost_multiplier: 1.5
"""


def make_trace(*tools: str, cost: float = 0.01, q: str = "paris") -> Trace:
    calls = [{"name": t, "arguments": {"q": q}} for t in tools]
    return Trace.model_validate({"id": "weather", "tool_calls": calls, "total_cost_usd": cost})


@pytest.fixture
def spec(tmp_path):
    file = tmp_path / "agentci_spec.yaml"
    file.write_text(SPEC)
    return load_spec(file)


def test_path_compares_with_the_closest_variant_and_says_which(spec):
    variants = [
        make_trace("search", "answer"),
        make_trace("kb_lookup", "rerank", "answer"),
        make_trace("search", "rerank", "answer"),
    ]
    result = evaluate_spec(
        spec, [make_trace("kb_lookup", "rerank", "answer")], baselines={"weather": variants}
    ).results[0]
    path = result.path
    assert path.details["baseline_variant"] == 1
    assert path.details["baseline_variants"] == 3
    assert path.details["variant_similarities"] == pytest.approx([0.4, 1.0, 2 / 3])
    assert path.details["reference"] == "baseline[1] (closest of 3 variants)"
    assert path.status.value == "pass"


def test_a_route_matching_no_variant_is_explained_against_the_closest(spec):
    variants = [make_trace("search", "answer"), make_trace("kb_lookup", "rerank", "answer")]
    result = evaluate_spec(spec, [make_trace("kb_lookup", "answer")], baselines={"weather": variants}).results[0]
    assert result.path.details["baseline_variant"] == 1  # 0.8 similar, against 0.5 for variant 0
    assert result.path.messages == [
        "sequence similarity (lcs) against the baseline[1] (closest of 2 variants): 0.80 < min 0.9 "
        "(first difference at step 1: expected rerank, got answer)",
        "match mode 'strict' against the baseline[1] (closest of 2 variants) failed: "
        "first difference at step 1: expected rerank, got answer; missing: rerank",
    ]


def test_mode_match_outranks_similarity_when_choosing_a_variant():
    spec = PathSpec(match_mode="subset")
    # variant 0 is more similar but names a tool the run skipped; variant 1 is fully contained in the run
    variants = [make_trace("search", "rerank", "answer", "cite"), make_trace("search")]
    result = evaluate_path(spec, make_trace("search", "rerank", "answer"), variants)
    assert result.details["baseline_variant"] == 1
    assert result.details["match_mode"]["matched"] is True


def test_cost_is_compared_with_the_variant_path_chose(spec):
    variants = [make_trace("search", "answer", cost=0.01), make_trace("kb_lookup", "rerank", "answer", cost=0.04)]
    result = evaluate_spec(
        spec, [make_trace("kb_lookup", "rerank", "answer", cost=0.05)], baselines={"weather": variants}
    ).results[0]
    assert result.cost.details["baseline_cost_usd"] == 0.04
    assert result.cost.details["cost_multiplier"] == pytest.approx(1.25)
    assert result.cost.status.value == "pass"


def test_a_single_baseline_is_still_called_the_baseline(spec):
    result = evaluate_spec(
        spec, [make_trace("search", "answer")], baselines={"weather": [make_trace("search", "answer")]}
    ).results[0]
    assert result.path.details["reference"] == "baseline"
    assert result.path.details["baseline_variant"] == 0


def test_no_baseline_leaves_no_variant(spec):
    result = evaluate_spec(spec, [make_trace("search", "answer")]).results[0]
    assert "baseline_variant" not in result.path.details
    skipped = result.cost.checks[0]
    assert (skipped.status.value, skipped.message, skipped.data) == ("skip", "", {"reason": "no baseline trace"})


def test_more_than_five_variants_is_an_input_error_naming_the_query(spec):
    variants = [make_trace("search", "answer") for _ in range(MAX_VARIANTS + 1)]
    with pytest.raises(TraceError) as caught:
        evaluate_spec(spec, [make_trace("search", "answer")], baselines={"weather": variants})
    (problem,) = caught.value.problems
    assert (problem.file.endswith("agentci_spec.yaml"), problem.line) == (True, 3)
    assert "has 6 baseline traces (variants); at most 5 are accepted" in problem.message


def test_expected_calls_and_allow_list_run_from_the_yaml(spec):
    result = evaluate_spec(spec, [make_trace("kb_lookup", "shell", "answer", q="rome")]).results[0]
    assert result.path.status.value == "fail"
    assert result.path.messages == [
        "tools not in allowed_tools: shell at step 1",
        "expected_tool_calls not matched (strict): first difference at step 0: expected any of (search, kb_lookup) "
        "(expected_tool_calls[0]), got kb_lookup with other arguments; missing: any of (search, kb_lookup) "
        "(expected_tool_calls[0]); unexpected: kb_lookup at step 0, shell at step 1; "
        'arguments of kb_lookup at step 0 vs expected_tool_calls[0]: q expected "paris", got "rome"',
    ]


@pytest.mark.parametrize(
    "fragment, line, message",
    [
        ("- name: answer\n  argument_rules: {q: {regex: '('}}", 11, "regex does not compile"),
        ("- name: answer\n  any_of: [a, b]", 10, "exactly one of `name` or `any_of`"),
        ("- name: answer\n  argument_match: fuzzy", 11, "argument_match"),
        (
            "- name: answer\n  arguments: {n: 1}\n  argument_rules: {n: {tolerance: 1, regex: x}}",
            12,
            "exactly one of `regex` or `tolerance`",
        ),
        ("- nme: answer", 10, "unknown key 'nme'; did you mean 'name'?"),
    ],
)
def test_bad_expected_calls_in_yaml_name_the_line(tmp_path, fragment, line, message):
    head = SPEC.split("      expected_tool_calls:")[0]
    file = tmp_path / "spec.yaml"
    file.write_text(head + "      expected_tool_calls:\n" + textwrap.indent(fragment, " " * 8) + "\n")
    with pytest.raises(SpecError) as caught:
        load_spec(file)
    (problem,) = caught.value.problems
    assert problem.line == line
    assert message in problem.message


def test_yaml_dates_in_expected_arguments_compare_as_iso_text(tmp_path):
    file = tmp_path / "spec.yaml"
    file.write_text(SPEC.replace("arguments: {q: paris}", "arguments: {q: paris, day: 2026-11-22}"))
    step = load_spec(file).queries[0].path.expected_tool_calls[0]
    assert step.arguments == {"q": "paris", "day": "2026-11-22"}
