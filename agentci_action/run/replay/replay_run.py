"""Record and replay for a whole `agentci run`.

The proxy from the first run to the last, a session per attempt, the variables that point each run's SDKs at its route,
and each run's figures.

Each run's recording is `<recordings>/<query id>/run-<n>.json` beside the spec. Before the first run, every
recording the mode reads is read, so a broken one is an error at its file and line before anything runs. A command
gets its own route per attempt; a `python:` runner's worker process keeps one route for its life (a client its module
made at import uses it too) and the route is bound to each run the worker serves.

The variables a run gets: OPENAI_BASE_URL and OPENAI_API_BASE (the openai SDKs, LangChain, LiteLLM),
ANTHROPIC_BASE_URL, ANTHROPIC_API_BASE and ANTHROPIC_API_URL (the anthropic SDKs, LiteLLM, LangChain, which
prefers the last), each the run's route; under `replay`, OPENAI_API_KEY and
ANTHROPIC_API_KEY are set to a placeholder when the agent inherits none (the SDKs refuse to start without one; no call goes out).

The values of the agent's variables whose names say they are secret (KEY, TOKEN, ..., as run/secrets.py decides),
and the placeholder key, are secrets of every call (request_keys): a key an agent puts in a prompt is neither matched
on nor recorded, in the request or in an answer that repeats it.

Each model call its trace lists without its request gets the input breakdown of the request it made, as the proxy saw
it, and a trace that lists no model calls gets the proxy's (recorded_requests.py). A run's figures go into its trace's metadata under `agentci_replay` (summed over its attempts): calls replayed,
calls that went live, what those cost (priced from the usage the provider reported, as the trace is priced: spec
prices, then the price table; None when a live call cannot be priced), the calls that missed and failed the run,
and why those that missed went live (record-missing). A miss under
`replay` fails the run with its explanation, whatever the agent made of the error it got.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentci_action._util.output import LinkedPath, OutputError
from agentci_action._util.text import model_calls_phrase
from agentci_action.run.jobs import Job, RunFailure
from agentci_action.run.replay import recordings
from agentci_action.run.replay.model_proxy import ReplayProxy
from agentci_action.run.replay.recorded_requests import with_proxy_calls, with_recorded_requests
from agentci_action.run.replay.recording_set import RecordingSet
from agentci_action.run.replay.recordings import RecordedCall, Recording
from agentci_action.run.replay.replay_session import Figures, ReplaySession
from agentci_action.run.replay.request_keys import Volatility
from agentci_action.run.replay.wire_usage import WireUsage
from agentci_action.run.secrets import SECRET_NAME
from agentci_action.spec.models import AgentCISpec, ModelPrice
from agentci_action.spec.replay_modes import REPLAY_OFF, ReplayMode, ReplayOverride
from agentci_action.spec.runner_config import ReplaySpec, RunnerSpec
from agentci_action.trace.canonical import REPLAY_KEY, LLMCall, Trace
from agentci_action.trace.pricing import price_call

DEFAULT_UPSTREAMS = {"openai": "https://api.openai.com/v1", "anthropic": "https://api.anthropic.com"}
BASE_URL_VARIABLES = {
    "openai": ("OPENAI_BASE_URL", "OPENAI_API_BASE"),
    "anthropic": ("ANTHROPIC_BASE_URL", "ANTHROPIC_API_BASE", "ANTHROPIC_API_URL"),
}
KEY_VARIABLES = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}
PLACEHOLDER_KEY = "agentci-replay-needs-no-key"
MAX_MISSES_KEPT = 5  # explanations kept per run in its trace; the rest are counted


def replay_for(
    runner: RunnerSpec, override: ReplayOverride, spec: AgentCISpec, inherited: Mapping[str, str]
) -> ReplayRun | None:
    """The run's record and replay.

    The runner's `replay:` with `override` (a mode, `--replay`) as its mode, or the defaults when only `override` asks
    for it; None without either, or with `off`.
    """
    if override == REPLAY_OFF or (runner.replay is None and override is None):
        return None
    replay = runner.replay or ReplaySpec()
    mode = replay.mode if override is None else ReplayMode(override)
    return ReplayRun(replay, mode, Path(spec.path).parent, inherited, spec.pricing, spec_file=spec.path or None)


def upstreams(replay: ReplaySpec, inherited: Mapping[str, str]) -> dict[str, str]:
    """Where live calls go, per provider.

    The spec's `upstreams`, else the base URL the agent inherited (OPENAI_BASE_URL, then OPENAI_API_BASE; likewise for
    Anthropic), else the provider's public API.
    """
    declared = {str(provider): url for provider, url in replay.upstreams.items()}
    return {
        provider: declared.get(provider)
        or next((inherited[v] for v in BASE_URL_VARIABLES[provider] if inherited.get(v)), default)
        for provider, default in DEFAULT_UPSTREAMS.items()
    }


@dataclass
class RunFigures:
    """A run's model calls over its attempts (see the module docstring)."""

    replayed: int = 0
    live: int = 0
    paid_usd: float | None = 0.0
    missed: int = 0  # calls with no recorded answer that failed the run
    went_live: list[str] = field(default_factory=list)  # why calls missed and were answered live (a few)
    calls: list[RecordedCall] = field(default_factory=list)  # the last attempt's calls: the trace's

    def add(self, figures: Figures, pricing: dict[str, ModelPrice]) -> None:
        self.calls = figures.calls
        self.replayed += figures.replayed
        self.live += figures.live
        for usage in figures.live_usage:
            cost = _price(usage, pricing)
            self.paid_usd = None if cost is None or self.paid_usd is None else self.paid_usd + cost
        self.missed += sum(not miss.went_live for miss in figures.misses)
        live = [miss.explanation for miss in figures.misses if miss.went_live]
        self.went_live.extend(live[: max(0, MAX_MISSES_KEPT - len(self.went_live))])

    def phrase(self) -> str:
        """The figures as the run's summary says them: "model calls 12 replayed, 1 live, $0.0021 paid"."""
        return "model calls " + model_calls_phrase(self.replayed, self.live, self.paid_usd, self.missed, ", ")

    def as_metadata(self, mode: ReplayMode) -> dict[str, Any]:
        return {
            "mode": mode,
            "replayed": self.replayed,
            "live": self.live,
            "paid_usd": self.paid_usd,
            "missed": self.missed,
            "went_live": self.went_live,
        }


def _price(usage: WireUsage, pricing: dict[str, ModelPrice]) -> float | None:
    """What a live call cost, from the usage its answer reported.

    0 for an answer that names no model (a model list: not billed by the token); None when unknown (a model but no usage
    reported, or no price for it).
    """
    if not usage.model:
        return 0.0
    if not usage.known:
        return None
    call = LLMCall(
        model=usage.model,
        input_tokens=usage.input_tokens or 0,
        output_tokens=usage.output_tokens or 0,
        cached_input_tokens=usage.cached_input_tokens,
        cache_write_input_tokens=usage.cache_write_input_tokens,
    )
    return price_call(call, pricing)[0]


class ReplayRun:
    """Call `check` and `start` before the first run and `stop` after the last (also on an interruption)."""

    def __init__(
        self,
        replay: ReplaySpec,
        mode: ReplayMode,
        spec_dir: Path,
        inherited: Mapping[str, str],
        pricing: dict[str, ModelPrice] | None = None,
        spec_file: str | None = None,
    ):
        self.mode, self.inherited, self.pricing = mode, inherited, pricing or {}
        self.directory = spec_dir / replay.recordings
        self.fresh = RecordingSet(self.directory) if mode == ReplayMode.RECORD else None  # recording_set.py
        self.remedy = recordings.record_command(spec_file)  # printed with every miss: it must run as printed
        secrets = [v for k, v in inherited.items() if SECRET_NAME.search(k)]
        self.volatility = Volatility.declared(
            replay.volatile_paths, replay.volatile_patterns, [*secrets, PLACEHOLDER_KEY]
        )
        self.proxy = ReplayProxy(upstreams(replay, inherited), record_headers=replay.record_headers)
        self._recordings: dict[tuple[str, int], Recording | None] = {}
        self._sessions: dict[tuple[str, int], ReplaySession] = {}
        self._figures: dict[tuple[str, int], RunFigures] = {}
        self._routes: dict[int, str] = {}  # a command's attempt's route, by id() of its session
        self._turns: dict[tuple[str, int], ReplaySession] = {}  # a conversation's last finished turn, by run
        self._lock = threading.Lock()

    def path(self, query_id: str, run: int) -> Path:
        """The run's recording file: under `record`, in the query's new set (recording_set.py)."""
        name = f"run-{run}.json"
        return self.fresh.path(query_id, name) if self.fresh else self.directory / query_id / name

    def check(self, jobs: list[Job], kept: Iterable[tuple[str, int]] = ()) -> None:
        """Read every recording the runs will replay; under `record`, begin the queries' new sets (`kept`: resumed runs).

        RecordingError at the file and line of a broken one, or at a file where a folder of recordings belongs;
        LinkedPath for a linked folder under `record`.
        """
        recordings.check_folders(self.directory, {job.query.key for job in jobs}, self.remedy)
        if self.fresh is not None:
            self.fresh.begin((job.query.key for job in jobs), kept)
            return
        for job in jobs:
            path = self.path(job.query.key, job.run)
            self._recordings[(job.query.key, job.run)] = recordings.read(path) if path.is_file() else None

    def start(self) -> None:
        self.proxy.start()

    def stop(self, *, completed: bool = False) -> None:
        """Stop serving; under `record`, put the new sets in place when every run `completed`, else discard them."""
        self.proxy.stop()
        if self.fresh is not None:
            if completed:
                self.fresh.commit()
            else:
                self.fresh.discard()

    # -- a run's attempts -----------------------------------------------------------------------------------------
    def open(self, job: Job) -> ReplaySession:
        """A fresh session for one attempt of `job`.

        A retried attempt starts again from the recording's start, or a conversation's turn from where its previous turn
        ended.
        """
        key = (job.query.key, job.run)
        with self._lock:
            before = self._turns.get(key) if job.turn > 1 else None
        session = (
            before.next_turn()
            if before is not None
            else ReplaySession(
                query=job.query.key,
                run=job.run,
                path=self.path(*key),
                mode=self.mode,
                volatility=self.volatility,
                recording=self._recordings.get(key),
            )
        )
        with self._lock:
            self._sessions[key] = session
        return session

    def attempts(self, attempt: Callable[[Job], Trace], in_process: str | None = None) -> Callable[[Job], Trace]:
        """`attempt` with a session of its own around each call.

        A caller's callable running in this process is served on the route `in_process`, bound to each run in turn. A
        miss under `replay` fails the attempt with its explanation, in place of whatever failure it caused; an
        interruption writes nothing. A trace that reports no model calls gets the attempt's (with_proxy_calls).
        """

        def replayed(job: Job) -> Trace:
            session = self.open(job)
            if in_process is not None:
                self.proxy.bind(in_process, session)
            try:
                trace = attempt(job)
            except RunFailure:
                self.close(session)
                raise
            finally:
                if in_process is not None:
                    self.proxy.bind(in_process, None)
            self.close(session)
            if job.turn:  # the conversation's next turn goes on from this one
                with self._lock:
                    self._turns[(job.query.key, job.run)] = session
            return with_proxy_calls(trace, session.figures.own, self.pricing)

        return replayed

    def environment(self, job: Job) -> dict[str, str]:
        """The variables that point a command's SDKs at its attempt's own route (made by `open`)."""
        with self._lock:
            session = self._sessions[(job.query.key, job.run)]
        token = self.proxy.route(session)
        with self._lock:
            self._routes[id(session)] = token
        return self._variables(token)

    def worker_environment(self) -> tuple[str, dict[str, str]]:
        """A route for a worker process (bound to each run it serves) and the variables that point it there."""
        token = self.proxy.route()
        return token, self._variables(token)

    def bind(self, token: str, job: Job | None) -> None:
        """Point a worker's route at the session of the run it serves now (None: at nothing)."""
        with self._lock:
            session = self._sessions.get((job.query.key, job.run)) if job else None
        self.proxy.bind(token, session)

    def _variables(self, token: str) -> dict[str, str]:
        added = {
            variable: self.proxy.base_url(token, provider)
            for provider, variables in BASE_URL_VARIABLES.items()
            for variable in variables
        }
        if self.mode == ReplayMode.REPLAY:
            added.update({v: PLACEHOLDER_KEY for v in KEY_VARIABLES.values() if not self.inherited.get(v)})
        return added

    def close(self, session: ReplaySession) -> None:
        """End an attempt: its recording written (record modes), its figures added to the run's.

        RunFailure when a call missed under `replay` or the recording cannot be written.
        """
        with self._lock:
            token = self._routes.pop(id(session), None)
        if token is not None:
            self.proxy.close(token)
        try:
            figures = session.finish()
        except LinkedPath:  # a link planted on the recording's way: the whole run stops (exit 2), nothing written
            raise
        except OutputError as exc:
            raise RunFailure(str(exc)) from None
        key = (session.query, session.run)
        with self._lock:
            self._figures.setdefault(key, RunFigures()).add(figures, self.pricing)
        if figures.failed:
            shown = [m.explanation for m in figures.misses if not m.went_live][:MAX_MISSES_KEPT]
            more = len(figures.misses) - len(shown)
            if session.recording is None:  # nothing to compare with: say so, not a diff against nothing
                raise RunFailure(
                    f"this run's model calls are not recorded yet ({session.path} does not exist): record them with "
                    f"`{self.remedy}` (it needs the model's key), then commit {self.directory}/"
                )
            raise RunFailure(
                f"a model call has no recorded answer (runner.replay mode {self.mode}; record it with "
                f"`{self.remedy}`): {'; '.join(shown)}" + (f"; and {more} more" if more > 0 else "")
            )

    def stamp(self, trace: Trace, job: Job) -> Trace:
        """The run's trace (or error record) with its figures in its metadata, and its model calls attributed.

        Attributed from the requests they made (recorded_requests.py).
        """
        with self._lock:
            figures = self._figures.get((job.query.key, job.run))
        if figures is None:
            return trace
        trace = with_recorded_requests(trace, figures.calls)
        return trace.model_copy(update={"metadata": {**trace.metadata, REPLAY_KEY: figures.as_metadata(self.mode)}})

    def totals(self) -> RunFigures:
        """Every run's figures together (for the run's summary line)."""
        total = RunFigures()
        with self._lock:
            for figures in self._figures.values():
                total.replayed += figures.replayed
                total.live += figures.live
                total.missed += figures.missed
                if figures.paid_usd is None or total.paid_usd is None:
                    total.paid_usd = None
                else:
                    total.paid_usd += figures.paid_usd
        return total
