"""The spec: its pydantic models (extra keys forbidden), the loader (line marks, includes, tags) and the JSON
Schema."""
