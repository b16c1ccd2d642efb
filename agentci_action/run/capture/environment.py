"""The OTEL_* variables that send one run's spans to the receiver, attributed to its query and run.

Added to what the agent inherits:
- `OTEL_EXPORTER_OTLP_ENDPOINT` (base URL: every signal comes here, metrics and logs are discarded) and
  `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (`…/v1/traces`, used as given), both replacing the inherited ones;
- `OTEL_RESOURCE_ATTRIBUTES`: the inherited list, less any `agentci.*` entry, then `agentci.query_id` and
  `agentci.run`, and in a conversation `agentci.turn` (percent-encoded, as the variable's format requires);
- `OTEL_EXPORTER_OTLP_HEADERS` and `OTEL_EXPORTER_OTLP_TRACES_HEADERS` (which the SDK reads instead of the first
  when set): each inherited list, less any `x-agentci-token` entry, then the receiver's token, without which it
  refuses spans;
- only when unset: `OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf` (the receiver speaks OTLP/HTTP; a protocol the
  agent chose is left alone), `OTEL_BSP_SCHEDULE_DELAY=100` ms (spans leave during the run, not only in the
  exit flush), and `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY` (the OTel GenAI
  instrumentations record no messages, and so no answer, by default; SPAN_ONLY puts them on the spans).
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import quote

from agentci_action.run.capture.receiver import QUERY_ID, RUN, TOKEN_HEADER, TURN

DEFAULTS = {
    "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
    "OTEL_BSP_SCHEDULE_DELAY": "100",
    "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "SPAN_ONLY",
}
PROTOCOL_VARIABLES = ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL")


def resource_attributes(inherited: str | None, query_id: str, run: int, turn: int = 0) -> str:
    """`inherited` (key=value,…) without agentci.* entries, then this run's query id and run.

    And its turn, in a conversation.
    """
    kept = [item for item in (inherited or "").split(",") if item.strip() and not _is_ours(item)]
    ours = [f"{QUERY_ID}={quote(query_id, safe='')}", f"{RUN}={run}", *([f"{TURN}={turn}"] if turn else [])]
    return ",".join([*kept, *ours])


def _is_ours(item: str) -> bool:
    return item.split("=", 1)[0].strip().startswith("agentci.")


HEADER_VARIABLES = ("OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS")


def exporter_environment(endpoint: str, token: str, inherited: Mapping[str, str]) -> dict[str, str]:
    """The endpoint and the token header for any process whose spans AgentCI receives (`collect`'s command too)."""
    return {
        "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint,
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": f"{endpoint}/v1/traces",
        **{name: with_token(inherited.get(name), token) for name in HEADER_VARIABLES},
    }


def with_token(inherited: str | None, token: str) -> str:
    """`inherited` headers (key=value,…) without an x-agentci-token entry, then the token's."""
    kept = [item for item in (inherited or "").split(",") if item.strip() and not _is_token(item)]
    return ",".join([*kept, f"{TOKEN_HEADER}={token}"])


def _is_token(item: str) -> bool:
    return item.split("=", 1)[0].strip().lower() == TOKEN_HEADER


def run_environment(
    endpoint: str, token: str, query_id: str, run: int, inherited: Mapping[str, str], turn: int = 0
) -> dict[str, str]:
    """The variables to add to one run's environment (see the module docstring)."""
    added = {name: value for name, value in DEFAULTS.items() if name not in inherited}
    if any(name in inherited for name in PROTOCOL_VARIABLES):
        added.pop("OTEL_EXPORTER_OTLP_PROTOCOL", None)
    return {
        **added,
        **exporter_environment(endpoint, token, inherited),
        "OTEL_RESOURCE_ATTRIBUTES": resource_attributes(inherited.get("OTEL_RESOURCE_ATTRIBUTES"), query_id, run, turn),
    }


def unusable_settings(environ: Mapping[str, str]) -> list[str]:
    """Inherited settings under which no span can reach the receiver, each with what to set instead."""
    found = []
    for name in PROTOCOL_VARIABLES:
        if environ.get(name, "").strip().lower() == "grpc":
            found.append(f"{name}=grpc: the receiver speaks OTLP over HTTP; set http/protobuf or http/json")
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        found.append("OTEL_SDK_DISABLED=true turns the OpenTelemetry SDK off: unset it")
    exporters = environ.get("OTEL_TRACES_EXPORTER", "").strip().lower()
    if exporters and "otlp" not in exporters.split(","):
        found.append(f"OTEL_TRACES_EXPORTER={exporters} exports no OTLP: set otlp (or leave it unset)")
    return found
