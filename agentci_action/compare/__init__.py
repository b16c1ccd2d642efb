"""The regression-or-noise side of the results: a run against its baseline.

Baselines, the base branch's reference, the diff of two runs and its statistics (significance, distributions,
bootstrap, suite_change), the suite gates and history.
"""
