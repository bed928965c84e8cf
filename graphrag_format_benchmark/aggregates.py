"""The figures of a model run: per group and format, every metric over questions (article 8.2, 8.4, 11).

In: the scored cells (scoring.Cell). Out: one Aggregate per encoding, size, ids, mode and format, in the order the
cells first show them: each metric as a Rate or a Mean over questions with its 95% interval, per hop bucket, its
spread across permutations and repeats, why cells failed, usage, latency and cost, and whether it is on the Pareto
front of accuracy against tokens. results.json holds them as Aggregate.as_json gives them; results.md, the chart,
the gate and --compare read them.
"""

from __future__ import annotations

import itertools
import math
import operator
import statistics
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, cast

from .matrix import HOP_BUCKETS, group_key
from .scoring import DIAGNOSES, Cell
from .statistics import question_means, rate_interval, summary_stats

RATE_METRICS = (
    "parse_success",
    "answer_correct",
    "path_exact",
    "valid_path",
    "evidence_match",
    "path_supports_answer",
    "false_abstention",
)
MEAN_METRICS = ("edge_precision", "edge_recall")


# -----------------------------------------------------------------------------
# the records


@dataclass(slots=True, frozen=True)
class Rate:
    """A rate over questions: a question's runs averaged into one value, then their mean with its 95% interval."""

    k: int  # the runs (cells) that hold
    n: int  # the runs behind it
    rate: float | None  # None: no question of its kind
    questions: int
    ci95: list[float] | None  # None: one question, or none
    method: str | None  # statistics.rate_interval's

    def as_json(self) -> dict[str, Any]:
        return {"k": self.k, "n": self.n, "rate": self.rate, "questions": self.questions, "ci95": self.ci95,
                "method": self.method}  # fmt: skip


@dataclass(slots=True, frozen=True)
class Mean:
    """A mean over questions (edge precision and recall), as a Rate is made."""

    mean: float | None
    n: int
    questions: int
    ci95: list[float] | None
    method: str | None

    def as_json(self) -> dict[str, Any]:
        return {"mean": self.mean, "n": self.n, "questions": self.questions, "ci95": self.ci95, "method": self.method}


@dataclass(slots=True, frozen=True)
class Metrics:
    """Every metric of some cells (answer_metrics): answers and paths over the positive questions, abstention over
    the others, parse success over both."""

    parse_success: Rate
    answer_correct: Rate
    path_exact: Rate
    valid_path: Rate
    evidence_match: Rate
    path_supports_answer: Rate
    false_abstention: Rate
    abstention_correct: Rate
    edge_precision: Mean
    edge_recall: Mean

    def as_json(self) -> dict[str, Any]:
        return {name: getattr(self, name).as_json() for name in Metrics.__slots__}


@dataclass(slots=True, frozen=True)
class HopFigures:
    """One hop bucket of a format's cells (article 11): how many, their metrics and their diagnoses."""

    n: int
    metrics: Metrics
    diagnoses: dict[str, int]  # diagnosis -> cells, in DIAGNOSES order

    def as_json(self) -> dict[str, Any]:
        return {"n": self.n, **self.metrics.as_json(), "diagnoses": self.diagnoses}


class Spread(NamedTuple):
    """A rate's spread across runs (a permutation and repeat each, article 8.4)."""

    mean: float
    min: float
    max: float
    sd: float | None  # None: one run
    runs: int


@dataclass(slots=True, frozen=True)
class Usage:
    """What the server said it counted, summed over a format's cells."""

    prompt_tokens: int
    completion_tokens: int
    responses_with_usage: int
    cached_tokens: int | None  # None: no response said
    cached_share: float | None

    def as_json(self) -> dict[str, Any]:
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "responses_with_usage": self.responses_with_usage,
            "cached_tokens": self.cached_tokens,
            "cached_share": self.cached_share,
        }


class Latency(NamedTuple):
    median: float
    p95: float


@dataclass(slots=True)
class Aggregate:
    """One group and format's figures (aggregate). pareto and pareto_tokens are set by _mark_pareto, on the formats
    of a group where some path is right; results.json leaves them out elsewhere."""

    encoding: str
    size: str
    ids: str
    mode: str
    format: str
    n: int  # the cells that ran
    not_run: int
    errors: int
    overflow: int  # CONTEXT_OVERFLOW cells, by --context-window or by the server
    overflow_by_server: int
    truncated_by_server: int
    prompt_tokens: float | None  # the mean, by the run's tokenizer
    metrics: Metrics
    by_hops: dict[str, HopFigures]  # in HOP_BUCKETS order, buckets with no cell left out
    diagnoses: dict[str, int]
    json_as_asked: int
    right_answer_wrong_path: int
    over_output_cap: int
    finish_reasons: dict[str, int]
    answer_correct_spread: Spread | None
    path_exact_spread: Spread | None
    tokens_per_correct_path: float | None
    usage: Usage
    model_prompt_tokens: float | None  # the mean by the server's count, where every sent prompt has one
    retry_wait_s: float
    latency_s: Latency | None
    cost: float | None
    pareto_tokens: str | None = None  # "model_prompt_tokens" or "prompt_tokens": what the front was drawn on
    pareto: bool | None = None

    def as_json(self) -> dict[str, Any]:
        """The entry as results.json holds it, in this order."""
        spread = (self.answer_correct_spread, self.path_exact_spread)
        return {
            "encoding": self.encoding,
            "size": self.size,
            "ids": self.ids,
            "mode": self.mode,
            "format": self.format,
            "n": self.n,
            "not_run": self.not_run,
            "errors": self.errors,
            "overflow": self.overflow,
            "overflow_by_server": self.overflow_by_server,
            "truncated_by_server": self.truncated_by_server,
            "prompt_tokens": self.prompt_tokens,
            **self.metrics.as_json(),
            "by_hops": {bucket: figures.as_json() for bucket, figures in self.by_hops.items()},
            "diagnoses": self.diagnoses,
            "json_as_asked": self.json_as_asked,
            "right_answer_wrong_path": self.right_answer_wrong_path,
            "over_output_cap": self.over_output_cap,
            "finish_reasons": self.finish_reasons,
            **{
                name: s._asdict() if s else None
                for name, s in zip(("answer_correct_spread", "path_exact_spread"), spread)
            },
            "tokens_per_correct_path": self.tokens_per_correct_path,
            "usage": self.usage.as_json(),
            "model_prompt_tokens": self.model_prompt_tokens,
            "retry_wait_s": self.retry_wait_s,
            "latency_s": self.latency_s._asdict() if self.latency_s else None,
            "cost": self.cost,
            **({"pareto_tokens": self.pareto_tokens, "pareto": self.pareto} if self.pareto is not None else {}),
        }

    def tokens(self, basis: str) -> float | None:
        """The mean prompt tokens by the run's tokenizer ("prompt_tokens") or the server ("model_prompt_tokens")."""
        return self.model_prompt_tokens if basis == "model_prompt_tokens" else self.prompt_tokens


# -----------------------------------------------------------------------------
# the cells as columns


class Columns(NamedTuple):
    """The cells of one group and format that ran, as columns (columns): what the aggregates count, in C loops over
    each column (a pass per metric over 100,000 cells cost more in memory traffic than the counting itself)."""

    question_id: tuple[str, ...]
    insufficient: tuple[bool, ...]
    parse_success: tuple[bool | None, ...]  # RATE_METRICS
    answer_correct: tuple[bool | None, ...]
    path_exact: tuple[bool | None, ...]
    valid_path: tuple[bool | None, ...]
    evidence_match: tuple[bool | None, ...]
    path_supports_answer: tuple[bool | None, ...]
    false_abstention: tuple[bool | None, ...]
    edge_precision: tuple[float | None, ...]  # MEAN_METRICS
    edge_recall: tuple[float | None, ...]
    status: tuple[str, ...]
    hops: tuple[str, ...]
    error: tuple[str | None, ...]
    truncated_by_server: tuple[bool, ...]
    prompt_tokens: tuple[int, ...]
    over_output_cap: tuple[bool, ...]
    finish_reason: tuple[object, ...]
    permutation: tuple[int, ...]
    repeat: tuple[int, ...]
    usage_prompt_tokens: tuple[object, ...]
    usage_completion_tokens: tuple[object, ...]
    usage_cached_tokens: tuple[int | None, ...]
    latency_s: tuple[object, ...]
    retry_wait_s: tuple[float | None, ...]  # answers._seconds
    right_answer_wrong_path: tuple[bool | None, ...]
    diagnosis: tuple[str | None, ...]
    json_as_asked: tuple[bool | None, ...]

    def metric(self, name: str) -> tuple[object, ...]:
        """The column of a metric named in RATE_METRICS or MEAN_METRICS."""
        return cast(tuple[object, ...], getattr(self, name))


def columns(cells: Sequence[Cell]) -> Columns:
    """The cells' Columns, in one pass over the cells."""
    if not cells:
        return Columns(*((),) * len(Columns._fields))
    return Columns(*zip(*map(_COLUMN_FIELDS, cells)))


_COLUMN_FIELDS = operator.attrgetter(*Columns._fields)

Groups = dict[tuple[object, ...], tuple[int, Columns]]  # (group..., format) -> (its cells, the Columns of those run)


def grouped(cells: Sequence[Cell]) -> Groups:
    """Per group and format, in the order the cells first show them: how many cells, and the Columns of the cells
    that ran (status other than NOT_RUN)."""
    members: dict[tuple[object, ...], list[Cell]] = {}
    for s in cells:
        members.setdefault((s.encoding, s.size, s.ids, s.mode, s.format), []).append(s)
    return {key: (len(cells), columns([s for s in cells if s.status != "NOT_RUN"])) for key, cells in members.items()}


# -----------------------------------------------------------------------------
# metrics over questions, hop buckets


class Positions(NamedTuple):
    """Each question's cells as positions in the columns, in the order of their first cell (question_positions)."""

    positive: dict[str, list[int]]
    abstention: dict[str, list[int]]
    every: dict[str, list[int]]


def answer_metrics(col: Columns, by_question: Positions | None = None, truths: frozenset[str] | None = None) -> Metrics:
    """The rates and means of some scored cells, given as Columns, each over questions with a 95% interval: answers
    and paths over the positive questions, abstention over the others. k and n count the cells (runs) behind them.
    by_question: the cells' positions per question (question_positions), when only some of the cells are meant
    (hop_metrics); truths: truth_columns(col)."""
    at = question_positions(col) if by_question is None else by_question
    truths = truth_columns(col) if truths is None else truths

    def rate(column: str, groups: dict[str, list[int]]) -> Rate:
        means, runs, k = question_means(col.metric(column), groups, column in truths)
        return Rate(k, runs, *rate_interval(means, runs == len(means)))

    def mean(column: str) -> Mean:
        means, runs, _ = question_means(col.metric(column), at.positive)
        figure = rate_interval(means, False)
        return Mean(figure.rate, runs, figure.questions, figure.ci95, figure.method)

    positive = at.positive
    return Metrics(
        rate("parse_success", at.every),
        rate("answer_correct", positive),
        rate("path_exact", positive),
        rate("valid_path", positive),
        rate("evidence_match", positive),
        rate("path_supports_answer", positive),
        rate("false_abstention", positive),
        rate("answer_correct", at.abstention),  # abstention_correct
        mean("edge_precision"),
        mean("edge_recall"),
    )


def truth_columns(col: Columns) -> frozenset[str]:
    """The rate columns that hold nothing but bools, which question_means sums in one pass."""
    return frozenset(metric for metric in RATE_METRICS if set(map(type, col.metric(metric))) <= {bool})


def question_positions(col: Columns, every: dict[str, list[int]] | None = None) -> Positions:
    """Each question's cells, as positions in the columns, in the order of their first cell: of every question,
    and apart, of the positive questions and of the abstention ones. every: when it is known (the questions of one
    hop bucket)."""
    if every is None:
        every = {}
        for k, qid in enumerate(col.question_id):
            every.setdefault(qid, []).append(k)
    split = by_value(every, col.insufficient)
    return Positions(split.get(False, {}), split.get(True, {}), every)


def by_value(groups: dict[str, list[int]], column: Sequence[object]) -> dict[object, dict[str, list[int]]]:
    """Each question's positions apart by the value a column holds there, in the questions' order: {value: {question:
    positions}}. A question's cells almost always share it (its hops, whether it is an abstention question): one list
    each, looked at in C."""
    out: dict[object, dict[str, list[int]]] = {}
    get = column.__getitem__
    for qid, positions in groups.items():
        values = set(map(get, positions))
        if len(values) == 1:
            out.setdefault(values.pop(), {})[qid] = positions
            continue
        for k in positions:
            out.setdefault(get(k), {}).setdefault(qid, []).append(k)
    return out


def diagnosis_counts(values: Iterable[str | None]) -> dict[str, int]:
    """{diagnosis: cells}, in DIAGNOSES order, zero counts left out."""
    counts = Counter(v for v in values if v)
    return {name: counts[name] for name in DIAGNOSES if counts[name]}


def hop_metrics(col: Columns, every: dict[str, list[int]] | None = None) -> dict[str, HopFigures]:
    """Article 11: 1, 2, 3 and 4+ hops, and the abstention questions, apart: each bucket's metrics and diagnoses, from
    a group's Columns. every: each question's positions (question_positions), when made already."""
    every = question_positions(col).every if every is None else every
    buckets, truths = by_value(every, col.hops), truth_columns(col)
    out = {}
    for bucket in HOP_BUCKETS:
        if bucket in buckets:
            at = list(itertools.chain.from_iterable(buckets[bucket].values()))
            out[bucket] = HopFigures(
                len(at),
                answer_metrics(col, question_positions(col, buckets[bucket]), truths),
                diagnosis_counts(map(col.diagnosis.__getitem__, at)),
            )
    return out


# -----------------------------------------------------------------------------
# the aggregates


def aggregate(scored: list[Cell], prices: tuple[float | None, ...]) -> list[Aggregate]:
    """Per encoding, size, ids, mode and format: n, each metric with a 95% interval and its spread across
    permutations and repeats, tokens per correct path, usage and cost; and which formats are on the front of accuracy
    against tokens (pareto)."""
    table = [_aggregate_entry(key, members, col, prices) for key, (members, col) in grouped(scored).items()]
    _mark_pareto(table)
    return table


def _aggregate_entry(
    key: tuple[object, ...], members: int, col: Columns, prices: tuple[float | None, ...]
) -> Aggregate:
    """One group and format's entry of the aggregates: of its members (cells), the columns of those that ran."""
    encoding, size, ids, mode, fmt = cast(tuple[str, str, str, str, str], key)
    ran = len(col.status)
    statuses = Counter(col.status)
    positive = list(map(operator.not_, col.insufficient))
    by_question = question_positions(col)
    metrics = answer_metrics(col, by_question)
    correct = metrics.path_exact.k
    usage, model_tokens, retry_wait, latency, cost = _usage_and_cost(col, ran - statuses["CONTEXT_OVERFLOW"], prices)
    return Aggregate(
        encoding,
        size,
        ids,
        mode,
        fmt,
        n=ran,
        not_run=members - ran,
        errors=statuses["ERROR"],
        overflow=statuses["CONTEXT_OVERFLOW"],
        overflow_by_server=sum(
            1 for status, error in zip(col.status, col.error) if status == "CONTEXT_OVERFLOW" and error is not None
        ),
        truncated_by_server=sum(col.truncated_by_server),
        prompt_tokens=round(statistics.fmean(list(col.prompt_tokens)), 1) if ran else None,
        metrics=metrics,
        by_hops=hop_metrics(col, by_question.every),
        diagnoses=diagnosis_counts(col.diagnosis),  # why each cell that is not fully right is not
        json_as_asked=sum(1 for status, v in zip(col.status, col.json_as_asked) if status == "OK" and v),
        right_answer_wrong_path=sum(map(operator.truth, itertools.compress(col.right_answer_wrong_path, positive))),
        over_output_cap=sum(map(operator.truth, col.over_output_cap)),
        finish_reasons=dict(sorted(Counter(str(reason) for reason in col.finish_reason if reason).items())),
        answer_correct_spread=_spread(col, positive, 0),
        path_exact_spread=_spread(col, positive, 1),
        tokens_per_correct_path=round(sum(col.prompt_tokens) / correct, 1) if correct else None,
        usage=usage,
        model_prompt_tokens=model_tokens,
        retry_wait_s=retry_wait,
        latency_s=latency,
        cost=cost,
    )


def _spread(col: Columns, positive: list[bool], k: int) -> Spread | None:
    """answer_correct (k 0) or path_exact (k 1) across permutations and repeats (article 8.4): the rate of each run
    (permutation, repeat) over the positive cells, then their summary."""
    by_run: dict[tuple[object, object], list[object]] = {}  # (permutation, repeat) -> the metric's values
    for run, value in itertools.compress(
        zip(zip(col.permutation, col.repeat), (col.answer_correct, col.path_exact)[k]), positive
    ):
        by_run.setdefault(run, []).append(value)
    # statistics.fmean of each run's truths, in C
    per_run = [math.fsum(map(operator.truth, v)) / len(v) for v in by_run.values()]
    return Spread(**summary_stats(per_run), runs=len(per_run)) if per_run else None


def _usage_and_cost(
    col: Columns, sent_cells: int, prices: tuple[float | None, ...]
) -> tuple[Usage, float | None, float, Latency | None, float | None]:
    """The server's usage, the prompt tokens as the model counted them, retry waits, latency and cost."""
    usage_in = [v for v in col.usage_prompt_tokens if isinstance(v, int)]
    usage_out = [v for v in col.usage_completion_tokens if isinstance(v, int)]
    cached = [v for v in col.usage_cached_tokens if isinstance(v, int)]
    usage = Usage(
        sum(usage_in),
        sum(usage_out),
        len(usage_in),
        sum(cached) if cached else None,
        round(sum(cached) / sum(usage_in), 4) if cached and sum(usage_in) else None,
    )
    # The prompt tokens as the model counted them, where every sent prompt has usage: they can rank formats
    # differently from tiktoken (another tokenizer), and they are what is billed.
    model_tokens = round(statistics.fmean(usage_in), 1) if sent_cells and len(usage_in) == sent_cells else None
    latencies = sorted(
        cast(float, latency)
        for status, latency in zip(col.status, col.latency_s)
        if status == "OK" and isinstance(latency, (int, float))
    )
    # article 11: fewer tokens need not mean proportionally less waiting
    latency = (
        Latency(round(statistics.median(latencies), 3), round(latencies[math.ceil(0.95 * len(latencies)) - 1], 3))
        if latencies
        else None
    )
    price_in, price_out, price_cached = (*prices, None)[:3]  # input, output, cached input per million
    served = sum(cached) if cached and price_cached is not None else 0  # priced apart only with its own price
    cost = (
        round(
            ((sum(usage_in) - served) * price_in + served * (price_cached or 0) + sum(usage_out) * price_out)
            / 1_000_000,
            6,
        )
        if price_in is not None and price_out is not None
        else None
    )
    # retry waits apart from latency: they are not the format's
    return usage, model_tokens, round(sum(wait or 0 for wait in col.retry_wait_s), 3), latency, cost


def _mark_pareto(table: list[Aggregate]) -> None:
    """Per group, the formats no other beats on both accuracy (exact paths) and tokens: pareto True."""
    for group in dict.fromkeys(map(group_key, table)):
        front = [e for e in table if group_key(e) == group and e.metrics.path_exact.rate is not None]
        if not any(e.metrics.path_exact.k for e in front):
            continue  # no format has a correct path: nothing is on a front of accuracy
        basis = "model_prompt_tokens" if all(e.model_prompt_tokens is not None for e in front) else "prompt_tokens"
        point = {id(e): (cast(float, e.tokens(basis)), cast(float, e.metrics.path_exact.rate)) for e in front}
        for e in front:
            e.pareto_tokens = basis  # the model's own count when every format has it, else tiktoken's
            tokens, rate = point[id(e)]
            e.pareto = not any(t <= tokens and r >= rate and (t, r) != (tokens, rate) for t, r in point.values())
