"""The Docker action's entry point: everything else lives in agentci_action.action."""

from agentci_action.action import main

if __name__ == "__main__":
    raise SystemExit(main())
