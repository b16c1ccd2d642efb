"""Private helpers below every stage: errors, output files, text made inert, limits, time-bounded regexes,
redaction, the GitHub client's setup."""
