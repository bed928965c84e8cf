"""report.html: one page for what each format costs and what the model did with it (cells.csv is results.py's).

In: the measurement, the run's tokenizers, and what the results keep for the page (the scored cells, the verdicts,
the chart). Out: one file that opens from file:// with no network: plain HTML, CSS and a little JavaScript
(REPORT_TEMPLATE). Every value from a graph, a question or an answer travels in one JSON block that the page reads
with JSON.parse and shows as text, never markup. The same inputs give the same bytes.
"""

from __future__ import annotations

import itertools
import json
import re
import statistics
from typing import TYPE_CHECKING, Any, cast

from benchmark import serialized

from .encodings import HFEncoding
from .matrix import hop_bucket
from .measure import SizeRow, token_cut
from .solver import value_text

if TYPE_CHECKING:
    from benchmark import Graph, Tokenizer

    from .artifacts import Outputs
    from .matrix import Plan
    from .measure import Item, Measurement


REPORT_TOKENS_SHOWN = (
    4_000  # tokens per format and encoding whose boundaries the page draws (and splits); the counts cover all
)
REPORT_CELLS = 10_000  # model-run cells the page holds (their answers cut at REPORT_ANSWER_CHARS)
REPORT_ANSWER_CHARS = 4_000
PROMPT_HEAD, PROMPT_TAIL = (
    300,
    40,
)  # lines the page draws of a long prompt: its first and its last, the count of the rest
UTF8_CONTINUATION = bytes(
    range(0x80, 0xC0)
)  # bytes that continue a character: deleted, a token's bytes count its characters


def token_ends(tokenizer: Tokenizer, text: str) -> list[int]:
    """Where each token of the text ends, as a character offset: text[ends[k-1]:ends[k]] is token k, the pieces
    concatenating to the text. A token that ends inside a character (a byte-level token of part of 'ж') takes the whole
    character, and the next token may be empty. Each token's characters are its bytes less continuation bytes, counted
    in C (bytes.translate), so a million tokens cost a second, not a minute."""
    encoding = tokenizer.encoding
    if isinstance(encoding, HFEncoding):
        ends, last = [], 0
        for _, end in encoding.tokenizer.encode(text, add_special_tokens=False).offsets:
            last = max(last, min(end, len(text)))
            ends.append(last)
    else:
        ids = encoding.encode_ordinary(text)
        ends = list(itertools.accumulate(map(token_chars(tokenizer, ids).__getitem__, ids)))
    if ends:
        ends[-1] = len(text)
    return ends


_TOKEN_CHARS: dict[str, dict[int, int]] = {}  # tokenizer name -> token id -> the characters it starts


def token_chars(tokenizer: Tokenizer, ids: list[int]) -> dict[int, int]:
    """Token id -> the characters it starts (its bytes less UTF-8 continuation bytes), for these ids (each decoded once
    per tokenizer, not the whole vocabulary): a token's share of a text is the same wherever it stands."""
    table = _TOKEN_CHARS.setdefault(tokenizer.name, {})
    decode = cast(
        Any, tokenizer.encoding
    ).decode_single_token_bytes  # tiktoken's: token_ends reads HF tokenizers' offsets
    for i in set(ids).difference(table):
        table[i] = len(decode(i).translate(None, UTF8_CONTINUATION))
    return table


def shown_start(tokenizer: Tokenizer, text: str) -> tuple[str, list[int]]:
    """The start of text that holds its first REPORT_TOKENS_SHOWN tokens (all of a shorter text), and its token ends:
    the whole text's boundaries there, found without tokenizing the rest (measure.token_cut), so that the page costs the same
    for 15 edges and 150,000."""
    size = 8 * REPORT_TOKENS_SHOWN
    while size < len(text) and tokenizer.splits:
        cut = token_cut(tokenizer, text, size)
        if cut is not None:
            ends = token_ends(tokenizer, text[:cut])
            if len(ends) >= REPORT_TOKENS_SHOWN:
                return text[:cut], ends
        size *= 2
    return text, token_ends(tokenizer, text)


def value_words(graph: Graph) -> set[str]:
    """The words (runs of letters, digits and _) of a graph's ids, names, types, relations, edge ids and property values:
    what a format must say, against the syntax it says it in."""
    texts = (
        {t for n in graph.nodes for t in n} | {t for e in graph.edges for t in e} | set(graph.edge_ids)
    )  # each distinct text once
    texts |= {value_text(v) for props in (*graph.node_props, *graph.edge_props) for _, v in props}
    return set(re.findall(r"\w+", "\n".join(texts)))


def syntax_split(text: str, ends: list[int], words: set[str]) -> dict:
    """Tokens spent on names and values against syntax (keys, quotes, delimiters, whitespace, indentation), counted from
    the token boundaries: a character is a name or value when it is in a word of value_words, and a token counts as
    one when at least half of its characters are."""
    table = {ord(c): 1 if re.match(r"\w", c) else 0 for c in set(text)}
    mask = bytearray(text.translate(table), "latin-1")  # 1 for each word character, in a C loop
    others = set(re.findall(r"\w+", text)) - words  # the few words of no value: keys, headers
    if others:
        for match in re.finditer(r"\w+", text):
            if match.group() in others:
                mask[match.start() : match.end()] = bytes(match.end() - match.start())
    count = bytes(mask).count
    content = sum(1 for a, b in zip([0, *ends], ends) if b > a and 2 * count(1, a, b) >= b - a)
    return {"tokens": len(ends), "names_and_values": content, "syntax": len(ends) - content}


def _size_groups(rows: list[SizeRow], baseline: str) -> list[dict]:
    """The size table per encoding, size, ids, permutation and mode: graph tokens, prompt tokens min and max, bytes,
    overflow, and the prompt tokens against the baseline's (mean over the group's questions)."""
    groups: dict[tuple, dict[str, list[SizeRow]]] = {}
    for r in rows:
        key = (r["encoding"], r["size"], r["ids"], r["permutation"], r["mode"])
        groups.setdefault(key, {}).setdefault(r["format"], []).append(r)
    out = []
    for key, by_format in groups.items():
        base = by_format.get(baseline) or next(iter(by_format.values()))
        base_mean = statistics.fmean(r["prompt_tokens"] for r in base)
        table = []
        for fmt, members in by_format.items():
            mean = statistics.fmean(r["prompt_tokens"] for r in members)
            table.append(
                {
                    "format": fmt,
                    "graph_tokens": round(statistics.fmean(r["graph_tokens"] for r in members), 1),
                    "prompt_min": min(r["prompt_tokens"] for r in members),
                    "prompt_max": max(r["prompt_tokens"] for r in members),
                    "bytes": round(statistics.fmean(r["bytes"] for r in members), 1),
                    "overflow": sum(r["overflow"] for r in members),
                    "prompts": len(members),
                    "vs_baseline": round(mean / base_mean - 1, 4) if base_mean else None,
                }
            )
        out.append({"group": f"{key[0]} · {key[1]} · {key[2]} · permutation {key[3]} · mode {key[4]}", "rows": table})
    return out


def _first_items(measured: Measurement) -> dict[str, Item]:
    """Per format, the first item of the first variant, permutation 0, mode A: the graph the token view shows."""
    first: dict[str, Item] = {}
    for item in measured.items:
        r = item.row
        if (
            item.variant is measured.variants[0]
            and r["permutation"] == 0
            and r["mode"] == "A"
            and r["encoding"] == measured.rows[0]["encoding"]
        ):
            first.setdefault(r["format"], item)
    return first


def _token_views(measured: Measurement, plan: Plan, texts: ReportTexts) -> tuple[list[dict], list[str]]:
    """Per format and encoding, the first graph's token boundaries and the split of those tokens into names and values
    against syntax: all of them, or the first REPORT_TOKENS_SHOWN of a larger graph (shown_start)."""
    first, views, notes = _first_items(measured), [], []
    base = measured.variants[0]
    graph_tokens = {
        (r["format"], r["encoding"], r.get("context", "")): r["graph_tokens"]
        for r in measured.rows
        if r["permutation"] == 0 and r["mode"] == "A" and r["size"] == base.size and r["ids"] == base.ids
    }
    words: dict[tuple, set[str]] = {}
    for fmt, item in first.items():
        text = texts.get(item)
        key = (item.context.id, item.row["edges_included"])
        if key not in words:
            words[key] = value_words(item.shown())
        for tokenizer in plan.tokenizers:
            start, ends = shown_start(tokenizer, text)
            shown, total = ends[:REPORT_TOKENS_SHOWN], graph_tokens[fmt, tokenizer.name, item.context.id]
            if total > len(shown):
                notes.append(
                    f"{fmt} ({tokenizer.name}): the first {len(shown):,} of its {total:,} graph tokens are drawn and "
                    "split "
                    "into names and values against syntax"
                )
            views.append(
                {
                    "format": fmt,
                    "encoding": tokenizer.name,
                    "pieces": [text[a:b] for a, b in zip([0, *shown], shown)],
                    **syntax_split(start, shown, words[key]),
                    "graph_tokens": total,
                    "context": item.context.id or "",
                    "variant": item.variant.name,
                }
            )
    return views, notes


class ReportTexts:
    """Each graph text the page shows, serialized once: key (format, context, edges shown) -> text; those the
    measurement kept (Measurement.shown) are not serialized again."""

    def __init__(self, kept: dict[str, str]) -> None:
        self.texts: dict[str, str] = dict(kept)

    @staticmethod
    def key(item: Item) -> str:
        return f"{item.row['format']}|{item.context.id}|{item.row['edges_included']}"

    def get(self, item: Item) -> str:
        key = self.key(item)
        if key not in self.texts:
            self.texts[key] = serialized(item.row["format"], item.shown())
        return self.texts[key]


def drawn_lines(text: str) -> str | dict:
    """What the page holds of a graph (or a whole prompt) text: all of it, or of a long one only what a prompt of it
    draws (PROMPT_HEAD first and PROMPT_TAIL last lines; whatever precedes or follows the graph in the prompt takes
    lines the graph then does not need) and how many newlines it has: {"start", "end", "newlines"}."""
    newlines = text.count("\n")
    if newlines <= PROMPT_HEAD + PROMPT_TAIL:
        return text
    head = -1
    for _ in range(PROMPT_HEAD):
        head = text.index("\n", head + 1)
    tail = len(text)
    for _ in range(PROMPT_TAIL):
        tail = text.rindex("\n", 0, tail)
    return {"start": text[: head + 1], "end": text[tail + 1 :], "newlines": newlines}


def _prompt_views(measured: Measurement, texts: ReportTexts, input_ids: set[str]) -> tuple[dict, list[str]]:
    """Per question, each format's prompt as head + graph + middle + question + end (graphs stored once each), the first
    encoding's token count, and the ids of distractor nodes (on no node of the input graph)."""
    encoding = measured.rows[0]["encoding"]
    graphs: dict[str, str | dict] = {}
    questions: dict[str, dict] = {}
    heads: dict[str, list[str]] = {}
    base = measured.variants[0]
    for item in measured.items:
        r = item.row
        if item.variant is not base or r["permutation"] != 0 or r["mode"] != "A" or r["encoding"] != encoding:
            continue
        fmt = r["format"]
        around = item.template.around(fmt)
        q = questions.setdefault(
            item.question.id,
            {
                "id": item.question.id,
                "text": item.question.question,
                "hops": hop_bucket(item.question),
                "context": item.context.id,
                "cells": {},
            },
        )
        if around is None:  # a template that puts the question before the graph: the prompt is stored whole
            key = f"{fmt}|{item.question.id}|whole"
            graphs[key] = drawn_lines(item.prompt())
            q["cells"][fmt] = {"graph": key, "tokens": r["prompt_tokens"], "whole": True}
            continue
        heads.setdefault(fmt, list(around))
        key = texts.key(item)
        if key not in graphs:
            graphs[key] = drawn_lines(texts.get(item))
        q["cells"][fmt] = {"graph": key, "tokens": r["prompt_tokens"]}
    notes = []
    if any(not isinstance(g, str) for g in graphs.values()):
        notes.append(
            f"a prompt longer than {PROMPT_HEAD + PROMPT_TAIL + 1} lines shows its first {PROMPT_HEAD} and its last "
            f"{PROMPT_TAIL} lines (the prompt files and the token counts hold it all)"
        )
    shown_ids = {n.id for c in base.contexts for n in c.graph.nodes}
    distractors = (
        sorted(shown_ids - input_ids) if base.ids == "original" else []
    )  # renamed ids are all new: nothing to tell
    return {
        "heads": heads,
        "graphs": graphs,
        "head": PROMPT_HEAD,
        "tail": PROMPT_TAIL,
        "questions": list(questions.values()),
        "encoding": encoding,
        "distractors": distractors,
        "edge_ids": bool(base.contexts[0].graph.edge_ids),
    }, notes


def report_html(measured: Measurement, plan: Plan, staging: Outputs, title: str, input_ids: set[str]) -> bytes:
    """report.html of a run: sizes, where the tokens go, one question in every format, and the model run if any.
    input_ids: the input graph's node ids; a shown node outside them is a distractor."""
    model = staging.report.get("model")
    baseline = (model or {}).get("baseline_format") or plan.formats[0]  # the gate's, when a model run has one
    texts = ReportTexts(measured.shown)
    tokens, notes = _token_views(measured, plan, texts)
    prompts, more = _prompt_views(measured, texts, input_ids)
    data = {
        "kind": "run",
        "title": title,
        "baseline": baseline,
        "sizes": _size_groups(measured.rows, baseline),
        "tokens": tokens,
        "prompts": prompts,
        "model": model,
        "notes": notes + more + (model or {}).get("notes", []),
    }
    return render_report(data, staging.report.get("svg", ""))


def comparison_report(c: dict, svg: str, diagnoses: dict[str, tuple[str, str]]) -> bytes:
    """report.html of --compare: the leaderboard (sortable) and why answers failed, per model and format."""
    names = [name for name in diagnoses if any(name in e["diagnoses"] for e in c["leaderboard"])]
    models = ", ".join(r["model"] for r in c["runs"])
    data = {
        "kind": "compare",
        "title": f"graphrag-format-benchmark · {models} compared",
        "baseline": "",
        "sizes": [],
        "tokens": [],
        "prompts": {"heads": {}, "graphs": {}, "questions": [], "encoding": "", "distractors": []},
        "model": None,
        "compare": {"leaderboard": c["leaderboard"], "diagnosis_names": names},
        "notes": c["notes"],
    }
    return render_report(data, svg)


def render_report(data: dict, svg: str = "") -> bytes:
    """The page: REPORT_TEMPLATE with the data as JSON ('<' written \\u003c, so no text in it can end the script block)
    and our own SVG chart."""
    payload = (
        json.dumps(data, ensure_ascii=False, separators=(",", ":"))
        .replace("<", "\\u003c")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )
    compare = data["kind"] == "compare"
    fill = {
        "TITLE": html_text(data["title"]),
        "SVG": "" if compare else svg,
        "COMPARE_SVG": svg if compare else "",
        "DATA": payload,
    }
    page = re.sub(
        r"@@(TITLE|SVG|COMPARE_SVG|DATA)@@", lambda m: fill[m.group(1)], REPORT_TEMPLATE
    )  # one pass: no value is read again
    return page.encode("utf-8")


def html_text(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


REPORT_TEMPLATE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<title>@@TITLE@@</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #222; }
h1 { font-size: 1.4em; } h2 { font-size: 1.2em; margin-top: 1.6em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; margin: .5em 0 1em; } th, td { border: 1px solid #ccc; padding: 2px 6px; text-align: right; }
th { background: #f3f3f3; cursor: pointer; user-select: none; } td.t, th.t, #cellTable th { text-align: left; } td { vertical-align: top; }
th.asc::after { content: " \\25B2"; } th.desc::after { content: " \\25BC"; }
.tokens { font: 12px/1.5 monospace; white-space: pre-wrap; word-break: break-all; border: 1px solid #ddd; max-height: 30em; overflow: auto; }
.line { display: flex; } .count { color: #888; min-width: 3.5em; text-align: right; padding-right: .6em; flex: none; }
.tk0 { background: #dbeafe; } .tk1 { background: #fde68a; } .empty { border-left: 2px solid #e11; }
.prompts { display: flex; gap: .8em; overflow-x: auto; } .prompt { flex: 0 0 32em; }
.prompt pre { font: 11px/1.4 monospace; white-space: pre-wrap; word-break: break-all; border: 1px solid #ddd; max-height: 40em; overflow: auto; margin: 0; }
.differs { background: #fef3c7; } .distractor { color: #9a3412; } .note { color: #555; } .edgeid { outline: 1px solid #7c3aed; color: #5b21b6; }
.answer { font: 11px/1.3 monospace; white-space: pre-wrap; overflow-wrap: anywhere; max-width: 40em; text-align: left; }
.ok { color: #166534; } .bad { color: #b91c1c; } .mark-shown { color: #166534; } .mark-reversed { color: #b45309; } .mark-not { color: #b91c1c; }
label { margin-right: 1em; } select { margin-left: .3em; }
</style>
</head>
<body>
<h1 id="title"></h1>
<div id="verdicts"></div>
<p class="note" id="holds"></p>
<div id="runPart">
<h2>Sizes</h2>
<div id="sizes"></div>
<div id="tokenPart"><h2>Where the tokens go</h2>
<p><label>format and encoding<select id="tokenPick"></select></label></p>
<div id="tokenSummary"></div>
<div id="tokenView" class="tokens"></div></div>
<h2>One question, every format</h2>
<p><label>question<select id="questionPick"></select></label> <span class="note">Lines not in the baseline's prompt are
highlighted; lines naming a distractor node are in brown; stable edge ids (--edge-ids) are boxed.</span></p>
<div id="questionText"></div>
<div id="prompts" class="prompts"></div>
</div>
<div id="modelPart" hidden>
<h2>Model run</h2>
<div id="chart">@@SVG@@</div>
<h3>Why answers failed</h3>
<div id="diagnoses"></div>
<h3>Answers</h3>
<p id="filters"><label>format<select id="fFormat"></select></label><label>hops<select id="fHops"></select></label>
<label>diagnosis<select id="fDiagnosis"></select></label><label>outcome<select id="fOutcome"></select></label>
<label><input type="checkbox" id="fDisagree"> only questions where formats disagree</label></p>
<p class="note" id="shown"></p>
<div id="cells"></div>
</div>
<div id="agreePart" hidden><h2>Your questions: agreement with the answers to what was sent</h2><div id="agreement"></div><h3>Every disagreement</h3><div id="disagreements"></div></div>
<div id="comparePart" hidden><h2>Models compared</h2><div id="leaderboard"></div><div>@@COMPARE_SVG@@</div><h3>Why answers failed, per model</h3><div id="compareDiagnoses"></div></div>
<script type="application/json" id="data">@@DATA@@</script>
<script>
"use strict";
const D = JSON.parse(document.getElementById("data").textContent);
const $ = (id) => document.getElementById(id);
function el(tag, text, cls) { const e = document.createElement(tag); if (text !== undefined && text !== null) e.textContent = String(text); if (cls) e.className = cls; return e; }
function fmt(v) { return v === null || v === undefined ? "" : typeof v === "number" ? (Number.isInteger(v) ? v.toLocaleString("en-US") : v < 1 && v > -1 ? v.toFixed(4) : v.toLocaleString("en-US", {minimumFractionDigits: 1, maximumFractionDigits: 1})) : String(v); }
function table(columns, rows, id) {
  const t = el("table"); if (id) t.id = id; const head = el("tr");
  columns.forEach((c, k) => { const th = el("th", c.label, c.text ? "t" : ""); th.dataset.k = k; head.appendChild(th); });
  t.appendChild(head);
  rows.forEach((r) => { const tr = el("tr"); columns.forEach((c) => { const v = c.value(r); const td = el("td", c.show ? c.show(v, r) : fmt(v), c.text ? "t" : ""); td.dataset.v = v === null || v === undefined ? "" : String(v); tr.appendChild(td); }); t.appendChild(tr); });
  head.addEventListener("click", (ev) => { const th = ev.target.closest("th"); if (th) sortBy(t, Number(th.dataset.k), th); });
  return t;
}
function sortBy(t, k, th) {
  const desc = th.classList.contains("asc"); t.querySelectorAll("th").forEach((h) => h.classList.remove("asc", "desc")); th.classList.add(desc ? "desc" : "asc");
  const rows = Array.from(t.rows).slice(1);
  const key = (r) => { const v = r.cells[k].dataset.v; const n = Number(v); return v !== "" && !isNaN(n) ? n : v; };
  rows.sort((a, b) => { const x = key(a), y = key(b); const c = typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y)); return desc ? -c : c; });
  rows.forEach((r) => t.appendChild(r));
}
$("title").textContent = D.title;
$("runPart").hidden = D.kind !== "run";
$("holds").textContent = D.notes.length ? "Shown in part: " + D.notes.join("; ") + "." : "This page holds every figure of the run.";
// Sizes
D.sizes.forEach((g, gi) => {
  $("sizes").appendChild(el("h3", g.group));
  $("sizes").appendChild(table([
    {label: "format", text: true, value: (r) => r.format}, {label: "graph tokens", value: (r) => r.graph_tokens},
    {label: "prompt tokens min", value: (r) => r.prompt_min}, {label: "prompt tokens max", value: (r) => r.prompt_max},
    {label: "bytes", value: (r) => r.bytes}, {label: "overflow", value: (r) => r.overflow}, {label: "prompts", value: (r) => r.prompts},
    {label: "vs " + D.baseline, value: (r) => r.vs_baseline, show: (v) => v === null ? "" : (v > 0 ? "+" : "") + (100 * v).toFixed(1) + "%"},
  ], g.rows, "sizes" + gi));
});
// Where the tokens go
$("tokenPart").hidden = D.tokens.length === 0;  // a run over logged prompts draws no token view
D.tokens.forEach((v, k) => { const o = el("option", v.format + " · " + v.encoding); o.value = k; $("tokenPick").appendChild(o); });
function showTokens() {
  const v = D.tokens[Number($("tokenPick").value)]; if (!v) return;
  $("tokenSummary").replaceChildren(table([
    {label: "format", text: true, value: (r) => r.format}, {label: "encoding", text: true, value: (r) => r.encoding},
    {label: "graph tokens", value: (r) => r.graph_tokens}, {label: "tokens split", value: (r) => r.tokens},
    {label: "names and values", value: (r) => r.names_and_values},
    {label: "syntax", value: (r) => r.syntax}, {label: "syntax share", value: (r) => r.tokens ? r.syntax / r.tokens : 0, show: (x) => (100 * x).toFixed(1) + "%"},
  ], D.tokens.filter((t) => t.encoding === v.encoding), "tokenTable"));
  const view = $("tokenView"); view.replaceChildren();
  let line = el("div", null, "line"), count = el("span", "", "count"), body = el("span"), n = 0, k = 0;
  line.appendChild(count); line.appendChild(body);
  const flush = () => { count.textContent = String(n); view.appendChild(line); line = el("div", null, "line"); count = el("span", "", "count"); body = el("span"); line.appendChild(count); line.appendChild(body); n = 0; };
  v.pieces.forEach((piece) => {  // a token counts in the margin of the line it starts on
    n += 1;
    piece.split("\\n").forEach((part, j) => {
      if (j > 0) flush();
      if (part.length || (j === 0 && piece.length === 0)) { const s = el("span", part, piece.length ? "tk" + (k % 2) : "empty"); s.dataset.token = k; s.title = "token " + (k + 1); body.appendChild(s); }
    });
    k += 1;
  });
  flush();
  view.dataset.tokens = String(k);
}
$("tokenPick").addEventListener("change", showTokens); showTokens();
// One question, every format
const HEAD = D.prompts.head, TAIL = D.prompts.tail, newlines = (s) => s.split("\\n").length - 1;
function promptLines(cell, h, q) {  // the lines of a prompt the page draws, numbered as in the whole prompt
  const g = D.prompts.graphs[cell.graph], pre = cell.whole ? "" : h[0], post = cell.whole ? "" : h[1] + q.text + h[2];
  if (typeof g === "string") {
    const lines = (pre + g + post).split("\\n");
    if (lines.length <= HEAD + TAIL + 1) return {lines: lines.map((line, j) => [line, j]), total: lines.length};
    return {lines: [...lines.slice(0, HEAD).map((line, j) => [line, j]), null, ...lines.slice(-TAIL).map((line, j) => [line, lines.length - TAIL + j])],
            total: lines.length};
  }
  const total = newlines(pre) + g.newlines + newlines(post) + 1;  // a long graph: the page holds its start and its end
  return {lines: [...(pre + g.start).split("\\n").slice(0, HEAD).map((line, j) => [line, j]), null,
                  ...(g.end + post).split("\\n").slice(-TAIL).map((line, j) => [line, total - TAIL + j])], total: total};
}
D.prompts.questions.forEach((q, k) => { const o = el("option", q.id + " (" + q.hops + ")"); o.value = k; $("questionPick").appendChild(o); });
function showQuestion() {
  const q = D.prompts.questions[Number($("questionPick").value)]; if (!q) return;
  $("questionText").replaceChildren(el("p", q.text), el("p", q.context ? "context " + q.context : "", "note"));
  const texts = {};
  for (const f of Object.keys(q.cells)) texts[f] = promptLines(q.cells[f], D.prompts.heads[f], q);
  const base = new Set((texts[D.baseline] || {lines: []}).lines.filter((x) => x).map((x) => x[0]));
  const distractors = D.prompts.distractors;
  const box = $("prompts"); box.replaceChildren();
  Object.keys(texts).forEach((f) => {
    const div = el("div", null, "prompt"); div.dataset.format = f;
    div.appendChild(el("h4", f + " · " + fmt(q.cells[f].tokens) + " prompt tokens (" + D.prompts.encoding + ")"));
    const pre = el("pre"), total = texts[f].total;
    const add = (line, j) => {
      let cls = f !== D.baseline && !base.has(line) ? "differs" : "";
      if (distractors.length && distractors.some((id) => line.includes(id))) cls += " distractor";
      const span = el("span", null, cls.trim()), text = line + (j < total - 1 ? "\\n" : "");
      if (D.prompts.edge_ids) {  // --edge-ids: each stable edge id (e1, e2...) marked as such
        let at = 0;
        for (const m of text.matchAll(/\\be\\d+\\b/g)) { span.append(text.slice(at, m.index), el("span", m[0], "edgeid")); at = m.index + m[0].length; }
        span.append(text.slice(at));
      } else span.textContent = text;
      pre.appendChild(span);
    };
    texts[f].lines.forEach((x) => {  // a long prompt: its first and last lines, and how many are left out between them
      if (x) add(x[0], x[1]);
      else pre.appendChild(el("span", "… " + (total - HEAD - TAIL).toLocaleString("en-US") + " lines of " + total.toLocaleString("en-US") + " not drawn …\\n", "note cut"));
    });
    div.appendChild(pre); box.appendChild(div);
  });
}
$("questionPick").addEventListener("change", showQuestion); showQuestion();
// Model run
const M = D.model;
if (M) {
  $("modelPart").hidden = false;
  $("verdicts").appendChild(el("h2", "Verdict: what to ship"));
  const rl = el("ul"); M.recommendations.forEach((v) => rl.appendChild(el("li", v))); $("verdicts").appendChild(rl);
  $("verdicts").appendChild(el("p", "Verdicts against " + M.baseline + "; tolerance " + M.tolerance + " (docs/statistics.md: the acceptance gate):"));
  $("verdicts").appendChild(table([{label: "group", text: true, value: (r) => r.group}, {label: "format", text: true, value: (r) => r.format},
    {label: "verdict", text: true, value: (r) => r.verdict}, {label: "why", text: true, value: (r) => r.why},
    {label: "saving", value: (r) => r.saving, show: (v) => v === null ? "" : (100 * v).toFixed(1) + "%"}], M.verdicts, "verdictTable"));
  const names = M.diagnosis_names;
  $("diagnoses").appendChild(table([{label: "format", text: true, value: (r) => r.format}, {label: "cells", value: (r) => r.n},
    ...names.map((n) => ({label: n.replaceAll("_", " "), value: (r) => r.diagnoses[n] || 0}))], M.aggregates, "diagnosisTable"));
  const dl = el("ul"); names.forEach((n) => dl.appendChild(el("li", n.replaceAll("_", " ") + ": " + M.meanings[n]))); $("diagnoses").appendChild(dl);
  const opts = (id, values) => { const s = $(id); s.appendChild(el("option", "all")).value = ""; values.forEach((v) => { const o = el("option", v); o.value = v; s.appendChild(o); }); s.addEventListener("change", showCells); };
  opts("fFormat", [...new Set(M.cells.map((c) => c.format))]);
  opts("fHops", [...new Set(M.cells.map((c) => c.hops))]);
  opts("fDiagnosis", ["none", ...names]);
  opts("fOutcome", ["right", "wrong"]);
  $("fDisagree").addEventListener("change", showCells);
  const right = (c) => c.insufficient ? c.answer_correct === true : c.path_exact === true && c.answer_correct === true;
  const runKey = (c) => [c.question, c.size, c.ids, c.mode, c.permutation, c.repeat].join("|");
  const outcomes = {}; M.cells.forEach((c) => { (outcomes[runKey(c)] = outcomes[runKey(c)] || new Set()).add(right(c)); });
  function showCells() {
    const f = $("fFormat").value, h = $("fHops").value, d = $("fDiagnosis").value, o = $("fOutcome").value, dis = $("fDisagree").checked;
    let cells = M.cells.filter((c) => (!f || c.format === f) && (!h || c.hops === h) && (!d || (d === "none" ? !c.diagnosis : c.diagnosis === d))
      && (!o || (o === "right") === right(c)) && (!dis || outcomes[runKey(c)].size > 1));
    if (dis) cells = cells.slice().sort((a, b) => runKey(a).localeCompare(runKey(b)));
    const shown = cells.slice(0, 500);
    $("shown").textContent = "Showing " + shown.length + " of " + cells.length + " matching cells (" + M.cells.length + " in all)" + (cells.length > 500 ? "; narrow the filters to see the rest" : "") + ".";
    const t = el("table"); t.id = "cellTable";
    const head = el("tr"); ["format", "question", "hops", "perm.", "status", "answer", "path exact", "diagnosis", "answer text", "gold path", "evidence"].forEach((c) => head.appendChild(el("th", c))); t.appendChild(head);
    shown.forEach((c) => {
      const tr = el("tr"); tr.dataset.diagnosis = c.diagnosis || ""; tr.dataset.format = c.format;
      [c.format, c.question, c.hops, c.permutation, c.status].forEach((v) => tr.appendChild(el("td", v, "t")));
      tr.appendChild(el("td", c.insufficient ? (c.answer_correct ? "abstained" : "did not abstain") : c.answer_correct ? "right" : "wrong", c.answer_correct ? "ok" : "bad"));
      tr.appendChild(el("td", c.insufficient ? "" : c.path_exact ? "yes" : "no", c.path_exact ? "ok" : "bad"));
      tr.appendChild(el("td", c.diagnosis || "", "t diagnosis"));
      tr.appendChild(el("td", c.answer !== null ? c.answer : "error: " + (c.error || c.status), "answer"));
      const gold = el("td", null, "t"); c.gold.forEach((p) => gold.appendChild(el("div", p.join(" ; ")))); tr.appendChild(gold);
      const ev = el("td", null, "t"); c.evidence.forEach((e) => ev.appendChild(el("div", e.mark + ": " + e.edge, "mark-" + e.mark.split(" ")[0]))); tr.appendChild(ev);
      t.appendChild(tr);
    });
    $("cells").replaceChildren(t);
  }
  showCells();
}
// Logged prompts asked again in every format
const A = D.agreement;
if (A) {
  $("agreePart").hidden = false;
  $("agreement").appendChild(el("p", A.model + ": two answers agree when equal after the article's normalization; logged questions have no gold answer, so this is agreement, not accuracy."));
  $("agreement").appendChild(table([{label: "format", text: true, value: (r) => r.format}, {label: "agree", value: (r) => r.agree},
    {label: "compared", value: (r) => r.compared}, {label: "rate", value: (r) => r.rate}, {label: "not compared", value: (r) => r.failed}], A.rows, "agreeTable"));
  const t = el("table"); t.id = "disagreeTable";
  const head = el("tr"); ["line", "id", "format", "question", "answer to what was sent", "answer in this format"].forEach((c) => head.appendChild(el("th", c))); t.appendChild(head);
  A.disagreements.slice(0, 2000).forEach((d) => { const tr = el("tr"); [d.line, d.id, d.format, d.question].forEach((v) => tr.appendChild(el("td", String(v), "t")));
    [d.sent, d.answer].forEach((v) => tr.appendChild(el("td", v, "answer"))); t.appendChild(tr); });
  $("disagreements").replaceChildren(t);
  if (A.disagreements.length > 2000) $("disagreements").appendChild(el("p", "The first 2,000 of " + A.disagreements.length + "; results.md and results.json hold them all."));
}
// Comparison
const C = D.compare;
if (C) {
  $("comparePart").hidden = false;
  $("leaderboard").appendChild(table([{label: "group", text: true, value: (r) => r.size + " · " + r.ids + " · " + r.mode},
    {label: "model", text: true, value: (r) => r.model}, {label: "format", text: true, value: (r) => r.format},
    {label: "path exact", value: (r) => r.path_exact.rate}, {label: "answer", value: (r) => r.answer_correct.rate},
    {label: "prompt tokens", value: (r) => r.prompt_tokens}, {label: "saving", value: (r) => r.saving}, {label: "cost", value: (r) => r.cost},
    {label: "verdict", text: true, value: (r) => r.verdict}], C.leaderboard, "leaderboardTable"));
  const names = C.diagnosis_names;
  $("compareDiagnoses").appendChild(table([{label: "model", text: true, value: (r) => r.model}, {label: "format", text: true, value: (r) => r.format},
    {label: "cells", value: (r) => r.cells}, ...names.map((n) => ({label: n.replaceAll("_", " "), value: (r) => r.diagnoses[n] || 0}))], C.leaderboard, "compareDiagnosisTable"));
}
</script>
</body>
</html>
"""
