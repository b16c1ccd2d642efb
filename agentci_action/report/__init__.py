"""Rendering the results for people and for tools; data in, text out.

Console, JSON, JUnit, Prometheus, markdown, HTML and annotations.
"""
