"""Rendering the results for people and for tools: console, JSON, JUnit, Prometheus, markdown, HTML and
annotations; data in, text out."""
