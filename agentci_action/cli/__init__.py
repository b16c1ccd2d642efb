"""The command line edge: `agentci`'s commands parse their arguments, build what they need and call the pipeline,
then print the report and exit with its code; never the GitHub edge."""
