"""The spec's `runner:` block: how AgentCI runs the agent on one query (see docs/guides/running-the-agent.md).

(No `from __future__ import annotations`: models.py says why.)
"""

import re
import shlex
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, WithJsonSchema, field_validator, model_validator

from agentci_action.spec.replay_modes import ReplayMode
from agentci_action.spec.trace_formats import TRACE_FORMATS

OTEL_NEEDS_COMMAND = (
    "capture: otel needs `command:`: each run's spans are told apart by the OTEL_RESOURCE_ATTRIBUTES of its own "
    "process, which a `python:` function (its worker serves run after run) cannot have (run it as `command: python -m ...`)"
)
PYTHON_TARGET = r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$"

PROVIDERS = ("openai", "anthropic")


def volatile_path(path: str) -> tuple[str, ...]:
    """A volatile JSON path as its steps.

    `messages.*.content` or `$.messages[*].content` → ("messages", "*", "content"); keys separated by dots, list indexes
    as numbers, `*` for any key or index. ValueError when malformed.
    """
    text = path.strip()
    text = text[2:] if text.startswith("$.") else text
    text = re.sub(r"\[(\*|\d+)\]", r".\1", text)
    parts = tuple(text.split("."))
    if not text or any(not part for part in parts):
        raise ValueError(f"volatile path {path!r}: write keys separated by dots, e.g. messages.*.content")
    return parts


class ReplaySpec(BaseModel):
    """`runner.replay`: the agent's model calls are recorded beside the spec and replayed in their place.

    So a run needs no key, spends nothing and answers the same way every time (docs/guides/replay.md).
    """

    model_config = ConfigDict(extra="forbid", defer_build=True)

    mode: Annotated[ReplayMode, WithJsonSchema({"enum": list(ReplayMode), "title": "Mode", "type": "string"})] = Field(
        ReplayMode.REPLAY,
        description="`replay`: every model call is answered from the recordings; a call with none is an error, never a "
        "live call (no key needed: fork PRs work). `record`: every call goes to the provider and the recordings are "
        "rewritten. `record-missing`: recorded calls are replayed, the others go live and are recorded (needs a key). "
        "`agentci run --replay` overrides it.",
    )
    recordings: str = Field(
        "recordings",
        description="Directory of the recordings, relative to the spec file: one JSON file per query and run, "
        "<query id>/run-<n>.json. Commit it.",
    )
    volatile_paths: list[str] = Field(
        default_factory=list,
        description="JSON paths in request bodies whose values change from run to run (an id, a timestamp): left out "
        "of the match and the recording. Keys separated by dots, `*` for any key or list index, e.g. "
        "messages.*.tool_call_id. Built in: user, metadata, prompt_cache_key, safety_identifier.",
    )
    volatile_patterns: list[str] = Field(
        default_factory=list,
        description="Regular expressions (Python syntax) whose matches in any string of a request body are left out "
        "of the match and the recording, e.g. a timestamp inside a tool result.",
    )
    upstreams: dict[Literal["openai", "anthropic"], str] = Field(
        default_factory=dict,
        description="Base URL live calls go to, per provider: an OpenAI-compatible server (vLLM, Ollama, a LiteLLM "
        "proxy) for `openai`. Default: the agent's inherited OPENAI_BASE_URL / ANTHROPIC_BASE_URL, else the "
        "provider's public API.",
    )
    record_headers: list[str] = Field(
        default_factory=list,
        description="Request and response headers kept in the recordings (none of the request's by default; the "
        "response's content type). Keys, Authorization, cookies and organisation ids are never kept.",
    )

    @field_validator("volatile_paths")
    @classmethod
    def _paths_parse(cls, paths: list[str]) -> list[str]:
        for path in paths:
            volatile_path(path)
        return paths

    @field_validator("volatile_patterns")
    @classmethod
    def _patterns_compile(cls, patterns: list[str]) -> list[str]:
        for pattern in patterns:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"volatile pattern {pattern!r} does not compile: {exc}") from None
        return patterns

    @field_validator("upstreams")
    @classmethod
    def _urls(cls, upstreams: dict[str, str]) -> dict[str, str]:
        for provider, url in upstreams.items():
            parts = urlsplit(url)
            if parts.scheme not in ("http", "https") or not parts.hostname:
                raise ValueError(f"upstreams.{provider}: {url!r} is not an http:// or https:// URL")
        return upstreams


class RunnerSpec(BaseModel):
    """Exactly one of `command` (a program run once per query and run) or `python` (a callable run in-process)."""

    model_config = ConfigDict(extra="forbid", defer_build=True)  # validated inside the spec (models.py's _Part)

    command: str | list[str] | None = Field(
        None,
        description="Program and arguments, a string split as a shell would (no shell: write `sh -c '...'` for one) "
        "or a list. It reads the query as JSON on stdin and prints its trace as JSON on stdout (the last JSON "
        "document), or writes it to $AGENTCI_TRACE_FILE.",
    )
    python: str | None = Field(
        None,
        pattern=PYTHON_TARGET,
        description="`module:function` called with the query (and id, run, tags, metadata, and in a conversation "
        "turn, history and session_id, when it takes them), "
        "sync or async, returning a trace. Imported with `cwd` on sys.path.",
    )
    cwd: str | None = Field(None, description="Working directory, relative to the spec file (default: its directory).")
    env: dict[str, str] = Field(
        default_factory=dict,
        description="Added to the inherited environment; the values are never printed (masked as ***).",
    )
    inherit_env: list[str] | None = Field(
        None,
        description="An allow-list of the environment the agent inherits from AgentCI's: only the variables these "
        "names or patterns match (`*` for any characters, e.g. `OTEL_*`); `env:` and the variables AgentCI sets "
        "for a run are added to them. List PATH and HOME when the agent needs them. Default: all of it. The runner's "
        "tokens (GITHUB_TOKEN, GH_TOKEN, ACTIONS_* tokens and URLs) are withheld unless named here exactly or set "
        "in `env:`.",
    )
    timeout_s: float = Field(300.0, gt=0, description="Seconds one run may take; then it is killed and retried.")
    max_cost_usd: float | None = Field(
        None,
        gt=0,
        description="Adaptive runs (`runs: {min, max}`): no further batch starts once the agent's runs so far cost "
        "this much (their traces' cost); the minimum runs always run.",
    )
    workers: int = Field(4, ge=1, le=256, description="Runs at the same time.")
    retries: int = Field(
        2,
        ge=0,
        le=10,
        description="Retries of a run that failed for infrastructure reasons (timeout, exit code 75, a rate-limit or "
        "overloaded error); an agent that crashes is not retried.",
    )
    backoff_s: float = Field(
        1.0, ge=0, description="First wait before a retry; it doubles with each retry (at most 60 s)."
    )
    capture: Literal["output", "otel"] = Field(
        "output",
        description="Where a run's trace comes from: `output` (stdout or $AGENTCI_TRACE_FILE) or `otel` (the "
        "OpenTelemetry spans the agent exports, received by AgentCI on 127.0.0.1; needs `command:`). "
        "See docs/guides/otel-capture.md.",
    )
    trace_format: str | None = Field(
        None, description="The format of the traces the agent returns (default: detected, as for --traces)."
    )
    replay: ReplaySpec | None = Field(
        None,
        description="Record the agent's model calls beside the spec and replay them: runs with no key, no spend and "
        "no flake. AgentCI runs a proxy on 127.0.0.1 and points OPENAI_BASE_URL and ANTHROPIC_BASE_URL at it. See "
        "docs/guides/replay.md.",
    )

    _file: str = PrivateAttr("")
    _lines: dict[str, int] = PrivateAttr(default_factory=dict)

    @field_validator("command")
    @classmethod
    def _program_given(cls, command: str | list[str] | None) -> str | list[str] | None:
        if command is None:
            return None
        try:
            argv = shlex.split(command) if isinstance(command, str) else command
        except ValueError as exc:
            raise ValueError(f"command cannot be split into arguments: {exc}") from None
        if not argv or not argv[0].strip():
            raise ValueError("command is empty; give the program to run, e.g. `python agent.py`")
        return command

    @field_validator("env", mode="before")
    @classmethod
    def _string_values(cls, env: Any) -> Any:
        if isinstance(env, dict):
            for key, value in env.items():
                if not isinstance(value, str):
                    raise ValueError(f"env {key!r}: quote the value, environment variables are strings")
        return env

    @field_validator("inherit_env")
    @classmethod
    def _variable_names(cls, names: list[str] | None) -> list[str] | None:
        for name in names or []:
            if not re.fullmatch(r"[A-Za-z_*][A-Za-z0-9_*]*", name):
                raise ValueError(
                    f"inherit_env {name!r}: a variable name, or a pattern of one with * (letters, digits, _)"
                )
        return names

    @field_validator("trace_format")
    @classmethod
    def _known_format(cls, name: str | None) -> str | None:
        if name is not None and name != "auto" and name not in TRACE_FORMATS:
            raise ValueError(f"unknown trace_format {name!r}; known: auto, {', '.join(TRACE_FORMATS)}")
        return name

    @model_validator(mode="after")
    def _one_kind(self) -> "RunnerSpec":
        if (self.command is None) == (self.python is None):
            raise ValueError("a runner takes exactly one of `command` (a program) or `python` (module:function)")
        if self.capture == "otel" and self.python is not None:
            raise ValueError(OTEL_NEEDS_COMMAND)
        return self

    @property
    def argv(self) -> list[str]:
        """The command as an argument list."""
        if self.command is None:
            return []
        return shlex.split(self.command) if isinstance(self.command, str) else list(self.command)

    def where(self, key: str = "") -> tuple[str, int]:
        """(file, line) of `key` in the runner block, or of the block itself; for errors a user can find."""
        return self._file, self._lines.get(key) or self._lines.get("", 0)
