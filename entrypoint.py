"""The action container's entrypoint: the GitHub runner contract lives in agentci_action.github.action.

The release is named before anything else is imported, so the log shows the action at work at once. The runner
passes no arguments (the inputs are INPUT_* variables); `docker run IMAGE --version` (or `--help`) only answers.
"""

import sys

from agentci_action._version import __version__

HELP = (
    "The AgentCI action's image: a GitHub Actions step (uses: agentci/action@v2) reading its inputs from INPUT_*\n"
    "variables, not arguments (inputs and outputs: docs/action.md in agentci/action). The same evaluation on a\n"
    "terminal is the `agentci` command (pip install agentci-action)."
)


def run(argv: list[str]) -> int:
    print(f"AgentCI {__version__}", flush=True)
    if argv in (["--version"], ["-V"]):
        return 0
    if argv in (["--help"], ["-h"]):
        print(HELP)
        return 0
    if argv:
        print(
            f"error: the action's image takes no arguments but --version and --help, not {argv[0]!r}", file=sys.stderr
        )
        return 2
    from agentci_action.github.action import main

    return main()


sys.exit(run(sys.argv[1:]))
