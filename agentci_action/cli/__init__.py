"""The command line edge: `agentci`'s commands.

Each parses its arguments, builds what it needs, calls the pipeline, prints the report and exits with its code;
never the GitHub edge.
"""
