"""The statistics: intervals over questions, the question being the unit of evidence.

Wilson's score interval for a rate, the guarded t interval for a mean over question values (rate_interval), and
Newcombe's method 11 for a paired difference of rates (newcombe_cc). Pure functions of counts and values.
"""

from __future__ import annotations

import functools
import math
import statistics
from typing import Any, NamedTuple


def summary_stats(values: list[float]) -> dict[str, Any]:
    return {
        "mean": round(statistics.fmean(values), 4),
        "min": round(min(values), 4),
        "max": round(max(values), 4),
        "sd": round(statistics.stdev(values), 4) if len(values) > 1 else None,
    }


# Statistics. The unit of evidence is the question: a question asked under several permutations and repeats is
# one question, its runs averaged into one value (a fraction for a rate). Every interval, per format, per hop
# count and in the gate, is over those question values, and says which method made it and over how many
# questions. Two methods, by the data:
# - binary (one run per question): Wilson's score interval for a rate; for a paired difference, Newcombe's
#   hybrid score interval with continuity correction (method 11 of Newcombe 1998: continuity-corrected Wilson
#   limits of both rates, joined through a corrected phi).
# - fractional (several runs per question): a t interval over the question values, n - 1 degrees of freedom,
#   whose variance also holds GUARD_WEIGHT pseudo-questions at each end of the range (0 and 1 for a rate, -1 and
#   1 for a difference; the mean is left alone), and whose half-width is never under -ln(alpha) / n, the
#   exact bound when no question differs (the rule of three: 3/n at 95%), where a plain t interval has no
#   width at all. With spread, and as questions grow, it is the plain paired t interval, whose power rises when
#   permutations and repeats make a question's value less noisy. bench/gate_sim.py measures both methods on
#   answers whose truth is set: at the tolerance margin each check passes 1-7% of the time, for 5% nominal.
GUARD_WEIGHT = 0.5  # pseudo-questions at each end of the range, in the variance of the t interval


def wilson(k: int, n: int, z: float = 1.96) -> list[float] | None:
    """95% Wilson score interval of a rate k/n: wilson(5, 6) -> [0.4365, 0.997]."""
    if n == 0:
        return None
    low, high = wilson_bounds(k, n, z)
    return [round(low, 4), round(high, 4)]


def wilson_bounds(k: float, n: float, z: float = 1.645) -> tuple[float, float]:
    """Wilson score interval of k/n: wilson_bounds(6, 6) -> (0.689, 1.0)."""
    p = k / n
    center = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(max(p * (1 - p), 0.0) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(center - half, 0.0), min(center + half, 1.0)


def _betacf(a: float, b: float, x: float) -> float:
    """The continued fraction of the regularized incomplete beta function (modified Lentz)."""
    tiny, c, d = 1e-300, 1.0, 1.0 - (a + b) * x / (a + 1)
    d = 1 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        for numerator in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1 + numerator * d
            d = 1 / (d if abs(d) > tiny else tiny)
            c = 1 + numerator / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1) < 1e-14:
            break
    return h


def t_cdf(t: float, df: float) -> float:
    """P(T <= t) for Student's t with df degrees of freedom: t_cdf(2.015, 5) -> 0.95."""
    x = df / (df + t * t)
    front = (
        math.exp(
            math.lgamma((df + 1) / 2)
            - math.lgamma(df / 2)
            - math.lgamma(0.5)
            + df / 2 * math.log(x)
            + 0.5 * math.log1p(-x)
        )
        if x < 1
        else 0.0
    )
    tail = (
        front * _betacf(df / 2, 0.5, x) / (df / 2)
        if x < (df / 2 + 1) / (df / 2 + 2.5)
        else 1 - front * _betacf(0.5, df / 2, 1 - x) / 0.5
    )
    return 1 - tail / 2 if t >= 0 else tail / 2


@functools.lru_cache(maxsize=4096)
def t_quantile(p: float, df: float) -> float:
    """The t with t_cdf(t, df) = p (bisection): t_quantile(0.95, 5) -> 2.015."""
    lo, hi = -50.0, 50.0
    for _ in range(80):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if t_cdf(mid, df) < p else (lo, mid)
    return (lo + hi) / 2


def guarded_se(values: list[float], low: float, high: float) -> tuple[float, float]:
    """(mean, standard error) of values in [low, high], the
    variance holding GUARD_WEIGHT pseudo-questions at each end."""
    n, mean = len(values), math.fsum(values) / len(values)
    w = GUARD_WEIGHT
    spread = math.fsum((v - mean) ** 2 for v in values) + w * ((low - mean) ** 2 + (high - mean) ** 2)
    return mean, math.sqrt(spread / (n + 2 * w - 1) / (n + 2 * w))


def guarded_t(values: list[float], alpha: float, low: float, high: float) -> tuple[float, float, float]:
    """(mean, lower, upper): the one-sided 1 - alpha bounds of the mean of values in [low, high] (question values),
    by a t interval, n - 1 degrees of freedom, whose variance holds GUARD_WEIGHT pseudo-questions at low and at
    high. guarded_t([0.0] * 40, 0.05, -1, 1) -> (0.0, -0.0749, 0.0749)"""
    mean, se = guarded_se(values, low, high)
    if len(values) < 2:  # one question bounds nothing
        return mean, low, high
    half = max(t_quantile(round(1 - alpha, 12), len(values) - 1) * se, -math.log(alpha) / len(values))
    return mean, max(mean - half, low), min(mean + half, high)


def question_means(
    values: tuple[Any, ...], groups: dict[str, list[int]], truths: bool = False
) -> tuple[list[float], int, int]:
    """Each question's value (the mean of its runs), the runs, and the true ones among them, from a column of run values
    and each question's positions in it: ((1, 0, 1), {'q1': [0, 1], 'q2': [2]}) -> ([0.5, 1.0], 3, 2). Every question
    with one run (runs == len(means)) is binary data. The sums run in C (a dict of lists per metric, built a run at a
    time, was most of aggregating 100,800 cells). truths: every value is a bool (the caller looked, once for all the
    groups it asks of the column): one sum, exact, is the question's true runs and the fsum of their floats alike."""
    get = values.__getitem__
    means, runs, k = [], 0, 0
    for positions in groups.values():
        if truths:
            right = sum(map(get, positions))
            means.append(right / len(positions))
            k += right
        else:
            picked = list(map(get, positions))
            means.append(math.fsum(map(float, picked)) / len(picked))
            k += sum(map(bool, picked))
        runs += len(positions)
    return means, runs, k


class Interval(NamedTuple):
    """A rate or mean over questions with its 95% interval (rate_interval)."""

    rate: float | None  # None: no question
    questions: int
    ci95: list[float] | None  # None: one question, or none
    method: str | None  # "wilson over questions" or "guarded t over question means"


def rate_interval(values: list[float], binary: bool) -> Interval:
    """A rate or mean over questions with its 95% interval, the method and the number of questions behind it."""
    n = len(values)
    if not n:
        return Interval(None, 0, None, None)
    mean = math.fsum(values) / n
    if binary:
        ci, method = wilson(round(math.fsum(values)), n), "wilson over questions"
    elif n < 2:
        ci, method = None, None
    else:
        _, lo, hi = guarded_t(values, 0.025, 0.0, 1.0)
        ci, method = [round(lo, 4), round(hi, 4)], "guarded t over question means"
    return Interval(round(mean, 4), n, ci, method)


def _cc_wilson(k: int, n: int, z: float) -> tuple[float, float]:
    """Wilson's score interval with continuity correction: _cc_wilson(6, 6, 1.645) -> (0.603, 1.0)."""
    p, zz = k / n, z * z
    low = (
        0.0
        if k == 0
        else (2 * n * p + zz - 1 - z * math.sqrt(zz - 2 - 1 / n + 4 * p * (n * (1 - p) + 1))) / (2 * (n + zz))
    )
    high = (
        1.0
        if k == n
        else (2 * n * p + zz + 1 + z * math.sqrt(zz + 2 - 1 / n + 4 * p * (n * (1 - p) - 1))) / (2 * (n + zz))
    )
    return max(low, 0.0), min(high, 1.0)


def newcombe_cc(a: int, b: int, c: int, d: int, z: float) -> tuple[float, float, float]:
    """(difference, lower, upper) of p1 - p2 for paired binary outcomes, Newcombe's method 11: a both right, b only the
    first, c only the second, d neither; continuity-corrected Wilson limits joined through the corrected phi.
    newcombe_cc(40, 0, 10, 0, 1.645) -> (-0.2, -0.317, -0.094)"""
    n = a + b + c + d
    p1, p2 = (a + b) / n, (a + c) / n
    l1, u1 = _cc_wilson(a + b, n, z)
    l2, u2 = _cc_wilson(a + c, n, z)
    margins = (a + b) * (c + d) * (a + c) * (b + d)
    excess = a * d - b * c
    phi = (
        0.0
        if not margins
        else (excess - n / 2) / math.sqrt(margins)
        if excess > n / 2
        else 0.0
        if excess >= 0
        else excess / math.sqrt(margins)
    )
    delta = math.sqrt(max((p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2, 0.0))
    epsilon = math.sqrt(max((u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2, 0.0))
    return p1 - p2, max(p1 - p2 - delta, -1.0), min(p1 - p2 + epsilon, 1.0)
