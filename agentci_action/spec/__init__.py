"""The spec: its pydantic models, its loader and its JSON Schema.

Models forbid extra keys; the loader keeps line marks and resolves includes and tags.
"""
