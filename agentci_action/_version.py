"""The release of AgentCI: the one place it is written (pyproject reads it; results, footers and --version show it)."""

__version__ = "2.0.0"
