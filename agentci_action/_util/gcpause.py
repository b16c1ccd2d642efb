"""Pause Python's cyclic garbage collector during bulk work that allocates many acyclic objects.

Loading and evaluating thousands of traces allocates millions of small objects; each allocation
burst triggers full collections that find nothing to free (traces and results hold no cycles).
Pausing the collector made loading and evaluation 2-4× faster (benchmarks/bench_engine.py).
On resuming, the objects that survived the pause are frozen (moved out of the collector's scan)
rather than all scanned at once; reference counting still frees them when they are dropped.

The CLI imports a command's modules under it too: their modules, classes and pydantic validators live until
exit, and frozen they are not scanned again by later collections nor by the last one at exit (25 ms of the
0.18 s `agentci validate` took).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.freeze()
            gc.enable()
