"""The action container's entrypoint: the GitHub runner contract lives in agentci_action.action."""

import sys

from agentci_action.action import main

sys.exit(main())
