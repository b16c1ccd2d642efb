"""Run the agent on a spec's queries.

Every (query, run) on `workers` threads, retried on infrastructure failures with exponential backoff (tenacity), each
trace written to the output directory as its run ends.

A run that still fails after its retries is an error labelled [INFRA]; an agent that crashes is an error at
once. Either way the run's error record is written in place of its trace and the other runs go on.
"""

from __future__ import annotations

import itertools
import os
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor, as_completed
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from fnmatch import fnmatchcase
from functools import partial
from pathlib import Path
from typing import Any

from tenacity import Retrying, retry_if_exception_type, stop_after_attempt, wait_exponential

from agentci_action._util.errors import SpecError
from agentci_action._util.output import make_directory
from agentci_action._util.progress import Progress, ProgressOutput
from agentci_action._util.text import one_line, plural
from agentci_action.run.capture import Capture, capture_for
from agentci_action.run.jobs import InfraFailure, Job, RunFailure, new_session_id, take_turn
from agentci_action.run.process import LiveProcesses, Program
from agentci_action.run.python_call import PythonWorkers, call_in_process
from agentci_action.run.records import error_trace, trace_of_run
from agentci_action.run.replay.recording_set import RecordingSet
from agentci_action.run.replay.replay_run import ReplayRun, RunFigures, replay_for
from agentci_action.run.replay.user_recordings import DEFAULT_MODE, UserPlayer, UserRecordings
from agentci_action.run.secrets import Masker
from agentci_action.run.simulated_conversation import converse
from agentci_action.run.trace_store import TraceStore
from agentci_action.spec.models import AgentCISpec, QuerySpec
from agentci_action.spec.replay_modes import REPLAY_OFF, ReplayMode, ReplayOverride
from agentci_action.spec.runner_config import ReplaySpec, RunnerSpec
from agentci_action.trace.canonical import Trace
from agentci_action.trace.simulated_user import NextUser

MAX_BACKOFF_S = 60.0

# What runs the agent: the caller's own callable, the `python:` runner's worker processes, or the command's argv.
Agent = Callable[..., Any] | PythonWorkers | list[str]
# Whether a conversation ends after this turn (query, turn index from 0, the turn's trace): its stop_on_failure,
# judged by the caller (the pipeline, which may evaluate; this stage may not).
StopAfter = Callable[[QuerySpec, int, Trace], bool]


@dataclass(frozen=True)
class RunOptions:
    """What `agentci run` was asked for; None keeps the spec's value."""

    output: Path
    runs: int | None = None  # runs per query, instead of each query's `runs` (default 1)
    workers: int | None = None
    timeout_s: float | None = None
    resume: bool = False  # keep the runs already in `output` that produced a trace, run the rest
    capture: str | None = None  # "output" or "otel", instead of runner.capture
    replay: ReplayOverride = None  # a mode, or REPLAY_OFF, instead of runner.replay's (runner.replay need not be set)
    interpreter: str | None = None  # the Python that runs a `python:` runner's function (default: AgentCI's own)


# What a GitHub Actions job gives its steps that the agent, the pull request's code, never needs (least privilege, as
# GitHub's hardening guide asks): the job's token, the runner's runtime and OIDC token-request tokens and URLs, the
# cache and results services' variables. Withheld by default; see `inherited`.
RUNNER_TOKENS = (
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "ACTIONS_RUNTIME_*",
    "ACTIONS_ID_TOKEN_REQUEST_*",
    "ACTIONS_CACHE_*",
    "ACTIONS_RESULTS_*",
    "ACTIONS_*_TOKEN",
    "ACTIONS_*_URL",
)


@dataclass
class AgentRun:
    """Every run's trace (error records included) in query and run order, and what it took."""

    traces: list[Trace]
    files: list[Path]
    ran: int = 0
    resumed: int = 0
    failed: int = 0
    infra: int = 0
    elapsed_s: float = 0.0
    errors: list[str] = field(default_factory=list)
    replay: RunFigures | None = None  # the model calls replayed and live, under runner.replay
    withheld: list[str] = field(default_factory=list)  # the runner's tokens kept from the agent (RUNNER_TOKENS)

    @property
    def ok(self) -> bool:
        return not self.failed and not self.infra

    def summary(self, output: Path) -> str:
        real = [t for t in self.traces if t.run_error is None]
        tokens = sum(t.total_tokens or 0 for t in real)
        unknown = sum(t.total_cost_usd is None for t in real)
        cost = f"${sum(t.total_cost_usd or 0.0 for t in real):.4f}" + (
            f" ({plural(unknown, 'run')} unpriced)" if unknown else ""
        )
        resumed = f" ({self.resumed} kept from before)" if self.resumed else ""
        return (
            f"agentci run: {plural(self.ran, 'run')} in {self.elapsed_s:.1f} s{resumed} · {self.failed} failed · "
            f"{plural(self.infra, 'infra error')} · agent tokens {tokens:,} · agent cost {cost}"
            + (f" · {self.replay.phrase()}" if self.replay else "")
            + f" → {output}"
            + (
                f"\nagentci run: withheld from the agent: {', '.join(self.withheld)} (the runner's tokens; "
                "runner.inherit_env or runner.env passes one on by name)"
                if self.withheld
                else ""
            )
        )


@dataclass(frozen=True)
class RunSetup:
    """What the caller composed for a run, beyond the spec and its options.

    The `queries` (default: the spec's); `agent`, a callable used as `python:` would be, instead of the spec's
    `runner:`; the `capture` (default: the runner's), the `environ` (default: os.environ) and the `progress` (default: a
    line on stderr); `stop_after`, where a conversation ends early; `simulated_user`, the simulator playing simulated
    users beyond their recordings (run/replay/user_recordings.py).
    """

    queries: list[QuerySpec] | None = None
    agent: Callable[..., Any] | None = None
    capture: Capture | None = None
    environ: Mapping[str, str] | None = None
    progress: Progress | None = None
    stop_after: StopAfter | None = None
    simulated_user: NextUser | None = None


def run_agent(spec: AgentCISpec, options: RunOptions, setup: RunSetup = RunSetup()) -> AgentRun:
    """Run the agent on the queries `setup` names and write their traces into `options.output`.

    A conversation is driven turn by turn (drive), ended early where `setup.stop_after` says so; a simulated user's is
    played by its recording and `setup.simulated_user`. SpecError for a runner that cannot start at all (no runner, a
    program not found, a module that does not import).
    """
    agent = setup.agent
    environ = os.environ if setup.environ is None else setup.environ
    runner = _runner_of(spec, agent)
    selected = spec.queries if setup.queries is None else setup.queries
    cwd = (Path(spec.path).resolve().parent / (runner.cwd or ".")).resolve()
    masker = Masker.for_environment(runner.env, environ)  # the whole environment's secrets, inherited or not
    environ, withheld = inherited(runner, environ)
    live = LiveProcesses()
    replay = replay_for(runner, options.replay, spec, {**environ, **runner.env})
    workers_for = partial(PythonWorkers, live=live, routes=replay, interpreter=options.interpreter or sys.executable)
    with _replaying(replay), _started(runner, agent, cwd, environ, workers_for) as start:
        store = TraceStore(make_directory(options.output, "the trace directory"), masker)
        jobs, kept = _jobs(spec, selected, options, store)
        if replay:
            replay.check(jobs, kept)
        users = user_recordings(spec, runner, options.replay, replay.fresh if replay else None)
        users.check(jobs)
        # a caller's callable runs in this process, whose one environment names one route: one run at a time
        workers = 1 if replay and callable(start) else options.workers or runner.workers
        progress = setup.progress or Progress(
            "agentci run", len(jobs), "run", counters=("failed", "infra"), output=ProgressOutput(mask=masker)
        )
        capture = setup.capture or capture_for(runner, options.capture, {**environ, **runner.env})
        result = AgentRun(traces=[], files=[store.file(q.key) for q in selected], resumed=len(kept), withheld=withheld)
        traces: dict[tuple[str, int], Trace] = dict(kept)
        began = time.monotonic()
        in_process = replay.worker_environment() if replay and callable(start) else None
        with (
            tempfile.TemporaryDirectory(prefix="agentci-run-") as scratch,
            _python_env(runner, start, in_process[1] if in_process else {}),
        ):
            timeout_s = options.timeout_s or runner.timeout_s
            routed = replay.environment if replay else (lambda job: {})
            launch = _Launch(start, runner, spec, capture, Path(scratch), timeout_s, live, cwd, environ, routed)
            attempt = _attempt(launch)
            if replay:
                attempt = replay.attempts(attempt, in_process[0] if in_process else None)
            capture.start()
            progress.start(f"agentci run: {plural(len(jobs), 'run')} of {spec.agent} on {plural(workers, 'worker')}")
            pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="agentci-run")
            try:
                player = partial(users.player, live=setup.simulated_user)
                stamp = replay.stamp if replay else None
                one = _RunOne(attempt, runner, store, masker, live, stamp, setup.stop_after, player)
                futures = {pool.submit(_run_one, job, one): job for job in jobs}
                for future in as_completed(futures):
                    trace, infra = future.result()
                    job = futures[future]
                    traces[(job.query.key, job.run)] = trace
                    result.ran += 1
                    if trace.run_error is not None:
                        result.errors.append(trace.run_error)
                        result.infra += infra
                        result.failed += not infra
                    failed = trace.run_error is not None
                    progress.advance(trace.run_error, failed=failed and not infra, infra=failed and infra)
            except BaseException:
                live.kill_all()
                pool.shutdown(wait=False, cancel_futures=True)
                raise
            finally:
                progress.finish()
                capture.stop()
            pool.shutdown()
        result.elapsed_s = time.monotonic() - began
        result.traces = [traces[key] for key in sorted(traces, key=_order(selected))]
        result.replay = replay.totals() if replay else None
        return result


def inherited(runner: RunnerSpec, environ: Mapping[str, str]) -> tuple[Mapping[str, str], list[str]]:
    """What the agent's processes inherit of AgentCI's environment.

    All of it, or only the variables a name or pattern of `runner.inherit_env` matches (fnmatch, case-sensitive);
    never the runner's tokens (RUNNER_TOKENS) unless `inherit_env` names one exactly or `runner.env` sets it. With
    the names withheld, sorted.
    """
    named = set(runner.inherit_env or ())
    withheld = sorted(
        name
        for name in environ
        if any(fnmatchcase(name, p) for p in RUNNER_TOKENS) and name not in named and name not in runner.env
    )
    patterns = runner.inherit_env
    kept = {
        name: value
        for name, value in environ.items()
        if name not in withheld and (patterns is None or any(fnmatchcase(name, p) for p in patterns))
    }
    return kept, withheld


def user_recordings(
    spec: AgentCISpec, runner: RunnerSpec, override: ReplayOverride, fresh: RecordingSet | None = None
) -> UserRecordings:
    """Where the simulated users are recorded, and how.

    Where: runner.replay.recordings, default `recordings/`, beside the spec (in `fresh`, the new sets of the queries
    whose model calls are recorded afresh). How: `--replay`'s mode, else runner.replay's, else record-missing;
    `--replay off` records afresh (record).
    """
    replay = runner.replay
    patterns = tuple(re.compile(pattern) for pattern in (replay.volatile_patterns if replay else []))
    directory = Path(spec.path).resolve().parent / (replay.recordings if replay else ReplaySpec().recordings)
    if override == REPLAY_OFF:
        mode = ReplayMode.RECORD
    elif override is not None:
        mode = ReplayMode(override)
    else:
        mode = replay.mode if replay else DEFAULT_MODE
    return UserRecordings(directory, mode, patterns, fresh)


@contextmanager
def _replaying(replay: ReplayRun | None) -> Iterator[None]:
    """The replay proxy, serving from before the first run to after the last, on every way out.

    A worker process gets its route when it starts. Under `record`, the queries' new recordings are put in place when
    the runs end, and discarded on any other way out (recording_set.py).
    """
    if replay is None:
        yield
        return
    replay.start()
    try:
        yield
    except BaseException:
        replay.stop()
        raise
    replay.stop(completed=True)


def _order(queries: list[QuerySpec]) -> Callable[[tuple[str, int]], tuple[int, int]]:
    position = {q.key: i for i, q in enumerate(queries)}
    return lambda key: (position[key[0]], key[1])


def _runner_of(spec: AgentCISpec, agent: Callable[..., Any] | None) -> RunnerSpec:
    if agent is not None:
        return spec.runner or RunnerSpec(python="agent:given")  # the callable replaces the spec's own agent
    if spec.runner is None:
        recorded = Path(spec.path).parent / "traces"  # where `agentci init` writes its example trace
        example = f" (e.g. --traces {recorded}/)" if recorded.is_dir() else ""
        raise SpecError.at(
            spec.path,
            0,
            "the spec has no `runner:`, so AgentCI cannot run the agent: add one (e.g. `runner: {command: python agent.py}`) "
            f"or pass recorded traces with --traces{example}",
        )
    return spec.runner


@contextmanager
def _started(
    runner: RunnerSpec,
    agent: Callable[..., Any] | None,
    cwd: Path,
    environ: Mapping[str, str],
    workers_for: Callable[[str, Path, Mapping[str, str]], PythonWorkers],
) -> Iterator[Agent]:
    """The agent to run, checked before the first run.

    The caller's own callable, worker processes (`workers_for`) whose first one imported the function (stopped when the
    run ends), or a program that exists.
    """
    if agent is not None:
        yield agent
    elif runner.python is not None:
        workers = workers_for(runner.python, cwd, {**environ, **runner.env})
        try:
            workers.check()
        except ValueError as exc:
            raise SpecError.at(*runner.where("python"), f"runner.python: {one_line(str(exc))}") from None
        try:
            yield workers
        finally:
            workers.close()
    else:
        yield _program(runner, cwd, environ)


def _program(runner: RunnerSpec, cwd: Path, environ: Mapping[str, str]) -> list[str]:
    """The command's argv, once its program is found."""
    if not cwd.is_dir():
        raise SpecError.at(*runner.where("cwd"), f"runner.cwd: directory {cwd} not found")
    program = runner.argv[0]
    path = environ.get("PATH", os.defpath) if "PATH" not in runner.env else runner.env["PATH"]
    found = (cwd / program).is_file() if os.sep in program else shutil.which(program, path=path)
    if not found:
        raise SpecError.at(
            *runner.where("command"),
            f"runner.command: program {program!r} not found "
            + (f"(relative to {cwd})" if os.sep in program else "on PATH: install it, or give its path")
            + (" (runner.inherit_env does not pass PATH on)" if "PATH" not in environ and runner.inherit_env else ""),
        )
    return runner.argv


def _jobs(
    spec: AgentCISpec, queries: list[QuerySpec], options: RunOptions, store: TraceStore
) -> tuple[list[Job], dict[tuple[str, int], Trace]]:
    """The runs to do, and (with --resume) the traces already on disk.

    Without --resume the selected queries' old files are removed first, so the directory never mixes two runs of the
    agent.
    """
    jobs, kept = [], {}
    for query in queries:
        finished = store.finished(query.key) if options.resume else {}
        if not options.resume:
            store.file(query.key).unlink(missing_ok=True)
        metadata = {"agent": spec.agent, **({"description": query.description} if query.description else {})}
        for run in range(options.runs or query.min_runs):  # adaptive runs add theirs as the verdicts ask
            if run in finished:
                kept[(query.key, run)] = finished[run]
            else:
                jobs.append(Job(query, run, metadata))
    return jobs, kept


@dataclass(frozen=True)
class _Launch:
    """How an attempt starts the agent.

    What runs it (`start`), in `cwd` with `environ` (and `routed(job)`, the variables a command gets on top: the replay
    route of the job's attempt), its trace file in `scratch`, read through `capture`; killed after `timeout_s` (its
    process kept in `live`).
    """

    start: Agent
    runner: RunnerSpec
    spec: AgentCISpec
    capture: Capture
    scratch: Path
    timeout_s: float
    live: LiveProcesses
    cwd: Path
    environ: Mapping[str, str]
    routed: Callable[[Job], Mapping[str, str]]


def _attempt(launch: _Launch) -> Callable[[Job], Trace]:
    """One attempt of one job → its trace; raises RunFailure / InfraFailure."""
    counter = itertools.count()
    start, runner, capture, scratch = launch.start, launch.runner, launch.capture, launch.scratch

    def attempt(job: Job) -> Trace:
        trace_file = scratch / f"{next(counter)}.json"
        if isinstance(start, list):
            env = {
                **launch.environ,
                **runner.env,
                **job.environment(),
                **capture.environment(job, trace_file),
                **launch.routed(job),
            }
            try:
                program = Program(argv=start, cwd=launch.cwd, timeout_s=launch.timeout_s, live=launch.live)
                finished = program.run(job, env, trace_file)
            except RunFailure as failure:  # the program failed: its spans may show the model's service did
                outage = None if failure.infra else capture.outage(job)
                if outage is None:
                    raise
                raise InfraFailure(
                    f"{failure.message.partition('; stderr:')[0]} after a model outage: {outage}"
                ) from None
        elif isinstance(start, PythonWorkers):
            finished = start.call(job, launch.timeout_s, trace_file)
        else:
            finished = call_in_process(start, job, launch.timeout_s, trace_file)
        records = capture.records(job, finished)
        return trace_of_run(records, job, f"{job.label}", runner.trace_format, launch.spec.pricing)

    return attempt


@dataclass(frozen=True)
class _RunOne:
    """What every job of a run goes through.

    Its `attempt`s (retried on infrastructure failures as `runner` says), messages masked by `masker`, the trace kept in
    `store` unless the run was interrupted (`live` closed); `stamp` adds what the run's model calls were to its trace
    (runner.replay), `stop_after` ends a conversation early, `users` gives a simulated user's conversation its player.
    """

    attempt: Callable[[Job], Trace]
    runner: RunnerSpec
    store: TraceStore
    masker: Masker
    live: LiveProcesses
    stamp: Callable[[Trace, Job], Trace] | None
    stop_after: StopAfter | None
    users: Callable[[Job], UserPlayer] | None


def _run_one(job: Job, how: _RunOne) -> tuple[Trace, bool]:
    """The job's trace (or error record, masked), written to the store before returning.

    And whether it failed for infrastructure reasons. A run cut short by an interruption is not recorded: --resume runs
    it again.
    """
    attempt, runner, masker, users = how.attempt, how.runner, how.masker, how.users
    retrying = Retrying(
        stop=stop_after_attempt(runner.retries + 1),
        wait=wait_exponential(multiplier=runner.backoff_s, max=MAX_BACKOFF_S),
        retry=retry_if_exception_type(InfraFailure),
        reraise=True,
    )
    infra = False
    try:
        player = users(job) if users is not None and job.query.simulated_user is not None else None
        trace = drive(job, lambda one: retrying(attempt, one), how.stop_after, player)
    except InfraFailure as failure:
        tries = runner.retries + 1
        trace, infra = (
            error_trace(job, masker(f"[INFRA] {job.label}: {failure.message} ({tries} attempt{'s' * (tries > 1)})")),
            True,
        )
    except RunFailure as failure:
        trace = error_trace(job, masker(f"{job.label}: {failure.message}"))
    if how.stamp is not None:
        trace = how.stamp(trace, job)
    if not how.live.closed:
        how.store.add(trace)
    return trace, infra


def drive(
    job: Job, attempt: Callable[[Job], Trace], stop_after: StopAfter | None = None, user: UserPlayer | None = None
) -> Trace:
    """The job's trace.

    One attempt for a single query; for a conversation, one attempt per turn in order, each given the messages so far
    and the conversation's session id, until the script ends or `stop_after` says so, or with a simulated user, until
    `user` (its player) ends it (converse). A turn that fails raises its failure, named by its turn (the conversation
    has no trace).
    """
    if user is not None:
        return converse(job, attempt, user)
    turns = job.query.turns
    if turns is None:
        return attempt(job)
    session_id = new_session_id(job)
    replies: list[Trace] = []
    history: list[dict[str, str]] = []
    for index, turn in enumerate(turns):
        step = replace(job, turn=index + 1, history=tuple(history), session_id=session_id)
        reply = take_turn(attempt, step)
        replies.append(reply)
        history += [{"role": "user", "content": turn.user}, {"role": "assistant", "content": reply.final_answer}]
        if stop_after is not None and index + 1 < len(turns) and stop_after(job.query, index, reply):
            break
    conversation = Trace(id=job.query.key, query=job.query.query, run=job.run, turns=replies).with_derived_totals()
    conversation._source = replies[0].source
    return conversation


@contextmanager
def _python_env(runner: RunnerSpec, start: Agent, added: Mapping[str, str]) -> Iterator[None]:
    """A callable of the caller's runs in this process.

    The runner's `env:` (and `added`, the replay route's variables) is set in os.environ while it runs, then restored (a
    command or a `python:` runner's workers get it in their environment).
    """
    variables = {**runner.env, **added}
    if not callable(start) or not variables:
        yield
        return
    saved = {key: os.environ.get(key) for key in variables}
    os.environ.update(variables)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


@contextmanager
def terminate_on_sigterm() -> Iterator[None]:
    """SIGTERM (a cancelled workflow) stops the run as Ctrl-C does: running agents are killed, finished traces kept."""
    import signal

    def interrupt(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
