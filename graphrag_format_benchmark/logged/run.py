"""The --from-prompts run: every logged prompt read back and measured, what each format would save on that traffic.

In: the parsed flags (--from-prompts FILE, --formats, --encoding, --out, the price flags). Out, in --out (written only
when the run succeeded, replacing the previous run's files as a whole): logged.jsonl (a line per logged line: measured,
with each format's tokens, or left out with the reason), results.md and results.json (the savings, per encoding and
format: sum, mean and p95 of the whole prompts' and the graphs' tokens, and the cost with the price flags),
report.html (the first logged prompts beside their alternatives), manifest.json. The file is streamed: memory holds
the counts, not the prompts.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, cast

from .._article import (
    ARTICLE_FORMATS,
    FORMATS,
    MANIFEST,
    BenchmarkError,
    RunInputs,
    Tokenizer,
    build_manifest,
    display,
    json_bytes,
    publish,
)
from ..answers import files_sha256
from ..artifacts import Outputs, format_library_versions, held_outputs
from ..encodings import tokenizer_for
from ..options import RunConfig, check_flags, make_model_config, parse_names
from ..progress import Progress
from ..report import drawn_lines, render_report
from ..runner.config import SOLVER_MODEL, ModelConfig, public_argv, public_url
from ..runner.log import LOG_NAME
from .agreement import Agreed, Pair, Row
from .answers import AskCounts, ask_all
from .measure import LOGGED, Measured, Skipped, measured_lines, own_format
from .read import NotCall, Unread, check_log_file
from .traces import SOURCES
from .union import Union

# The flags a run over logged prompts uses; any other (those of a run over a graph, --limit, --repeats...) is said, not
# ignored.
LOGGED_FLAGS = (
    "--from-prompts",
    "--formats",
    "--encoding",
    "--out",
    "--input-price-per-million",
    "--model",
    "--base-url",
    "--api-key-env",
    "--temperature",
    "--reasoning-effort",
    "--max-output-tokens",
    "--max-tokens-field",
    "--concurrency",
    "--timeout",
    "--max-retries",
    "--tokens-per-minute",
    "--requests-per-minute",
    "--seed",
)
DEFAULT_FORMATS = [*ARTICLE_FORMATS, "graphrag", "lightrag", "llamaindex", "langchain", "neo4j_graphrag"]
SHOWN = 3  # logged prompts report.html shows beside their alternatives
UNION = "logged_graph.json"  # the union of the logged subgraphs, for generated questions over them
# what a run writes
OUTPUTS = (
    "logged.jsonl",
    UNION,
    "results.md",
    "results.json",
    "report.html",
    MANIFEST,
    LOG_NAME,
    LOG_NAME + ".torn",
)
WORKERS = min(2, os.cpu_count() or 1)  # processes that measure a long file's lines: this machine's cores, at most 2


class Totals:
    """Per encoding and format, every prompt's graph and prompt
    tokens (ints: what the summary's p95 needs), and bytes."""

    def __init__(self) -> None:
        self.tokens: dict[str, dict[str, tuple[list[int], list[int]]]] = {}
        self.bytes: dict[str, int] = {}  # format -> the graph texts' bytes, summed
        self.union = Union()

    def add(self, m: Measured) -> None:
        if m.graph is not None:
            self.union.add(m.graph)
        for fmt, size in m.graph_bytes.items():
            self.bytes[fmt] = self.bytes.get(fmt, 0) + size
        for encoding, rows in m.tokens.items():
            for fmt, (graph, prompt) in rows.items():
                lists = self.tokens.setdefault(encoding, {}).setdefault(fmt, ([], []))
                lists[0].append(graph)
                lists[1].append(prompt)


@dataclass(slots=True)
class Counts:
    """What a run read, counted line by line (tally), then the model run's and the union's: results.json's counts and
    the manifest's preflight (to_dict)."""

    lines: int = 0  # the requests read (a trace record that is no LLM call is none)
    measured: int = 0  # read back exactly and measured
    left_out: int = 0  # not measured: logged.jsonl says why
    layouts: dict[str, int] = field(default_factory=dict)  # measured, by the layout found
    reasons: dict[str, tuple[int, str]] = field(default_factory=dict)  # left out, by reason: (lines, the first's place)
    sources: dict[str, int] = field(default_factory=dict)  # the requests read, by where from (traces.SOURCES)
    not_calls: dict[str, int] = field(default_factory=dict)  # trace records that are no LLM call, by kind
    asked: AskCounts | None = None  # with --model: the model run's requests
    stopped: bool = False  # with --model: Ctrl-C stopped the model run
    requests_log: dict[str, Any] | None = None  # with --model: requests.jsonl's digest (kept across runs)
    union: tuple[int, int, int] | None = None  # logged_graph.json's nodes and edges, and properties shown twice

    def add(self, result: Measured | Skipped | Unread | NotCall) -> None:
        """One result counted: a request read (measured, by layout and source; or left out, by reason with the first
        line of each), or a trace record that is no LLM call (by kind: no request)."""
        if isinstance(result, NotCall):
            self.not_calls[result.kind] = self.not_calls.get(result.kind, 0) + 1
            return
        self.lines += 1
        source = result.source if isinstance(result, Unread) else result.logged.source
        self.sources[source] = self.sources.get(source, 0) + 1
        if isinstance(result, Measured):
            self.measured += 1
            self.layouts[result.layout] = self.layouts.get(result.layout, 0) + 1
            return
        self.left_out += 1
        key = _reason_key(result.reason)
        n, first = self.reasons.get(key, (0, _where(result)))
        self.reasons[key] = (n + 1, first)

    def to_dict(self) -> dict[str, Any]:
        """The counts as results.json writes them: the model run's and the union's only once they are known."""
        model_run = {"stopped": self.stopped, "log": {LOG_NAME: self.requests_log}}
        return {
            "lines": self.lines,
            "measured": self.measured,
            "left_out": self.left_out,
            "layouts": self.layouts,
            "reasons": self.reasons,
            "sources": self.sources,
            "not_calls": self.not_calls,
            **({"asked": {**self.asked.to_dict(), **model_run}} if self.asked else {}),
            **({"union": dict(zip(("nodes", "edges", "conflicts"), self.union))} if self.union else {}),
        }


@dataclass(slots=True, frozen=True)
class FormatRow:
    """One format's row of one encoding, over every measured prompt: results.json's summary (to_dict, in this
    order), results.md's table, report.html's size view."""

    format: str  # LOGGED: what was sent
    prompts: int  # the prompts measured
    prompt_tokens_sum: int  # the whole prompts' tokens
    prompt_tokens_mean: float  # to 1 place
    prompt_tokens_p95: int  # nearest rank
    prompt_tokens_min: int
    prompt_tokens_max: int
    graph_bytes_mean: float  # the graph texts' UTF-8 bytes, to 1 place
    graph_tokens_sum: int  # the graph texts' tokens
    graph_tokens_mean: float  # to 1 place
    graph_tokens_p95: int
    saving: float | None  # 1 - its prompt tokens / what was sent's, to 4 places (None: nothing was sent)
    cost_usd: float | None  # the prompts at --input-price-per-million USD, to 6 places (None: no price given)

    def to_dict(self) -> dict[str, Any]:
        """The row as results.json writes it: its fields in order."""
        return asdict(self)


Summary = dict[str, list[FormatRow]]  # encoding -> a row per format, the logged layout first


def p95(values: list[int]) -> int:
    """The 95th percentile, nearest rank: the smallest value at least 95% of the values do not exceed."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)]


def summary(totals: Totals, price: float | None) -> Summary:
    """Per encoding, a row per format (the logged layout first): sums, means and p95 of prompt and graph tokens, the
    saving against what was sent, and the cost of the prompts at price USD per million input tokens."""
    out = {}
    for encoding, by_format in totals.tokens.items():
        sent = sum(by_format[LOGGED][1])
        out[encoding] = [
            FormatRow(
                fmt,
                len(prompt),
                sum(prompt),
                round(sum(prompt) / len(prompt), 1),
                p95(prompt),
                min(prompt),
                max(prompt),
                round(totals.bytes.get(fmt, 0) / len(graph), 1),
                sum(graph),
                round(sum(graph) / len(graph), 1),
                p95(graph),
                round(1 - sum(prompt) / sent, 4) if sent else None,
                round(sum(prompt) * price / 1e6, 6) if price is not None else None,
            )
            for fmt, (graph, prompt) in by_format.items()
        ]
    return out


def _row(r: FormatRow, layouts: str, price: float | None) -> str:
    logged = r.format == LOGGED
    cells = [
        f"what was sent ({layouts})" if logged else r.format,
        f"{r.prompt_tokens_sum:,}",
        f"{r.prompt_tokens_mean:,.0f}",
        f"{r.prompt_tokens_p95:,}",
        "baseline" if logged else f"{r.saving or 0.0:.1%}",
        f"{r.graph_tokens_sum:,}",
        f"{r.graph_tokens_mean:,.0f}",
        f"{r.graph_tokens_p95:,}",
    ]
    return "| " + " | ".join(cells + ([f"{r.cost_usd or 0.0:,.4f}"] if price is not None else [])) + " |"


def agreement_md(agreed: Agreed) -> list[str]:
    """The agreement table (by the entities the answers name, and by their texts), the pairs where the two differ,
    and every disagreement side by side."""
    lines = [
        f"## {agreed.model}: does each format's answer agree with the answer to what was sent?",
        "",
        "The same model asked each logged question again with its context in each format. Two answers agree by "
        "entities when they name the same entities of the context (whole words, casefolded; the entities the question "
        "names are its own, not the answer's), or both abstain; an answer that names no entity is compared by its "
        "text; a non-answer (an empty text, a relation's name, the prompt echoed) agrees with nothing. By text: equal "
        "after the article's normalization (trimmed, casefolded, ё as е). Logged questions have no gold answer: "
        "agreement is not accuracy; the verified accuracy comes from generated questions over the same subgraphs "
        "(logged_graph.json, docs/logged-prompts.md).",
        "",
        "| format | compared | agree by entities | rate | 95% interval (Wilson) | agree by text | rate | "
        "95% interval | non-answers | not compared (a request failed) |",
        "|---|---:|---:|---:|---|---:|---:|---|---:|---:|",
    ]
    for r in agreed.rows:
        cells = [r.format, f"{r.compared:,}"]
        for a in (r.entities, r.exact):
            cells += [
                f"{a.agree:,}",
                "" if a.rate is None else f"{a.rate:.1%}",
                "" if a.low is None else f"{a.low:.1%}-{a.high or 0.0:.1%}",
            ]
        cells += [f"{r.non_answers:,}", f"{r.failed:,}"]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    for title, pairs in (
        ("Where agreement by entities and by text differ", agreed.differing),
        ("Every disagreement by entities", agreed.disagreements),
    ):
        if pairs:
            lines += _pairs_md(title, pairs)
    return lines


def _pairs_md(title: str, pairs: list[Pair]) -> list[str]:
    cell: Callable[[object], str] = lambda text: " ".join(str(text).split()).replace("|", "\\|")[:300]  # noqa: E731
    shown: Callable[[list[str] | str], str] = lambda v: ", ".join(v) or "no entity" if isinstance(v, list) else v  # noqa: E731
    lines = [
        f"### {title}",
        "",
        "| line | id | format | question | answer to what was sent | answer in this format | names | by entities | "
        "by text |",
        "|---:|---|---|---|---|---|---|---|---|",
    ]
    for d in pairs:
        names = f"{cell(shown(d.sent_names))} / {cell(shown(d.answer_names))}"
        lines.append(
            f"| {d.line} | {cell(d.id)} | {d.format} | {cell(d.question)} | {cell(d.sent)} | "
            f"{cell(d.answer)} | {names} | {'agree' if d.entities_agree else 'differ'} | "
            f"{'agree' if d.texts_agree else 'differ'} |"
        )
    return [*lines, ""]


def agreement_headline(model: str, rows: list[Row]) -> str:
    """The format whose answers agree by entities most often with the answers to what was sent, when its 95% interval
    lies above every other's; else that none stands apart (few questions, or rates too close): never a winner by
    chance."""
    rated = [r for r in rows if r.entities.rate is not None]  # with a rate, an interval too
    if not rated:
        return f"With {model}, no answer could be compared: every pair had a failed request (requests.jsonl says why)."
    top = max(rated, key=lambda r: r.entities.low or 0.0)
    span = (
        f"{min(r.entities.rate or 0.0 for r in rated):.0%}-{max(r.entities.rate or 0.0 for r in rated):.0%} over "
        f"{max(r.compared for r in rated):,} question(s)"
    )
    if len(rated) > 1 and all((top.entities.low or 0.0) > (r.entities.high or 0.0) for r in rated if r is not top):
        return (
            f"With {model}, the answers in {top.format} name the same entities as the answers to what was sent more "
            f"often than in any other format ({top.entities.agree:,} of {top.compared:,}; rates {span}); the "
            "evidence is agreement on your questions, not accuracy."
        )
    return (
        f"With {model}, no format's agreement with the answers to what was sent stands apart from the others' (rates "
        f"{span} by the entities they name, their 95% intervals overlapping); the evidence is agreement on your "
        "questions, not accuracy."
    )


def results_md(summ: Summary, counts: Counts, source: str, price: float | None, agreed: Agreed | None = None) -> str:
    layouts = ", ".join(f"{k} {v:,}" for k, v in sorted(counts.layouts.items(), key=lambda kv: -kv[1]))
    lines = [
        "# What each format would save on your logged traffic",
        "",
        f"{counts.lines:,} logged request(s) in {source}: {counts.measured:,} read back exactly and measured "
        f"({layouts}); {counts.left_out:,} left out (logged.jsonl says why, line by line).",
        "",
        *_read_from(counts),
        *(_model_lines(counts, agreed) if agreed is not None else []),
    ]
    for encoding, rows in summ.items():
        lines += _encoding_md(encoding, rows, layouts, price, agreed is not None)
    if agreed is not None:
        lines += agreement_md(agreed)
    lines += [
        f"The union of the logged subgraphs is in {UNION}: questions drawn from it and proven against it give the "
        f"verified accuracy a model reaches in each format (python benchmark.py --graph OUT/{UNION} "
        "--generate-questions 200 --prompt en --context khop --model NAME --base-url URL ...).",
        "",
        "A prompt's tokens are its messages' text as sent (chat framing not counted); a format's prompt is the logged "
        "one with that format's text in place of the framework's context, which was read back and written again to "
        "the same bytes before anything was counted. The saving is against what was sent, over all measured prompts.",
        "",
    ]
    if counts.reasons:
        lines += ["## Left out", "", "| reason | lines | first |", "|---|---:|---|"]
        lines += [
            f"| {reason} | {n:,} | {first} |"
            for reason, (n, first) in sorted(counts.reasons.items(), key=lambda kv: -kv[1][0])
        ]
        lines.append("")
    return "\n".join(lines)


def _read_from(counts: Counts) -> list[str]:
    """What a trace export was read as, and the records that are no LLM call; nothing for request bodies alone."""
    if not set(counts.sources) - {"request"} and not counts.not_calls:
        return []
    read_as = ", ".join(f"{SOURCES[k]} {n:,}" for k, n in sorted(counts.sources.items(), key=lambda kv: -kv[1]))
    skipped = sum(counts.not_calls.values())
    said = f"; {skipped:,} trace record(s) that are no LLM call skipped (logged.jsonl names each)" if skipped else ""
    return [f"Read from: {read_as}{said}.", ""]


def _model_lines(counts: Counts, agreed: Agreed) -> list[str]:
    """The model run's headline, and what it did not ask: stopped, left out, answered by the traces."""
    asked = counts.asked or AskCounts()
    lines = [agreement_headline(agreed.model, agreed.rows), ""]
    if counts.stopped:
        lines += [
            "The model run was stopped (Ctrl-C): the agreement is over the questions whose answers had all come; "
            "run the same command again to send the rest (requests.jsonl keeps every answer).",
            "",
        ]
    for reason, n in asked.not_sent.items():
        lines += [f"{n:,} measured request(s) left out of the model run: {reason}.", ""]
    if asked.from_trace:
        lines += [
            f"{asked.from_trace:,} answer(s) to what was sent are those the traces logged beside the prompts, by "
            f"{agreed.model} itself: not asked again (only each format's alternative was sent).",
            "",
        ]
    return lines


def _encoding_md(encoding: str, rows: list[FormatRow], layouts: str, price: float | None, asked: bool) -> list[str]:
    """One encoding's finding (the format that sends the fewest tokens) and its table."""
    lines = []
    best = min((r for r in rows if r.format != LOGGED), key=lambda r: r.prompt_tokens_sum, default=None)
    base = next(r for r in rows if r.format == LOGGED)
    if best is not None:
        cost = "" if price is None else f"; {best.cost_usd or 0.0:,.4f} USD against {base.cost_usd or 0.0:,.4f}"
        saving = best.saving or 0.0
        more_or_less = f"{saving:.1%} less" if saving >= 0 else f"{-saving:.1%} more"
        then = (
            "Whether its answers agree with those to what was sent is below."
            if asked
            else "Tokens only: whether answers stay as good is what a model run says (--model)."
        )
        lines += [
            f"**{encoding}: {best.format} would send {best.prompt_tokens_sum:,} prompt tokens where your "
            f"framework sent {base.prompt_tokens_sum:,} ({more_or_less}){cost}.** {then}",
            "",
        ]
    lines += [
        f"## {encoding}",
        "",
        "| format | prompt tokens, sum | mean | p95 | saving | graph tokens, sum | mean | p95 |"
        + (" cost (USD) |" if price is not None else ""),
        "|---|---:|---:|---:|---:|---:|---:|---:|" + ("---:|" if price is not None else ""),
        *(_row(r, layouts, price) for r in rows),
        "",
    ]
    return lines


def _reason_key(reason: str) -> str:
    """A reason grouped by kind: quoted values cut off."""
    return reason.split(" (at ")[0].split(": '")[0].split(': "')[0][:160]


def _prompt_view(shown: list[Measured], encoding: str) -> dict[str, Any]:
    """report.html's prompt view: each shown logged prompt whole, in each format."""
    graphs, questions = {}, []
    for m in shown:
        cells = {}
        for fmt, text in m.texts.items():
            if fmt.startswith("\x00"):
                continue
            key = f"{fmt}|{m.logged.line}"
            graphs[key] = drawn_lines(text)
            # LOGGED: the baseline the page compares with
            cells[fmt] = {
                "graph": key,
                "tokens": m.tokens[encoding][fmt][1],
                "whole": True,
            }
        questions.append(
            {
                "id": m.logged.id,
                "text": m.logged.question[:400],
                "hops": f"sent as {m.layout}",
                "context": "",
                "cells": cells,
            }
        )
    from ..report import PROMPT_HEAD, PROMPT_TAIL

    return {
        "heads": {},
        "graphs": graphs,
        "head": PROMPT_HEAD,
        "tail": PROMPT_TAIL,
        "questions": questions,
        "encoding": encoding,
        "distractors": [],
        "edge_ids": False,
    }


def _size_view(summ: Summary) -> list[dict[str, Any]]:
    """report.html's size view: a group per encoding, a row per format."""
    return [
        {
            "group": f"{encoding} · {rows[0].prompts:,} logged prompts: graph tokens and bytes are means; "
            "against what was sent, the prompts' tokens in all",
            "rows": [
                {
                    "format": r.format,
                    "graph_tokens": r.graph_tokens_mean,
                    "prompt_min": r.prompt_tokens_min,
                    "prompt_max": r.prompt_tokens_max,
                    "bytes": r.graph_bytes_mean,
                    "overflow": 0,
                    "prompts": r.prompts,
                    "vs_baseline": None if r.saving is None else -r.saving,
                }
                for r in rows
            ],
        }
        for encoding, rows in summ.items()
    ]


def check_logged_flags(run_config: RunConfig, log: Path) -> None:
    """Every flag given is one a run over logged prompts uses; the log is a file this run may read and not replace."""
    unused = [flag for flag in sorted(run_config.given) if flag not in LOGGED_FLAGS]
    sending = [flag for flag in unused if flag in ("--score", "--export-batch", "--batch")]
    if sending:
        raise BenchmarkError(f"--from-prompts sends its requests itself, with --model: leave out {', '.join(sending)}")
    if unused:
        raise BenchmarkError(
            f"--from-prompts measures the prompts your framework logged, each once as it was sent: {', '.join(unused)} "
            "shape a run over a graph or its questions and do nothing here; leave them out"
        )
    check_log_file(log)
    real = log.resolve()  # a link to OUT/logged.jsonl is that file
    if real.name in OUTPUTS and real.parent == run_config.out.resolve():  # it would replace the file it reads
        shown = display(log) if real == log.absolute() else f"{display(log)} (a link to {display(real)})"
        raise BenchmarkError(
            f"--from-prompts {shown} is where this run writes its own {real.name}; move the log out of --out "
            f"{display(run_config.out)}, or choose another --out"
        )


def run_logged(run_config: RunConfig, log: Path) -> tuple[str, str | None]:
    """The run: read, measure, write; stdout's table, and no failure (a line left out is data, not a failure)."""
    model, formats, tokenizers, price = _logged_settings(run_config, log)
    totals, shown, counts = Totals(), cast(list[Measured], []), Counts()
    with held_outputs(run_config.out) as (staging, lock):
        _write_logged_lines(log, formats, tokenizers, staging, counts, totals, shown)
        summ = summary(totals, price)
        asked = agreed = None
        if model is not None:
            asked = ask_all(log, formats, model, run_config.out, asks_total(counts, formats))
            counts.asked, counts.stopped = asked.counts, asked.stopped is not None
            counts.requests_log = file_digest(run_config.out / LOG_NAME)  # kept across runs: not an output replaced
            agreed = asked.agreement.results(model.model, formats)
        md = results_md(summ, counts, display(log), price, agreed)
        staging.add("results.md", md.encode("utf-8"))
        nodes, edges = totals.union.records()
        staging.add(UNION, json.dumps({"nodes": nodes, "edges": edges}, ensure_ascii=False, indent=1).encode("utf-8"))
        counts.union = (len(nodes), len(edges), totals.union.conflicts)
        headline = [line.replace("**", "").strip() for line in md.split("\n## ")[0].split("\n\n")[2:] if line.strip()]
        _add_results_and_page(log, staging, counts, summ, agreed, shown, tokenizers, model, headline)
        manifest = build_manifest(
            _logged_config(run_config, log, formats, tokenizers, price, model),
            tokenizers,
            cast(RunInputs, _NoInputs()),  # no graph nor questions file was read: the log is the input
            staging.sha,
            {"logged": counts.to_dict()},
            public_argv(run_config.argv),
            format_library_versions(formats),
        )
        manifest["inputs"] = {display(log): file_digest(log)}
        publish(staging, manifest, lock.release)
    stdout = md.split("\n## Left out")[0].rstrip() + f"\n\nresults: {display(run_config.out / 'results.md')}"
    if asked is not None and asked.stopped is not None:  # the results of what was answered are written: now stop
        print(stdout, flush=True)
        raise asked.stopped
    return stdout, None


def asks_total(counts: Counts, formats: list[str]) -> int:
    """The requests a model run over the measured lines makes: each line as sent and in each format but its own."""
    return sum(n * (1 + len(formats) - (own_format(layout) in formats)) for layout, n in counts.layouts.items())


def _logged_settings(
    run_config: RunConfig, log: Path
) -> tuple[ModelConfig | None, list[str], list[Tokenizer], float | None]:
    """The flags of a run over logged prompts, checked: the model asked (none without --model), the formats, the
    tokenizers and the input price."""
    check_logged_flags(run_config, log)
    check_flags(run_config)  # every number finite and in range, --out a folder this run may write
    model = None
    if run_config.model is not None:
        if run_config.model == SOLVER_MODEL:
            raise BenchmarkError(
                "--model solver answers this tool's own questions from its own graph; a logged prompt asks in its own "
                "words: "
                "give the model your framework uses (--model NAME --base-url URL)"
            )
        model = make_model_config(run_config)
    formats = (
        parse_names(run_config.formats, list(FORMATS), "--formats")
        if run_config.named("--formats")
        else DEFAULT_FORMATS
    )
    tokenizers = [tokenizer_for(name) for name in run_config.encoding]
    price = run_config.input_price_per_million
    if price is not None and price < 0:
        raise BenchmarkError(f"--input-price-per-million is {price}; give 0 or more")
    return model, formats, tokenizers, price


def _write_logged_lines(
    log: Path,
    formats: list[str],
    tokenizers: list[Tokenizer],
    staging: Outputs,
    counts: Counts,
    totals: Totals,
    shown: list[Measured],
) -> None:
    """logged.jsonl, a line per logged request as it is measured, into staging; the counts, totals and drawn prompts
    kept. None measured is an error that says why the first lines were left out."""
    progress = Progress(count_lines(log), "logged prompts")
    digest = hashlib.sha256()
    with open(staging.staged("logged.jsonl"), "wb") as out:
        at = 0  # the file's line the results have reached: a trace line holds several requests
        for result in measured_lines(log, formats, tokenizers, SHOWN, WORKERS):
            line = (json.dumps(_record(result), ensure_ascii=False) + "\n").encode("utf-8")
            out.write(line)
            digest.update(line)
            counts.add(result)
            if isinstance(result, Measured):
                totals.add(result)
                if result.texts:
                    shown.append(result)
            here = result.line if isinstance(result, (Unread, NotCall)) else result.logged.line
            progress.advance(here - at, f"{counts.measured:,} measured, {counts.left_out:,} left out")
            at = here
    progress.close()
    staging.sha["logged.jsonl"] = digest.hexdigest()
    if not counts.measured:
        reasons = "; ".join(f"{k} ({n})" for k, (n, _) in list(counts.reasons.items())[:3]) or "the file has no line"
        raise BenchmarkError(
            f"--from-prompts {display(log)}: none of its {counts.lines:,} line(s) could be read back "
            f"exactly: {reasons}; logged.jsonl is not written"
        )


def _add_results_and_page(
    log: Path,
    staging: Outputs,
    counts: Counts,
    summ: Summary,
    agreed: Agreed | None,
    shown: list[Measured],
    tokenizers: list[Tokenizer],
    model: ModelConfig | None,
    headline: list[str],
) -> None:
    """results.json and report.html of a run over logged prompts, into staging; headline: results.md's first
    findings, at the page's top."""
    agreement = agreed.to_dict() if agreed else None
    staging.add(
        "results.json",
        json_bytes(
            {
                "kind": "logged",
                "source": display(log),
                "counts": counts.to_dict(),
                "summary": {encoding: [r.to_dict() for r in rows] for encoding, rows in summ.items()},
                **({"agreement": agreement} if agreement else {}),
            }
        ),
    )
    data = {
        "kind": "run",
        "title": "graphrag-format-benchmark · logged prompts" + (f" · {model.model}" if model else ""),
        "headline": headline,
        "saving": True,  # the size table says each format's saving against what was sent, as results.md does
        "baseline": LOGGED,
        "baseline_label": "what was sent",
        "sizes": _size_view(summ),
        "tokens": [],
        "prompts": _prompt_view(shown, tokenizers[0].name),
        "model": None,
        "agreement": agreement,
        "notes": [
            f"{counts.measured:,} of {counts.lines:,} logged request(s) measured; results.md and logged.jsonl "
            "hold every count"
        ],
    }
    staging.add("report.html", render_report(data))


def _logged_config(
    run_config: RunConfig,
    log: Path,
    formats: list[str],
    tokenizers: list[Tokenizer],
    price: float | None,
    model: ModelConfig | None,
) -> dict[str, Any]:
    """The manifest's config of a run over logged prompts."""
    return {
        "from_prompts": display(log),
        "formats": formats,
        "encodings": [t.name for t in tokenizers],
        "input_price_per_million": price,
        "out": display(run_config.out),
        **(
            {"model": {"model": model.model, "base_url": public_url(model.base_url), "sampling": model.sampling(0)}}
            if model
            else {}
        ),
    }


def _where(result: Unread | Skipped) -> str:
    logged = result if isinstance(result, Unread) else result.logged
    at = getattr(result, "at", None)
    return f"line {logged.line}" + (f", character {at:,}" if at is not None else "")


def _record(result: Measured | Skipped | Unread | NotCall) -> dict[str, Any]:
    if isinstance(result, NotCall):
        return {"line": result.line, "id": result.id, "not_a_call": result.kind}
    if isinstance(result, Unread):
        return {"line": result.line, "id": result.id, "left_out": result.reason}
    if isinstance(result, Skipped):
        return {
            "line": result.logged.line,
            "id": result.logged.id,
            "left_out": result.reason,
            **({"message": result.message, "at": result.at} if result.at is not None else {}),
        }
    return {
        "line": result.logged.line,
        "id": result.logged.id,
        "layout": result.layout,
        "message": result.message,
        "nodes": result.nodes,
        "edges": result.edges,
        "tokens": {
            enc: {fmt: {"graph": g, "prompt": p} for fmt, (g, p) in rows.items()} for enc, rows in result.tokens.items()
        },
    }


class _NoInputs:
    """build_manifest's inputs: the logged file is hashed apart (file_digest), a piece at a time."""

    files: dict[str, bytes] = {}


def file_digest(path: Path) -> dict[str, Any]:
    """A file's SHA-256 and size, for the manifest: read a piece at a time."""
    return {"sha256": files_sha256([path]), "bytes": path.stat().st_size}


def count_lines(path: Path) -> int:
    """The file's lines, for the progress line (a piece at a time; an unreadable file is said by read_log)."""
    try:
        with open(path, "rb") as f:
            return sum(piece.count(b"\n") for piece in iter(lambda: f.read(1 << 20), b"")) or 1
    except OSError:
        return 1
