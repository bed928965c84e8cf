"""statistics.py: the intervals over questions (Wilson, the guarded
t, Newcombe's method 11), against values worked by hand."""

import math

import pytest

from graphrag_format_benchmark import statistics


@pytest.mark.parametrize(
    "a, b, c, d, expected",
    [
        (6, 0, 0, 0, (0.0, -0.4141, 0.4141)),  # no disagreement still leaves a width
        (200, 0, 0, 0, (0.0, -0.0179, 0.0179)),
        (0, 0, 0, 120, (0.0, -0.0296, 0.0296)),  # everyone wrong: only the baseline floor stops an accept
        (40, 0, 10, 0, (-0.2, -0.3184, -0.091)),  # worked by hand in the README
        (30, 5, 3, 12, (0.04, -0.0667, 0.1457)),  # the corrected phi narrows it less than the plain one
        (25, 0, 0, 5, (0.0, -0.0866, 0.0866)),  # ties: a, d split counts under the correction
    ],
)
def test_newcombe_paired_interval_with_continuity_correction(a, b, c, d, expected):
    assert tuple(round(x, 4) for x in statistics.newcombe_cc(a, b, c, d, 1.6448536269514722)) == expected


def test_the_guarded_t_interval_on_fractional_outcomes():
    # no spread: the rule of three's width (-ln 0.05 / n), where a plain t interval has none
    assert tuple(round(x, 4) for x in statistics.guarded_t([0.0] * 40, 0.05, -1, 1)) == (0.0, -0.0749, 0.0749)
    # thirds from three permutations: a plain t interval with 0.5 pseudo-questions at -1 and 1 in its variance
    values = [0.0] * 10 + [1 / 3] * 15 + [-1 / 3] * 15
    mean, se = statistics.guarded_se(values, -1, 1)
    plain = (sum((v - mean) ** 2 for v in values) + 0.5 * ((1 + mean) ** 2 + (1 - mean) ** 2)) / 40 / 41
    assert se == pytest.approx(plain**0.5) and mean == pytest.approx(0.0)
    assert statistics.t_quantile(0.95, 39) * se > -math.log(0.05) / 40  # the spread, not the floor, decides here
    assert statistics.guarded_t(values, 0.05, -1, 1)[1] == pytest.approx(-statistics.t_quantile(0.95, 39) * se)
    assert statistics.t_quantile(0.95, 39) == pytest.approx(1.6849, abs=1e-4)


def test_wilson():
    assert statistics.wilson(5, 6) == [0.4365, 0.9699]  # by hand: center 0.7032, half 0.2667
    assert statistics.wilson(0, 0) is None


def test_intervals_are_over_questions_stay_within_0_and_1_and_keep_a_width():
    one_run = statistics.rate_interval([0.0] * 11 + [1.0], binary=True)
    assert one_run == (0.0833, 12, [0.0149, 0.3539], "wilson over questions")
    halves = statistics.rate_interval([0.5] * 12, binary=False)  # every question right in half its runs
    # -ln(0.025) / 12 = 0.307 at least
    assert halves.method == "guarded t over question means" and halves.ci95 == [
        0.1926,
        0.8074,
    ]
    assert (
        statistics.rate_interval([1.0, 1.0], binary=False).ci95 == [0.0, 1.0]
        and statistics.rate_interval([0.5], binary=False).ci95 is None
    )
    # three permutations of 60 questions: the interval is over 60 questions, not 180 cells
    cells = [(f"q{i}", (i + k) % 3 != 0) for i in range(60) for k in range(3)]
    groups: dict[str, list[int]] = {}
    for position, (qid, _) in enumerate(cells):
        groups.setdefault(qid, []).append(position)
    means, runs, right = statistics.question_means(tuple(v for _, v in cells), groups)
    assert (
        len(means) == 60
        and runs == 180
        and right == 120
        and statistics.rate_interval(means, runs == len(means)).questions == 60
    )
    assert statistics.question_means((1, 0, 1), {"q1": [0, 1], "q2": [2]}) == ([0.5, 1.0], 3, 2)
