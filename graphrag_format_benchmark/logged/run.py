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
from pathlib import Path
from typing import cast

from benchmark import (
    ARTICLE_FORMATS,
    FORMATS,
    MANIFEST,
    BenchmarkError,
    Graph,
    RunInputs,
    Tokenizer,
    build_manifest,
    display,
    json_bytes,
    publish,
)

from ..artifacts import Outputs, format_library_versions, held_outputs
from ..encodings import tokenizer_for
from ..options import RunConfig, check_flags, make_model_config, parse_names
from ..progress import Progress
from ..report import drawn_lines, render_report
from ..runner.config import SOLVER_MODEL, ModelConfig, public_argv, public_url
from ..runner.log import LOG_NAME
from .answers import ask_all
from .measure import LOGGED, Measured, Skipped, measured_lines
from .read import Unread

# The flags that shape a run over a graph, meaningless over logged prompts: said, not ignored.
GRAPH_FLAGS = (
    "--graph",
    "--questions",
    "--generate-questions",
    "--context",
    "--context-hops",
    "--context-edges",
    "--context-tokens",
    "--sizes",
    "--ids",
    "--pseudonymize",
    "--permutations",
    "--budget",
    "--edge-ids",
    "--graph-format",
    "--graph-order",
    "--store-fields",
    "--prompt",
    "--write-prompts",
    "--baseline",
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


class Union:
    """The logged subgraphs as one graph: each node once (its first showing; another showing with other values counted),
    each distinct edge once. Memory grows with the distinct facts, not with the prompts."""

    def __init__(self) -> None:
        self.nodes: dict[str, tuple] = {}
        self.edges: dict[tuple, None] = {}
        self.conflicts = 0

    def add(self, graph: Graph) -> None:
        for n, props in graph.nodes_with_props():
            known = self.nodes.setdefault(n.id, (n, props))
            self.conflicts += known != (n, props)
        for e, props in graph.edges_with_props():
            self.edges.setdefault((e, props), None)

    def records(self) -> dict:
        """graph.json's records (benchmark.validate_graph reads them)."""
        nodes = [{"id": n.id, "name": n.name, "type": n.type, **dict(p)} for n, p in self.nodes.values()]
        edges = [{"source": e.source, "relation": e.relation, "target": e.target, **dict(p)} for e, p in self.edges]
        return {"nodes": nodes, "edges": edges}


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


def p95(values: list[int]) -> int:
    """The 95th percentile, nearest rank: the smallest value at least 95% of the values do not exceed."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)]


def summary(totals: Totals, price: float | None) -> dict:
    """Per encoding, a row per format (the logged layout first): sums, means and p95 of prompt and graph tokens, the
    saving against what was sent, and the cost of the prompts at price USD per million input tokens."""
    out = {}
    for encoding, by_format in totals.tokens.items():
        sent = sum(by_format[LOGGED][1])
        rows = []
        for fmt, (graph, prompt) in by_format.items():
            rows.append(
                {
                    "format": fmt,
                    "prompts": len(prompt),
                    "prompt_tokens_sum": sum(prompt),
                    "prompt_tokens_mean": round(sum(prompt) / len(prompt), 1),
                    "prompt_tokens_p95": p95(prompt),
                    "prompt_tokens_min": min(prompt),
                    "prompt_tokens_max": max(prompt),
                    "graph_bytes_mean": round(totals.bytes.get(fmt, 0) / len(graph), 1),
                    "graph_tokens_sum": sum(graph),
                    "graph_tokens_mean": round(sum(graph) / len(graph), 1),
                    "graph_tokens_p95": p95(graph),
                    "saving": round(1 - sum(prompt) / sent, 4) if sent else None,
                    "cost_usd": round(sum(prompt) * price / 1e6, 6) if price is not None else None,
                }
            )
        out[encoding] = rows
    return out


def _row(r: dict, layouts: str, price: float | None) -> str:
    name = f"what was sent ({layouts})" if r["format"] == LOGGED else r["format"]
    saving = "" if r["format"] == LOGGED else f"{r['saving']:.1%}"
    cells = [
        name,
        f"{r['prompt_tokens_sum']:,}",
        f"{r['prompt_tokens_mean']:,.0f}",
        f"{r['prompt_tokens_p95']:,}",
        saving or "baseline",
        f"{r['graph_tokens_sum']:,}",
        f"{r['graph_tokens_mean']:,.0f}",
        f"{r['graph_tokens_p95']:,}",
    ]
    return "| " + " | ".join(cells + ([f"{r['cost_usd']:,.4f}"] if price is not None else [])) + " |"


def agreement_md(model: str, rows: list[dict], disagreements: list[dict]) -> list[str]:
    """The agreement table, and every disagreement side by side."""
    lines = [
        f"## {model}: does each format's answer agree with the answer to what was sent?",
        "",
        "The same model asked each logged question again with its context in each format; two answers agree when they "
        "are "
        "equal after the article's normalization (trimmed, casefolded, ё as е). Logged questions have no gold answer: "
        "agreement is not accuracy; the verified accuracy comes from generated questions over the same subgraphs "
        "(logged_graph.json, docs/logged-prompts.md).",
        "",
        "| format | agree | compared | rate | 95% interval (Wilson) | not compared (a request failed) |",
        "|---|---:|---:|---:|---|---:|",
    ]
    for r in rows:
        rate = "" if r["rate"] is None else f"{r['rate']:.1%}"
        interval = "" if r["low"] is None else f"{r['low']:.1%}-{r['high']:.1%}"
        lines.append(f"| {r['format']} | {r['agree']:,} | {r['compared']:,} | {rate} | {interval} | {r['failed']:,} |")
    lines.append("")
    if disagreements:
        lines += [
            "### Every disagreement",
            "",
            "| line | id | format | question | answer to what was sent | answer in this format |",
            "|---:|---|---|---|---|---|",
        ]
        cell = lambda text: " ".join(str(text).split()).replace("|", "\\|")[:300]  # noqa: E731
        lines += [
            f"| {d['line']} | {cell(d['id'])} | {d['format']} | {cell(d['question'])} | {cell(d['sent'])} | "
            f"{cell(d['answer'])} |"
            for d in disagreements
        ]
        lines.append("")
    return lines


def agreement_headline(model: str, rows: list[dict]) -> str:
    """The format whose answers agree most often with the answers to what was sent, when its 95% interval lies above
    every other's; else that none stands apart (few questions, or rates too close): never a winner by chance."""
    rated = [r for r in rows if r["rate"] is not None]
    if not rated:
        return f"With {model}, no answer could be compared: every pair had a failed request (requests.jsonl says why)."
    top = max(rated, key=lambda r: r["low"])
    span = (
        f"{min(r['rate'] for r in rated):.0%}-{max(r['rate'] for r in rated):.0%} over "
        f"{max(r['compared'] for r in rated):,} question(s)"
    )
    if len(rated) > 1 and all(top["low"] > r["high"] for r in rated if r is not top):
        return (
            f"With {model}, the answers in {top['format']} agree with the answers to what was sent more often than in "
            "any other "
            f"format ({top['agree']:,} of {top['compared']:,}; rates {span}); the evidence is agreement on your "
            "questions, not accuracy."
        )
    return (
        f"With {model}, no format's agreement with the answers to what was sent stands apart from the others' (rates "
        f"{span}, "
        "their 95% intervals overlapping); the evidence is agreement on your questions, not accuracy."
    )


def results_md(summ: dict, counts: dict, source: str, price: float | None, agreed: tuple | None = None) -> str:
    layouts = ", ".join(f"{k} {v:,}" for k, v in sorted(counts["layouts"].items(), key=lambda kv: -kv[1]))
    lines = [
        "# What each format would save on your logged traffic",
        "",
        f"{counts['lines']:,} logged request(s) in {source}: {counts['measured']:,} read back exactly and measured "
        f"({layouts}); "
        f"{counts['left_out']:,} left out (logged.jsonl says why, line by line).",
        "",
    ]
    if agreed is not None:
        lines += [agreement_headline(*agreed[:2]), ""]
    for encoding, rows in summ.items():
        best = min((r for r in rows if r["format"] != LOGGED), key=lambda r: r["prompt_tokens_sum"], default=None)
        base = next(r for r in rows if r["format"] == LOGGED)
        if best is not None:
            cost = "" if price is None else f"; {best['cost_usd']:,.4f} USD against {base['cost_usd']:,.4f}"
            lines += [
                f"**{encoding}: {best['format']} would send {best['prompt_tokens_sum']:,} prompt tokens where your "
                f"framework sent {base['prompt_tokens_sum']:,} ({best['saving']:.1%} less){cost}.** "
                "Tokens only: whether answers stay as good is what a model run says (--model).",
                "",
            ]
        lines += [
            f"## {encoding}",
            "",
            "| format | prompt tokens, sum | mean | p95 | saving | graph tokens, sum | mean | p95 |"
            + (" cost (USD) |" if price is not None else ""),
            "|---|---:|---:|---:|---:|---:|---:|---:|" + ("---:|" if price is not None else ""),
        ]
        lines += [_row(r, layouts, price) for r in rows]
        lines.append("")
    if agreed is not None:
        lines += agreement_md(*agreed)
    lines += [
        f"The union of the logged subgraphs is in {UNION}: questions drawn from it and proven against it give the "
        "verified "
        f"accuracy a model reaches in each format (python benchmark.py --graph OUT/{UNION} --generate-questions 200 "
        "--prompt en "
        "--context khop --model NAME --base-url URL ...).",
        "",
        "A prompt's tokens are its messages' text as sent (chat framing not counted); a format's prompt is the logged "
        "one "
        "with that format's text in place of the framework's context, which was read back and written again to the "
        "same "
        "bytes before anything was counted. The saving is against what was sent, over all measured prompts.",
        "",
    ]
    if counts["reasons"]:
        lines += ["## Left out", "", "| reason | lines | first |", "|---|---:|---|"]
        lines += [
            f"| {reason} | {n:,} | {first} |"
            for reason, (n, first) in sorted(counts["reasons"].items(), key=lambda kv: -kv[1][0])
        ]
        lines.append("")
    return "\n".join(lines)


def _reason_key(reason: str) -> str:
    """A reason grouped by kind: quoted values cut off."""
    return reason.split(" (at ")[0].split(": '")[0].split(': "')[0][:160]


def _prompt_view(shown: list[Measured], encoding: str) -> dict:
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


def _size_view(summ: dict) -> list[dict]:
    groups = []
    for encoding, rows in summ.items():
        table = [
            {
                "format": r["format"],
                "graph_tokens": r["graph_tokens_mean"],
                "prompt_min": r["prompt_tokens_min"],
                "prompt_max": r["prompt_tokens_max"],
                "bytes": r["graph_bytes_mean"],
                "overflow": 0,
                "prompts": r["prompts"],
                "vs_baseline": None if r["saving"] is None else -r["saving"],
            }
            for r in rows
        ]
        groups.append(
            {
                "group": f"{encoding} · {rows[0]['prompts']:,} logged prompts: graph tokens and bytes are means; "
                "against what was sent, the prompts' tokens in all",
                "rows": table,
            }
        )
    return groups


def check_logged_flags(run_config: RunConfig, log: Path) -> None:
    given = run_config.named(*GRAPH_FLAGS)
    if given:
        raise BenchmarkError(
            f"--from-prompts measures the prompts your framework logged: {', '.join(given)} shape a run over a graph; "
            "leave them out"
        )
    if log.name in OUTPUTS and log.resolve().parent == run_config.out.resolve():  # it would replace the file it reads
        raise BenchmarkError(
            f"--from-prompts {display(log)} is where this run writes its own {log.name}; move the log out of --out "
            f"{display(run_config.out)}, or choose another --out"
        )


def run_logged(run_config: RunConfig, log: Path) -> tuple[str, str | None]:
    """The run: read, measure, write; stdout's table, and no failure (a line left out is data, not a failure)."""
    model, formats, tokenizers, price = _logged_settings(run_config, log)
    totals, shown = Totals(), cast(list[Measured], [])
    counts: dict = {"lines": 0, "measured": 0, "left_out": 0, "layouts": {}, "reasons": {}}
    with held_outputs(run_config.out) as (staging, lock):
        _write_logged_lines(log, formats, tokenizers, staging, counts, totals, shown)
        summ = summary(totals, price)
        agreement = None
        if model is not None:
            agreement, asked = ask_all(log, formats, model, run_config.out)
            # kept across runs: not an output replaced
            counts["asked"] = {
                **asked,
                "log": {LOG_NAME: file_digest(run_config.out / LOG_NAME)},
            }
        md = results_md(
            summ,
            counts,
            display(log),
            price,
            (model.model, agreement.rows(formats), agreement.disagreements) if agreement and model else None,
        )
        staging.add("results.md", md.encode("utf-8"))
        union = totals.union.records()
        staging.add(UNION, json.dumps(union, ensure_ascii=False, indent=1).encode("utf-8"))
        counts["union"] = {
            "nodes": len(union["nodes"]),
            "edges": len(union["edges"]),
            "node_conflicts": totals.union.conflicts,
        }
        agreed = (
            {"model": model.model, "rows": agreement.rows(formats), "disagreements": agreement.disagreements}
            if agreement and model
            else None
        )
        _add_results_and_page(log, staging, counts, summ, agreed, shown, tokenizers, model)
        manifest = build_manifest(
            _logged_config(run_config, log, formats, tokenizers, price, model),
            tokenizers,
            cast(RunInputs, _NoInputs()),  # no graph nor questions file was read: the log is the input
            staging.sha,
            {"logged": counts},
            public_argv(run_config.argv),
            format_library_versions(formats),
        )
        manifest["inputs"] = {display(log): file_digest(log)}
        publish(staging, manifest, lock.release)
    return md.split("\n## Left out")[0].rstrip(), None


def _logged_settings(
    run_config: RunConfig, log: Path
) -> tuple[ModelConfig | None, list[str], list[Tokenizer], float | None]:
    """The flags of a run over logged prompts, checked: the model asked (none without --model), the formats, the
    tokenizers and the input price."""
    # before check_flags, which would ask a --batch for the --model that this refuses it with; without --model, --score
    # and --export-batch were ignored
    batch = run_config.named("--score", "--export-batch", "--batch")
    if batch:
        raise BenchmarkError(
            f"--from-prompts asks a model only by sending each request (--model NAME --base-url URL): leave out "
            f"{', '.join(batch)}, which serve a run over a graph"
        )
    check_flags(run_config)  # every number finite and in range, --out a folder this run may write
    check_logged_flags(run_config, log)
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
    tokenizers = [tokenizer_for(name.strip()) for name in run_config.encoding.split(",")]
    price = run_config.input_price_per_million
    if price is not None and price < 0:
        raise BenchmarkError(f"--input-price-per-million is {price}; give 0 or more")
    return model, formats, tokenizers, price


def _write_logged_lines(
    log: Path,
    formats: list[str],
    tokenizers: list[Tokenizer],
    staging: Outputs,
    counts: dict,
    totals: Totals,
    shown: list[Measured],
) -> None:
    """logged.jsonl, a line per logged request as it is measured, into staging; the counts, totals and drawn prompts
    kept. None measured is an error that says why the first lines were left out."""
    progress = Progress(count_lines(log), "logged prompts")
    digest = hashlib.sha256()
    with open(staging.staged("logged.jsonl"), "wb") as out:
        for result in measured_lines(log, formats, tokenizers, SHOWN, WORKERS):
            counts["lines"] += 1
            line = (json.dumps(_record(result), ensure_ascii=False) + "\n").encode("utf-8")
            out.write(line)
            digest.update(line)
            tally(result, counts, totals, shown)
            progress.advance(1, f"{counts['measured']:,} measured, {counts['left_out']:,} left out")
    progress.close()
    staging.sha["logged.jsonl"] = digest.hexdigest()
    if not counts["measured"]:
        reasons = "; ".join(f"{k} ({n})" for k, (n, _) in list(counts["reasons"].items())[:3]) or "the file has no line"
        raise BenchmarkError(
            f"--from-prompts {display(log)}: none of its {counts['lines']:,} line(s) could be read back "
            f"exactly: {reasons}; logged.jsonl is not written"
        )


def _add_results_and_page(
    log: Path,
    staging: Outputs,
    counts: dict,
    summ: dict,
    agreed: dict | None,
    shown: list[Measured],
    tokenizers: list[Tokenizer],
    model: ModelConfig | None,
) -> None:
    """results.json and report.html of a run over logged prompts, into staging."""
    staging.add(
        "results.json",
        json_bytes(
            {
                "kind": "logged",
                "source": display(log),
                "counts": counts,
                "summary": summ,
                **({"agreement": agreed} if agreed else {}),
            }
        ),
    )
    data = {
        "kind": "run",
        "title": "graphrag-format-benchmark · logged prompts" + (f" · {model.model}" if model else ""),
        "baseline": LOGGED,
        "sizes": _size_view(summ),
        "tokens": [],
        "prompts": _prompt_view(shown, tokenizers[0].name),
        "model": None,
        "agreement": agreed,
        "notes": [
            f"{counts['measured']:,} of {counts['lines']:,} logged request(s) measured; results.md and logged.jsonl "
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
) -> dict:
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


def tally(result: Measured | Skipped | Unread, counts: dict, totals: Totals, shown: list[Measured]) -> None:
    """One result into the counts: measured (by layout), or left out (by reason, with the first line of each)."""
    if isinstance(result, Measured):
        counts["measured"] += 1
        counts["layouts"][result.layout] = counts["layouts"].get(result.layout, 0) + 1
        totals.add(result)
        if result.texts:
            shown.append(result)
        return
    counts["left_out"] += 1
    key = _reason_key(result.reason)
    n, first = counts["reasons"].get(key, (0, _where(result)))
    counts["reasons"][key] = (n + 1, first)


def _where(result: Unread | Skipped) -> str:
    logged = result if isinstance(result, Unread) else result.logged
    at = getattr(result, "at", None)
    return f"line {logged.line}" + (f", character {at:,}" if at is not None else "")


def _record(result: Measured | Skipped | Unread) -> dict:
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


def file_digest(path: Path) -> dict:
    digest, size = hashlib.sha256(), 0
    with open(path, "rb") as f:
        for piece in iter(lambda: f.read(1 << 20), b""):
            digest.update(piece)
            size += len(piece)
    return {"sha256": digest.hexdigest(), "bytes": size}


def count_lines(path: Path) -> int:
    """The file's lines, for the progress line (a piece at a time; an unreadable file is said by read_log)."""
    try:
        with open(path, "rb") as f:
            return sum(piece.count(b"\n") for piece in iter(lambda: f.read(1 << 20), b"")) or 1
    except OSError:
        return 1
