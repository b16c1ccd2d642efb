"""The spec's JSON Schema, generated from the models and checked in beside them (a test fails on drift)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentci_action.spec.models import AgentCISpec

SCHEMA_FILE = Path(__file__).with_name("agentci_spec.schema.json")


def spec_json_schema() -> dict[str, Any]:
    schema = AgentCISpec.model_json_schema()
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "title": "AgentCI spec", **schema}


def render_schema() -> str:
    return json.dumps(spec_json_schema(), indent=2, ensure_ascii=False) + "\n"
