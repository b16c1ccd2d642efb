"""A conversation (a query with `turns:`) judged per turn and as a whole, by the evaluation a single query gets.

Turn i (1-based) of the script is evaluated on turn i of the trace, as a query of its own whose input is the user's
message and whose checks are the turn's (turn_query), against turn i of each baseline variant. The whole
conversation is evaluated as the query itself on the whole trace: its answer the last turn's, its calls every
turn's, its totals their sums. Each layer of the conversation then holds the whole's checks and every turn's, a
turn's messages labelled `turn i: ` (merged_layers): a failing turn fails the conversation in that layer.

A turn missing from the trace fails its correctness (the conversation ended early); with `stop_on_failure`, the
turns after the first one that blocks are skipped, as the runner does not run them.

A conversation with a simulated user has no scripted turns: it is judged as a whole, its correctness adding how the
user ended it (user_checks) and a judge rubric reading the transcript as its query; its turns are shown, unchecked.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable

from agentci_action._util.text import plural, snippet
from agentci_action.engine.results import FAIL, PASS, SEVERITY, SKIP, Check, LayerResult, Status, TurnResult
from agentci_action.spec.models import QuerySpec, private_attributes
from agentci_action.trace.canonical import Trace
from agentci_action.trace.simulated_user import USER_KEY

# The evaluation of one exchange: (query, its trace, the baseline's variants) → its three layers.
EvaluateExchange = Callable[[QuerySpec, Trace, list[Trace]], dict[str, LayerResult]]
# Whether a turn's layers block (fail-on applied): the conversation stops there under stop_on_failure.
Blocks = Callable[[dict[str, LayerResult]], bool]


def turn_query(query: QuerySpec, index: int) -> QuerySpec:
    """Turn `index` (0-based) of the conversation as a query.

    Id `<query id>.turn<i>`, input the user's message, the turn's own blocks (correctness, path, cost, checks, with its
    reference answer and expected sources), at the turn's line. Made once per turn of a loaded spec (kept on the turn).
    """
    assert query.turns is not None, "turn_query of a query without turns"
    turn = query.turns[index]
    private = private_attributes(turn)
    made: QuerySpec | None = private.get("_as_query")
    if made is None:
        made = QuerySpec(
            id=f"{query.key}.turn{index + 1}",
            query=turn.user,
            correctness=turn.correctness,
            path=turn.path,
            cost=turn.cost,
            checks=turn.checks,
            reference_answer=turn.reference_answer,
            expected_sources=turn.expected_sources,
        )
        made._file, made._line = query.file, turn.line or query.line
        private["_as_query"] = made
    return made


def turn_variants(variants: list[Trace], index: int) -> list[Trace]:
    """Turn `index` of each baseline variant that reached it."""
    return [turn for variant in variants if (turn := variant.turn(index)) is not None]


def evaluate_turns(
    query: QuerySpec, trace: Trace, variants: list[Trace], evaluate: EvaluateExchange, blocks: Blocks
) -> list[dict[str, LayerResult]]:
    """The layers of each scripted turn, in order (see the module docstring)."""
    assert query.turns is not None, "evaluate_turns of a query without turns"
    results: list[dict[str, LayerResult]] = []
    stopped_at = 0  # the 1-based turn that blocked under stop_on_failure, 0 while none has
    for index in range(len(query.turns)):
        turn = trace.turn(index)
        if stopped_at:
            layers = _unreached(
                SKIP, f"not run: turn {stopped_at} failed a blocking check and the spec stops there (stop_on_failure)"
            )
        elif turn is None:
            layers = _unreached(
                FAIL,
                f"the conversation ended after {len(trace.turns) or 1} of {len(query.turns)} turns: no reply to "
                "this turn",
            )
        else:
            layers = evaluate(turn_query(query, index), turn, turn_variants(variants, index))
        if query.stop_on_failure and not stopped_at and blocks(layers):
            stopped_at = index + 1
        results.append(layers)
    return results


def _unreached(status: Status, message: str) -> dict[str, LayerResult]:
    """A turn with no reply to evaluate: correctness has the status and message, path and cost skip."""
    skipped = LayerResult.from_checks([Check("turn_reached", SKIP, "not evaluated: the turn has no reply")])
    return {
        "correctness": LayerResult.from_checks([Check("turn_reached", status, message)]),
        "path": skipped,
        "cost": skipped,
    }


def left_unrun(layers: dict[str, LayerResult]) -> bool:
    """Whether these are the layers of a turn stop_on_failure left unrun (its status is then skip, not pass)."""
    checks = layers["correctness"].checks
    return len(checks) == 1 and checks[0].name == "turn_reached" and checks[0].status is SKIP


def merged_layers(whole: dict[str, LayerResult], turns: list[dict[str, LayerResult]]) -> dict[str, LayerResult]:
    """Each layer of the conversation.

    The whole's checks and details, then each turn's checks, labelled with their turn (`data.turn`, and `turn i: `
    before the message); its status the worst of them (LayerResult.from_checks).
    """
    merged = {}
    for name, layer in whole.items():
        checks = list(layer.checks)
        for number, layers in enumerate(turns, 1):
            checks += [_labelled(check, number) for check in layers[name].checks]
        merged[name] = LayerResult.from_checks(checks, layer.details) if checks else layer
    return merged


def _labelled(check: Check, number: int) -> Check:
    message = f"turn {number}: {check.message}" if check.message else ""
    return Check(check.name, check.status, message, {**check.data, "turn": number})


def whole_layer(layer: LayerResult) -> LayerResult:
    """A conversation's layer without its turns' checks: what the whole conversation's own checks found."""
    own = [check for check in layer.checks if "turn" not in check.data]
    if not own:
        return LayerResult(SKIP, layer.details, ["no checks on the whole conversation"])
    return LayerResult.from_checks(own, layer.details)


def failing_first(turns: list[TurnResult]) -> list[TurnResult]:
    """The turns the most severe first (error, fail, warn, pass, skip), in order among equals."""
    return sorted(turns, key=lambda turn: (-SEVERITY[turn.status], turn.turn))


# -- a simulated user's conversation ----------------------------------------------------------------------------------
_ENDED = {
    "goal_reached": (PASS, "the simulated user reached its goal at turn {turn}: {reason}"),
    "stop_when": (PASS, "the conversation ended at turn {turn} on {reason}"),
    "gave_up": (FAIL, "the simulated user gave up at turn {turn}: {reason}"),
    "max_turns": (FAIL, "{reason} ({turns})"),
    "spend_cap": (SKIP, "not finished: {reason} (after {turns})"),
}


def user_checks(query: QuerySpec, trace: Trace) -> list[Check]:
    """The correctness checks of a simulated user's conversation (metadata.agentci_user).

    `simulated_user` (the goal reached or stop_when held passes; the user giving up or the turn budget running out
    fails; the spend cap leaves it unfinished, skipped) with what the simulator's calls took in its data; and
    `must_not_reveal` when the spec lists secrets: fails at the first turn whose user message holds one (case and white
    space ignored).
    """
    user = query.simulated_user
    assert user is not None, "user_checks of a query without a simulated user"
    ending = trace.metadata.get(USER_KEY)
    checks = []
    if isinstance(ending, dict) and ending.get("ended") in _ENDED:
        status, text = _ENDED[ending["ended"]]
        turns = len(trace.turns) or 1
        message = text.format(
            turn=turns,
            turns=plural(turns, "turn"),
            reason=snippet(str(ending.get("reason") or "no reason given"), 300),
        )
        simulator = _figures(ending)
        checks.append(Check("simulated_user", status, message, {"ended": ending["ended"], "simulator": simulator}))
    else:
        checks.append(
            Check("simulated_user", SKIP, "not verified: the trace does not say how the simulated user ended")
        )
    if user.must_not_reveal:
        checks.append(_kept_secrets(user.must_not_reveal, trace))
    return checks


def _figures(ending: dict[str, object]) -> dict[str, int | float | None]:
    """What the simulator's calls took, as metadata.agentci_user says (a trace is untrusted input).

    Each count a non-negative whole number (0 otherwise), the cost a non-negative number or None (unknown).
    """

    def count(value: object) -> int:
        return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0

    cost = ending.get("cost_usd")
    if not (isinstance(cost, (int, float)) and not isinstance(cost, bool) and math.isfinite(cost) and cost >= 0):
        cost = None
    return {
        **{key: count(ending.get(key)) for key in ("requests", "replayed", "input_tokens", "output_tokens")},
        "cost_usd": None if cost is None else float(cost),
    }


def _kept_secrets(secrets: list[str], trace: Trace) -> Check:
    def folded(text: str) -> str:
        return " ".join(text.casefold().split())

    for number, turn in enumerate(trace.turns or [trace], 1):
        said = folded(turn.query or "")
        for index, secret in enumerate(secrets):
            if folded(secret) in said:
                return Check(
                    "must_not_reveal",
                    FAIL,
                    f"turn {number}: the simulated user wrote must_not_reveal item {index + 1}: the agent's reply "
                    "before it may have asked or pushed for it (the value is not repeated here)",
                    {"at_turn": number, "item": index + 1},
                )
    return Check("must_not_reveal", PASS, f"the simulated user kept its {len(secrets)} secret(s)")


def cut_short(trace: Trace) -> bool:
    """Whether the spend cap ended a simulated conversation: it is reported unfinished, not judged."""
    ending = trace.metadata.get(USER_KEY)
    return isinstance(ending, dict) and ending.get("ended") == "spend_cap"


def simulated_turn_results(query: QuerySpec, trace: Trace, leaks: Callable[[str], str]) -> list[TurnResult]:
    """The turns of one simulated conversation (the run the report shows).

    Each its user message and the agent's answer and route, at the simulated_user block's line. A simulated turn has no
    checks of its own (the conversation is judged as a whole), so each is skipped; `leaks` masks what a safety check
    found leaked.
    """
    assert query.simulated_user is not None, "simulated_turn_results of a query without a simulated user"
    none = LayerResult(SKIP, {}, ["a simulated user's turn has no checks of its own: the conversation is judged whole"])
    line = query.simulated_user.line or query.line
    return [
        TurnResult(
            number,
            secrets_masked(query, leaks(turn.query or "")),
            line,
            SKIP,
            none,
            none,
            none,
            secrets_masked(query, leaks(turn.final_answer.strip())),
            list(turn.tool_sequence),
        )
        for number, turn in enumerate(trace.turns, 1)
    ]


def secrets_masked(query: QuerySpec, text: str) -> str:
    """`text` with each of the simulated user's must_not_reveal values (case and white space ignored) as ***.

    A report never repeats a secret the user or the agent wrote.
    """
    for secret in query.simulated_user.must_not_reveal if query.simulated_user else ():
        pattern = r"\s+".join(re.escape(word) for word in secret.split())
        text = re.sub(pattern, "***", text, flags=re.IGNORECASE)
    return text
