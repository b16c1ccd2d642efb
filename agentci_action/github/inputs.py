"""The action's inputs as the runner passes them (INPUT_<NAME>, hyphens kept), validated into `ActionInputs`."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from agentci_action._util.errors import InputError, Problem
from agentci_action.engine.results import ShardInfo
from agentci_action.github.comment import COMMENT_MODES
from agentci_action.pipeline.shard import parse_shard
from agentci_action.report import markdown
from agentci_action.spec.names import SPEC_FILE

TRUE, FALSE = ("true", "True", "TRUE"), ("false", "False", "FALSE")
SECRET_INPUTS = ("github-token", "anthropic-api-key", "openai-api-key")
SECRET_VARIABLES = ("GITHUB_TOKEN", "ANTHROPIC_API_KEY", "OPENAI_API_KEY")  # the judge reads its keys there too


TRUE, FALSE = ("true", "True", "TRUE"), ("false", "False", "FALSE")


SECRET_INPUTS = ("github-token", "anthropic-api-key", "openai-api-key")


SECRET_VARIABLES = ("GITHUB_TOKEN", "ANTHROPIC_API_KEY", "OPENAI_API_KEY")  # the judge reads its keys there too


def _split(value: str) -> list[str]:
    """Comma- or newline-separated input → items."""
    return [item.strip() for line in value.splitlines() for item in line.split(",") if item.strip()]


class ActionInputs(BaseModel):
    """The action's inputs (action.yml), as the runner passes them: INPUT_<NAME> with hyphens kept."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    spec: str = SPEC_FILE
    traces: list[str] = Field(default_factory=list)
    baseline: str = Field(
        "",
        description="A saved baseline version; '' = the newest whose precheck passed; 'none' = no baseline; "
        "'base' = as it is at the pull request's (or merge group's) base commit.",
    )
    baseline_traces: list[str] = Field(default_factory=list, alias="baseline-traces")
    trace_format: str | None = Field(None, alias="trace-format")
    tags: list[str] = Field(default_factory=list)
    fail_on: str = Field("correctness,suite", alias="fail-on")
    comment_mode: str = Field("always", alias="comment-mode")
    comment_header: str = Field(markdown.DEFAULT_HEADER, alias="comment-header")
    annotations: bool = True
    check_run: bool = Field(False, alias="check-run")
    github_token: str = Field("", alias="github-token")
    github_api_url: str = Field("https://api.github.com", alias="github-api-url")
    results_path: str = Field("agentci-results.json", alias="results-path")
    html_report: bool = Field(True, alias="html-report")
    history_branch: str = Field(
        "agentci-history",
        alias="history-branch",
        description="The branch holding the runs on the default branch ('' = no history): appended to on pushes to "
        "the default branch, read for the trend on pull requests.",
    )
    workers: int = Field(4, ge=1)
    judge_mode: Literal["auto", "required", "off"] = Field("auto", alias="judge-mode")
    judge_cache: str | None = Field(None, alias="judge-cache")
    sample_ensemble: float | None = Field(None, ge=0.0, le=1.0, alias="sample-ensemble")
    judge_max_cost_usd: float | None = Field(None, ge=0.0, allow_inf_nan=False, alias="judge-max-cost-usd")
    anthropic_api_key: str = Field("", alias="anthropic-api-key", repr=False)
    openai_api_key: str = Field("", alias="openai-api-key", repr=False)
    shard: ShardInfo | None = None
    merge: list[str] = Field(default_factory=list)
    results: str | None = Field(None, description="Publish-only mode: an earlier run's results file.")
    embedding_cache: str | None = Field(None, alias="embedding-cache")

    @field_validator("traces", "baseline_traces", "tags", "merge", mode="before")
    @classmethod
    def _list(cls, value: object) -> object:
        return _split(value) if isinstance(value, str) else value

    @field_validator("annotations", "check_run", "html_report", mode="before")
    @classmethod
    def _boolean(cls, value: object) -> object:
        """YAML 1.2 core booleans, as the Actions toolkit's getBooleanInput accepts."""
        if isinstance(value, str):
            if value.strip() in TRUE:
                return True
            if value.strip() in FALSE:
                return False
            raise ValueError(f"expected true or false, got {value!r}")
        return value

    @property
    def html_path(self) -> str:
        """The HTML report beside the results file: its path with .html for .json (agentci-results.html)."""
        path = Path(self.results_path)
        return str(path.with_suffix(".html") if path.suffix == ".json" else path.with_name(path.name + ".html"))

    @field_validator("comment_mode")
    @classmethod
    def _mode(cls, value: str) -> str:
        if value not in COMMENT_MODES:
            raise ValueError(f"expected one of {', '.join(COMMENT_MODES)}, got {value!r}")
        return value

    @field_validator("trace_format", "judge_cache", "embedding_cache", "results", mode="before")
    @classmethod
    def _optional(cls, value: object) -> object:
        return value or None

    @field_validator("shard", mode="before")
    @classmethod
    def _shard(cls, value: object) -> object:
        return parse_shard(value) if isinstance(value, str) else value

    @model_validator(mode="after")
    def _traces_or_merge(self) -> ActionInputs:
        """Evaluate traces (all queries or one shard), merge shard results, or publish results: exactly one."""
        if self.results and (self.traces or self.merge or self.shard):
            raise ValueError(
                "input 'results' publishes an earlier run: leave inputs 'traces', 'merge' and 'shard' empty"
            )
        if self.results:
            return self
        if self.merge and self.shard:
            raise ValueError("input 'shard' evaluates one shard and input 'merge' combines shards: set one of them")
        if self.merge and self.traces:
            raise ValueError("input 'merge' combines shard results files: leave input 'traces' empty in the merge job")
        if not self.merge and not self.traces:
            raise ValueError("input 'traces' is required (unless input 'merge' is set)")
        return self


def read_inputs(env: Mapping[str, str]) -> ActionInputs:
    """INPUT_* variables → ActionInputs; an empty input means its default; bad values raise InputError naming the input."""
    raw = {
        name[len("INPUT_") :].lower(): value for name, value in env.items() if name.startswith("INPUT_") and value != ""
    }
    try:
        return ActionInputs.model_validate(raw)
    except ValidationError as exc:
        problems = [
            Problem(
                "action inputs",
                0,
                f"input '{err['loc'][0]}': {err['msg']}" if err["loc"] else err["msg"].removeprefix("Value error, "),
            )
            for err in exc.errors()
        ]
        raise InputError(problems) from None


def judge_environment(inputs: ActionInputs, env: Mapping[str, str]) -> dict[str, str]:
    """Where the judge reads its keys: the environment, with the key inputs (when given) taking precedence."""
    keys = {"ANTHROPIC_API_KEY": inputs.anthropic_api_key, "OPENAI_API_KEY": inputs.openai_api_key}
    return {**env, **{name: key for name, key in keys.items() if key}}
