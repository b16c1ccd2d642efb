"""The GitHub Actions edge: the action's inputs, event and token become a pipeline call.

Its results become the job summary, outputs, annotations, the sticky comment and check runs; never the command
line edge.
"""
