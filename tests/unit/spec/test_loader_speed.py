"""The spec loader's fast path.

libyaml's parser gives the same specs and line numbers as the pure-Python one, syntax errors keep the pure parser's
wording, `agentci test` loads the spec once, and the CLI's light commands do not import the engine.
"""

from __future__ import annotations

import ast
import subprocess
import sys

import pytest
import yaml
from helpers import ROOT, hermetic_environment, run_cli

from agentci_action.spec import loader
from agentci_action.spec.loader import load_spec

SPECS = [*sorted(ROOT.glob("examples/*/agentci_spec.yaml")), ROOT / "agentci_action/templates/agentci_spec.yaml"]


def _loaded(path):
    spec = load_spec(path)
    return spec.model_dump(mode="json"), [(q.key, q.file, q.line) for q in spec.queries]


@pytest.mark.skipif(not hasattr(yaml, "CSafeLoader"), reason="PyYAML was built without libyaml")
def test_libyaml_is_the_parser_when_available():
    assert loader._FAST_LOADER is yaml.CSafeLoader


@pytest.mark.parametrize("path", SPECS, ids=lambda p: p.parent.name)
def test_fast_and_pure_parsers_load_the_same_spec_at_the_same_lines(path, monkeypatch):
    fast = _loaded(path)
    monkeypatch.setattr(loader, "_FAST_LOADER", yaml.SafeLoader)
    assert _loaded(path) == fast


def test_fast_and_pure_parsers_agree_on_anchors_merge_keys_includes_and_problems(write, monkeypatch):
    write("shared/judge.yaml", "expected_in_answer: [refund]\n")
    spec = write(
        "s.yaml",
        """
        agent: demo
        defaults: &base
          tags: [smoke]
        queries:
          - query: first
            <<: *base
            correctness: !include shared/judge.yaml
          - id: second
            query: "second"
            tags: [x]
            path: {max_tool_calls: 1, max_tool_calls: 2}
            cost: {max_latency_ms: fast}
        """,
    )

    def outcome():
        try:
            return _loaded(spec)
        except loader.SpecError as exc:
            return [str(p) for p in exc.problems]

    fast = outcome()
    assert any(":11: duplicate key 'max_tool_calls'" in p for p in fast), fast
    monkeypatch.setattr(loader, "_FAST_LOADER", yaml.SafeLoader)
    assert outcome() == fast


@pytest.mark.skipif(not hasattr(yaml, "CSafeLoader"), reason="PyYAML was built without libyaml")
def test_a_syntax_error_is_worded_by_the_pure_parser(write, monkeypatch):
    spec = write("s.yaml", "agent: demo\nqueries:\n  - query: [q\n")
    calls = []
    real_compose, real_parse = yaml.compose, yaml.parse

    def compose(text, Loader):
        calls.append(("compose", Loader))
        return real_compose(text, Loader=Loader)

    def parse(text, Loader):
        calls.append(("parse", Loader))
        return real_parse(text, Loader=Loader)

    monkeypatch.setattr(yaml, "compose", compose)
    monkeypatch.setattr(yaml, "parse", parse)
    with pytest.raises(loader.SpecError) as caught:
        load_spec(spec)
    # the pure parser's events only, never its composer (which recurses once per level of nesting)
    assert calls == [("compose", yaml.CSafeLoader), ("parse", yaml.SafeLoader)]
    (problem,) = caught.value.problems
    assert (problem.line, problem.message) == (
        3,
        "YAML syntax error: expected ',' or ']', but got '<stream end>' while parsing a flow sequence that starts here",
    )


def test_agentci_test_parses_the_spec_once(write, write_traces, monkeypatch):
    from agentci_action.cli.main import main

    spec = write(
        "s.yaml",
        "agent: demo\nqueries:\n  - id: a\n    query: a\n    tags: [smoke]\n  - id: b\n    query: b\n",
    )
    traces = write_traces("t.jsonl", [{"id": "a", "final_answer": "x"}, {"id": "b", "final_answer": "y"}])
    parsed = []
    real_compose = loader._compose
    monkeypatch.setattr(loader, "_compose", lambda text, file: parsed.append(file) or real_compose(text, file))
    assert main(["test", "--spec", str(spec), "--traces", str(traces), "--tags", "smoke", "--format", "json"]) == 0
    assert parsed == [str(spec)]


def test_loading_a_spec_leaves_no_garbage_cycle():
    """The loader pauses the garbage collector, which then freezes what survived.

    A cycle left by the load (the YAML parser's reference to itself held every node of the document) would never be
    freed.
    """
    import gc

    load_spec(SPECS[0])  # the first load fills the models' and the parser's caches
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        load_spec(SPECS[0])
        assert gc.collect() == 0
    finally:
        if was_enabled:
            gc.enable()


@pytest.mark.parametrize(
    "argv", [["--help"], ["validate", str(ROOT / "examples/support-router/agentci_spec.yaml")]], ids=" ".join
)
def test_light_commands_import_neither_the_engine_nor_the_adapters(argv):
    probe = (
        "import sys\nfrom agentci_action.cli.main import main\n"
        "try:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
        "print('MODULES', sorted(m for m in sys.modules if m.startswith(('agentci_action.engine', "
        "'agentci_action.trace.adapters', 'agentci_action.report', 'jsonschema', 'genai_prices', 'rapidfuzz'))))"
    )
    out = subprocess.run([sys.executable, "-c", probe, *argv], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.splitlines()[-1] == "MODULES []", out.stdout


# What `agentci validate` of a valid spec may import beyond the standard library: the spec's own modules, PyYAML and
# pydantic with its dependencies. A new import here is start-up time on every validate (the goal: 0.15 s in all).
COMMANDS = (
    "baselines",
    "collect",
    "diff",
    "goldens",
    "history",
    "init",
    "merge",
    "queries",
    "record",
    "run",
    "save",
    "schema",
    "test",
    "validate",
)
VALIDATE_MODULES = {
    "agentci_action",
    "agentci_action._version",
    "agentci_action._util",
    "agentci_action._util.errors",
    "agentci_action._util.field_errors",
    "agentci_action._util.gcpause",
    "agentci_action._util.limits",
    "agentci_action._util.output",
    "agentci_action.cli",
    "agentci_action.cli.main",
    "agentci_action.cli._arguments",
    "agentci_action.cli._reporting",
    # every command's module, for its flags (each imports the stages it runs only when it runs)
    *(f"agentci_action.cli.cmd_{name}" for name in COMMANDS),
    "agentci_action.spec",
    "agentci_action.spec.advice",  # validate's warnings (a simulated user that runs once)
    "agentci_action.spec.check_models",
    "agentci_action.spec.loader",
    "agentci_action.spec.models",
    "agentci_action.spec.names",
    "agentci_action.spec.pattern_syntax",
    "agentci_action.spec.replay_modes",
    "agentci_action.spec.rubric_templates",
    "agentci_action.spec.runner_config",
    "agentci_action.spec.trace_formats",
}
VALIDATE_PACKAGES = {"yaml", "pydantic", "pydantic_core", "annotated_types", "typing_extensions", "typing_inspection"}
CYTHON_AND_SYSCONFIG = ("_cython_", "cython_runtime", "_sysconfigdata_")  # PyYAML's C loader's runtime; sysconfig
# Modules that only some specs need: difflib words an unknown key, json reads tool arguments,
# pickle copies a YAML set, regex checks a pattern outside spec/pattern_syntax.py.
VALIDATE_SPARES = {"difflib", "json", "pickle", "regex"}


def test_validate_imports_only_the_spec_modules_and_freezes_them(write):
    """Not `regex` either: re's verdict on these patterns is regex's (spec/pattern_syntax.py)."""
    spec = write(
        "s.yaml",
        """
        agent: demo
        queries:
          - id: a
            query: a
            tags: [smoke]
            correctness: {regex_match: '(?i)\\b42\\b'}
            path:
              expected_tool_calls: [{name: search, argument_rules: {q: {regex: '^[a-z]{2,8}$'}}}]
        """,
    )
    probe = (
        "import gc, sys\nbefore = set(sys.modules)\n"
        "from agentci_action.cli.main import main\nassert main(sys.argv[1:]) == 0\n"
        "print(repr([sorted(set(sys.modules) - before), gc.isenabled(), gc.get_freeze_count()]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe, "validate", str(spec)], capture_output=True, text=True, cwd=ROOT, check=True
    )
    imported, collecting, frozen = ast.literal_eval(out.stdout.splitlines()[-1])
    ours = {m for m in imported if m.split(".")[0] == "agentci_action"}
    assert ours == VALIDATE_MODULES
    others = {m.split(".")[0] for m in imported} - {"agentci_action"} - set(sys.stdlib_module_names)
    others = {m for m in others if not m.startswith(CYTHON_AND_SYSCONFIG)}
    assert others == VALIDATE_PACKAGES
    assert not VALIDATE_SPARES & set(imported)
    # the imports' objects are frozen out of every later collection (and the last one, at exit); collection is back on
    assert collecting and frozen > 10_000


def test_the_cli_lists_every_adapter_in_detection_order():
    from agentci_action.spec.trace_formats import TRACE_FORMATS
    from agentci_action.trace.adapters import ADAPTERS

    assert [adapter.NAME for adapter in ADAPTERS] == TRACE_FORMATS
    assert all(name in run_cli("test", "--help").stdout for name in TRACE_FORMATS)


def test_validate_builds_the_spec_without_pydantic_plugins_and_leaves_them_to_later_models(write, tmp_path):
    """A pydantic plugin installed beside AgentCI sees no spec model in `validate`, and every model elsewhere.

    A distribution with a `pydantic` entry point, as logfire's is. The variable that turns plugins off is as it was
    afterwards, and a model the same process builds later (a user's) gets the plugin; `agentci test` keeps plugins for
    every model.
    """
    site = tmp_path / "site"
    (site / "probe_plugin-1.0.dist-info").mkdir(parents=True)
    (site / "probe_plugin-1.0.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: probe-plugin\nVersion: 1.0\n"
    )
    (site / "probe_plugin-1.0.dist-info" / "entry_points.txt").write_text("[pydantic]\nprobe = probe_plugin:plugin\n")
    (site / "probe_plugin.py").write_text(
        "import sys\n"
        "class Plugin:\n"
        "    def new_schema_validator(self, schema, schema_type, path, kind, config, settings):\n"
        "        print('PLUGIN SEES', path.name, file=sys.stderr)\n"
        "        return None, None, None\n"
        "plugin = Plugin()\n"
    )
    spec = write("s.yaml", "agent: demo\nqueries:\n  - id: a\n    query: a\n")
    traces = write("t.jsonl", '{"id": "a", "final_answer": "x"}\n')
    probe = (
        "import os, sys\nfrom agentci_action.cli.main import main\n"
        "code = main(sys.argv[1:])\n"
        "print('VARIABLE', os.environ.get('PYDANTIC_DISABLE_PLUGINS'), file=sys.stderr)\n"
        "from pydantic import BaseModel\nclass UserModel(BaseModel):\n    x: int = 0\n"
        "sys.exit(code)\n"
    )

    def seen(*argv: str, **variables: str) -> tuple[set[str], str]:
        env = {**hermetic_environment(**variables), "PYTHONPATH": str(site)}
        done = subprocess.run([sys.executable, "-c", probe, *argv], capture_output=True, text=True, cwd=ROOT, env=env)
        assert done.returncode == 0, done.stderr
        lines = done.stderr.splitlines()
        variable = next(line.removeprefix("VARIABLE ") for line in lines if line.startswith("VARIABLE "))
        return {line.removeprefix("PLUGIN SEES ") for line in lines if line.startswith("PLUGIN SEES ")}, variable

    assert seen("validate", str(spec)) == ({"UserModel"}, "None")
    assert seen("validate", str(spec), PYDANTIC_DISABLE_PLUGINS="probe") == (set(), "probe")  # by name, as it was
    models, _ = seen("test", "--spec", str(spec), "--traces", str(traces), "--baseline", "none", "--format", "json")
    assert {"AgentCISpec", "UserModel"} <= models


def test_a_yaml_set_which_marshal_cannot_copy_is_copied_by_pickle_and_reported(write):
    spec = write("s.yaml", "agent: demo\nqueries:\n  - id: a\n    query: a\n    tags: !!set {smoke}\n")
    with pytest.raises(loader.SpecError) as caught:
        load_spec(spec)
    assert [str(p) for p in caught.value.problems] == [f"{spec}:5: queries[0].tags: Input should be a valid list"]


def test_a_spec_with_more_brackets_than_the_nesting_bound_is_measured_then_loaded(write, monkeypatch):
    """Past loader._COMPOSABLE_DEPTH's bound (here lowered), the depth is read from the events first.

    A sound spec loads as it would have, and the events are walked once.
    """
    queries = "".join(
        f"  - {{id: q{i}, query: 'Q {i}?', tags: [a, b], correctness: {{exact_match: '{i}'}}}}\n" for i in range(40)
    )
    spec = write("s.yaml", "agent: demo\nqueries:\n" + queries)
    expected = _loaded(spec)
    walked = []
    real = loader._check_events

    def measured(text, file, parser):
        walked.append(file)
        return real(text, file, parser)

    monkeypatch.setattr(loader, "_COMPOSABLE_DEPTH", {loader._FAST_LOADER: 100})
    monkeypatch.setattr(loader, "_check_events", measured)
    assert loader._nesting_bound(spec.read_text()) > 100
    assert _loaded(spec) == expected and walked == [str(spec)]
