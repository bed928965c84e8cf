"""The results of a model run: results.json, cells.csv, results.md and the console lines.

In: the scored cells (scoring.score_log) and the ResultsReport (the measurement, the model, prices, the gate). Out:
per group and format, every metric with its 95% interval over questions and its spread across permutations, the
article's final table (8.6), results per hop count, why answers failed, the verdicts and the recommendation; the cells
themselves, one a line in results.json and one a row in cells.csv, written a chunk at a time.
"""

from __future__ import annotations

import csv
import io
import itertools
import json
import math
import operator
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from json.encoder import c_make_encoder, encode_basestring  # type: ignore[attr-defined]
from typing import TYPE_CHECKING, Any

from . import progress
from ._article import json_bytes, sha256_hex
from .charts import results_svg
from .frameworks import cited_order
from .gate import Verdict, baseline_words, recommendation, verdict_lines, verdicts, why_not_accepted
from .matrix import HOP_BUCKETS, GroupKey, group_key
from .report import REPORT_ANSWER_CHARS, REPORT_CELLS
from .runner.config import SOLVER_MODEL, public_url
from .scoring import DIAGNOSES, AnswerKey, Cell, evidence_triple, parse_answer, reversed_triple, score_log
from .sizes import skipped_text
from .statistics import question_means, rate_interval, summary_stats

if TYPE_CHECKING:
    from ._article import Question
    from .answers import Answer, Answers
    from .artifacts import Outputs
    from .gate import GateSpec
    from .measure import Item, Measurement
    from .runner.config import ModelConfig


# -----------------------------------------------------------------------------
# the scored cells as results are made of them: each group's columns, results.json's lines, cells.csv

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
METRIC_FIELDS = ("question_id", "insufficient", *RATE_METRICS, *MEAN_METRICS)
AGGREGATE_FIELDS = (
    *METRIC_FIELDS,
    "status",
    "hops",
    "error",
    "truncated_by_server",
    "prompt_tokens",
    "over_output_cap",
    "finish_reason",
    "permutation",
    "repeat",
    "usage_prompt_tokens",
    "usage_completion_tokens",
    "usage_cached_tokens",
    "latency_s",
    "retry_wait_s",
    "right_answer_wrong_path",
    "diagnosis",
    "json_as_asked",
)


Columns = dict[str, tuple[Any, ...]]  # field -> its values, row by row (columns)


def columns(rows: Sequence[Mapping[str, object]], fields: tuple[str, ...]) -> Columns:
    """The rows' fields as columns, in one pass over the rows: counting then runs in C loops over the columns
    (a pass per metric over 100,000 row dicts cost more in memory traffic than the counting itself)."""
    if not rows:
        return {f: () for f in fields}
    return dict(zip(fields, zip(*map(operator.itemgetter(*fields), rows))))


Groups = dict[
    tuple[object, ...], tuple[int, Columns]
]  # (group..., format) -> (its cells, the columns of those that ran)


def grouped(rows: Sequence[Mapping[str, object]]) -> Groups:
    """Per group and format, in the order the rows first show them: how many cells, and the AGGREGATE_FIELDS columns of
    the cells that ran (status other than NOT_RUN)."""
    members: dict[tuple[object, ...], list[Mapping[str, object]]] = {}
    for s in rows:
        members.setdefault((s["encoding"], s["size"], s["ids"], s["mode"], s["format"]), []).append(s)
    return {
        key: (len(cells), columns([s for s in cells if s["status"] != "NOT_RUN"], AGGREGATE_FIELDS))
        for key, cells in members.items()
    }


def json_with_rows(
    head: dict[str, Any], key: str, rows: Sequence[Mapping[str, object]], lines: Iterable[bytes] | None = None
) -> Iterator[bytes]:
    """json_bytes of {**head, key: rows}, with each row on one line, in chunks: the same JSON, written by the C
    encoder (the indenting one is pure Python, and 100,000 rows took seconds) and never whole in memory. lines: the
    rows' lines made beforehand (row_chunks), in pieces of any size."""
    opening, closing = json_ends(head, key, bool(rows))
    yield opening
    if rows:
        yield from row_chunks(rows) if lines is None else lines
        yield closing


def json_ends(head: dict[str, Any], key: str, rows: bool) -> tuple[bytes, bytes]:
    """What json_with_rows writes before the rows' lines and after them; with no rows, the whole document and
    nothing."""
    body = json_bytes({**head, key: []}).rstrip()
    if not rows:
        return body + b"\n", b""
    return body[: -len(b"[]\n}")] + b"[\n", b"\n  ]\n}\n"


def row_chunks(rows: Sequence[Mapping[str, object]], per_chunk: int = 2000) -> Iterator[bytes]:
    """The rows of json_with_rows, one a line, joined by ',\\n' (no separator after the last), a chunk of rows at a
    time: neither their text nor their bytes are ever whole in memory (100,800 rows made whole took 59,000 page
    faults of fresh memory)."""
    encode = row_encoder()
    for start in range(0, len(rows), per_chunk):
        yield (",\n" * (start > 0) + ",\n".join("    " + encode(r) for r in rows[start : start + per_chunk])).encode()


def row_encoder() -> Callable[[object], str]:
    """json.JSONEncoder(ensure_ascii=False).encode, through one C encoder made here: encode() makes a new one for
    every value, an eighth of the time of encoding 100,800 rows. Where the C encoder is missing, encode() itself."""
    encoder = json.JSONEncoder(ensure_ascii=False)
    if c_make_encoder is None:
        return encoder.encode
    made = c_make_encoder({}, encoder.default, encode_basestring, None, ": ", ", ", False, False, True)
    return lambda value: "".join(made(value, 0))


CSV_FIELDS = (
    "encoding",
    "size",
    "ids",
    "permutation",
    "mode",
    "format",
    "question_id",
    "hops",
    "insufficient",
    "repeat",
    "status",
    "prompt_tokens",
    "usage_prompt_tokens",
    "usage_completion_tokens",
    "parse_success",
    "json_as_asked",
    "abstained",
    "answer_correct",
    "path_exact",
    "valid_path",
    "edge_precision",
    "edge_recall",
    "evidence_match",
    "diagnosis",
    "finish_reason",
    "latency_s",
    "error",
)


def csv_chunks(scored: Sequence[Mapping[str, object]], header: bool = True, per_chunk: int = 2000) -> Iterator[bytes]:
    """cells.csv: one line per scored cell, for a spreadsheet, after a header line (unless header is False), a chunk
    of rows at a time; an empty field where the cell holds None (the csv module writes None so)."""
    get = operator.itemgetter(*CSV_FIELDS)
    for start in range(0, max(len(scored), 1), per_chunk):  # the header alone when there is no row
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        if header and not start:
            writer.writerow(CSV_FIELDS)
        writer.writerows(map(get, scored[start : start + per_chunk]))
        yield out.getvalue().encode("utf-8")


# -----------------------------------------------------------------------------
# the figures: metrics over questions, aggregates, hop buckets


def answer_metrics(
    col: Columns,
    by_question: dict[str, dict[str, list[int]]] | None = None,
    truths: frozenset[str] | None = None,
) -> dict[str, Any]:
    """The rates and means of some scored cells, given as columns (METRIC_FIELDS and question_id at least), each over
    questions with a 95% interval: answers and paths over the positive questions, abstention over the others.
    k and n count the cells (runs) behind them. by_question: the cells' positions in the columns per question
    (question_positions), when only some of the cells are meant (hop_metrics); truths: truth_columns(col)."""
    by_question = question_positions(col) if by_question is None else by_question
    truths = truth_columns(col) if truths is None else truths
    out = {}
    for metric in (*RATE_METRICS, "abstention_correct", *MEAN_METRICS):
        groups = by_question[
            "abstention" if metric == "abstention_correct" else "all" if metric == "parse_success" else "positive"
        ]
        column = "answer_correct" if metric == "abstention_correct" else metric
        means, runs, k = question_means(col[column], groups, column in truths)
        entry = rate_interval(means, runs == len(means) and metric not in MEAN_METRICS)
        if metric in MEAN_METRICS:
            out[metric] = {
                "mean": entry["rate"],
                "n": runs,
                **{key: entry[key] for key in ("questions", "ci95", "method")},
            }
        else:
            out[metric] = {"k": k, "n": runs, **entry}
    return out


def truth_columns(col: Columns) -> frozenset[str]:
    """The rate columns that hold nothing but bools, which question_means sums in one pass."""
    return frozenset(metric for metric in RATE_METRICS if set(map(type, col[metric])) <= {bool})


def question_positions(col: Columns, every: dict[str, list[int]] | None = None) -> dict[str, dict[str, list[int]]]:
    """Each question's cells, as positions in the columns, in the order of their first cell: of every question
    ("all"), and apart, of the positive questions and of the abstention ones. every: "all", when it is known (the
    questions of one hop bucket)."""
    if every is None:
        every = {}
        for k, qid in enumerate(col["question_id"]):
            every.setdefault(qid, []).append(k)
    split = by_value(every, col["insufficient"])
    return {"positive": split.get(False, {}), "abstention": split.get(True, {}), "all": every}


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


def hop_metrics(col: Columns, every: dict[str, list[int]] | None = None) -> dict[str, dict[str, Any]]:
    """Article 11: 1, 2, 3 and 4+ hops, and the abstention questions, apart: each bucket's metrics and diagnoses, from
    a group's columns (METRIC_FIELDS, hops and diagnosis). every: each question's positions (question_positions'
    "all"), when made already."""
    every = question_positions(col)["all"] if every is None else every
    buckets, truths = by_value(every, col["hops"]), truth_columns(col)
    out = {}
    for bucket in HOP_BUCKETS:
        if bucket in buckets:
            at = list(itertools.chain.from_iterable(buckets[bucket].values()))
            out[bucket] = {
                "n": len(at),
                **answer_metrics(col, question_positions(col, buckets[bucket]), truths),
                "diagnoses": diagnosis_counts(map(col["diagnosis"].__getitem__, at)),
            }
    return out


def aggregate(scored: list[Cell], prices: tuple[float | None, ...]) -> list[dict[str, Any]]:
    """Per encoding, size, ids, mode and format: n, each metric with a 95% interval and its spread across
    permutations and repeats, tokens per correct path, usage and cost; and which formats are on the front of accuracy
    against tokens (pareto)."""
    groups = grouped(scored)
    table = [_aggregate_entry(key, members, col, prices) for key, (members, col) in groups.items()]
    _mark_pareto(table)
    return table


def _aggregate_entry(
    key: tuple[object, ...], members: int, col: Columns, prices: tuple[float | None, ...]
) -> dict[str, Any]:
    """One group and format's entry of the aggregates: of its members (cells), the columns of those that ran."""
    encoding, size, ids, mode, fmt = key
    ran = len(col["status"])
    statuses = Counter(col["status"])
    positive = list(map(operator.not_, col["insufficient"]))
    entry: dict[str, Any] = {
        "encoding": encoding,
        "size": size,
        "ids": ids,
        "mode": mode,
        "format": fmt,
        "n": ran,
        "not_run": members - ran,
        "errors": statuses["ERROR"],
        "overflow": statuses["CONTEXT_OVERFLOW"],
        "overflow_by_server": sum(
            1
            for status, error in zip(col["status"], col["error"])
            if status == "CONTEXT_OVERFLOW" and error is not None
        ),
        "truncated_by_server": sum(col["truncated_by_server"]),
        "prompt_tokens": round(statistics.fmean(list(col["prompt_tokens"])), 1) if ran else None,
    }
    by_question = question_positions(col)
    entry.update(answer_metrics(col, by_question))
    entry["by_hops"] = hop_metrics(col, by_question["all"])
    entry["diagnoses"] = diagnosis_counts(col["diagnosis"])  # why each cell that is not fully right is not
    entry["json_as_asked"] = sum(1 for status, v in zip(col["status"], col["json_as_asked"]) if status == "OK" and v)
    entry["right_answer_wrong_path"] = sum(
        map(operator.truth, itertools.compress(col["right_answer_wrong_path"], positive))
    )
    entry["over_output_cap"] = sum(map(operator.truth, col["over_output_cap"]))
    entry["finish_reasons"] = dict(sorted(Counter(reason for reason in col["finish_reason"] if reason).items()))
    entry.update(_spreads(col, positive))
    correct = entry["path_exact"]["k"]
    entry["tokens_per_correct_path"] = round(sum(col["prompt_tokens"]) / correct, 1) if correct else None
    entry.update(_usage_and_cost(col, ran - statuses["CONTEXT_OVERFLOW"], prices))
    return entry


def _spreads(col: Columns, positive: list[bool]) -> dict[str, Any]:
    """answer_correct and path_exact spread across permutations and repeats (article 8.4): the rate of each run
    (permutation, repeat) over the positive cells, then their summary."""
    # (permutation, repeat) -> [(answer correct, path exact)]
    by_run: dict[tuple[object, object], list[tuple[object, object]]] = {}
    for run, right, exact in itertools.compress(
        zip(zip(col["permutation"], col["repeat"]), col["answer_correct"], col["path_exact"]), positive
    ):
        by_run.setdefault(run, []).append((right, exact))
    out = {}
    for k, metric in enumerate(("answer_correct", "path_exact")):
        # statistics.fmean of each run's truths, in C
        per_run = [math.fsum(map(operator.truth, map(operator.itemgetter(k), v))) / len(v) for v in by_run.values()]
        out[f"{metric}_spread"] = {**summary_stats(per_run), "runs": len(per_run)} if per_run else None
    return out


def _usage_and_cost(col: Columns, sent_cells: int, prices: tuple[float | None, ...]) -> dict[str, Any]:
    """The server's usage, the prompt tokens as the model counted them, latency, retry waits and cost."""
    usage_in = [v for v in col["usage_prompt_tokens"] if isinstance(v, int)]
    usage_out = [v for v in col["usage_completion_tokens"] if isinstance(v, int)]
    cached = [v for v in col["usage_cached_tokens"] if isinstance(v, int)]
    out: dict[str, Any] = {
        "usage": {
            "prompt_tokens": sum(usage_in),
            "completion_tokens": sum(usage_out),
            "responses_with_usage": len(usage_in),
            "cached_tokens": sum(cached) if cached else None,
            "cached_share": round(sum(cached) / sum(usage_in), 4) if cached and sum(usage_in) else None,
        }
    }
    # The prompt tokens as the model counted them, where every sent prompt has usage: they can rank formats
    # differently from tiktoken (another tokenizer), and they are what is billed.
    out["model_prompt_tokens"] = (
        round(statistics.fmean(usage_in), 1) if sent_cells and len(usage_in) == sent_cells else None
    )
    latencies = sorted(
        latency
        for status, latency in zip(col["status"], col["latency_s"])
        if status == "OK" and isinstance(latency, (int, float))
    )
    # retry waits apart from latency: they are not the format's
    out["retry_wait_s"] = round(sum(wait or 0 for wait in col["retry_wait_s"]), 3)
    out["latency_s"] = (  # article 11: fewer tokens need not mean proportionally less waiting
        {
            "median": round(statistics.median(latencies), 3),
            "p95": round(latencies[math.ceil(0.95 * len(latencies)) - 1], 3),
        }
        if latencies
        else None
    )
    price_in, price_out, price_cached = (*prices, None)[:3]  # input, output, cached input per million
    served = sum(cached) if cached and price_cached is not None else 0  # priced apart only with its own price
    out["cost"] = (
        round(
            ((sum(usage_in) - served) * price_in + served * (price_cached or 0) + sum(usage_out) * price_out)
            / 1_000_000,
            6,
        )
        if price_in is not None and price_out is not None
        else None
    )
    return out


def _mark_pareto(table: list[dict[str, Any]]) -> None:
    """Per group, the formats no other beats on both accuracy (exact paths) and tokens: pareto True."""
    for group in dict.fromkeys(map(group_key, table)):
        front = [e for e in table if group_key(e) == group and e["path_exact"]["rate"] is not None]
        if not any(e["path_exact"]["k"] for e in front):
            continue  # no format has a correct path: nothing is on a front of accuracy
        basis = "model_prompt_tokens" if all(e["model_prompt_tokens"] is not None for e in front) else "prompt_tokens"
        for e in front:
            e["pareto_tokens"] = basis  # the model's own count when every format has it, else tiktoken's
            e["pareto"] = not any(
                o[basis] <= e[basis]
                and o["path_exact"]["rate"] >= e["path_exact"]["rate"]
                and (o[basis], o["path_exact"]["rate"]) != (e[basis], e["path_exact"]["rate"])
                for o in front
            )


def _rate(cell: dict[str, Any] | None) -> str:
    if not cell or cell.get("rate") is None:
        return ""
    if not cell.get("ci95"):  # one question: no interval
        return f"{cell['rate']:.2f}"
    low, high = cell["ci95"]
    return f"{cell['rate']:.2f} ({low:.2f}–{high:.2f})"


def _bar(value: float, top: float, width: int = 20) -> str:
    filled = round(width * value / top) if top else 0
    return "█" * filled + "·" * (width - filled)


def _tokens(e: dict[str, Any]) -> str:
    """'970 (800)': tiktoken's count, and the model's own where the log has it."""
    tokens = "" if e["prompt_tokens"] is None else f"{e['prompt_tokens']:,.0f}"
    return tokens + (f" ({e['model_prompt_tokens']:,.0f})" if e["model_prompt_tokens"] is not None else "")


def _cost_header(prices: tuple[float | None, ...]) -> str:
    """'cost (USD at 2.5 / 10 per million input / output tokens)': the unit and the prices the cost is counted at."""
    price_in, price_out, price_cached = (*prices, None)[:3]
    if price_in is None:
        return "cost (no prices passed)"
    cached = f", cached input {price_cached:g}" if price_cached is not None else ""
    return f"cost (USD at {price_in:g} / {price_out:g} per million input / output tokens{cached})"


CellText = Callable[[dict[str, Any]], str]  # what a table's column shows of an entry (_table)


def _table(entries: list[dict[str, Any]], columns: list[tuple[str, CellText, bool]], model: bool) -> list[str]:
    """A Markdown table of entries: columns (header, cell, only in a model run) and a first column of formats (★ on
    the Pareto front). A run of the control solver has no usage, cost or latency: those columns are left out."""
    shown = [(h, cell) for h, cell, model_only in columns if model or not model_only]
    lines = ["| format | " + " | ".join(h for h, _ in shown) + " |", "|---|" + "---:|" * len(shown)]
    for e in entries:
        lines.append(
            f"| {e['format']}{' ★' if e.get('pareto') else ''} | " + " | ".join(cell(e) for _, cell in shown) + " |"
        )
    return lines


def _cost(e: dict[str, Any]) -> str:
    return "" if e["cost"] is None else f"{e['cost']:.4f}"


def _compact_table(entries: list[dict[str, Any]], model: bool, prices: tuple[float | None, ...]) -> list[str]:
    """What a decision needs first: tokens, answer, path exact with its interval, abstention, cost."""
    return _table(
        entries,
        [
            ("prompt tokens (the model's count)" if model else "prompt tokens", _tokens, False),
            ("answer", lambda e: _rate(e["answer_correct"]), False),
            ("path exact", lambda e: _rate(e["path_exact"]), False),
            ("abstention", lambda e: _rate(e["abstention_correct"]), False),
            (_cost_header(prices), _cost, True),
        ],
        model,
    )


def _hop_table(entries: list[dict[str, Any]]) -> list[str]:
    lines = [
        "Per hop count (article 11): path exact for positive questions, abstention accuracy for the others; n in "
        "brackets.",
        "",
        "| format | "
        + " | ".join(f"{b} hop{'s' if b != '1' else ''}" if b != "abstention" else b for b in HOP_BUCKETS)
        + " |",
        "|---|" + "---:|" * len(HOP_BUCKETS),
    ]
    for e in entries:
        cells = []
        for b in HOP_BUCKETS:
            part = e["by_hops"].get(b)
            metric = "abstention_correct" if b == "abstention" else "path_exact"
            cells.append(f"{_rate(part[metric])} [{part['n']}]" if part and part[metric]["rate"] is not None else "")
        lines.append(f"| {e['format']} | " + " | ".join(cells) + " |")
    return lines


def diagnosis_table(entries: list[dict[str, Any]], examples: dict[tuple[str, str], dict[str, Any]]) -> list[str]:
    """Why answers failed, per format: the cells of each diagnosis (share of the format's cells), then each diagnosis
    that occurs with its meaning, the article's remedy and one example answer."""
    names = [name for name in DIAGNOSES if any(name in e["diagnoses"] for e in entries)]
    if not names:
        return []
    lines = [
        "",
        "### Why answers failed",
        "",
        "Cells that are not fully right, by diagnosis (README: Why answers fail); share of "
        "the format's cells in brackets. JSON as asked: replies that were only the JSON object, not fenced or in "
        "prose.",
        "",
        "| format | cells | JSON as asked | " + " | ".join(n.replace("_", " ") for n in names) + " |",
        "|---|---:|---:|" + "---:|" * len(names),
    ]
    for e in entries:
        cells = [
            f"{e['diagnoses'][n]} ({e['diagnoses'][n] / e['n']:.0%})" if n in e["diagnoses"] else "" for n in names
        ]
        lines.append(f"| {e['format']} | {e['n']} | {e['json_as_asked']} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "By hop count, every format together (results.json has them per format: by_hops[].diagnoses):",
        "",
        "| hops | cells | " + " | ".join(n.replace("_", " ") for n in names) + " |",
        "|---|---:|" + "---:|" * len(names),
    ]
    for bucket in HOP_BUCKETS:
        parts = [e["by_hops"][bucket] for e in entries if bucket in e["by_hops"]]
        if parts:
            total: Counter[str] = Counter()
            for part in parts:
                total.update(part["diagnoses"])
            lines.append(
                f"| {bucket} | {sum(p['n'] for p in parts)} | "
                + " | ".join(str(total[n]) if total[n] else "" for n in names)
                + " |"
            )
    lines.append("")
    for name in names:
        meaning, remedy = DIAGNOSES[name]
        lines.append(f"- **{name.replace('_', ' ')}**: {meaning}. Remedy: {remedy}.")
        for e in entries:
            example = examples.get((e["format"], name))
            if example is not None and name in e["diagnoses"]:
                said = example["answer"] if example["answer"] is not None else f"error: {example['error']}"
                text = " ".join(str(said).split())[:300].replace("`", "'")
                lines.append(f"  Example ({e['format']}, {example['question_id']}): `{text}`")
                break
    return lines


def _notes_and_bars(entries: list[dict[str, Any]], config: ModelConfig) -> list[str]:
    """The star's meaning, finish reasons, ignored caps, cached shares, and a text chart of tokens and path exact."""
    star = (
        "★ on the Pareto front of prompt tokens against path exact match."
        if any(e.get("pareto") for e in entries)
        else "No format has a correct path here, so none is marked: fewer tokens alone do not make a front."
    )
    shares = "; ".join(
        f"{e['format']} {e['usage']['cached_share']:.2f}" for e in entries if e["usage"]["cached_share"] is not None
    )
    reasons = "; ".join(
        f"{e['format']} " + ", ".join(f"{r} {n}" for r, n in e["finish_reasons"].items())
        for e in entries
        if e["finish_reasons"]
    )
    ignored = "; ".join(f"{e['format']} {e['over_output_cap']}" for e in entries if e["over_output_cap"])
    lines = [
        "",
        star,
        *([f"finish_reason per format: {reasons}."] if reasons else []),
        *(
            [
                f"Answers longer than --max-output-tokens {config.max_output_tokens} (the server ignored the cap): "
                f"{ignored}."
            ]
            if ignored
            else []
        ),
        *([f"Share of prompt tokens served from the provider's prefix cache: {shares}."] if shares else []),
        "",
        "```",
    ]
    top = max((e["prompt_tokens"] or 0) for e in entries)
    width = max(len(e["format"]) for e in entries)
    for e in entries:
        rate, spread = e["path_exact"]["rate"], e["path_exact_spread"]
        sd = f" (sd {spread['sd']:.2f} over {spread['runs']} runs)" if spread and spread["sd"] is not None else ""
        lines.append(
            f"{e['format']:<{width}}  tokens {_bar(e['prompt_tokens'] or 0, top)} {e['prompt_tokens'] or 0:>9,.0f}   "
            f"path exact {_bar(rate or 0, 1.0)} {'' if rate is None else f'{rate:.2f}'}{sd}"
        )
    return [*lines, "```"]


def _wide_table(entries: list[dict[str, Any]], model: bool, prices: tuple[float | None, ...]) -> list[str]:
    """The article's final table (8.6), every metric."""
    mean: Callable[[str], CellText] = lambda m: lambda e: "" if e[m]["mean"] is None else f"{e[m]['mean']:.2f}"  # noqa: E731
    rate: Callable[[str], CellText] = lambda m: lambda e: _rate(e[m])  # noqa: E731
    return _table(
        entries,
        [
            ("n", lambda e: str(e["n"]), False),
            ("questions", lambda e: str(e["path_exact"]["questions"] + e["abstention_correct"]["questions"]), False),
            ("prompt tokens (the model's count)" if model else "prompt tokens", _tokens, False),
            ("parse", rate("parse_success"), False),
            ("answer", rate("answer_correct"), False),
            ("path exact", rate("path_exact"), False),
            ("valid path", rate("valid_path"), False),
            ("evidence", rate("evidence_match"), False),
            ("edge P", mean("edge_precision"), False),
            ("edge R", mean("edge_recall"), False),
            ("abstention", rate("abstention_correct"), False),
            ("false abstention", rate("false_abstention"), False),
            ("right answer, wrong path", lambda e: str(e["right_answer_wrong_path"]), False),
            ("errors", lambda e: str(e["errors"]), True),
            ("overflow", lambda e: str(e["overflow"]), True),
            (_cost_header(prices), _cost, True),
            (
                "tokens / correct path",
                lambda e: "" if e["tokens_per_correct_path"] is None else f"{e['tokens_per_correct_path']:,.0f}",
                False,
            ),
            (
                "latency p50 / p95 s",
                lambda e: (
                    "" if e["latency_s"] is None else f"{e['latency_s']['median']:.2f} / {e['latency_s']['p95']:.2f}"
                ),
                True,
            ),
        ],
        model,
    )


def results_markdown(
    table: list[dict[str, Any]],
    summary: dict[str, Any],
    config: ModelConfig,
    log: dict[str, Any],
    prices: tuple[float | None, ...],
    questions: tuple[Question, ...],
    gate: list[Verdict],
    baseline: str,
    tolerance: float,
    skipped: list[dict[str, Any]] | tuple[()] = (),
    examples: dict[tuple[str, str], dict[str, Any]] | None = None,
    read: str = "",
) -> str:
    # every field sent, but the schema
    sampling = {k: v for k, v in config.sampling(0).items() if k != "response_format"}
    endpoint = (
        public_url(config.base_url)
        if config.model != SOLVER_MODEL
        else "none (the control solver, which has no context window)"
    )
    lines = [
        f"# Results: {config.model}",
        # the outcome first: what to ship, then the verdicts
        *verdict_lines(gate, tolerance, baseline, config.model == SOLVER_MODEL),
        "",
        f"Endpoint: {endpoint}. Sampling: "
        f"{json.dumps(sampling, ensure_ascii=False)}{' (seed + repeat)' if config.seed is not None else ''}, "
        f"structured output {config.structured or 'off'}, repeats {config.repeats}. Scored: {log['name']}, SHA-256 "
        f"`{log['sha256']}`.",
        "",
        "Every figure comes from the log. Rates are over answered and failed prompts alike (a failed request, an "
        "overflow or an unparsable answer is a failed task); each is over questions, a question's permutations and "
        "repeats averaged into one value, with a 95% interval over questions (Wilson's for one run per question, a "
        "guarded t interval otherwise; results.json names the method and the questions behind each). Answer and path "
        "figures are over positive questions, abstention over the INSUFFICIENT_DATA ones. An empty cell was not "
        "measured. An answer is right when it matches any acceptable answer, a path when it equals any gold path.",
        "",
        f"Questions: {len(questions)}: {len(questions) - sum(q.insufficient for q in questions)} positive questions "
        "(of which "
        f"{sum(q.several for q in questions)} have several acceptable answers or gold paths) and "
        f"{sum(q.insufficient for q in questions)} abstention questions."
        + (
            f" Skipped by --skip-invalid-questions: {len(skipped)} question(s): {skipped_text(skipped)}."
            if skipped
            else ""
        )
        + (f" Graph: {read}." if read else ""),
        "",
        "![Prompt tokens against path exact match](results.svg)",
    ]
    first, *rest = summary_lines(summary, config)
    lines += ["", f"{first[0].upper()}{first[1:]}.", *(f"- {line}" for line in rest)]
    if summary["mode"] == "run":  # this invocation above, every invocation in the log here
        whole = summary_lines({**summary["log"], "mode": "log"}, config)[0]
        lines += ["", f"{whole[0].upper()}{whole[1:]}."]
    groups: dict[GroupKey, list[dict[str, Any]]] = {}
    for e in table:
        groups.setdefault(group_key(e), []).append(e)
    for (encoding, size, ids, mode), entries in groups.items():
        model = config.model != SOLVER_MODEL
        lines += [
            "",
            f"## {encoding} · {size} · {ids} · mode {mode}",
            "",
            *_compact_table(entries, model, prices),
            "",
            *_hop_table(entries),
        ]
        lines += diagnosis_table(entries, examples or {})
        lines += _notes_and_bars(entries, config)
        lines += ["", "### Every metric", "", *_wide_table(entries, model, prices)]
    return "\n".join(lines) + "\n"


def summary_lines(summary: dict[str, Any], config: ModelConfig) -> list[str]:
    """The request summary as sentences, for stdout and results.md: failures by reason, cut answers, notes."""
    kind = summary.get("mode")
    if kind == "run":
        lines = [
            f"requests: {summary['sent']} sent, {summary['skipped']} already in the log, {summary['failed']} failed"
        ]
    elif kind == "batch":
        lines = [
            f"batch: {summary['lines']} answer lines in {', '.join(summary['files'])}, {summary['planned']} prompts "
            f"planned, {summary['missing']} with no line, {summary['failed']} failed"
        ]
    else:
        lines = [
            f"log: {summary['answered']} of {summary['planned']} planned requests answered, {summary['failed']} "
            "failed, "
            f"{summary['not_run']} not run, over {summary['invocations']} invocation(s)"
        ]
    lines += [f"{count} x {reason}" for reason, count in summary["failures"].items()]
    waits = summary.get("rate_limit_waits") or {}
    if waits.get("requests"):
        lines.append(
            f"{waits['requests']} of {summary['sent']} request(s) ({waits['requests'] / max(summary['sent'], 1):.0%}) "
            "waited for "
            "the rate limit (--tokens-per-minute, --requests-per-minute, or the server's x-ratelimit headers): "
            f"{waits['seconds']:g} s in all, "
            f"the longest {waits['longest_s']:g} s"
        )
    short = summary.get("cut_before_cap") or 0
    if summary.get("cut_by_length", 0) > short:
        lines.append(
            f"{summary['cut_by_length'] - short} answer(s) cut at the output cap (finish_reason length): raise "
            f"--max-output-tokens (now {config.max_output_tokens})"
        )
    if short:
        low, high = summary["cut_before_cap_at_tokens"]
        lines.append(
            f"{short} answer(s) cut short of the output cap, at {low:,}{f' to {high:,}' if high != low else ''} tokens "
            "of prompt "
            "and answer together (finish_reason length): the server's context window ended them, not "
            "--max-output-tokens; "
            "give the server a larger context (llama.cpp: --n_ctx) or send shorter prompts (--context-window to the "
            "server's, less the answer)"
        )
    if summary.get("context_overflow_by_server"):
        counted = summary.get("refused_prompt_tokens") or []
        local = f"{counted[0]:,}" + (f" to {counted[-1]:,}" if counted[-1] != counted[0] else "") if counted else ""
        lines.append(
            f"{summary['context_overflow_by_server']} prompt(s) refused by the server as over its context window: "
            "scored as CONTEXT_OVERFLOW; lower --context-window to the server's so they are not sent"
            + (
                f"; they count {local} tokens here, but the server counts with the model's own tokenizer and adds its "
                "chat template (30 tokens on a llama.cpp server with SmolLM2): count with --encoding hf:PATH to the "
                "served model's tokenizer.json and leave room for the template"
                if local
                else ""
            )
        )
    lines += summary.get("notes", [])
    return lines


def console_results(
    table: list[dict[str, Any]],
    summary: dict[str, Any],
    model: ModelConfig,
    gate: list[Verdict],
    baseline: str,
    skipped: list[dict[str, Any]],
) -> str:
    """What a model run prints: a line per group and format, the
    request summary, the verdicts, the skipped questions."""
    lines = ["encoding\tsize\tids\tmode\tformat\tn\tprompt_tokens\tanswer\tpath_exact\terrors\toverflow"]
    for e in table:
        answer, path = ("" if e[m]["rate"] is None else f"{e[m]['rate']:.2f}" for m in ("answer_correct", "path_exact"))
        tokens = "" if e["prompt_tokens"] is None else f"{e['prompt_tokens']:.0f}"
        lines.append(
            f"{e['encoding']}\t{e['size']}\t{e['ids']}\t{e['mode']}\t{e['format']}\t{e['n']}\t{tokens}\t"
            f"{answer}\t{path}\t{e['errors']}\t{e['overflow']}"
        )
    first, *rest = summary_lines(summary, model)
    lines += [first, *(f"  {line}" for line in rest)]
    for group in dict.fromkeys(group_key(v) for v in gate):
        lines.append(
            f"verdict for {' · '.join(group)}: "
            + recommendation([v for v in gate if group_key(v) == group], baseline, model.model == SOLVER_MODEL)
        )
    if skipped:
        lines.append(f"skipped {len(skipped)} question(s) (--skip-invalid-questions): {skipped_text(skipped)}")
    return "\n".join(lines)


def run_failure(summary: dict[str, Any]) -> str | None:
    """Why a run or a scoring did not fully succeed (exit code 1), or None."""
    if summary["mode"] == "run" and summary.get("stopped"):
        return (
            f"{summary['stopped']}; {summary['sent']} request(s) sent, {summary['not_sent']} not sent; once that is "
            "fixed (the server started again, the key set), the same command sends only those: what was answered is "
            "kept"
        )
    if summary["mode"] == "run" and not summary["sent"] and not summary["skipped"]:
        return "no request was sent: every prompt is over --context-window or outside --limit, so nothing was answered"
    if summary["mode"] == "run" and summary["failed"]:
        return (
            f"{summary['failed']} of {summary['sent']} requests failed after their retries"
            f"{' (none succeeded)' if summary['failed'] == summary['sent'] else ''}; run the same command again to "
            "retry them only"
        )
    if summary["mode"] != "run" and summary["failed"]:
        return (
            f"{summary['failed']} of {summary['planned']} planned requests have no answer in the scored files "
            "(see results.md)"
        )
    return None


@dataclass(frozen=True)
class ResultsReport:
    """What the results are drawn against: the measurement, the model, prices, the gate and what the run skipped."""

    measured: Measurement
    model: ModelConfig
    prices: tuple[float | None, ...]
    gate_spec: GateSpec
    hints: dict[GroupKey, str]  # mode B budget notes
    skipped: list[dict[str, Any]]
    context_window: int
    header: dict[str, Any]  # model, run and command, at the top of results.json


def questions_sha256(measured: Measurement) -> dict[str, str]:
    """Per variant (size.ids), the SHA-256 of its questions (id, text, gold), so that runs can be compared only over
    the same questions."""
    return {
        v.name: sha256_hex(
            json.dumps(
                sorted(
                    [q.id, q.question, list(q.answers), [list(p) for p in q.paths], q.insufficient] for q in v.questions
                ),
                ensure_ascii=False,
            )
        )
        for v in measured.variants
    }


def report_model(
    scored: list[Cell],
    answers: Answers,
    report: ResultsReport,
    table: list[dict[str, Any]],
    gate: list[Verdict],
    baseline: str,
    tolerance: float,
) -> dict[str, Any]:
    """What report.html shows of a model run: the verdicts, diagnoses per format, and every cell with its answer."""
    cells = report_cells(scored, answers.best, report.measured.items)
    notes = [f"the page holds the first {REPORT_CELLS:,} of {len(scored):,} cells; cells.csv has them all"] * (
        len(scored) > REPORT_CELLS
    )
    names = [name for name in DIAGNOSES if any(name in e["diagnoses"] for e in table)]
    groups = list(dict.fromkeys(group_key(v) for v in gate))
    verdicts = [
        {
            "group": " · ".join(map(str, group_key(v))),
            "format": v["format"],
            "verdict": v["verdict"],
            "why": why_not_accepted(v),
            "saving": v["saving"],
        }
        for v in gate
    ]
    recommended = [
        f"{' · '.join(map(str, g))}: "
        + recommendation([v for v in gate if group_key(v) == g], baseline, report.model.model == SOLVER_MODEL)
        for g in groups
    ]
    return {
        "model": report.model.model,
        "cells": cells,
        "notes": notes,
        "verdicts": verdicts,
        "recommendations": recommended,
        "baseline": baseline_words(baseline),
        "baseline_format": baseline,
        "tolerance": tolerance,
        "diagnosis_names": names,
        "meanings": {n: f"{DIAGNOSES[n][0]}. Remedy: {DIAGNOSES[n][1]}" for n in names},
        "aggregates": [
            {
                "format": f"{e['format']} ({e['size']} · {e['ids']} · {e['mode']})",
                "n": e["n"],
                "diagnoses": e["diagnoses"],
            }
            for e in table
        ],
    }


def report_cells(
    scored: list[Cell], answers: Mapping[tuple[str, int], Answer], items: list[Item]
) -> list[dict[str, Any]]:
    """The model-run cells as the page shows them, the first REPORT_CELLS of the rows: scores, diagnosis, the raw
    answer, the gold path's edges, and each evidence item of the answer marked shown, reversed (only its reverse is
    shown) or not shown."""
    by_sha = {item.row.prompt_sha256: item for item in items}
    keys: dict[str, AnswerKey] = {}
    cells: list[dict[str, Any]] = []
    for s in scored[:REPORT_CELLS]:
        item = by_sha[s["prompt_sha256"]]
        record = answers.get((s["prompt_sha256"], s["repeat"]))
        content = record.content if record is not None and isinstance(record.content, str) else None
        key = keys.get(s["prompt_sha256"])
        if key is None:
            shown = item.shown()
            order = cited_order(item.row.format, shown)
            key = keys[s["prompt_sha256"]] = AnswerKey(shown, item.question, undirected=item.undirected, order=order)
        edges = key.shown.edges
        parsed = parse_answer(content) if content is not None else None
        evidence = []
        for ev in (parsed or {}).get("evidence", [])[:50]:
            triple = evidence_triple(ev)
            mark = (
                (
                    "shown"
                    if key.shown_at(ev) != -1
                    else "reversed"
                    if key.shown_at(reversed_triple(ev)) != -1
                    else "not shown"
                )
                if triple
                else "malformed"
            )
            evidence.append(
                {"edge": " ".join(triple) if triple else json.dumps(ev, ensure_ascii=False)[:200], "mark": mark}
            )
        cells.append(
            {
                "format": s["format"],
                "question": s["question_id"],
                "hops": s["hops"],
                "size": s["size"],
                "ids": s["ids"],
                "mode": s["mode"],
                "permutation": s["permutation"],
                "repeat": s["repeat"],
                "status": s["status"],
                "insufficient": s["insufficient"],
                "answer_correct": s["answer_correct"],
                "path_exact": s["path_exact"],
                "valid_path": s["valid_path"],
                "diagnosis": s["diagnosis"],
                "error": s["error"],
                "answer": (content[:REPORT_ANSWER_CHARS] + ("…" if len(content) > REPORT_ANSWER_CHARS else ""))
                if content is not None
                else None,
                "gold": [[" ".join(edges[i]) for i in p if 0 <= i < len(edges)] for p in item.question.paths[:3]],
                "evidence": evidence,
            }
        )
    return cells


WRITING = "the answers are scored; making the figures and writing results.json, cells.csv and report.html"


def write_results(out: Outputs, answers: Answers, report: ResultsReport) -> tuple[str, str | None]:
    """Score every answer, judge the formats, and add results.json, results.md and results.svg; return what goes
    to stdout and why the run did not fully succeed, if it did not. A scoring that took long says on stderr what
    comes next."""
    model, (baseline, tolerance, abstention_tolerance) = report.model, report.gate_spec
    examples: dict[tuple[str, str], dict[str, Any]] = {}  # (format, diagnosis) -> its first cell
    started = time.monotonic()
    scored = score_log(answers.best, report.measured.items, report.model, examples, "scoring")
    if time.monotonic() - started >= progress.PROGRESS_AFTER:
        print(WRITING, file=sys.stderr, flush=True)
    table = aggregate(scored, report.prices)
    gate = verdicts(scored, table, baseline, tolerance, report.hints, abstention_tolerance)
    out.add_chunks("cells.csv", csv_chunks(scored))
    head = {
        "schema_version": 1,
        "tool_version": TOOL_VERSION,
        **report.header,
        "questions_sha256": questions_sha256(report.measured),
        "prices_per_million": dict(zip(("input", "output", "cached_input"), report.prices)),
        "log": answers.log,
        "requests": answers.summary,
        "verdicts": gate,
        "aggregates": table,
        "diagnosis_examples": [{"format": f, "diagnosis": d, **examples[(f, d)]} for f, d in sorted(examples)],
    }
    out.add_chunks("results.json", json_with_rows(head, "cells", scored))
    out.report["model"] = report_model(scored, answers, report, table, gate, baseline, tolerance)
    markdown = results_markdown(
        table,
        answers.summary,
        model,
        answers.log,
        report.prices,
        questions=report.measured.variants[0].questions,
        gate=gate,
        baseline=baseline,
        tolerance=tolerance,
        skipped=report.skipped,
        examples=examples,
        read=report.header.get("run", {}).get("graph_read", ""),
    )
    svg = results_svg(table, baseline, gate, report.context_window)
    out.add("results.md", markdown.encode("utf-8"))
    out.add("results.svg", svg.encode("utf-8"))
    out.report["svg"] = svg
    return console_results(table, answers.summary, model, gate, baseline, report.skipped), run_failure(answers.summary)


TOOL_VERSION = "2026.12.2"  # written into results.json; bumped when scoring, the gate or results.json change
