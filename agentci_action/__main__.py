import sys

from agentci_action.cli.main import main

sys.exit(main())
