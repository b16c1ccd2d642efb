"""AgentCI's own model calls, for the judge, the simulated users and embeddings.

The providers' SDK clients with structured output, retries, keys, the spend cap, the JSON caches' store and the
fencing of untrusted text.
"""
