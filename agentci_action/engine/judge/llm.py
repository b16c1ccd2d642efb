"""The LLM judge: one rubric → prompt → cached or fresh verdict(s) → a Check.

For each model it asks (one, or an ensemble's on a sampled share of checks): the verdict cache
first; then the provider, with retries on transient failures; a reply that does not match the
verdict schema is asked once more. Outcomes:
  pass / fail            the verdict (or ensemble vote) against the rubric's threshold
  skip                   no key for a provider and no cached verdict (judge-mode auto), or the spend cap
                         (judge_config.max_cost_usd) was reached before this check's call could start
  error "[INFRA] ..."    retries exhausted, a provider refused the call, or no key under judge-mode required
  error "[JUDGE] ..."    the verdict did not parse twice
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Literal

from agentci_action._util.redaction import redact
from agentci_action._util.text import snippet
from agentci_action.engine.correctness import JudgeRequest
from agentci_action.engine.judge.cache import VerdictCache, cache_key
from agentci_action.engine.judge.prompt import build_prompt
from agentci_action.engine.judge.verdict import (
    VERDICT_DESCRIPTION,
    VERDICT_SCHEMA,
    VERDICT_TOOL,
    Verdict,
    decide,
    parse_verdict,
    threshold_score,
)
from agentci_action.engine.results import Check, Status
from agentci_action.model_access.keys import KEY_VARIABLES
from agentci_action.model_access.providers import PROVIDERS, Provider
from agentci_action.model_access.retries import Attempts, RetryPolicy, call_with_retries
from agentci_action.model_access.spend import SpendCap, spend_cap_for
from agentci_action.model_access.untrusted import Prompt
from agentci_action.spec.models import JudgeConfig, ModelPrice
from agentci_action.trace.canonical import LLMCall
from agentci_action.trace.pricing import price_call

JudgeMode = Literal["auto", "required"]


def in_sample(request: JudgeRequest, fraction: float) -> bool:
    """Whether this check is in the ensemble's deterministic sample: sha256(query id, kind, rule) / 2^64 < fraction."""
    if fraction >= 1:
        return True
    digest = hashlib.sha256(
        "\0".join((request.query_id, request.kind, request.rubric.rule)).encode("utf-8", "surrogatepass")
    ).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < fraction


@dataclass
class Usage:
    requests: int = 0
    cache_hits: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = 0.0

    def add_reply(self, input_tokens: int, output_tokens: int, cost_usd: float | None) -> None:
        """Tokens add up; the cost becomes None (unknown, never a silent zero) once any reply's price is unknown."""
        self.input_tokens += input_tokens
        self.output_tokens += output_tokens
        self.cost_usd = None if cost_usd is None or self.cost_usd is None else self.cost_usd + cost_usd


class _Unavailable(Exception):
    """A verdict could not be had; `status` says whether that is a skip or an error."""

    def __init__(self, status: Status, message: str):
        super().__init__(message)
        self.status = status


@dataclass
class LLMJudge:
    """Implements the engine's Judge protocol. Thread-safe: queries are judged on several workers."""

    config: JudgeConfig
    api_keys: Mapping[str, str]  # provider → key; a missing key means "cached verdicts only"
    cache: VerdictCache = field(default_factory=VerdictCache)
    mode: JudgeMode = "auto"
    sample_ensemble: float | None = None  # None: the ensemble judges every check if enabled, none if not
    max_cost_usd: float | None = None  # a cap given outside the spec (--judge-max-cost-usd): the lower one holds
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    base_urls: Mapping[str, str | None] = field(
        default_factory=dict
    )  # provider → endpoint for models other than config.model
    pricing: Mapping[str, ModelPrice] = field(default_factory=dict)  # the spec's `pricing:`, before the bundled table
    # The spend cap to count against; None: one of its own at the lower of judge_config.max_cost_usd and
    # max_cost_usd. A shared one (spend_cap_for) counts the simulated users' calls too.
    spend: SpendCap | None = None
    _clients: dict[tuple[str, str | None], Provider] = field(default_factory=dict, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)
    _spend: SpendCap = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._spend = self.spend or spend_cap_for(self.config, self.max_cost_usd)

    def models_for(self, request: JudgeRequest) -> list[str]:
        """The models that judge a check: the ensemble's or the main model.

        The ensemble's for a check in the --sample-ensemble share (whether or not the ensemble is enabled), or for every
        check of an enabled ensemble without sampling; otherwise the main model.
        """
        ensemble = self.config.ensemble
        if ensemble and ensemble.models:
            chosen = ensemble.enabled if self.sample_ensemble is None else in_sample(request, self.sample_ensemble)
            if chosen:
                return list(ensemble.models)
        return [self.config.model]

    @property
    def spend_cap(self) -> SpendCap:
        """The cap this judge's calls count against (shared with the simulated users when given as `spend`)."""
        return self._spend

    @property
    def spent(self) -> bool:
        """Whether the spend cap is reached: from now on uncached judge checks skip (adaptive runs stop adding runs)."""
        return self._spend.reached()

    def warnings(self) -> list[str]:
        """Run-level notes about how the judge was asked to run: sampling with no ensemble to sample.

        (A spend cap reached is said by the checks it left unjudged, counted as one reason of the unverified ones.)
        """
        if self.sample_ensemble is not None and not (self.config.ensemble and self.config.ensemble.models):
            return [
                f"--sample-ensemble {self.sample_ensemble:g} has no effect: judge_config.ensemble lists no models, "
                f"so every judge check used {self.config.model} alone"
            ]
        return []

    def evaluate(self, request: JudgeRequest) -> Check:
        rubric = request.rubric
        prompt = build_prompt(request.kind, rubric, request.query, request.answer, request.context)
        models = self.models_for(request)
        usage = Usage()
        data = {
            "rule": rubric.rule,
            "threshold": rubric.threshold,
            "threshold_score": threshold_score(rubric.threshold),
            "models": models,
        }
        try:
            verdicts = [
                (model, *self._verdict(request.kind, model, prompt, usage, models[:i].count(model)))
                for i, model in enumerate(models)
            ]
        except _Unavailable as exc:
            return Check(name=request.kind, status=exc.status, message=str(exc), data={**data, "usage": asdict(usage)})
        decision = decide([verdict for _, verdict, _ in verdicts], rubric.threshold)
        data.update(
            score=decision.score,
            label=decision.label,
            ensemble=len(models) > 1,
            usage=asdict(usage),
            verdicts=[
                {"model": model, **verdict.model_dump(), "cached": cached} for model, verdict, cached in verdicts
            ],
        )
        if len(verdicts) == 1:
            rationale = data["rationale"] = verdicts[0][1].rationale
            how = f"{decision.score}/5 ({decision.label}), needs {data['threshold_score']}; judge: {snippet(rationale, 160)}"
        else:
            how = f"mean {decision.score:g}/5 of {len(models)} judges, majority {decision.label}, needs {data['threshold_score']}"
        message = f"{request.kind} {'passed' if decision.passed else 'failed'} ({snippet(rubric.rule)}): {how}"
        return Check(
            name=request.kind, status=Status.PASS if decision.passed else Status.FAIL, message=message, data=data
        )

    def _verdict(self, kind: str, model: str, prompt: Prompt, usage: Usage, slot: int = 0) -> tuple[Verdict, bool]:
        """(verdict, from cache?) for one model; `slot` numbers repeats of a model in the ensemble; raises _Unavailable."""
        provider_name = self.config.provider_for(model)
        key = cache_key(provider_name, model, self.config.temperature, prompt, slot)
        cached = self.cache.get(key)
        if cached is not None:
            usage.cache_hits += 1
            return cached, True
        provider = self.provider(provider_name, model)
        if provider is None:
            reason = (
                f"its cached verdict was added or changed by this pull request, not read at its base commit, so it is "
                f"not trusted; set {KEY_VARIABLES[provider_name]} to judge it again"
                if self.cache.distrusted(key)
                else f"no {KEY_VARIABLES[provider_name]} is set and no cached verdict matches this answer"
            )
            if self.mode == "required":
                raise _Unavailable(Status.ERROR, f"[INFRA] {kind} could not run (judge-mode required): {reason}")
            raise _Unavailable(Status.SKIP, f"{kind} skipped: {reason}")
        for _ in range(2):  # a reply that does not parse is asked once more
            if not self._spend.admit():
                raise _Unavailable(Status.SKIP, self._spend.reason())
            attempts = Attempts()
            cost: float | None = 0.0  # 0 when the call fails; None when its price is unknown
            try:
                reply = call_with_retries(
                    provider,
                    lambda: provider.structured(
                        model, prompt, self.config.temperature, VERDICT_TOOL, VERDICT_SCHEMA, VERDICT_DESCRIPTION
                    ),
                    self.retry,
                    self.config.max_attempts,
                    attempts,
                )
                call = LLMCall(
                    model=model,
                    provider=provider_name,
                    input_tokens=reply.input_tokens,
                    output_tokens=reply.output_tokens,
                )
                cost = price_call(call, dict(self.pricing))[0]
            except Exception as exc:
                usage.requests += attempts.count
                why = snippet(self._redacted(_describe(exc)), 240)  # redact first: a cut could leave part of a key
                raise _Unavailable(
                    Status.ERROR,
                    f"[INFRA] {kind} got no verdict from {provider_name} ({model}) after {attempts.count} attempt(s): {why}",
                ) from None
            finally:
                self._spend.settle(cost, model)
            usage.requests += attempts.count
            usage.add_reply(reply.input_tokens, reply.output_tokens, cost)
            verdict = parse_verdict(reply.value) if reply.value is not None else None
            if verdict is not None:
                self.cache.put(key, model, verdict)
                return verdict, False
        raise _Unavailable(
            Status.ERROR,
            f"[JUDGE] {kind}: {model} twice answered without a valid verdict, last: {snippet(reply.raw, 120)!r}",
        )

    def _redacted(self, text: str) -> str:
        """`text` with every line of every key replaced by ***.

        Should a provider, a gateway or an HTTP library's error (an invalid header) echo one back.
        """
        return redact(text, self.api_keys.values())

    def provider(self, name: str, model: str) -> Provider | None:
        """The client that serves `model`, one per (provider, endpoint), made on first use; None without a key.

        judge_config.base_url is the endpoint of judge_config.model alone: an ensemble's other models of the
        same provider go to `base_urls[provider]` (build_judge's: OPENAI_BASE_URL / ANTHROPIC_BASE_URL of its
        environment), else the SDK's default, never to a self-hosted server that only the main model lives on.
        """
        key = self.api_keys.get(name)
        if not key:
            return None
        base_url = (
            self.config.base_url if model == self.config.model and self.config.base_url else self.base_urls.get(name)
        )
        with self._lock:
            if (name, base_url) not in self._clients:
                self._clients[name, base_url] = PROVIDERS[name](
                    key, base_url, self.config.timeout_s, self.config.max_output_tokens
                )
            return self._clients[name, base_url]


def _describe(exc: BaseException) -> str:
    """The error's class, HTTP status and message."""
    status = getattr(exc, "status_code", None)
    return f"{type(exc).__name__}" + (f" (HTTP {status})" if status else "") + f": {exc}"
