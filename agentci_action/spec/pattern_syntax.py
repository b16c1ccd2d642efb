"""Which spec regexes `validate` must also compile with the `regex` package.

The engine runs spec patterns with `regex` (re's syntax with a time bound, _util/patterns.py), so a spec pattern
is valid when both re and regex compile it. Importing regex costs each `agentci validate` about 7 ms. In the
common part of re's syntax that PLAIN_SYNTAX spells out, regex accepts every pattern re accepts, so there re's
verdict is the verdict and regex is not needed:
literals, `.` `^` `$` `|` `* + ?` (lazy and possessive), the escapes \\d \\w \\s \\D \\W \\S \\b \\B \\A \\Z and
escaped ASCII punctuation; groups `(…)` `(?:…)` `(?P<name>…)` `(?P=name)`, lookarounds and the flags a i m s u,
global or scoped; sets of literals, ranges and those escapes; counts `{m}` `{m,}` `{,n}` `{m,n}` up to 999 on
anything but a group; at most MAX_PLAIN_LENGTH characters.

Outside it the two differ, and regex decides:
- in a set, regex reads `[:name:]` as a POSIX class (`[[:foo:]]` is its error) and `[` as a nested set;
- `{e}`, `{i<=1}`… are regex's fuzzy-match constraints (`{e<=1` is its error, `x{e}` matches differently);
- regex expands an exact count in memory: `a{4294967294}` or `(a{999}){999}` can exhaust it, hence the bounds;
- verbose mode `(?x)` changes what whitespace and `#` mean; escapes of letters and digits (\\1, \\x41, \\p{L},
  \\N{…}, \\z) mean different things, or nothing, in each.
tests/unit/spec/test_pattern_syntax.py checks the claim on generated patterns.
"""

import re

NAME = r"[A-Za-z_][A-Za-z0-9_]*"
PUNCTUATION = r"""[ !"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~]"""  # ASCII, escaped: a literal in both
PLAIN_SYNTAX = rf"""(?x)
(?: [^\\()\[\]{{}}]                                             # a literal, or . ^ $ | * + ?
  | \\ (?: {PUNCTUATION} | [dDwWsSbBAZ] )
  | \( (?! \? )                                                 # a group
  | \( \? (?: [:=!] | <[=!] | P<{NAME}> | P={NAME}\) | [aimsu]+\) | [aimsu]*-[ims]+: | [aimsu]+: )
  | \)
  | (?<! \) ) \{{ (?: \d{{1,3}} (?: ,\d{{0,3}} )? | ,\d{{1,3}} ) \}}  # a count, not on a group
  | \[ (?: \^ | (?! \^ ) ) (?: \] | (?! \] ) )                  # a set: as in re, a first ] is a literal
    (?: (?! && | \|\| | -- | ~~ ) [^\\\[\]] | \\ (?: {PUNCTUATION} | [dDwWsS] ) )* \]
)*"""
MAX_PLAIN_LENGTH = 1000


def needs_regex_check(pattern: str) -> bool:
    """False when re's verdict on `pattern` is also regex's (PLAIN_SYNTAX); True when only regex can tell."""
    return len(pattern) > MAX_PLAIN_LENGTH or re.fullmatch(PLAIN_SYNTAX, pattern) is None


_COUNT = re.compile(r"\{(\d+)(?:,\d*)?\}")


def expanded_items(pattern: str) -> int:
    """About how many items `pattern` holds once the `regex` package repeats its counts.

    Each literal, escape, set or group counts 1 plus what it holds, and an atom followed by {m}, {m,} or {m,n} counts m
    times (its minimum, which regex copies). "(a{999}){999}" → 998,001; "a{1,100000}" → 1. Read on a pattern re
    compiles.
    """
    sizes = [0]  # the size of each open group, the outermost level first
    last = 0  # the size of the atom just read: what a count repeats
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "(":
            sizes.append(0)
            i += 1
            continue
        if char == ")":
            last = sizes.pop() + 1
        elif char == "{" and (count := _COUNT.match(pattern, i)):
            times = int(count.group(1))
            sizes[-1] += last * (times - 1)  # the atom was counted once already
            last *= times
            i = count.end()
            continue
        elif char == "\\":
            last = 1
            i += 1
        elif char == "[":
            last = 1
            i = _set_end(pattern, i)
        else:
            last = 1
        sizes[-1] += last
        i += 1
    return sum(sizes)


def _set_end(pattern: str, start: int) -> int:
    """The index of the `]` closing the set opened at `start` (a first `]`, after an optional `^`, is a literal)."""
    i = start + 1
    if pattern.startswith("^", i):
        i += 1
    if pattern.startswith("]", i):
        i += 1
    while i < len(pattern) and pattern[i] != "]":
        i += 2 if pattern[i] == "\\" else 1
    return i
