"""`validate` compiles a spec regex with the `regex` package only where re's verdict may not be regex's.

See agentci_action/spec/pattern_syntax.py: the verdict and the message stay those of compiling with both.
"""

import random
import re
import warnings

import pytest
import regex
from helpers import run_cli
from pydantic import ValidationError

from agentci_action.spec.models import ArgumentRule, CorrectnessSpec
from agentci_action.spec.pattern_syntax import MAX_PLAIN_LENGTH, expanded_items, needs_regex_check

# Pieces of patterns: mostly the plain syntax, in and out of place, beside what lies just outside it.
PIECES = [
    *"abZ09_-.^$| \t\n#é߀\x00\ud800\U0001f600,:=!<>'\"@%&~`/;",
    *("*", "+", "?", "*?", "+?", "??", "*+", "++", "?+"),
    *(f"\\{c}" for c in "dwsDWSbBAZ"),
    *(f"\\{c}" for c in ".$^()[]{}*+?|/# -\\&~:<>=!,'\"@%`;_"),
    *("(", ")", "(?:", "(?=", "(?!", "(?<=", "(?<!", "(?P<n>", "(?P<m1>", "(?P=n)", "(?P=m1)"),
    *("(?i)", "(?m)", "(?s)", "(?a)", "(?u)", "(?ims)", "(?au)", "(?i:", "(?-i:", "(?s-i:", "(?a:", "(?u-m:"),
    *("{2}", "{2,3}", "{,3}", "{2,}", "{0}", "{0,0}", "{999}", "{3,2}", "{1,999}", "{00}", "{,}", "{", "}"),
    *("[", "]", "[^", "[]", "[^]", "[]]", "[a-z]", "[z-a]", "[\\d-z]", "[a-\\d]", "[-a]", "[a-]", "[\\]]", "[ -~]"),
    # just outside: POSIX classes, nested sets, fuzzy constraints, verbose mode, escapes of letters and digits
    *("[[:alpha:]]", "[:foo:]", "[[a]]", "&&", "--", "{e}", "{e<=1", "{s", "(?x)", "(?#c)", "(?>", "\\1", "\\x41"),
]
SET_PIECES = ["a", "z", "-", "^", "]", "\\]", "\\-", "\\d", "\\w", "\\S", "é", ".", "&", "|", "~", " ", "\\[", ":", "("]


def generated_patterns(count: int, seed: int = 0):
    rng = random.Random(seed)
    for _ in range(count):
        parts = []
        for _ in range(rng.randint(1, 12)):
            piece = rng.choice(PIECES)
            if piece == "[" and rng.random() < 0.7:  # a random set
                body = "".join(rng.choice(SET_PIECES) for _ in range(rng.randint(0, 5)))
                piece = "[" + "^" * (rng.random() < 0.3) + body + "]"
            parts.append(piece)
        yield "".join(parts)


def compiles(module, pattern: str) -> bool:
    try:
        module.compile(pattern)
    except Exception:  # re.error, regex.error, and the like: re raises ValueError for (?a)(?u)
        return False
    return True


def test_regex_accepts_every_plain_pattern_that_re_accepts():
    """The claim that lets validate skip regex, on 40,000 generated patterns.

    Millions pass it offline, with the oldest regex the package allows too.
    """
    plain_and_valid, regex_rejects = 0, []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # re's "possible nested set" and the like
        for pattern in generated_patterns(40_000):
            if needs_regex_check(pattern) or not compiles(re, pattern):
                continue
            plain_and_valid += 1
            if not compiles(regex, pattern):
                regex_rejects.append(pattern)
    assert regex_rejects == []
    assert plain_and_valid > 5_000  # the generator keeps exercising the plain syntax


@pytest.mark.parametrize(
    "pattern",
    [
        r"\b42\b",
        r"(?m)^src/\S+\.py:\d+: TODO",
        r"\$\s?2[5-9]\d",
        r"(?i)(?P<year>\d{4})-\d{2}(?P=year)?",
        r"[]a-c\]]+|[^]x]{1,3}",
        "(?<=a)b(?!c)",
    ],
)
def test_the_usual_patterns_are_plain(pattern):
    assert not needs_regex_check(pattern)
    assert compiles(re, pattern) and compiles(regex, pattern)


@pytest.mark.parametrize(
    "pattern",
    [
        "[[:foo:]]",  # regex: unknown POSIX class
        "x{e<=1",  # regex: an unclosed fuzzy constraint
        "x{e}",  # a fuzzy constraint to regex, a literal to re
        "(a{999}){999}",  # a count on a group: regex expands it in memory
        "a{1000}",
        "(?x) a # b",
        r"\p{L}",
        r"(a)\1",
        "a" * (MAX_PLAIN_LENGTH + 1),
    ],
)
def test_where_the_two_may_differ_regex_decides(pattern):
    assert needs_regex_check(pattern)


def both_compilers_verdict(pattern: str) -> str | None:
    """What validate said before it skipped regex.

    re's error, else regex's, else None (re's ValueError for (?a)(?u) is now worded like the others).
    """
    try:
        re.compile(pattern)
        regex.compile(pattern)
    except (re.error, regex.error, ValueError) as exc:
        return f"regex does not compile: {exc}"
    return None


def validate_verdict(model, field: str, pattern: str) -> str | None:
    try:
        model.model_validate({field: pattern})
    except ValidationError as exc:
        messages = [e["msg"].removeprefix("Value error, ") for e in exc.errors() if e["loc"] == (field,)]
        assert messages, exc
        return messages[0]
    return None


@pytest.mark.parametrize(
    "pattern",
    [
        r"\b42\b",  # valid in both, plain
        "(?x) a # b",  # valid in both, not plain
        r"\N{EM DASH}",
        r"\p{L}+",  # valid in regex only: re's error
        "(oops",  # invalid in both: re's error
        "(?a)(?u)",  # re raises ValueError
        "[z-a]",
        "*a",
        "[[:foo:]]",  # valid in re only: regex's error
        "x{e<=1",
        "{e}",
        "a" * (MAX_PLAIN_LENGTH + 1),
    ],
)
@pytest.mark.parametrize(("model", "field"), [(CorrectnessSpec, "regex_match"), (ArgumentRule, "regex")])
@pytest.mark.filterwarnings("ignore::FutureWarning")  # re's "possible nested set" on [[:foo:]]
def test_the_verdict_and_message_are_those_of_compiling_with_both(pattern, model, field):
    assert validate_verdict(model, field, pattern) == both_compilers_verdict(pattern)


def test_a_pattern_re_warns_about_is_checked_without_a_python_warning_on_the_user_s_screen():
    """re's FutureWarning ("possible nested set") named AgentCI's own source line under `agentci validate`."""
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        assert CorrectnessSpec(regex_match="[[a-z]]").regex_match == "[[a-z]]"
        with pytest.raises(ValidationError, match="unknown property"):
            CorrectnessSpec(regex_match="[[:foo:]]")
    assert [str(w.message) for w in seen] == []


def test_validate_names_the_line_of_a_pattern_only_regex_rejects(write):
    spec = write(
        "s.yaml",
        """
        agent: demo
        queries:
          - query: q
            correctness:
              regex_match: "[[:foo:]]"
        """,
    )
    done = run_cli("validate", spec)
    assert done.returncode == 1
    assert f"{spec}:5: queries[0].correctness.regex_match: regex does not compile: unknown property at position 8" in (
        done.stderr
    )


@pytest.mark.parametrize(
    ("pattern", "items"),
    [
        ("abc", 3),
        ("a{999}", 999),
        ("a{1,100000}", 1),  # regex repeats the minimum only
        ("(a{999}){999}", 999_000),  # the group counts one more than what it holds
        (r"\{99999999}", 10),  # escaped: a literal brace
        ("[{9999999}]", 1),  # inside a set: literals
        ("[]{]{5}x", 6),  # a first ] in a set is a literal; the count repeats the set
        ("a{4294967294}", 4_294_967_294),
    ],
)
def test_expanded_items_multiply_counts_out(pattern, items):
    assert expanded_items(pattern) == items


def test_a_regex_too_large_once_expanded_is_refused_before_regex_builds_it():
    """Refused from its counts alone, without the `regex` package building it (which took 2.7 GB).

    A pattern at the bound, or a large range, is accepted.
    """
    import resource

    from agentci_action._util.limits import MAX_REGEX_ITEMS
    from agentci_action.spec.models import CorrectnessSpec

    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    for pattern in ("a{4294967294}", "(?:(x{1000}){1000}){1000}", f"a{{{MAX_REGEX_ITEMS + 1}}}"):
        with pytest.raises(ValidationError, match="regex is too large once its repeat counts are expanded"):
            CorrectnessSpec.model_validate({"regex_match": pattern})
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 100_000  # kB: nothing was expanded
    for pattern in (f"a{{{MAX_REGEX_ITEMS}}}", "a{1,4294967294}", "(ab|cd){2,}"):
        assert CorrectnessSpec.model_validate({"regex_match": pattern}).regex_match == pattern
