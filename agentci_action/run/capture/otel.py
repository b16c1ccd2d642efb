"""`capture: otel`: each run's trace from the spans the agent exports, not from its output.

The receiver runs from the first run to the last (and is stopped on every way out: `agentci run` stops its
capture in a `finally`). Each run's command gets the variables of `environment.run_environment`; when it
exits, the run's spans are already here (an SDK exports synchronously when it shuts down at exit), so the
wait is only for requests still being handled, or, when none arrived, `SPAN_WAIT_S` seconds for late ones
before the run is an error naming the likely causes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

from agentci_action.run.capture.agent_output import Capture
from agentci_action.run.capture.environment import run_environment, unusable_settings
from agentci_action.run.capture.receiver import Receiver
from agentci_action.run.capture.run_traces import run_document, unreadable
from agentci_action.run.jobs import Finished, Job, RunFailure
from agentci_action.run.outages import outage_in_spans
from agentci_action.trace.adapters import ADAPTERS, canonical_json
from agentci_action.trace.json_records import Record

SPAN_WAIT_S = 3.0
OUTAGE_WAIT_S = 1.0  # for the spans of a run that failed: they are read only to tell an outage from a crash
SPAN_READERS = [adapter for adapter in ADAPTERS if adapter is not canonical_json]


class OtelCapture(Capture):
    """`inherited` is the environment the agent's commands start from (the process's plus the runner's `env:`)."""

    def __init__(
        self,
        inherited: Mapping[str, str],
        wait_s: float = SPAN_WAIT_S,
        log: Callable[[str], None] | None = None,
    ):
        self.inherited = inherited
        self.wait_s = wait_s
        self.receiver = Receiver(log=log) if log else Receiver()

    def start(self) -> None:
        self.receiver.start()
        self.receiver.log(f"receiving the agent's OpenTelemetry spans on {self.receiver.endpoint}")
        for problem in unusable_settings(self.inherited):
            self.receiver.log(f"no span can arrive: {problem}")

    def stop(self) -> None:
        self.receiver.stop()

    def environment(self, job: Job, trace_file: Path) -> dict[str, str]:
        self.receiver.take(job.key)  # a retried run starts with none of its last attempt's spans
        return {
            **super().environment(job, trace_file),
            **run_environment(
                self.receiver.endpoint, self.receiver.token, job.query.key, job.run, self.inherited, job.turn
            ),
        }

    def records(self, job: Job, finished: Finished) -> list[Record]:
        key = job.key
        if not self.receiver.settle(key, self.wait_s):
            raise RunFailure(self.no_spans())
        document = run_document(self.receiver.take(key), job.query.key)
        records = [Record(document, 1)]
        if not any(adapter.detect(records) for adapter in SPAN_READERS):
            raise RunFailure(unreadable(document))
        return records

    def outage(self, job: Job) -> str | None:
        """The outage the failed run's spans recorded (an SDK's exception on a model call span), if any.

        Its spans are kept for the retry to drop.
        """
        key = job.key
        self.receiver.settle(key, min(self.wait_s, OUTAGE_WAIT_S))
        return outage_in_spans(self.receiver.spans(key))

    def no_spans(self) -> str:
        """Why a run that exited sent no spans, and what to set."""
        causes = [
            "no OTLP exporter (add opentelemetry-exporter-otlp-proto-http and "
            "provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter())): it reads OTEL_EXPORTER_OTLP_ENDPOINT, "
            "which AgentCI sets)",
            "the SDK not flushed on exit (call provider.shutdown() or force_flush() before the process ends, "
            "above all after os._exit or in a worker process)",
            "content capture off, or no instrumentation of the model client (openai-v2 needs "
            "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY, set when unset; OpenInference: unset "
            "OPENINFERENCE_HIDE_*)",
        ]
        if self.receiver.foreign_spans:
            causes.insert(
                0,
                f"{self.receiver.foreign_spans} spans arrived without the resource attribute agentci.query_id: build "
                "the resource with Resource.create(...), which reads OTEL_RESOURCE_ATTRIBUTES, not Resource(...)",
            )
        causes.extend(unusable_settings(self.inherited))
        return f"exited but sent no spans to AgentCI's OTLP receiver within {self.wait_s:g} s; likely: " + "; ".join(
            causes
        )
