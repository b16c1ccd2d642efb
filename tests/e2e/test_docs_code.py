"""Every fenced code block of the documentation is run, so no command or snippet goes stale.

The documentation: README.md, the other top-level pages, every page under docs/, benchmarks/*.md.

A block's language says what it is: `bash`/`sh` and `python` blocks run; `yaml` blocks must parse; `json`, `text`
and the like are shown, not run. The HTML comment on the line before a fence changes that:

- `<!-- not run: REASON -->`: the block needs something a test cannot have (the network, a key, your agent);
  it is still syntax-checked, and the reason is required.
- `<!-- file: PATH -->`: the block is written to PATH (relative to the page's working directory) instead of run.
- `<!-- run in: an empty directory -->`: from this block on, the page's blocks run in a new empty directory.
- `<!-- output: the block above -->`: a `text` block quoting what the run block before it printed. Each of its lines
  must appear, in order, in what the block printed (stdout, then stderr, its lines joined: a report wraps at its
  width), after both are normalised (volatile figures: timings, hashes, temporary paths; runs of spaces); a line `…`
  stands for lines left out.
- `<!-- shown: REASON -->`: a `text` block that is not an output a test can produce (a synopsis, another
  language's code, a log of a run with a key); the reason is required. Every `text` block carries one of the two.

A page's blocks run in order in one working directory, a copy of `examples/` under `examples/` (so a tutorial's
steps build on each other). A command line ending in `# exit N` must exit N; the other commands must exit 0.
"""

import ast
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from helpers import ROOT

PAGES = [
    *sorted(ROOT.glob("*.md")),
    *sorted((ROOT / "docs").rglob("*.md")),
    *sorted((ROOT / "benchmarks").glob("*.md")),
]
RUN = {"bash", "sh", "python"}
SHOWN = {"yaml", "json", "jsonl", "text", "toml", "diff", "markdown", "xml", "ini"}
FENCE = re.compile(r"^(?P<indent> *)(?P<fence>`{3,})(?P<lang>[^`\s]*)\s*$")
NOTE = re.compile(r"^\s*<!--\s*(?P<kind>not run|file|run in|output|shown):\s*(?P<value>.*?)\s*-->\s*$")
EXIT = re.compile(r"\s+# exit (\d+)\s*$", re.M)


@dataclass
class Block:
    page: Path
    line: int  # of the opening fence, 1-based
    lang: str
    code: str
    note: tuple[str, str] | None  # (kind, value) of the annotation before the fence

    def __str__(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def blocks(page: Path) -> list[Block]:
    """The fenced blocks of a page, with their indentation removed and the annotation on the line before each."""
    lines, found, i = page.read_text(encoding="utf-8").splitlines(), [], 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if not opening:
            i += 1
            continue
        indent, fence = len(opening["indent"]), opening["fence"]
        end = next(j for j in range(i + 1, len(lines)) if lines[j].strip() == fence)
        previous = next((lines[j] for j in range(i - 1, -1, -1) if lines[j].strip()), "")
        note = NOTE.match(previous)
        code = "\n".join(line[indent:] for line in lines[i + 1 : end]) + "\n"
        found.append(Block(page, i + 1, opening["lang"], code, (note["kind"], note["value"]) if note else None))
        i = end + 1
    return found


EVERY_BLOCK = [block for page in PAGES for block in blocks(page)]


@pytest.mark.parametrize("block", EVERY_BLOCK, ids=str)
def test_every_block_says_what_it_is(block: Block):
    assert block.lang in RUN | SHOWN, f"{block}: name the block's language ({sorted(RUN | SHOWN)})"
    if block.note:
        kind, value = block.note
        assert value, f"{block}: `{kind}:` needs a value"
        assert kind != "run in" or value == "an empty directory", f"{block}: run in: an empty directory"
        assert kind != "output" or value == "the block above", f"{block}: output: the block above"
        assert kind not in ("output", "shown") or block.lang == "text", f"{block}: `{kind}:` is for text blocks"
    if block.lang == "text":
        assert block.note and block.note[0] in ("output", "shown"), f"{block}: say `output:` or `shown:` (why)"
    if block.lang == "yaml":
        yaml.safe_load(block.code)  # raises on a block that does not parse


def commands(code: str) -> list[tuple[str, int]]:
    """A bash block's commands (continued lines joined) with the exit code each must have."""
    joined = re.sub(r"\\\n", " ", code)
    found = []
    for line in joined.splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            expected = EXIT.search(line)
            found.append((line, int(expected[1]) if expected else 0))
    return found


def script(block: Block) -> str:
    """The bash to run.

    The block under `set -eo pipefail`, or, when a line states its exit code, each command followed by a check of its
    exit code.
    """
    if not EXIT.search(block.code):
        return "set -eo pipefail\n" + block.code
    checked = []
    for number, (line, expected) in enumerate(commands(block.code), 1):
        checked.append(
            f"{line}\nrc=$?; [ $rc -eq {expected} ] || "
            f'{{ echo "command {number} exited $rc, the page says {expected}" >&2; exit 99; }}'
        )
    return "set -o pipefail\n" + "\n".join(checked) + "\n"


def environment() -> dict[str, str]:
    """The test's interpreter and its `agentci` first on PATH; no key and no GitHub runner variables."""
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.endswith("_API_KEY") and not name.startswith(("GITHUB_", "INPUT_", "PYTEST_"))
    }
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return env


def check_syntax(block: Block, tmp_path: Path) -> None:
    if block.lang == "python":
        compile(block.code, str(block), "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    elif block.lang in ("bash", "sh"):
        done = subprocess.run(["bash", "-n"], input=block.code, capture_output=True, text=True)
        assert done.returncode == 0, f"{block}: {done.stderr}"


VOLATILE = [
    (re.compile(r"\b\d+(?:[.,]\d+)*\s?(?:ms|µs|s)\b|\b\d+:\d\d(?::\d\d)?\b"), "<time>"),  # 1,200 ms · 0.4 s · 1:36
    (re.compile(r"\b(?=[0-9]*[a-f])[0-9a-f]{7,64}\b"), "<hash>"),  # commits, digests (a letter among them)
    (re.compile(r"(?:/tmp|/var/folders|/private/var)/\S+"), "<path>"),  # the test's own directories
]


def normalised(text: str) -> list[str]:
    """A text's non-empty lines with volatile figures replaced and runs of spaces made one."""
    for pattern, stand_in in VOLATILE:
        text = pattern.sub(stand_in, text)
    return [" ".join(line.split()) for line in text.splitlines() if line.strip()]


def check_output(block: Block, printed: str) -> None:
    """Each quoted line appears, in order, in what the command printed, its lines joined (a report wraps at its width).

    `…` stands for what the quote leaves out.
    """
    text, at = " ".join(normalised(printed)), 0
    for quoted in normalised(block.code):
        if quoted in ("…", "..."):
            continue
        found = text.find(quoted, at)
        assert found >= 0, (
            f"{block}: the command did not print, here or in this order:\n{quoted}\n---\n{printed[-3000:]}"
        )
        at = found + len(quoted)


def execute(block: Block, cwd: Path, tmp_path: Path) -> str:
    if block.lang == "python":
        source = tmp_path / f"block_{block.line}.py"
        source.write_text(block.code, encoding="utf-8")
        argv = [sys.executable, str(source)]
    else:
        argv = ["bash", "-c", script(block)]
    done = subprocess.run(argv, cwd=cwd, env=environment(), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, (
        f"{block} exited {done.returncode}:\n{block.code}\n{done.stdout[-3000:]}\n{done.stderr}"
    )
    return done.stdout + done.stderr


RUNNABLE = [page for page in PAGES if any(b.lang in RUN or (b.note and b.note[0] == "file") for b in blocks(page))]
QUOTING = [page for page in PAGES if any(b.note and b.note[0] == "output" for b in blocks(page))]


@pytest.mark.parametrize("page", RUNNABLE, ids=lambda page: str(page.relative_to(ROOT)))
def test_every_block_of_the_page_runs(page: Path, tmp_path: Path):
    cwd = tmp_path / "work"
    shutil.copytree(ROOT / "examples", cwd / "examples", ignore=shutil.ignore_patterns("__pycache__"))
    ran, printed = 0, None
    for block in blocks(page):
        kind, value = block.note or (None, "")
        if kind == "output":
            assert printed is not None, f"{block}: no run block before it"
            check_output(block, printed)
        if kind == "run in":
            cwd = tmp_path / f"empty_{block.line}"
            cwd.mkdir()
        if kind == "file":
            target = cwd / value
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(block.code, encoding="utf-8")
        elif block.lang in RUN:
            if kind == "not run":
                check_syntax(block, tmp_path)
            else:
                printed = execute(block, cwd, tmp_path)
                ran += 1
    assert ran or all(b.note and b.note[0] == "not run" for b in blocks(page) if b.lang in RUN)


def test_commands_know_their_exit_codes():
    code = "agentci test --spec s.yaml \\\n  --traces t   # exit 1\n# a comment\nagentci diff x\n"
    assert commands(code) == [("agentci test --spec s.yaml    --traces t   # exit 1", 1), ("agentci diff x", 0)]


def test_quoted_output_is_compared_after_normalising():
    block = Block(ROOT / "README.md", 1, "text", "Passed 4 → 2 of 4 · latency 1,200 ms\n…\ncommit 0a1b2c3d\n", None)
    check_output(block, "AgentCI\nPassed 4 → 2 of 4 · latency 3.5 s\nmore\n  commit ffffffff in /tmp/x/y\n")
    with pytest.raises(AssertionError):
        check_output(block, "commit 0a1b2c3d\nPassed 4 → 2 of 4 · latency 1 s\n")  # out of order


def test_every_page_with_a_quoted_output_runs():
    assert set(QUOTING) <= set(RUNNABLE) and QUOTING
