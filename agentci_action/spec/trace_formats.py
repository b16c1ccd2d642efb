"""The trace formats by name, each with its adapter's module, in detection order.

So that the CLI can list them without importing the adapters.

Most specific first. OpenInference and the Vercel AI SDK before OpenTelemetry GenAI (their spans may carry
gen_ai.* too); Langfuse after it (Langfuse's own spans carry no gen_ai.*, and the span files of the commoner
formats are then detected without a pass over their spans looking for langfuse.*);
Anthropic before Chat Completions (plain string messages fit both); canonical accepts any object with
`id` or `query`, so it comes last.
"""

ADAPTER_MODULES = {
    "mlflow": "mlflow",
    "litellm": "litellm",
    "openinference": "openinference",
    "vercel-ai": "vercel_ai",
    "otel-genai": "otel_genai",
    "langfuse": "langfuse",
    "openai-agents": "openai_agents",
    "langsmith": "langsmith",
    "openai-responses": "openai_responses",
    "anthropic": "anthropic_messages",
    "openai-chat": "openai_chat",
    "langgraph": "langgraph",
    "canonical": "canonical_json",
}
TRACE_FORMATS = list(ADAPTER_MODULES)
