"""Private helpers below every stage.

Errors, output files, text made inert, limits, time-bounded regexes, redaction, the GitHub client's setup.
"""
