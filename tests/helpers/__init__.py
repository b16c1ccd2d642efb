"""What tests share, imported as `from helpers import ...`; tests/conftest.py keeps only fixtures.

Paths, the CLI in process, golden files, act and the containers, the runner's files.
"""

from helpers.cli import JUDGE_VARIABLES, RUNNER_VARIABLES, hermetic_environment, run_cli, run_cli_process
from helpers.containers import (
    ACTION_FILES,
    act_binary,
    action_workspace,
    base_image,
    local_dockerfile,
    missing_engine,
    pinned_base,
    run_act,
)
from helpers.golden import GOLDEN, check_golden
from helpers.paths import ROOT, real_traces_dir, shared_fixture, tau_bench_file
from helpers.runner_files import github_outputs, outside_stop_commands

__all__ = [
    "ACTION_FILES",
    "GOLDEN",
    "JUDGE_VARIABLES",
    "ROOT",
    "RUNNER_VARIABLES",
    "act_binary",
    "action_workspace",
    "base_image",
    "check_golden",
    "github_outputs",
    "hermetic_environment",
    "local_dockerfile",
    "missing_engine",
    "outside_stop_commands",
    "pinned_base",
    "real_traces_dir",
    "run_act",
    "run_cli",
    "run_cli_process",
    "shared_fixture",
    "tau_bench_file",
]
