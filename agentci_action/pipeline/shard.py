"""Split a suite into shards, one per job of a GitHub Actions matrix (pipeline/merge.py combines their results).

A query belongs to shard i of n (1-based) when int(sha256(id)[:16 hex], 16) mod n = i − 1: stable when
queries are reordered, added or removed, and the same on every machine.
"""

from __future__ import annotations

import hashlib
import re

from agentci_action.engine.results import ShardInfo
from agentci_action.spec.models import QuerySpec

_SHARD = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


def parse_shard(text: str) -> ShardInfo:
    """'2/4' → ShardInfo(index=2, count=4); raises ValueError unless 1 ≤ index ≤ count."""
    found = _SHARD.match(text)
    if not found:
        raise ValueError(f"shard must look like INDEX/COUNT, e.g. 2/4, got {text!r}")
    index, count = int(found.group(1)), int(found.group(2))
    if not 1 <= index <= count:
        raise ValueError(f"shard {text!r}: the index must be between 1 and the count")
    return ShardInfo(index=index, count=count)


def shard_of(query_id: str, count: int) -> int:
    """The 1-based shard of a query id: int(sha256(id) first 64 bits) mod count + 1."""
    return int(hashlib.sha256(query_id.encode("utf-8", "surrogatepass")).hexdigest()[:16], 16) % count + 1


def select_shard(queries: list[QuerySpec], shard: ShardInfo) -> list[QuerySpec]:
    """The queries of this shard, in spec order."""
    return [q for q in queries if shard_of(q.key, shard.count) == shard.index]
