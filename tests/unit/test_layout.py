"""The package reads as the pipeline (docs/maintainers/design.md).

One package per stage, one name per module, no circles, and a public API that changes only on purpose. The layers
themselves are import-linter's contract in pyproject.toml, which .ci/run checks with `lint-imports`.
"""

import ast
import pathlib
from collections import Counter

import grimp

import agentci_action

PACKAGE = pathlib.Path(agentci_action.__file__).parent
ROOT_FILES = {"__init__.py", "__main__.py", "_version.py"}

# What `from agentci_action import ...` offers (docs/reference/python-api.md): adding or removing a name is an API change.
PUBLIC_API = {
    "Evaluation",
    "Outcome",
    "Settings",
    "__version__",
    "evaluate",
    "judge_for",
    "load_spec",
    "load_traces",
    "run_agent",
    "run_spec",
}


def modules():
    return [p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts]


def test_the_package_root_holds_only_packages_and_the_entry_files():
    loose = {p.name for p in PACKAGE.iterdir() if p.is_file() and p.suffix == ".py"}
    assert loose == ROOT_FILES
    for folder in (p for p in PACKAGE.iterdir() if p.is_dir() and p.name not in ("__pycache__", "templates")):
        assert (folder / "__init__.py").is_file(), f"{folder.name}/ is a stage and needs an __init__.py"


def test_every_stage_says_what_it_is():
    for folder in (p for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()):
        docstring = ast.get_docstring(ast.parse((folder / "__init__.py").read_text(encoding="utf-8")))
        assert docstring, f"{folder.name}/__init__.py needs a docstring saying what the stage is"


def test_no_module_or_package_name_is_used_twice():
    names = Counter(p.stem for p in modules() if p.name not in ("__init__.py", "__main__.py"))
    names.update(p.parent.name for p in modules() if p.name == "__init__.py" and p.parent != PACKAGE)
    assert [name for name, count in names.items() if count > 1] == []


def _cycles(graph):
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(module):
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for imported in graph.find_modules_directly_imported_by(module):
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in on_stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == module:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for module in sorted(graph.modules):
        if module not in index:
            visit(module)
    return found


def test_no_module_imports_itself_through_others():
    """Type-only and function-level imports count too: a circle hidden in a function is still a circle."""
    assert _cycles(grimp.build_graph("agentci_action")) == []


def test_the_public_api_is_what_the_docs_name_and_every_name_resolves():
    assert set(agentci_action.__all__) == PUBLIC_API
    for name in PUBLIC_API:
        assert getattr(agentci_action, name) is not None, name
    assert set(dir(agentci_action)) | set(agentci_action.__all__) >= PUBLIC_API


def test_no_command_module_imports_another():
    """A command's module holds its flags and its run (DESIGN.md: one composition root).

    What two commands share lives in cli/'s helpers or in pipeline/, never in a third command.
    """
    graph = grimp.build_graph("agentci_action")
    commands = {m for m in graph.modules if m.startswith("agentci_action.cli.cmd_")}
    assert commands
    assert {c: sorted(graph.find_modules_directly_imported_by(c) & commands) for c in commands} == {
        c: [] for c in commands
    }


def test_no_class_name_is_used_twice():
    """One concept, one name (DESIGN.md): a class name names one class in the package, private ones included."""
    import ast

    names = Counter(
        node.name
        for path in modules()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.ClassDef)
    )
    assert [name for name, count in names.items() if count > 1] == []


MAX_PARAMETERS = 6  # positional and keyword-only, self and cls aside (issue 42): more, and a parameter object is due

# Functions that keep a longer signature on purpose: each is called with keywords by code outside the package.
LONG_SIGNATURES = {
    "pipeline/python_api.py::run_agent": "the public API's `agentci_action.run_agent` (docs/reference/python-api.md)",
    "engine/evaluate_spec.py::evaluate_spec": "the engine's entry that the docs, examples and benchmarks call",
    "engine/judge/__init__.py::build_judge": "the judge's keyword signature the benchmarks and judge_for call",
}


def _parameters(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    arguments = function.args
    names = [a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)]
    return names[1:] if names[:1] in (["self"], ["cls"]) else names


def test_no_function_takes_more_than_six_parameters():
    """Past six, a caller passes a parameter object (a frozen dataclass, keyword construction) or calls a method."""
    long = {
        f"{path.relative_to(PACKAGE).as_posix()}::{node.name}": len(_parameters(node))
        for path in modules()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and len(_parameters(node)) > MAX_PARAMETERS
    }
    assert sorted(set(long) - set(LONG_SIGNATURES)) == []
    assert sorted(set(LONG_SIGNATURES) - set(long)) == [], "no longer long: drop it from LONG_SIGNATURES"
