"""Every file AgentCI writes goes through _util/output.py: no module writes a file any other way.

An AST scan of agentci_action/ for the calls that write, make or move files; each one found outside the helper must
be in ALLOWED with the reason it is safe (it writes only outside the working directory). A new writer fails here
until it is routed through the helper (write_file, replace_file, publish, make_directory) or allowed with a reason.
"""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

from helpers import ROOT

PACKAGE = ROOT / "agentci_action"
HELPER = Path("_util/output.py")
# Path.replace is left out: it cannot be told from str.replace without types (os.replace is in)
WRITING_METHODS = {"write_text", "write_bytes", "mkdir", "touch", "symlink_to", "hardlink_to", "rename"}
WRITING_FUNCTIONS = {
    "os": {"replace", "rename", "renames", "makedirs", "mkdir", "link", "symlink"},
    "shutil": {"copy", "copy2", "copyfile", "copytree", "move"},
    "tempfile": {"mkstemp", "mkdtemp", "NamedTemporaryFile", "TemporaryDirectory", "TemporaryFile"},
}
WRITING_FLAGS = {"O_WRONLY", "O_RDWR", "O_CREAT", "O_APPEND", "O_TRUNC"}  # os.open's
# (module, call) → how many, and why it is safe
ALLOWED: dict[tuple[str, str], tuple[int, str]] = {
    ("compare/base_ref.py", "mkdir"): (1, "files of the base commit into a fresh tempfile.TemporaryDirectory"),
    ("compare/base_ref.py", "write_bytes"): (1, "files of the base commit into a fresh tempfile.TemporaryDirectory"),
    ("compare/base_ref.py", "tempfile.TemporaryDirectory"): (1, "the scratch directory, made by tempfile (no dir=)"),
    ("compare/golden_changes.py", "tempfile.TemporaryDirectory"): (1, "the base commit's spec to load (no dir=)"),
    ("pipeline/agent_runs.py", "tempfile.TemporaryDirectory"): (1, "test/save traces without --record (no dir=)"),
    ("cli/cmd_record.py", "tempfile.TemporaryDirectory"): (1, "traces of `agentci record`, never kept (no dir=)"),
    ("pipeline/python_api.py", "tempfile.TemporaryDirectory"): (1, "traces of run_spec without a directory (no dir=)"),
    ("run/execute.py", "tempfile.TemporaryDirectory"): (1, "the runs' scratch files (no dir=)"),
}


def writing_calls(tree: ast.AST) -> list[str]:
    """The writing calls in `tree`, in source order: `method` for a method call, `module.function` for a module's."""
    found = []
    for node in sorted(ast.walk(tree), key=lambda n: (getattr(n, "lineno", 0), getattr(n, "col_offset", 0))):
        if not isinstance(node, ast.Call):
            continue
        function = node.func
        if isinstance(function, ast.Name) and function.id == "open" and writes(node, position=1):
            found.append("open")
        elif isinstance(function, ast.Attribute):
            owner = function.value.id if isinstance(function.value, ast.Name) else None
            if owner == "os" and function.attr == "open":
                if any(isinstance(n, ast.Attribute) and n.attr in WRITING_FLAGS for n in ast.walk(node)):
                    found.append("os.open")
            elif owner in WRITING_FUNCTIONS:
                if function.attr in WRITING_FUNCTIONS[owner]:
                    found.append(f"{owner}.{function.attr}")
            elif function.attr in WRITING_METHODS or (function.attr == "open" and writes(node, position=0)):
                found.append(function.attr)
    return found


def writes(call: ast.Call, position: int) -> bool:
    """Whether an open() call's mode (the argument at `position`, or mode=) is a constant that writes."""
    modes = [*call.args[position : position + 1], *(k.value for k in call.keywords if k.arg == "mode")]
    return any(isinstance(m, ast.Constant) and set(str(m.value)) & set("wax+") for m in modes)


def test_no_module_writes_a_file_outside_the_helper():
    found: Counter[tuple[str, str]] = Counter()
    for path in sorted(PACKAGE.rglob("*.py")):
        module = path.relative_to(PACKAGE)
        if module != HELPER:
            found.update((module.as_posix(), call) for call in writing_calls(ast.parse(path.read_text())))
    unexpected = {key: n for key, n in found.items() if ALLOWED.get(key, (0, ""))[0] != n}
    assert unexpected == {}, "write through agentci_action/_util/output.py, or allow it in ALLOWED with a reason"
    assert set(found) == set(ALLOWED)  # an allowance no longer needed goes


def test_the_scan_sees_each_kind_of_write():
    source = """
open(p, "w"); open(p, mode="ab"); p.open("x"); p.write_text(t); p.write_bytes(b); p.mkdir(); os.replace(a, b)
shutil.copy(a, b); tempfile.mkstemp(dir=d); os.open(p, os.O_WRONLY | os.O_CREAT)
open(p); p.open(); p.read_text(); os.path.join(a, b); "a".replace("a", "b"); os.open(p, os.O_RDONLY); g.open(r, s)
"""
    assert writing_calls(ast.parse(source)) == [
        *("open", "open", "open", "write_text", "write_bytes", "mkdir", "os.replace", "shutil.copy"),
        *("tempfile.mkstemp", "os.open"),
    ]
