"""The distributions the verdicts are computed from: binomial and hypergeometric tails, Student's t quantile. Pure.

Binomial coefficients are Python integers (math.comb) and a hypergeometric tail is one integer sum divided once, so
it is exact to a float's last bit; a binomial tail with a float rate sums floats. The image does not carry scipy
(it stays lean): scipy.stats is the tests' oracle for every function here.
"""

from __future__ import annotations

import math
from statistics import NormalDist


def hypergeometric_pmf(passed: int, population: int, population_passed: int, drawn: int) -> float:
    """P(X = x), X the passes among `drawn` runs drawn without replacement: C(K, x)·C(N − K, n − x) / C(N, n).

    The runs are taken from `population` runs of which `population_passed` passed; 0 where x (or K) is impossible.
    """
    failed = population - population_passed
    if not (0 <= passed <= population_passed and 0 <= drawn - passed <= failed):
        return 0.0
    ways = math.comb(population_passed, passed) * math.comb(failed, drawn - passed)
    return ways / math.comb(population, drawn)


def hypergeometric_cdf(passed: int, population: int, population_passed: int, drawn: int) -> float:
    """P(X ≤ x) for the X of hypergeometric_pmf: Σ_{i ≤ x} C(K, i)·C(N − K, n − i) / C(N, n), one division."""
    failed = population - population_passed
    possible = range(max(0, drawn - failed), min(passed, drawn, population_passed) + 1)
    ways = sum(math.comb(population_passed, i) * math.comb(failed, drawn - i) for i in possible)
    return min(1.0, ways / math.comb(population, drawn))


def hypergeometric_sf(passed: int, population: int, population_passed: int, drawn: int) -> float:
    """P(X ≥ x) for the X of hypergeometric_pmf: the lower tail with passes and failures swapped."""
    return hypergeometric_cdf(drawn - passed, population, population - population_passed, drawn)


def binomial_pmf(passed: int, runs: int, rate: float) -> float:
    """P(X = x) = C(n, x)·p^x·(1 − p)^(n − x), X the passes of n independent runs passing with rate p.

    C(n, x) is exact up to n = 1000 (it fits a float); beyond, the terms are added as logarithms.
    """
    if passed < 0 or passed > runs:
        return 0.0
    if rate in (0.0, 1.0):  # every run fails, or every run passes
        return float(passed == runs * rate)
    if runs <= 1000:
        return math.comb(runs, passed) * rate**passed * (1.0 - rate) ** (runs - passed)
    ways = math.lgamma(runs + 1) - math.lgamma(passed + 1) - math.lgamma(runs - passed + 1)
    return math.exp(ways + passed * math.log(rate) + (runs - passed) * math.log1p(-rate))


def binomial_sf(passed: int, runs: int, rate: float) -> float:
    """P(X ≥ x) = Σ_{i ≥ x} C(n, i)·p^i·(1 − p)^(n − i); 1 for x ≤ 0, 0 for x > n."""
    if passed <= 0:
        return 1.0
    return min(1.0, sum(binomial_pmf(i, runs, rate) for i in range(passed, runs + 1)))


def student_t_cdf(t: float, df: int) -> float:
    """P(T ≤ t), T Student's t with an integer number of degrees of freedom ν ≥ 1, in closed form.

    Abramowitz and Stegun 26.7.3-4, with θ = atan(t/√ν) and A = P(|T| ≤ |t|): ν odd: A = (2/π)·(θ +
    sinθ·cosθ·Σ_{j=0}^{(ν−3)/2} a_j cos^{2j}θ), a_0 = 1, a_j = a_{j−1}·2j/(2j + 1) (A = 2θ/π for ν = 1); ν even: A =
    sinθ·Σ_{j=0}^{(ν−2)/2} b_j cos^{2j}θ, b_0 = 1, b_j = b_{j−1}·(2j − 1)/(2j). Then P(T ≤ t) = (1 + A)/2 for t ≥ 0 and
    (1 − A)/2 below.
    """
    if df < 1:
        raise ValueError(f"degrees of freedom must be at least 1, not {df}")
    theta = math.atan(abs(t) / math.sqrt(df))
    cos2 = math.cos(theta) ** 2
    if df % 2:
        series, term = 0.0, 1.0
        for j in range((df - 1) // 2):
            series += term
            term *= cos2 * (2 * j + 2) / (2 * j + 3)
        inside = theta + math.sin(theta) * math.cos(theta) * series if df > 1 else theta
        within = 2.0 / math.pi * inside
    else:
        series, term = 0.0, 1.0
        for j in range(df // 2):
            series += term
            term *= cos2 * (2 * j + 1) / (2 * j + 2)
        within = math.sin(theta) * series
    return (1.0 + within) / 2.0 if t >= 0 else (1.0 - within) / 2.0


def student_t_quantile(probability: float, df: int) -> float:
    """The t with P(T ≤ t) = q for Student's t with ν degrees of freedom (0 < q < 1).

    student_t_cdf inverted by bisection to a relative 1e-12, starting from the bracket [−|z|·8 − 8, |z|·8 + 8] around
    the normal quantile z (every t quantile lies beyond z, by less than that for the q this product asks: confidence
    levels).
    """
    if not 0.0 < probability < 1.0:
        raise ValueError(f"a quantile's probability is strictly between 0 and 1, not {probability}")
    if probability == 0.5:
        return 0.0
    z = NormalDist().inv_cdf(probability)
    low, high = (-abs(z) * 8 - 8, 0.0) if probability < 0.5 else (0.0, abs(z) * 8 + 8)
    while student_t_cdf(low, df) > probability:  # very small ν and extreme q: widen until the bracket holds it
        low *= 2
    while student_t_cdf(high, df) < probability:
        high *= 2
    for _ in range(200):
        middle = (low + high) / 2
        if student_t_cdf(middle, df) < probability:
            low = middle
        else:
            high = middle
        if high - low <= 1e-12 * max(1.0, abs(middle)):
            break
    return (low + high) / 2
