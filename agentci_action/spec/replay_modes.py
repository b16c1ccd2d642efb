"""The replay proxy's modes, one enum from the spec (runner.replay.mode) through `--replay` down to the proxy.

Light enough for the command line's parser to import.
"""

from enum import StrEnum
from typing import Final, Literal


class ReplayMode(StrEnum):
    """How the agent's model calls are answered through the replay proxy.

    Runner.replay.mode, and `--replay` beside REPLAY_OFF.
    """

    REPLAY = "replay"
    RECORD = "record"
    RECORD_MISSING = "record-missing"


REPLAY_OFF: Final = "off"  # `--replay off`: no proxy, the calls go straight to the provider
# --replay's word: a mode, REPLAY_OFF, or None for runner.replay's
ReplayOverride = ReplayMode | Literal["off"] | None


def replay_override(word: str | None) -> ReplayOverride:
    """--replay's word (or the Python API's `replay`) as a ReplayMode, REPLAY_OFF or None; ValueError for another."""
    if word is None or word == REPLAY_OFF:
        return None if word is None else REPLAY_OFF
    return ReplayMode(word)
