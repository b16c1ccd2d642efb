"""The code-analysis agent, a scripted policy (no model, no key) over a small repository held in this file.

It reads files, greps, and analyses Python with the standard library's `ast`, then answers.

    AGENT_VERSION=v1 python agent.py < job.json   # the release in baselines/v1
    python agent.py < job.json                    # current: re-reads a file twice more before linting it (the
                                                  # loop the example's spec warns about)

The policy picks its plan from the question (count, TODOs, complexity, unused imports, importers, a failing
test) and the paths it names; every fact in an answer comes from a tool's result. Token counts and latencies are
modelled (../scripted_model.py).
"""

from __future__ import annotations

import ast
import json
import os
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from scripted_model import Episode, serve, tool

MODEL = "gpt-4o-mini"
SYSTEM = "You analyse the repository with your tools and answer exactly what is asked, nothing more."
CONFIRM_READS = 2  # current: extra reads of a file "to be sure it did not change" before linting it

REPOSITORY = {
    "src/utils.py": (
        "def slug(text):\n    return text.lower().replace(' ', '-')\n\n\n"
        "def clamp(value, low, high):\n    return max(low, min(value, high))\n\n\n"
        "def chunks(items, size):\n    return [items[i : i + size] for i in range(0, len(items), size)]\n\n\n"
        "def first(items):\n    return items[0] if items else None\n\n\n"
        "def flatten(lists):\n    return [x for inner in lists for x in inner]\n\n\n"
        "def unique(items):\n    return list(dict.fromkeys(items))\n\n\n"
        "def pairs(items):\n    return list(zip(items, items[1:]))\n"
    ),
    "src/parser.py": (
        "def parse_header(text):\n"
        "    lines = text.splitlines()\n"
        "    title = lines[0]\n"
        "    if title.startswith('#'):\n        title = title[1:]\n"
        "    for line in lines[1:]:\n"
        "        if not line:\n            break\n"
        "        if ':' in line and line.startswith(' '):\n            continue\n"
        "        if line.startswith('--') or line.startswith('=='):\n            return title, line\n"
        "    return title, None\n\n\n"
        "def parse_body(text):\n"
        "    # TODO handle empty input\n"
        "    body = []\n"
        "    for line in text.splitlines():\n"
        "        if line.startswith('>'):\n            body.append(line[1:])\n"
        "        elif line:\n            body.append(line)\n"
        "    return body\n"
    ),
    "src/cli.py": (
        "import argparse\nimport json\nimport sys\n\nimport config\n\n\n"
        "def main():\n"
        "    # TODO add --quiet\n"
        "    parser = argparse.ArgumentParser()\n"
        "    parser.add_argument('path')\n"
        "    return parser.parse_args().path, config.STRICT\n"
    ),
    "src/server.py": "import config\n\n\ndef serve():\n    return config.PORT\n",
    "src/config.py": "STRICT = False\nPORT = 8080\n",
    "tests/test_parser.py": (
        "from parser import parse_header\n\n\ndef test_empty():\n    assert parse_header('') == ('', None)\n"
    ),
}
BRANCHES = (ast.If, ast.For, ast.While, ast.IfExp, ast.ExceptHandler, ast.BoolOp, ast.comprehension)


@tool(latency_ms=15)
def read_file(path: str) -> str:
    return REPOSITORY[path]


@tool(latency_ms=15)
def grep(pattern: str, path: str = "") -> str:
    """`path:line: text` of every line under `path` containing `pattern`."""
    return "\n".join(
        f"{name}:{number}: {line.strip()}"
        for name, source in REPOSITORY.items()
        if name.startswith(path)
        for number, line in enumerate(source.splitlines(), 1)
        if pattern in line
    )


@tool(latency_ms=15)
def parse_ast(path: str) -> dict:
    """The module's functions, imports, and the imports it never uses."""
    tree = ast.parse(REPOSITORY[path])
    imported = [
        alias.asname or alias.name for node in tree.body if isinstance(node, ast.Import) for alias in node.names
    ]
    used = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    return {
        "functions": [node.name for node in tree.body if isinstance(node, ast.FunctionDef)],
        "imports": imported,
        "unused_imports": [name for name in imported if name not in used],
    }


@tool(latency_ms=15)
def complexity(path: str) -> dict:
    """Cyclomatic complexity of each function: 1 + its branch points (if, loops, boolean operators, ...)."""
    tree = ast.parse(REPOSITORY[path])
    return {
        node.name: 1 + sum(isinstance(inner, BRANCHES) for inner in ast.walk(node))
        for node in tree.body
        if isinstance(node, ast.FunctionDef)
    }


def count_functions(episode: Episode, path: str) -> dict:
    episode.call(read_file, path=path)
    return episode.answer(str(len(episode.call(parse_ast, path=path)["functions"])))


def todos(episode: Episode) -> dict:
    found = episode.call(grep, pattern="TODO", path="src")
    return episode.answer("\n".join(line.replace(": # TODO", ": TODO") for line in found.splitlines()))


def complexity_report(episode: Episode, path: str) -> dict:
    episode.call(read_file, path=path)
    episode.call(parse_ast, path=path)
    scores = episode.call(complexity, path=path)
    functions = [{"name": name, "complexity": score} for name, score in scores.items()]
    return episode.answer(json.dumps({"file": path, "functions": functions, "max_complexity": max(scores.values())}))


def unused_imports(episode: Episode, path: str, version: str) -> dict:
    for _ in range(1 + (CONFIRM_READS if version == "current" else 0)):
        episode.call(read_file, path=path)
    unused = episode.call(parse_ast, path=path)["unused_imports"]
    return episode.answer(" and ".join(f"`{name}`" for name in unused) + " are imported but never used.")


def importers(episode: Episode, path: str) -> dict:
    module = Path(path).stem
    found = sorted({line.split(":", 1)[0] for line in episode.call(grep, pattern=f"import {module}").splitlines()})
    episode.call(read_file, path=found[-1])  # confirm the import is real in one of them
    return episode.answer(
        f"{', '.join(found[:-1])} and {found[-1]} import {path}." if len(found) > 1 else f"{found[0]} imports {path}."
    )


def failing_test(episode: Episode, test_path: str) -> dict:
    """Read the test, find the function it calls, read its definition, name the first index that fails on empty input."""
    test = ast.parse(episode.call(read_file, path=test_path))
    called = next(n.func.id for n in ast.walk(test) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name))
    where = episode.call(grep, pattern=f"def {called}").split(":", 1)[0]
    source = ast.parse(episode.call(read_file, path=where))
    index = next(
        n
        for n in ast.walk(source)
        if isinstance(n, ast.Subscript) and isinstance(n.slice, ast.Constant) and isinstance(n.value, ast.Name)
    )
    return episode.answer(
        f"{called} indexes {index.value.id}[{index.slice.value}] on an empty file, which raises IndexError."
    )


def analyse(question: str, version: str = "current") -> dict:
    episode = Episode(MODEL, SYSTEM, question)
    paths = re.findall(r"[\w/]+\.py", question)
    lowered = question.lower()
    if "how many functions" in lowered:
        return count_functions(episode, paths[0])
    if "todo" in lowered:
        return todos(episode)
    if "complexity" in lowered:
        return complexity_report(episode, paths[0])
    if "unused" in lowered:
        return unused_imports(episode, paths[0], version)
    if "import" in lowered:
        return importers(episode, paths[0])
    if "fail" in lowered:
        return failing_test(episode, paths[0])
    return episode.answer("I can count functions, find TODOs, report complexity, lint imports and explain failures.")


if __name__ == "__main__":
    serve(lambda question: analyse(question, os.environ.get("AGENT_VERSION", "current")))
