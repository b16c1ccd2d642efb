"""The one place that chains the stages: run the agent (run/) → read traces (trace/) → evaluate (engine/) → compare
with the baseline (compare/), for the edges (cli/, github/) to report and publish.

Modules: evaluation (an `Evaluation` → its `Outcome`: the run and its diff; comparing two versions; merging shards) ·
python_api (`run_agent`, `run_spec` of the Python API) · blocking (the fail-on text, the exit code).
"""
