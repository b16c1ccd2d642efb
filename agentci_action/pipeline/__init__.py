"""The one place that chains the stages.

Run the agent (run/) → read traces (trace/) → evaluate (engine/) → compare with the baseline (compare/), for the edges
(cli/, github/) to report and publish.

Modules: agent_runs (running the agent on a loaded spec, for run, test, save and the Python API) · evaluation (an
`Evaluation` → its `Outcome`: the run and its diff; comparing two versions; merging shards) · judge_wiring (the judge
and embedder an evaluation uses, their caches, progress) · results_files (an `Outcome` read back from a results file) ·
python_api (`run_agent`, `run_spec` of the Python API) · simulated_users (the simulator handed to the run stage, and the
spend cap it shares with the judge) · blocking (the fail-on text, the exit code) · shard (a shard's queries, chosen
before the engine is called) · merge (the shards' results as one run).
"""
