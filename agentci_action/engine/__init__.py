"""The evaluation alone: correctness, path and cost of each query's traces.

The checks, and the judge's rubric → prompt → verdict; pure (no SDK, no GitHub, no process: AgentCI's own model
calls go through model_access/).
"""
