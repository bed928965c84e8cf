"""The results of a model run: results.json, cells.csv, results.md and the console lines.

In: the scored cells (scoring.score_log), their figures (aggregates.aggregate), the verdicts (gate.verdicts) and the
ResultsReport (the measurement, the model, prices, the gate's settings). Out, written: per group and format every
metric with its 95% interval, the article's final table (8.6), results per hop count, why answers failed, the
verdicts and the recommendation; the cells themselves, one a line in results.json and one a row in cells.csv, a chunk
at a time.
"""

from __future__ import annotations

import csv
import io
import json
import operator
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from json.encoder import c_make_encoder, encode_basestring  # type: ignore[attr-defined]
from typing import TYPE_CHECKING, Any

from . import progress
from ._article import json_bytes, sha256_hex
from .aggregates import Aggregate, Mean, Metrics, Rate, aggregate
from .answers import BatchSummary, LogSummary, Requests, RunRequests, ScoredBatch, ScoredLogs
from .charts import results_svg
from .frameworks import cited_order
from .gate import Verdict, baseline_words, recommendations, verdict_lines, verdicts, why_not_accepted
from .matrix import HOP_BUCKETS, GroupKey, group_key
from .report import REPORT_ANSWER_CHARS, REPORT_CELLS
from .runner.config import SOLVER_MODEL, public_url
from .runner.jobs import Cuts, RateWaits, Sent
from .scoring import DIAGNOSES, AnswerKey, Cell, Example, evidence_triple, parse_answer, reversed_triple, score_log
from .sizes import skipped_text

if TYPE_CHECKING:
    from ._article import Question
    from .answers import Answer, Answers
    from .artifacts import Outputs
    from .gate import GateSpec
    from .measure import Item, Measurement
    from .runner.config import ModelConfig


# -----------------------------------------------------------------------------
# the scored cells as results are made of them: each group's columns, results.json's lines, cells.csv


def json_with_rows(head: dict[str, Any], key: str, cells: Sequence[Cell]) -> Iterator[bytes]:
    """json_bytes of {**head, key: cells}, with each cell on one line, in chunks: the same JSON, written by the C
    encoder (the indenting one is pure Python, and 100,000 rows took seconds) and never whole in memory."""
    body = json_bytes({**head, key: []}).rstrip()
    if not cells:
        yield body + b"\n"
        return
    yield body[: -len(b"[]\n}")] + b"[\n"
    yield from row_chunks(cells)
    yield b"\n  ]\n}\n"


def row_chunks(cells: Sequence[Cell], per_chunk: int = 2000) -> Iterator[bytes]:
    """The cells of json_with_rows, one a line, joined by ',\\n' (no separator after the last), a chunk of cells at a
    time: neither their text nor their bytes are ever whole in memory (100,800 rows made whole took 59,000 page
    faults of fresh memory)."""
    encode = row_encoder()
    for start in range(0, len(cells), per_chunk):
        yield (
            ",\n" * (start > 0) + ",\n".join("    " + encode(c.as_json()) for c in cells[start : start + per_chunk])
        ).encode()


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


def csv_chunks(scored: Sequence[Cell], header: bool = True, per_chunk: int = 2000) -> Iterator[bytes]:
    """cells.csv: one line per scored cell, for a spreadsheet, after a header line (unless header is False), a chunk
    of rows at a time; an empty field where the cell holds None (the csv module writes None so)."""
    get = operator.attrgetter(*CSV_FIELDS)
    for start in range(0, max(len(scored), 1), per_chunk):  # the header alone when there is no row
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        if header and not start:
            writer.writerow(CSV_FIELDS)
        writer.writerows(map(get, scored[start : start + per_chunk]))
        yield out.getvalue().encode("utf-8")


# -----------------------------------------------------------------------------
# results.md


def _rate(figure: Rate | None) -> str:
    if not figure or figure.rate is None:
        return ""
    if not figure.ci95:  # one question: no interval
        return f"{figure.rate:.2f}"
    low, high = figure.ci95
    return f"{figure.rate:.2f} ({low:.2f}–{high:.2f})"


def _bar(value: float, top: float, width: int = 20) -> str:
    filled = round(width * value / top) if top else 0
    return "█" * filled + "·" * (width - filled)


def _tokens(e: Aggregate) -> str:
    """'970 (800)': tiktoken's count, and the model's own where the log has it."""
    tokens = "" if e.prompt_tokens is None else f"{e.prompt_tokens:,.0f}"
    return tokens + (f" ({e.model_prompt_tokens:,.0f})" if e.model_prompt_tokens is not None else "")


def _cost_header(prices: tuple[float | None, ...]) -> str:
    """'cost (USD at 2.5 / 10 per million input / output tokens)': the unit and the prices the cost is counted at."""
    price_in, price_out, price_cached = (*prices, None)[:3]
    if price_in is None:
        return "cost (no prices passed)"
    cached = f", cached input {price_cached:g}" if price_cached is not None else ""
    return f"cost (USD at {price_in:g} / {price_out:g} per million input / output tokens{cached})"


CellText = Callable[[Aggregate], str]  # what a table's column shows of an entry (_table)


def _table(entries: list[Aggregate], columns: list[tuple[str, CellText, bool]], model: bool) -> list[str]:
    """A Markdown table of entries: columns (header, cell, only in a model run) and a first column of formats (★ on
    the Pareto front). A run of the control solver has no usage, cost or latency: those columns are left out."""
    shown = [(h, cell) for h, cell, model_only in columns if model or not model_only]
    lines = ["| format | " + " | ".join(h for h, _ in shown) + " |", "|---|" + "---:|" * len(shown)]
    for e in entries:
        lines.append(f"| {e.format}{' ★' if e.pareto else ''} | " + " | ".join(cell(e) for _, cell in shown) + " |")
    return lines


def _cost(e: Aggregate) -> str:
    return "" if e.cost is None else f"{e.cost:.4f}"


def _compact_table(entries: list[Aggregate], model: bool, prices: tuple[float | None, ...]) -> list[str]:
    """What a decision needs first: tokens, answer, path exact with its interval, abstention, cost."""
    return _table(
        entries,
        [
            ("prompt tokens (the model's count)" if model else "prompt tokens", _tokens, False),
            ("answer", lambda e: _rate(e.metrics.answer_correct), False),
            ("path exact", lambda e: _rate(e.metrics.path_exact), False),
            ("abstention", lambda e: _rate(e.metrics.abstention_correct), False),
            (_cost_header(prices), _cost, True),
        ],
        model,
    )


def _hop_table(entries: list[Aggregate]) -> list[str]:
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
            part = e.by_hops.get(b)
            figure = (
                (part.metrics.abstention_correct if b == "abstention" else part.metrics.path_exact) if part else None
            )
            cells.append(f"{_rate(figure)} [{part.n}]" if part and figure and figure.rate is not None else "")
        lines.append(f"| {e.format} | " + " | ".join(cells) + " |")
    return lines


def diagnosis_table(entries: list[Aggregate], examples: dict[tuple[str, str], Example]) -> list[str]:
    """Why answers failed, per format: the cells of each diagnosis (share of the format's cells), then each diagnosis
    that occurs with its meaning, the article's remedy and one example answer."""
    names = [name for name in DIAGNOSES if any(name in e.diagnoses for e in entries)]
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
        cells = [f"{e.diagnoses[n]} ({e.diagnoses[n] / e.n:.0%})" if n in e.diagnoses else "" for n in names]
        lines.append(f"| {e.format} | {e.n} | {e.json_as_asked} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "By hop count, every format together (results.json has them per format: by_hops[].diagnoses):",
        "",
        "| hops | cells | " + " | ".join(n.replace("_", " ") for n in names) + " |",
        "|---|---:|" + "---:|" * len(names),
    ]
    for bucket in HOP_BUCKETS:
        parts = [e.by_hops[bucket] for e in entries if bucket in e.by_hops]
        if parts:
            total: Counter[str] = Counter()
            for part in parts:
                total.update(part.diagnoses)
            lines.append(
                f"| {bucket} | {sum(p.n for p in parts)} | "
                + " | ".join(str(total[n]) if total[n] else "" for n in names)
                + " |"
            )
    lines.append("")
    for name in names:
        meaning, remedy = DIAGNOSES[name]
        lines.append(f"- **{name.replace('_', ' ')}**: {meaning}. Remedy: {remedy}.")
        for e in entries:
            example = examples.get((e.format, name))
            if example is not None and name in e.diagnoses:
                said = example.answer if example.answer is not None else f"error: {example.error}"
                text = " ".join(str(said).split())[:300].replace("`", "'")
                lines.append(f"  Example ({e.format}, {example.question_id}): `{text}`")
                break
    return lines


def _notes_and_bars(entries: list[Aggregate], config: ModelConfig) -> list[str]:
    """The star's meaning, finish reasons, ignored caps, cached shares, and a text chart of tokens and path exact."""
    star = (
        "★ on the Pareto front of prompt tokens against path exact match."
        if any(e.pareto for e in entries)
        else "No format has a correct path here, so none is marked: fewer tokens alone do not make a front."
    )
    shares = "; ".join(f"{e.format} {e.usage.cached_share:.2f}" for e in entries if e.usage.cached_share is not None)
    reasons = "; ".join(
        f"{e.format} " + ", ".join(f"{r} {n}" for r, n in e.finish_reasons.items()) for e in entries if e.finish_reasons
    )
    ignored = "; ".join(f"{e.format} {e.over_output_cap}" for e in entries if e.over_output_cap)
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
    top = max((e.prompt_tokens or 0) for e in entries)
    width = max(len(e.format) for e in entries)
    for e in entries:
        rate, spread = e.metrics.path_exact.rate, e.path_exact_spread
        sd = f" (sd {spread.sd:.2f} over {spread.runs} runs)" if spread and spread.sd is not None else ""
        lines.append(
            f"{e.format:<{width}}  tokens {_bar(e.prompt_tokens or 0, top)} {e.prompt_tokens or 0:>9,.0f}   "
            f"path exact {_bar(rate or 0, 1.0)} {'' if rate is None else f'{rate:.2f}'}{sd}"
        )
    return [*lines, "```"]


def _wide_table(entries: list[Aggregate], model: bool, prices: tuple[float | None, ...]) -> list[str]:
    """The article's final table (8.6), every metric."""

    def mean(figure: Callable[[Metrics], Mean]) -> CellText:
        return lambda e: "" if figure(e.metrics).mean is None else f"{figure(e.metrics).mean:.2f}"

    def rate(figure: Callable[[Metrics], Rate]) -> CellText:
        return lambda e: _rate(figure(e.metrics))

    return _table(
        entries,
        [
            ("n", lambda e: str(e.n), False),
            (
                "questions",
                lambda e: str(e.metrics.path_exact.questions + e.metrics.abstention_correct.questions),
                False,
            ),
            ("prompt tokens (the model's count)" if model else "prompt tokens", _tokens, False),
            ("parse", rate(lambda m: m.parse_success), False),
            ("answer", rate(lambda m: m.answer_correct), False),
            ("path exact", rate(lambda m: m.path_exact), False),
            ("valid path", rate(lambda m: m.valid_path), False),
            ("evidence", rate(lambda m: m.evidence_match), False),
            ("edge P", mean(lambda m: m.edge_precision), False),
            ("edge R", mean(lambda m: m.edge_recall), False),
            ("abstention", rate(lambda m: m.abstention_correct), False),
            ("false abstention", rate(lambda m: m.false_abstention), False),
            ("right answer, wrong path", lambda e: str(e.right_answer_wrong_path), False),
            ("errors", lambda e: str(e.errors), True),
            ("overflow", lambda e: str(e.overflow), True),
            (_cost_header(prices), _cost, True),
            (
                "tokens / correct path",
                lambda e: "" if e.tokens_per_correct_path is None else f"{e.tokens_per_correct_path:,.0f}",
                False,
            ),
            (
                "latency p50 / p95 s",
                lambda e: "" if e.latency_s is None else f"{e.latency_s.median:.2f} / {e.latency_s.p95:.2f}",
                True,
            ),
        ],
        model,
    )


def results_markdown(
    table: list[Aggregate],
    summary: Requests,
    config: ModelConfig,
    log: dict[str, Any],
    prices: tuple[float | None, ...],
    questions: tuple[Question, ...],
    gate: list[Verdict],
    baseline: str,
    tolerance: float,
    skipped: list[dict[str, Any]] | tuple[()] = (),
    examples: dict[tuple[str, str], Example] | None = None,
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
    if isinstance(summary, RunRequests):  # this invocation above, every invocation in the log here
        whole = summary_lines(summary.log, config)[0]
        lines += ["", f"{whole[0].upper()}{whole[1:]}."]
    groups: dict[GroupKey, list[Aggregate]] = {}
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


def summary_lines(summary: Requests | LogSummary, config: ModelConfig) -> list[str]:
    """The request summary as sentences, for stdout and results.md: failures by reason, cut answers, notes. A
    LogSummary alone: the log's line of a run (every invocation)."""
    sent, waits, refused, notes = 0, RateWaits(0, 0.0, 0.0), list[int](), list[str]()
    if isinstance(summary, RunRequests):
        counts: Sent | LogSummary | BatchSummary = summary.sent
        sent, waits, refused = summary.sent.sent, summary.sent.rate_limit_waits, summary.sent.refused_prompt_tokens
        lines = [f"requests: {sent} sent, {summary.sent.skipped} already in the log, {summary.sent.failed} failed"]
    elif isinstance(summary, ScoredBatch):
        counts, b, notes = summary.batch, summary.batch, summary.notes
        lines = [
            f"batch: {b.lines} answer lines in {', '.join(b.files)}, {b.planned} prompts "
            f"planned, {b.missing} with no line, {b.failed} failed"
        ]
    else:
        log = counts = summary.log if isinstance(summary, ScoredLogs) else summary
        lines = [
            f"log: {log.answered} of {log.planned} planned requests answered, {log.failed} failed, "
            f"{log.not_run} not run, over {log.invocations} invocation(s)"
        ]
    lines += [f"{count} x {reason}" for reason, count in counts.failures.items()]
    if waits.requests:
        lines.append(
            f"{waits.requests} of {sent} request(s) ({waits.requests / max(sent, 1):.0%}) waited for "
            "the rate limit (--tokens-per-minute, --requests-per-minute, or the server's x-ratelimit headers): "
            f"{waits.seconds:g} s in all, the longest {waits.longest_s:g} s"
        )
    if not isinstance(counts, BatchSummary):
        lines += _cut_lines(counts.cut_by_length, counts.cuts, config)
        if counts.context_overflow_by_server:
            lines.append(_refused_line(counts.context_overflow_by_server, refused))
    return lines + notes


def _cut_lines(cut_by_length: int, cuts: Cuts, config: ModelConfig) -> list[str]:
    """The answers cut at the output cap, and those cut short of it by the server's context."""
    short, lines = cuts.cut_before_cap, []
    if cut_by_length > short:
        lines.append(
            f"{cut_by_length - short} answer(s) cut at the output cap (finish_reason length): raise "
            f"--max-output-tokens (now {config.max_output_tokens})"
        )
    if short:
        low, high = cuts.cut_before_cap_at_tokens
        lines.append(
            f"{short} answer(s) cut short of the output cap, at {low:,}{f' to {high:,}' if high != low else ''} tokens "
            "of prompt and answer together (finish_reason length): the server's context window ended them, not "
            "--max-output-tokens; give the server a larger context (llama.cpp: --n_ctx) or send shorter prompts "
            "(--context-window to the server's, less the answer)"
        )
    return lines


def _refused_line(refused: int, counted: list[int]) -> str:
    """The prompts the server refused as over its context window, and what they count here."""
    local = f"{counted[0]:,}" + (f" to {counted[-1]:,}" if counted[-1] != counted[0] else "") if counted else ""
    return (
        f"{refused} prompt(s) refused by the server as over its context window: "
        "scored as CONTEXT_OVERFLOW; lower --context-window to the server's so they are not sent"
        + (
            f"; they count {local} tokens here, but the server counts with the model's own tokenizer and adds its "
            "chat template (30 tokens on a llama.cpp server with SmolLM2): count with --encoding hf:PATH to the "
            "served model's tokenizer.json and leave room for the template"
            if local
            else ""
        )
    )


def console_results(
    table: list[Aggregate],
    summary: Requests,
    model: ModelConfig,
    gate: list[Verdict],
    baseline: str,
    skipped: list[dict[str, Any]],
) -> str:
    """What a model run prints: a line per group and format, the
    request summary, the verdicts, the skipped questions."""
    lines = ["encoding\tsize\tids\tmode\tformat\tn\tprompt_tokens\tanswer\tpath_exact\terrors\toverflow"]
    for e in table:
        answer, path = (
            "" if r.rate is None else f"{r.rate:.2f}" for r in (e.metrics.answer_correct, e.metrics.path_exact)
        )
        tokens = "" if e.prompt_tokens is None else f"{e.prompt_tokens:.0f}"
        lines.append(
            f"{e.encoding}\t{e.size}\t{e.ids}\t{e.mode}\t{e.format}\t{e.n}\t{tokens}\t"
            f"{answer}\t{path}\t{e.errors}\t{e.overflow}"
        )
    first, *rest = summary_lines(summary, model)
    lines += [first, *(f"  {line}" for line in rest)]
    said = recommendations(gate, baseline, model.model == SOLVER_MODEL)
    lines += [f"verdict for {' · '.join(group)}: {line}" for group, line in said.items()]
    if skipped:
        lines.append(f"skipped {len(skipped)} question(s) (--skip-invalid-questions): {skipped_text(skipped)}")
    return "\n".join(lines)


def run_failure(summary: Requests) -> str | None:
    """Why a run or a scoring did not fully succeed (exit code 1), or None."""
    if not isinstance(summary, RunRequests):
        planned = summary.batch.planned if isinstance(summary, ScoredBatch) else summary.log.planned
        failed = summary.batch.failed if isinstance(summary, ScoredBatch) else summary.log.failed
        return (
            f"{failed} of {planned} planned requests have no answer in the scored files (see results.md)"
            if failed
            else None
        )
    run = summary.sent
    if run.stopped:
        return (
            f"{run.stopped}; {run.sent} request(s) sent, {run.not_sent} not sent; once that is "
            "fixed (the server started again, the key set), the same command sends only those: what was answered is "
            "kept"
        )
    if not run.sent and not run.skipped:
        return "no request was sent: every prompt is over --context-window or outside --limit, so nothing was answered"
    if run.failed:
        return (
            f"{run.failed} of {run.sent} requests failed after their retries"
            f"{' (none succeeded)' if run.failed == run.sent else ''}; run the same command again to "
            "retry them only"
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
    table: list[Aggregate],
    gate: list[Verdict],
    baseline: str,
    tolerance: float,
) -> dict[str, Any]:
    """What report.html shows of a model run: the verdicts, diagnoses per format, and every cell with its answer."""
    cells = report_cells(scored, answers.best, report.measured.items)
    notes = [f"the page holds the first {REPORT_CELLS:,} of {len(scored):,} cells; cells.csv has them all"] * (
        len(scored) > REPORT_CELLS
    )
    names = [name for name in DIAGNOSES if any(name in e.diagnoses for e in table)]
    verdicts = [
        {
            "group": " · ".join(group_key(v)),
            "format": v.format,
            "verdict": v.verdict,
            "why": why_not_accepted(v),
            "saving": v.saving,
        }
        for v in gate
    ]
    said = recommendations(gate, baseline, report.model.model == SOLVER_MODEL)
    recommended = [f"{' · '.join(group)}: {line}" for group, line in said.items()]
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
                "format": f"{e.format} ({e.size} · {e.ids} · {e.mode})",
                "n": e.n,
                "diagnoses": e.diagnoses,
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
        item = by_sha[s.prompt_sha256]
        record = answers.get((s.prompt_sha256, s.repeat))
        content = record.content if record is not None and isinstance(record.content, str) else None
        key = keys.get(s.prompt_sha256)
        if key is None:
            shown = item.shown()
            order = cited_order(item.row.format, shown)
            key = keys[s.prompt_sha256] = AnswerKey(shown, item.question, undirected=item.undirected, order=order)
        edges = key.shown.edges
        parsed = parse_answer(content) if content is not None else None
        evidence = []
        for ev in (parsed.evidence if parsed else [])[:50]:
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
                "format": s.format,
                "question": s.question_id,
                "hops": s.hops,
                "size": s.size,
                "ids": s.ids,
                "mode": s.mode,
                "permutation": s.permutation,
                "repeat": s.repeat,
                "status": s.status,
                "insufficient": s.insufficient,
                "answer_correct": s.answer_correct,
                "path_exact": s.path_exact,
                "valid_path": s.valid_path,
                "diagnosis": s.diagnosis,
                "error": s.error,
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
    examples: dict[tuple[str, str], Example] = {}  # (format, diagnosis) -> its first cell
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
        "requests": answers.summary.as_json(),
        "verdicts": [v.as_json() for v in gate],
        "aggregates": [e.as_json() for e in table],
        "diagnosis_examples": [
            {"format": f, "diagnosis": d, **examples[(f, d)]._asdict()} for f, d in sorted(examples)
        ],
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
