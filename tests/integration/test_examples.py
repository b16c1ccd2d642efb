"""Every example runs and keeps its documented outcome, so an example can never rot.

The pytest example, run by pytest in its own processes: tests/e2e/test_example_pytest.py.
"""

import json
import shutil
import subprocess
import sys

import pytest
from helpers import ROOT, run_cli

# example → (exit code, {query id: status})
EXPECTED = {
    "rag": (0, {"install": "pass", "weather-tokyo": "warn", "aws-load-balancer": "pass", "langgraph-state": "pass"}),
    "dev-agent": (
        0,
        {
            "count-functions": "pass",
            "find-todos": "pass",
            "complexity-report": "pass",
            "unused-imports": "warn",
            "dependency-graph": "pass",
            "explain-failure": "pass",
        },
    ),
    # the current run routes login and sync problems to the wrong agent: path warnings, not failures
    "support-router": (
        0,
        {
            **dict.fromkeys(
                [
                    "cancel-subscription",
                    "double-charge",
                    "update-card",
                    "invoice-copy",
                    "upgrade-plan",
                    "refund-annual",
                    "vat-number",
                    "failed-payment",
                    "api-500",
                    "sso-setup",
                    "slow-dashboard",
                    "webhook-missing",
                    "export-csv",
                    "rate-limit",
                    "forgot-password",
                    "change-email",
                    "delete-account",
                    "2fa-lost",
                    "add-teammate",
                    "locked-out",
                    "rename-workspace",
                    "data-request",
                    "meaning-of-life",
                    "poem",
                    "capital-france",
                    "neighbour-cancel",
                    "stock-tip",
                    "homework",
                    "reset-boss-password",
                    "weather",
                ],
                "pass",
            ),
            "login-crash": "warn",
            "mobile-sync": "warn",
        },
    ),
    # a real openai SDK tool-calling agent, recorded against a local fake OpenAI server
    "openai-agent": (
        0,
        {"order-status": "pass", "unpaid-order": "pass", "angry-customer": "pass", "off-topic": "pass"},
    ),
    # conversations, each turn checked (runs/v2-broken.jsonl refunds before it asks: below)
    "support-chat": (0, {"refund-headphones": "pass", "refund-with-order-number": "pass"}),
    # the support-chat agent met by a simulated customer, three runs replayed from the recordings (no key)
    "simulated-customer": (0, {"refund-simulated-customer": "pass"}),
    # traces captured from the agent's OpenTelemetry spans (agentci collect; docs/guides/otel-capture.md)
    "otel-capture": (0, {"order-shipped": "pass", "order-packing": "pass"}),
    # adaptive runs against a 20-run baseline: one query regressed (it fails, and max_regressions), one inconclusive
    # at the maximum (it warns), two unchanged (one drifting off its steps once)
    "repeated-runs": (
        1,
        {"capital-japan": "pass", "population-lagos": "warn", "convert-currency": "fail", "summarise-paper": "warn"},
    ),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_example_outcome(name):
    example = ROOT / "examples" / name
    validated = run_cli("validate", example / "agentci_spec.yaml")
    assert validated.returncode == 0, validated.stderr
    result = run_cli(
        "test", "--spec", example / "agentci_spec.yaml", "--traces", example / "traces", "--format", "json"
    )
    code, statuses = EXPECTED[name]
    assert result.returncode == code, result.stderr
    assert {r["id"]: r["status"] for r in json.loads(result.stdout)["results"]} == statuses


def test_every_example_is_covered():
    assert {p.parent.name for p in (ROOT / "examples").glob("*/agentci_spec.yaml")} == set(EXPECTED)


def test_repeated_runs_tells_a_regression_from_noise_and_says_the_runs_each_took():
    example = ROOT / "examples" / "repeated-runs"
    result = run_cli(
        "test", "--spec", example / "agentci_spec.yaml", "--traces", example / "traces", "--format", "json"
    )
    data = json.loads(result.stdout)
    verdicts = {q["id"]: q["pass_rate"] for q in data["diff"]["queries"]}
    assert {key: (v["verdict"], v["runs_after"], v["runs_before"]) for key, v in verdicts.items()} == {
        "capital-japan": ("unchanged", 10, 20),
        "population-lagos": ("inconclusive", 20, 20),
        "convert-currency": ("regressed", 5, 20),
        "summarise-paper": ("unchanged", 10, 20),
    }
    assert verdicts["population-lagos"]["more_runs"] > 0  # 15 of 20 against 19 of 20: more runs would decide
    assert (data["summary"]["runs"], data["summary"]["max_runs"]) == (45, 80)
    gates = {g["name"]: g["status"] for g in data["gates"]}
    assert gates == {"max_regressions": "fail", "max_pass_rate_drop": "warn"}
    regressed = "regressed: 0 of 5 runs passed vs 18 of 20 in v1 (p = 0.00043, over 4 looks; 0.0017 after Holm"
    junit = run_cli(
        "test", "--spec", example / "agentci_spec.yaml", "--traces", example / "traces", "--format", "junit"
    )
    assert f"verdict against v1: {regressed}" in junit.stdout
    assert 'name="agentci.max_runs" value="80"' in junit.stdout and "warning: pass rate per query" in junit.stdout
    log = run_cli("test", "--spec", example / "agentci_spec.yaml", "--traces", example / "traces", "--format", "github")
    assert (
        "::warning file=examples/repeated-runs/agentci_spec.yaml,line=35,title=AgentCI correctness%3A "
        "population-lagos::against v1: inconclusive: 15 of 20 runs passed vs 19 of 20 in v1" in log.stdout
    )
    assert (
        "::error file=examples/repeated-runs/agentci_spec.yaml,line=41,title=AgentCI correctness%3A convert-currency::"
        "against v1: regressed: 0 of 5 runs passed" in log.stdout
    )
    commands = [line for line in log.stdout.splitlines() if line.startswith("::")]
    for verdict in ("regressed: 0 of 5 runs passed", "inconclusive: 15 of 20 runs passed"):
        assert sum(verdict in line for line in commands) == 1, f"one annotation says {verdict!r}"
    page = run_cli("test", "--spec", example / "agentci_spec.yaml", "--traces", example / "traces", "--format", "html")
    assert f"Pass rate: {regressed}" in page.stdout and "adaptive runs: 45 of 80 at the maximum" in page.stdout


def test_support_router_diff_names_the_routing_regression():
    example = ROOT / "examples" / "support-router"
    result = run_cli("test", "--spec", example / "agentci_spec.yaml", "--traces", example / "traces")
    block = result.stdout.split("CHANGED  login-crash", 1)[1].split("╠", 1)[0]
    assert "routing changed" in block
    assert "Handoffs         routing changed: TechnicalAgent ⇒ AccountAgent" in block  # as docs/examples.md says
    assert "Route before     check_service_status → get_technical_documentation" in block
    assert "Route after      verify_identity → unlock_account" in block


def test_support_chat_diff_names_the_turn_that_refunds_before_asking():
    example = ROOT / "examples" / "support-chat"
    result = run_cli("test", "--spec", "agentci_spec.yaml", "--traces", "runs/v2-broken.jsonl", cwd=example)
    assert result.returncode == 1, result.stderr
    words = " ".join(result.stdout.replace("║", " ").split())
    assert "AgentCI diff · support-chat · v1 → current" in words
    assert "REGRESSION refund-headphones regression, tools changed, output changed" in words
    assert "First diverged turn 1 (agentci_spec.yaml:15): Hi, I want a refund for my headphones." in words
    assert "Turn 1 before PASS · I can help with a refund. What is your order number?" in words
    assert "Turn 1 after FAIL · Order A-0999 (phone case) is refunded: $12.00" in words


@pytest.mark.parametrize("name", ["rag", "support-router"])
def test_judge_checks_run_offline_from_the_shipped_reference_verdicts(name):
    example = ROOT / "examples" / name
    result = run_cli(
        "test", "--spec", example / "agentci_spec.yaml", "--traces", example / "traces", "--format", "json"
    )
    report = json.loads(result.stdout)
    judged = [
        c
        for r in report["results"]
        for c in r["correctness"]["checks"]
        if c["name"] in ("llm_judge", "safety_check", "hallucination_check")
    ]
    assert judged and all(c["status"] == "pass" for c in judged), [c["message"] for c in judged]
    assert all(
        v["cached"] and v["rationale"].startswith("Reference verdict written by the AgentCI maintainers")
        for c in judged
        for v in c["data"]["verdicts"]
    )
    assert report["summary"]["judge"]["requests"] == 0 and report["summary"]["skipped_checks"] == 0


@pytest.mark.parametrize("run, code, weather", [("v1-broken", 1, "fail"), ("v2-fixed", 0, "pass")])
def test_the_rag_story_is_judged_offline(run, code, weather):
    example = ROOT / "examples" / "rag"
    result = run_cli(
        "test",
        "--spec",
        example / "agentci_spec.yaml",
        "--traces",
        example / "runs" / f"{run}.jsonl",
        "--format",
        "json",
    )
    report = json.loads(result.stdout)
    assert result.returncode == code, result.stderr
    assert {r["id"]: r["status"] for r in report["results"]}["weather-tokyo"] == weather
    assert report["summary"]["judge"]["requests"] == 0
    judged = [
        c
        for r in report["results"]
        for c in r["correctness"]["checks"]
        if c["name"] in ("llm_judge", "hallucination_check")
    ]
    unjudged = [c["message"] for c in judged if c["status"] == "skip" and "no ANTHROPIC_API_KEY" in c["message"]]
    assert len(judged) == 3 and not unjudged


def test_the_baselines_docs_commands_run_as_written(tmp_path):
    docs = (ROOT / "docs" / "guides" / "baselines.md").read_text()
    block = docs.split("```bash\n", 1)[1].split("```", 1)[0]
    shutil.copytree(ROOT / "examples" / "rag", tmp_path / "examples" / "rag")
    commands = [line.split() for line in block.splitlines() if line.startswith("agentci ")]
    assert [c[1] for c in commands] == ["save", "baselines", "diff"]
    for command in commands:
        done = run_cli(*command[1:], cwd=tmp_path)
        assert done.returncode == 0, (command, done.stderr)
    saved = json.loads((tmp_path / "examples" / "rag" / "baselines" / "v2-fixed.json").read_text())
    assert saved["metadata"]["precheck_passed"] is True
    required = run_cli(
        *commands[0][1:], "--judge-mode", "required", cwd=tmp_path
    )  # every precheck judge check had its verdict
    assert required.returncode == 0, required.stderr


def documented_examples() -> dict[str, str]:
    """docs/examples.md: example name → its section's text."""
    page = (ROOT / "docs" / "examples.md").read_text()
    return {part.split("`", 1)[0]: part for part in page.split("\n## `examples/")[1:]}


def test_the_examples_docs_have_a_section_per_example_stating_its_exit_code():
    sections = documented_examples()
    assert set(sections) == set(EXPECTED) | {"pytest"}
    for name, (code, _) in EXPECTED.items():
        command = f"agentci test --spec examples/{name}/agentci_spec.yaml --traces examples/{name}/traces"
        assert command in sections[name] and f"Exit code {code}:" in sections[name], name


@pytest.mark.parametrize(
    "line", [line for text in documented_examples().values() for line in text.splitlines() if "  # exit " in line]
)
def test_the_documented_example_commands_exit_as_stated(line):
    command, expected = line.split("  # exit ")
    assert command.split()[0] == "agentci"
    done = run_cli(*command.split()[1:])
    assert done.returncode == int(expected), done.stdout + done.stderr


def test_shipped_verdict_caches_match_the_reference_verdicts_and_prompts():
    result = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "reference_verdicts.py"), "--check"], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
