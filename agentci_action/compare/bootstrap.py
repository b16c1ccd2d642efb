"""Bootstrap intervals of cost and latency ratios, after / before, over repeated runs. Pure and deterministic.

A query's ratio is mean(after runs) / mean(before runs); its interval resamples each side's runs with
replacement, independently, B times, and takes the α/2 and 1 − α/2 order statistics of the B ratios (the
percentile bootstrap). A suite's ratio is Σ_i after_i / Σ_i before_i over its queries' per-run means; its
interval resamples whole queries with replacement (the two sides of a query move together: clustered by query,
so the queries' own spread, not only the runs', is in the interval). A figure changed when its interval lies
entirely beyond the tolerance (above 1 + t or below 1 − t), not when the ratio of the means crosses it.

The random generator is seeded from the names of what is resampled (`seed_for`), so one query's interval is the
same in a shard and in the whole run, and in every run of the same data. With only a few runs per side the
percentile interval is narrow (a resample cannot spread wider than the runs it draws from): the simulation in
benchmarks/bench_significance.py measures how often an unchanged cost is then called changed.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

RESAMPLES = 2000
# numpy is imported by the functions that resample: a suite run once per side never needs it (see significance.py).


def seed_for(*names: str) -> int:
    """A seed that depends only on `names` (CRC-32 of their UTF-8, separated by NUL), not on the process."""
    return zlib.crc32("\0".join(names).encode())


def _percentiles(ratios: npt.NDArray[np.float64], confidence: float) -> tuple[float, float]:
    """The order statistics at α/2 and 1 − α/2 of the B ratios (k = ⌊B·α/2⌋ and B − 1 − k, 0-based)."""
    import numpy as np

    ordered = np.sort(ratios)
    tail = math.floor(ordered.size * (1.0 - confidence) / 2.0)
    return float(ordered[tail]), float(ordered[ordered.size - 1 - tail])


def _ratios(before: npt.NDArray[np.float64], after: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """after / before elementwise; +∞ where before is 0 and after is not, 1 where both are."""
    import numpy as np

    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = after / before
    return np.where(before == 0, np.where(after == 0, 1.0, np.inf), ratios)


def ratio_interval(
    before: Sequence[float], after: Sequence[float], confidence: float, seed: int, resamples: int = RESAMPLES
) -> tuple[float, float] | None:
    """The percentile bootstrap interval of mean(after) / mean(before), each side's runs resampled on its own.

    None when either side has no runs or mean(before) is 0 (no ratio to speak of).
    """
    import numpy as np

    if not before or not after or sum(before) == 0:
        return None
    rng = np.random.default_rng(seed)
    means = []
    for values in (np.asarray(before, dtype=float), np.asarray(after, dtype=float)):
        picks = rng.integers(0, values.size, size=(resamples, values.size))
        means.append(values[picks].mean(axis=1))
    return _percentiles(_ratios(means[0], means[1]), confidence)


def clustered_ratio_interval(
    before: Sequence[float], after: Sequence[float], confidence: float, seed: int, resamples: int = RESAMPLES
) -> tuple[float, float] | None:
    """The percentile bootstrap interval of Σ after_i / Σ before_i, the queries resampled as pairs.

    `before[i]` and `after[i]` are query i's per-run means; the pairs are resampled with replacement. None with fewer
    than two queries or Σ before = 0.
    """
    import numpy as np

    if len(before) != len(after):
        raise ValueError("one figure per query on each side")
    if len(before) < 2 or sum(before) == 0:
        return None
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(before), size=(resamples, len(before)))
    totals_before = np.asarray(before, dtype=float)[picks].sum(axis=1)
    totals_after = np.asarray(after, dtype=float)[picks].sum(axis=1)
    return _percentiles(_ratios(totals_before, totals_after), confidence)


def beyond(interval: tuple[float, float], tolerance: float) -> bool:
    """Whether the interval lies entirely beyond the tolerance: low > 1 + t (rose) or high < 1 − t (fell)."""
    low, high = interval
    return low > 1.0 + tolerance or high < 1.0 - tolerance
