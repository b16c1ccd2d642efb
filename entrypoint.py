"""The action container's entrypoint: the GitHub runner contract lives in agentci_action.github.action.

The release is named before anything else is imported, so the log shows the action at work at once."""

import sys

from agentci_action._version import __version__


def run() -> int:
    print(f"AgentCI {__version__}", flush=True)
    from agentci_action.github.action import main

    return main()


sys.exit(run())
