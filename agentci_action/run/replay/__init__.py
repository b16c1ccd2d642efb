"""Record and replay of the agent's model calls (runner.replay).

A proxy on 127.0.0.1 the agent's SDKs use as their provider, which answers from recordings beside the spec or forwards
to the provider and records.

Modules: request_keys (what a call is matched on; volatile parts) · sse_frames (streams as ordered frames) ·
recordings (the JSON file of one run's calls) · upstream (the provider behind the proxy) · wire_usage (what a live
call was billed) · misses (why a call has no recorded answer) · replay_session (one run's recording, answers and
figures) · model_proxy (the HTTP server) · replay_run (the proxy for a whole `agentci run`).
"""
