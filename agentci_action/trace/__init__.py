"""The canonical Trace: its model and loading trace files.

The adapters for every framework's format, pricing and token counting.
"""
