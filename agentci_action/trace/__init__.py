"""The canonical Trace: its model, loading trace files, the adapters for every framework's format, pricing and
token counting."""
